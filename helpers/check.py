"""The strict harness: run a kernel on every case of a puzzle, on every stage, and say exactly why it
is wrong, or return a short deterministic summary.

Stages: a PTX compile for the T4 (also read for float64 arithmetic), then per case the simulator with
every diagnostic on and blocks in shuffled order (and, where blocks talk through global memory, in
other orders too), the spec on pristine copies (once per case, kept on the case's RunRecord with the
wrong cells), the puzzle's rules from the trace; after that, the real GPU where there is one.
Verdicts and their text: `helpers.verdicts`; comparing outputs: `helpers.compare`.
"""

from __future__ import annotations

import secrets
import time
import warnings
from contextlib import contextmanager
from typing import Callable

import numpy as np

from . import sim
from .compare import compare, nothing_written, render_diff
from .orders import order_note, order_problem
from .puzzle import Puzzle, RunRecord
from .runs import (
    _judge,
    _kernel_name,
    _launch,
    _quiet_numpy,
    expected,
    poison,
    prepare_args,
    run_case,
    run_once,
)
from .sim.trace import READ
from .source import is_stub, not_a_kernel
from .verdicts import (
    CompileRejected,
    GpuMismatch,
    InputModified,
    KernelDiagnosed,
    Message,
    NotSolvedYet,
    OverBudget,
    PuzzleFailure,
    Result,
    WrongAnswer,
    expect_failure,
    leading,
)

__all__ = [
    "CHECK_SECONDS",
    "CompileRejected",
    "GpuMismatch",
    "InputModified",
    "KernelDiagnosed",
    "NotSolvedYet",
    "OverBudget",
    "PuzzleFailure",
    "Result",
    "RunRecord",
    "WrongAnswer",
    "check",
    "compare",
    "expect_failure",
    "expected",
    "poison",
    "prepare_args",
    "render_diff",
    "run_case",
    "run_once",
]

CHECK_SECONDS = 10.0  # one check, all its cases, on the simulator: a verdict within seconds


class _Stop(Exception):
    """A verdict found by a stage, before its text is assembled: the class, the body, the case
    number (None: the text needs no case header), the view to suggest, the class's extra
    arguments, other problems of the run, and the case's record."""

    def __init__(self, cls, body, k=None, *, view="access", extra=(), also=(), record=None):
        super().__init__(body)
        self.cls, self.body, self.k, self.view = cls, body, k, view
        self.extra, self.also, self.record = extra, list(also), record
        self.nothing_written = False  # the kernel stored to no output (for a stub: nothing more to say)


def check(
    puzzle: Puzzle,
    kernel: Callable,
    *,
    seed: int | None = None,
    gpu: bool | None = None,
    runs: list | None = None,
) -> Result:
    """Run `kernel` on every case of `puzzle`: PTX compile, simulator with every diagnostic and rule,
    then the real GPU where there is one. Raise a PuzzleFailure subclass or return a Result (its
    `.runs` hold every case's RunRecord). Give `runs=[]` to receive the RunRecords of the cases that
    ran (the failing case last) whatever the verdict."""
    if kernel is None or not callable(getattr(kernel, "py_func", kernel)):
        raise TypeError(
            f"puzzles.check({puzzle.name!r}, kernel): kernel must be a @cuda.jit function, got {kernel!r}"
        )
    from . import device

    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    cases = puzzle.cases_for(kernel, np.random.default_rng(seed))
    ctx = _Context(puzzle, _kernel_name(kernel), seed, cases)
    ctx.deadline = time.monotonic() + CHECK_SECONDS
    handed = runs  # the caller's list gets every record, whatever the verdict
    runs = []
    maxima: dict = {}
    with _quiet_numpy(), _handing_over(runs, handed):
        try:
            prepared = prepare_args(puzzle, cases[0])
            notes = _compile(puzzle, kernel, cases[0], prepared, ctx)
            for k, case in enumerate(cases):
                runs.append(_sim_case(puzzle, kernel, case, k, ctx, maxima, prepared if k == 0 else None))
            if ctx.pending:
                k, _, err = ctx.pending
                ctx.pending = None
                raise _Stop(
                    KernelDiagnosed,
                    f"{type(err).__name__}: {err}\n(Every output was right, but only by luck: on a GPU "
                    "that value is whatever memory held.)",
                    k,
                    extra=(err,),
                    record=runs[k],
                )
            if ctx.float64 and puzzle.float64 == "reject":
                raise _Stop(OverBudget, ctx.float64[0], extra=("float64", ctx.float64[1], 0))
        except _Stop as stop:
            if stop.record is not None and all(r is not stop.record for r in runs):
                runs.append(stop.record)  # the failing case's record, last
            raise _verdict(stop, ctx, kernel) from None
    stages = ["simulator", "PTX sm_75"] if ctx.ptx else ["simulator"]
    if gpu is None:
        gpu = device.gpu_present()
    if gpu:
        for record in runs:
            _gpu_case(puzzle, kernel, record, ctx)
        stages.append("GPU")
    budget = {
        r.name: r.limit_text()
        for r in puzzle.all_rules
        if r.per == "thread" and r.values is not None and r.limit is not None
    }
    return Result(puzzle.name, len(cases), tuple(stages), maxima, budget, runs, notes)


@contextmanager
def _handing_over(records: list, to: list | None):
    try:
        yield
    finally:
        if to is not None:
            to.extend(records)


class _Context:
    """What every stage of one check shares: the puzzle, the kernel's name, the seed, the cases, the
    deadline, and findings kept for later (an uninitialised read that changed no result, float64)."""

    def __init__(self, puzzle, kernel_name, seed, cases):
        self.puzzle, self.kernel_name, self.seed, self.cases = puzzle, kernel_name, seed, cases
        self.n = len(cases)
        self.ptx = False
        self.deadline: float | None = None
        self.pending = None  # (case number, case, error): an uninitialised read that changed no result
        self.float64: tuple | None = None  # (message, operations) of float64 arithmetic in the PTX

    def head(self, k):
        """Cases are numbered from 0 everywhere (here, in `puzzles.show(case=...)`, in `run_once`)."""
        return (
            f"Puzzle `{self.puzzle.name}` failed on case {k} (cases 0 to {self.n - 1}): "
            f"{self.cases[k].describe()}\n"
            f"(seed {self.seed}: puzzles.check({self.puzzle.name!r}, {self.kernel_name}, "
            f"seed={self.seed}) repeats this run)"
        )

    def tail(self, k, view="access"):
        v = "" if view == "access" else f", view={view!r}"
        return (
            f"See what your kernel did: puzzles.show({self.puzzle.name!r}, {self.kernel_name}, "
            f"case={k}, seed={self.seed}{v})"
        )


def _verdict(stop: _Stop, ctx: _Context, kernel) -> PuzzleFailure:
    """The failure `stop` stands for, its text assembled once from its parts."""
    if stop.cls is not NotSolvedYet and is_stub(kernel, ctx.puzzle):
        saw = "" if stop.nothing_written else stop.cls.__name__
        failure = NotSolvedYet(
            f"Puzzle `{ctx.puzzle.name}`: not solved yet. `{ctx.kernel_name}` is still the stub; fill in "
            "the kernel where it says `# FILL ME IN` and run this cell again."
            + (f"\n(What the checker saw so far: {saw}.)" if saw else "")
        )
        failure.run = stop.record
        return failure
    if stop.k is None:
        text = stop.body
    else:
        also = stop.also
        if ctx.pending and ctx.pending[0] != stop.k:
            k, case, err = ctx.pending
            also = [
                *also,
                "Also (this one changed no result by itself; fix the one above first):\n"
                f"case {k} ({case.launch_text()}): {type(err).__name__}: {err}",
            ]
        tail = ctx.tail(stop.k, stop.view) if stop.view else ""
        text = Message(ctx.head(stop.k), stop.body, also, tail).text()
    failure = stop.cls(text, *stop.extra)
    failure.run = stop.record
    return failure


# ------------------------------------------------------------------ stage 1: the compile check


def _compile(puzzle, kernel, case, prepared, ctx) -> tuple:
    """The PTX compile for the T4 on case 0's arguments; returns the notes of a pass (float64
    arithmetic in a float32 exercise, kept on `ctx.float64` for a puzzle that rejects it)."""
    from . import ptx

    plain = not_a_kernel(kernel)
    if plain:
        raise _Stop(CompileRejected, f"Puzzle `{puzzle.name}`: this kernel cannot run on a GPU: {plain}")
    if not ptx.available():
        return ()
    args, roles, _, _ = prepared
    try:
        text = ptx.ptx_check(kernel, args)
    except ptx.NumbaRejected as e:
        msg = f"Puzzle `{puzzle.name}`: {e}"
        try:  # where the simulator knows more (a local array sized by an argument...), show it too
            _launch(puzzle, kernel, case, args, roles, ctx.seed, False, ctx.deadline)  # args unused now
        except (sim.errors.Unsupported, sim.errors.LaunchError) as s:
            msg += f"\nThe simulator says: {s}"
        except Exception:  # noqa: BLE001 - any other outcome adds nothing to Numba's verdict
            pass
        raise _Stop(CompileRejected, msg) from None
    ctx.ptx = True
    from .float64 import float64_finding

    ctx.float64 = float64_finding(puzzle, kernel, args, text)
    if ctx.float64 and puzzle.float64 != "reject":
        return (ctx.float64[0],)
    return ()


# ------------------------------------------------------------------ stage 2: the simulator, per case


def _diagnosed(raised, k, ctx, record) -> _Stop:
    """The verdict of a run the simulator stopped."""
    err, others = leading(raised)
    record.diagnostic = err
    also = [
        "Also in this run (often the same missing barrier or guard; fix the one above first):\n"
        f"{type(o).__name__}: {o}"
        for o in others
    ]
    body, view = f"{type(err).__name__}: {err}", "access"
    if isinstance(err, sim.errors.Runaway) and ctx.deadline and time.monotonic() >= ctx.deadline - 0.05:
        body, view, also = (
            f"Runaway: a check has {CHECK_SECONDS:g} s for all {ctx.n} cases on the simulator, and your "
            f"kernel was still running case {k} when they ran out.\n{err}\n"
            "If the loop does end, it does far more work per thread than this puzzle needs (the "
            "reference checks in well under a second): look for a loop whose bound is not the data's "
            "size, or one that counts far past it.",
            None,
            [],
        )
    return _Stop(KernelDiagnosed, body, k, view=view, extra=(err,), also=also, record=record)


def _sim_case(puzzle, kernel, case, k, ctx, maxima, prepared=None) -> RunRecord:
    args, roles, outputs, pristine = prepared or prepare_args(puzzle, case)
    record = RunRecord(puzzle, ctx.kernel_name, case, k, ctx.seed, outputs=outputs)
    try:
        record.launch = _launch(puzzle, kernel, case, args, roles, ctx.seed, deadline=ctx.deadline)
    except sim.SimulatorError as raised:
        if getattr(raised, "completed", False):
            _judge(record, pristine)
            if not record.wrong:
                # an uninitialised read whose value reached no output: secondary; look on for a
                # problem that changes the answer, and name this one after it (or alone, at the end)
                record.diagnostic = raised
                ctx.pending = ctx.pending or (k, case, raised)
                return record
        raise _diagnosed(raised, k, ctx, record) from None
    trace = record.launch.trace
    _judge(record, pristine)
    if k == 0:
        _wrote_something(puzzle, trace, k, ctx, record)
    for n, v in pristine.items():
        if not np.array_equal(np.asarray(args[puzzle.signature.index(n)]), v, equal_nan=True):
            raise _Stop(InputModified, f"the kernel changed its input `{n}`.", k, record=record)
    for n in puzzle.outputs:
        if n in record.wrong:
            tol = record.tol.get(n)
            problem = compare(record.expected[n], outputs[n], puzzle, name=n, trace=trace, tol=tol)
            note = (
                "" if puzzle.cross_block_races else order_note(puzzle, kernel, record, ctx.seed, ctx.deadline)
            )
            raise _Stop(
                WrongAnswer, f"`{n}` is wrong:\n{problem}", k, also=[note] if note else [], record=record
            )
    if not puzzle.cross_block_races:
        found = order_problem(puzzle, kernel, record, ctx.seed, ctx.deadline)
        if found:
            raise _Stop(found[0], found[1], k, extra=found[2], record=record)
    _apply_rules(puzzle, case, record, k, maxima)
    return record


def _wrote_something(puzzle, trace, k, ctx, record) -> None:
    """A kernel that wrote none of its outputs: say which, and why (no thread reached a store)."""
    why = nothing_written(puzzle.outputs, trace, ctx.kernel_name)
    if why:
        stop = _Stop(WrongAnswer, why, k, record=record)
        stop.nothing_written = True
        raise stop


def _without_print_reads(launch):
    """The launch as the rules see it: reads made on a line that is a `print(...)` call do not
    count (a debugging `print(a[i])` must not push a correct kernel over its budget); every
    other access, and every view, is unchanged."""
    import dataclasses

    trace = launch.trace
    printing = [s.id for s in trace.sites if s.text.startswith("print(")]
    if not printing:
        return launch
    keep = ~(np.isin(trace.acc["site"], printing) & (trace.acc["kind"] == READ))
    return dataclasses.replace(launch, trace=dataclasses.replace(trace, acc=trace.acc[keep]))


def _apply_rules(puzzle, case, record, k, maxima):
    """Every rule of the puzzle's table on this run; the first broken one is an OverBudget."""
    run = _without_print_reads(record.launch)
    for r in puzzle.all_rules:
        if r.per == "thread" and r.values is not None:
            v = r.values(run.trace)  # computed once: the rule's own check reuses it (rules._once)
            maxima[r.name] = max(maxima.get(r.name, 0), int(v.max()) if v.size else 0)
        found = r.check(run, case)
        if found is not None:
            raise _Stop(
                OverBudget,
                found.message,
                k,
                view=found.view,
                extra=(found.rule, found.count, found.limit),
                record=record,
            )


# ------------------------------------------------------------------ stage 3: the real GPU


def _gpu_case(puzzle, kernel, record, ctx):
    """Case `record.case` on the real GPU, compared with the expected outputs the simulator stage
    computed (fresh arguments: the simulator's run changed its own)."""
    from numba import cuda

    from . import device

    # numba-cuda's own functions: `helpers.use("sim")` may have replaced the ones on `cuda`
    to_device, synchronize = device.STATE.real("to_device"), device.STATE.real("synchronize")
    args, _, _, _ = prepare_args(puzzle, record.case)
    dev = [to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    if not hasattr(kernel, "py_func"):
        kernel = cuda.jit(kernel)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=device.LOW_OCCUPANCY_WARNING)
        device.gpu_launch(kernel, record.case.grid, record.case.block, dev, record.case.shared_bytes)
    synchronize()
    for n in puzzle.outputs:
        got = dev[puzzle.signature.index(n)].copy_to_host()
        problem = compare(record.expected[n], got, puzzle, tol=record.tol.get(n))
        if problem:
            raise GpuMismatch(
                Message(
                    ctx.head(record.case_index),
                    f"on the real GPU `{n}` is wrong although the simulator run was right (tell the "
                    f"course authors: this is a simulator gap):\n{problem}",
                ).text()
            )
