"""The strict harness: run a kernel on every case of a puzzle, on every engine, and
say exactly why it is wrong, or return a short deterministic summary.

For each case: fresh poisoned outputs (NaN / sentinel), read-only inputs, the
simulator with every diagnostic on and blocks in shuffled order, the spec on
pristine copies, budgets from the trace. Before that, a PTX compile for the T4;
after it, the real GPU where there is one.
"""

from __future__ import annotations

import inspect
import secrets
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import sim
from .puzzle import Case, Puzzle, RunRecord
from .sim.kernel import py_func
from .sim.poison import poison  # the one poison policy, shared with the simulator
from .sim.trace import READ

__all__ = [
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
    "poison",
    "prepare_args",
    "run_case",
    "run_once",
]


class PuzzleFailure(AssertionError):
    """Base of every verdict other than success. `.run` is the RunRecord of the failing case (None
    when no simulator run was made, e.g. CompileRejected)."""

    run: RunRecord | None = None

    def _render_traceback_(self) -> list[str]:
        """What IPython/Jupyter shows for an uncaught failure: the verdict itself, not the harness's
        stack (which would bury it under 40-50 lines of frames the learner did not write)."""
        return [
            f"\x1b[0;31m{type(self).__name__}\x1b[0m: " + (str(self).splitlines() or [""])[0],
            *str(self).splitlines()[1:],
            "",
            "(The checker's own traceback is hidden: run `%tb` in a new cell to see it.)",
        ]


def _quiet() -> None:
    """An `_ipython_display_` that shows nothing: the message was printed already."""


class NotSolvedYet(PuzzleFailure):
    """The kernel is still the stub (or writes nothing at all)."""


class CompileRejected(PuzzleFailure):
    """Real Numba refuses to compile the kernel."""


class KernelDiagnosed(PuzzleFailure):
    """The simulator caught the kernel doing something a GPU would not forgive."""

    def __init__(self, message: str, diagnostic: Exception):
        super().__init__(message)
        self.diagnostic = diagnostic


class WrongAnswer(PuzzleFailure):
    """The output differs from the spec."""


class OverBudget(PuzzleFailure):
    """A thread or block made more memory accesses (or used more shared memory) than allowed."""

    def __init__(self, message: str, field: str, count, limit):
        super().__init__(message)
        self.field, self.count, self.limit = field, count, limit


class InputModified(PuzzleFailure):
    """The kernel changed one of its inputs."""


class GpuMismatch(PuzzleFailure):
    """The real GPU's output differs from the spec."""


@dataclass
class Result:
    puzzle: str
    cases: int
    engines: tuple
    maxima: dict  # budget field -> max per thread over all cases
    budget: dict  # budget field -> limit text
    runs: list = field(default_factory=list, repr=False)  # RunRecord per case, in case order

    def __repr__(self):
        parts = []
        for f, m in self.maxima.items():
            lim = self.budget.get(f)
            parts.append(f"{f.replace('_', ' ')} {m}" + (f" (budget {lim})" if lim is not None else ""))
        return (
            f"Passed: {self.puzzle}, {self.cases} cases on {' + '.join(self.engines)}.\n"
            f"Most per thread: {', '.join(parts)}."
        )

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))


def prepare_args(puzzle: Puzzle, case: Case) -> tuple[list, dict, dict, dict]:
    """(args list, roles, outputs dict, pristine inputs dict) for one run: fresh every time."""
    args, roles, outputs, pristine = [], {}, {}, {}
    for name in puzzle.signature:
        v = case.args[name]
        if name in puzzle.outputs:
            if name in puzzle.accumulate:  # starts at what an earlier launch left: `=` for `+=` shows
                arr = np.array(v, copy=True)
            else:
                arr = np.zeros_like(v) if name in puzzle.zeroed else poison(v)
            roles[name] = "inout" if name in puzzle.zeroed or name in puzzle.accumulate else "out"
            outputs[name] = arr
            args.append(arr)
        elif name in puzzle.scratch:
            roles[name] = "inout"
            args.append(np.zeros_like(v))
        elif isinstance(v, np.ndarray):
            pristine[name] = v.copy()
            roles[name] = "in"
            args.append(v.copy())
        else:
            args.append(v)
    return args, roles, outputs, pristine


def run_case(puzzle: Puzzle, kernel: Callable, case: Case, *, seed: int = 0, trace: bool = True):
    """Run one case on the simulator with every diagnostic on.

    Returns (launch, outputs); raises helpers.sim.errors.SimulatorError on a diagnostic."""
    args, roles, outputs, _ = prepare_args(puzzle, case)
    launch = _launch(puzzle, kernel, case, args, roles, seed, trace)
    return launch, outputs


CHECK_SECONDS = 10.0  # one check, all its cases, on the simulator: a verdict within seconds


def _launch(puzzle, kernel, case, args, roles, seed, trace=True, deadline=None):
    return sim.launch(
        kernel,
        case.grid,
        case.block,
        args,
        shared_bytes=case.shared_bytes,
        roles=roles,
        trace=trace,
        block_order="shuffle",
        seed=seed,
        cross_block_races=puzzle.cross_block_races,
        deadline=deadline,
        defer_uninit=True,  # a race or divergence found later in the run leads (see _leading)
    )


def run_once(puzzle: Puzzle, kernel: Callable, *, case: int = 0, seed: int = 0) -> RunRecord:
    """One simulator run of case number `case` (cases drawn with `seed`), exactly as `check` runs it,
    as a RunRecord; a diagnostic is kept on the record, not raised. For pictures of a kernel that
    has not been checked with this seed."""
    cases = puzzle.cases_for(kernel, np.random.default_rng(seed))
    if not 0 <= case < len(cases):
        raise IndexError(f"{puzzle.name} has {len(cases)} cases (0..{len(cases) - 1}); asked for case {case}")
    c = cases[case]
    record = RunRecord(puzzle, _kernel_name(kernel), c, case, seed)
    args, roles, record.outputs, _ = prepare_args(puzzle, c)
    try:
        record.launch = _launch(puzzle, kernel, c, args, roles, seed)
    except sim.SimulatorError as err:
        record.diagnostic = err
    return record


def _kernel_name(kernel) -> str:
    return getattr(kernel, "__name__", None) or getattr(
        getattr(kernel, "py_func", None), "__name__", "kernel"
    )


def expected(puzzle: Puzzle, case: Case, pristine: dict) -> dict[str, np.ndarray]:
    kw = {
        n: (pristine[n].copy() if n in pristine else case.args[n])
        for n in puzzle.signature
        if (n not in puzzle.outputs or n in puzzle.accumulate) and n not in puzzle.scratch
    }
    want = puzzle.spec(**kw)
    if not isinstance(want, dict):
        want = {puzzle.outputs[0]: want}
    return {n: np.asarray(want[n]) for n in puzzle.outputs}


def check(puzzle: Puzzle, kernel: Callable, *, seed: int | None = None, gpu: bool | None = None) -> Result:
    """Run `kernel` on every case of `puzzle`: PTX compile, simulator with every diagnostic and rule,
    then the real GPU where there is one. Raise a PuzzleFailure subclass (its `.run` is the failing
    case's RunRecord) or return a Result (its `.runs` hold every case's RunRecord)."""
    if kernel is None or not callable(getattr(kernel, "py_func", kernel)):
        raise TypeError(
            f"puzzles.check({puzzle.name!r}, kernel): kernel must be a @cuda.jit function, got {kernel!r}"
        )
    from . import engine

    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    cases = puzzle.cases_for(kernel, np.random.default_rng(seed))
    name = getattr(kernel, "__name__", "kernel")
    ctx = _Context(puzzle, name, seed, len(cases))
    ctx.deadline = time.monotonic() + CHECK_SECONDS
    runs: list = []
    try:
        _ptx(puzzle, kernel, cases[0], ctx)
        maxima = {}
        for k, case in enumerate(cases):
            runs.append(_sim_case(puzzle, kernel, case, k, seed, ctx, maxima))
        if ctx.pending:
            k, case, err = ctx.pending
            raise _fail(
                KernelDiagnosed(
                    ctx.head(k, case) + f"\n{type(err).__name__}: {err}\n(Every output was right, but only "
                    "by luck: on a GPU that value is whatever memory held.)" + ctx.tail(k),
                    err,
                ),
                runs[k],
            )
    except PuzzleFailure as failure:
        if ctx.pending and failure.run is not None and failure.run.case_index != ctx.pending[0]:
            text, sep, tail = failure.args[0].rpartition("\nSee what your kernel did:")
            if not sep:
                text, tail = failure.args[0], ""
            failure.args = (
                f"{text}\n\nAlso (this one changed no result by itself; fix the one above first):\n"
                + _pending_text(ctx)
                + (sep + tail if sep else ""),
                *failure.args[1:],
            )
        if not isinstance(failure, NotSolvedYet) and _is_stub(kernel, puzzle):
            stub = NotSolvedYet(
                f"Puzzle `{puzzle.name}`: not solved yet. `{name}` is still the stub; fill in the "
                "kernel where it says `# FILL ME IN` and run this cell again.\n"
                f"(What the checker saw so far: {type(failure).__name__}.)"
            )
            stub.run = failure.run
            raise stub from None
        raise
    engines = ["simulator", "PTX sm_75"] if ctx.ptx else ["simulator"]
    if gpu is None:
        gpu = engine.gpu_present()
    if gpu:
        for k, case in enumerate(cases):
            _gpu_case(puzzle, kernel, case, k, ctx)
        engines.append("GPU")
    budget = {
        r.name: r.limit_text()
        for r in puzzle.all_rules
        if r.per == "thread" and r.values is not None and r.limit is not None
    }
    return Result(puzzle.name, len(cases), tuple(engines), maxima, budget, runs)


class _Context:
    def __init__(self, puzzle, kernel_name, seed, n):
        self.puzzle, self.kernel_name, self.seed, self.n = puzzle, kernel_name, seed, n
        self.ptx = False
        self.deadline: float | None = None
        self.pending = None  # (case number, case, error): an uninitialised read that changed no result

    def head(self, k, case):
        return (
            f"Puzzle `{self.puzzle.name}` failed on case {k + 1} of {self.n}: {case.describe()}\n"
            f"(seed {self.seed}: puzzles.check({self.puzzle.name!r}, {self.kernel_name}, "
            f"seed={self.seed}) repeats this run)\n"
        )

    def tail(self, k, view="access"):
        v = "" if view == "access" else f", view={view!r}"
        return (
            f"\nSee what your kernel did: puzzles.show({self.puzzle.name!r}, {self.kernel_name}, "
            f"case={k}, seed={self.seed}{v})"
        )


def _body(source: str) -> list[str] | None:
    """The statements of the first function in `source`, comments, docstrings and `pass` left out."""
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return None
    return [
        ast.dump(stmt)
        for stmt in fn.body
        if not isinstance(stmt, ast.Pass)
        and not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
    ]


def _is_stub(kernel, puzzle: Puzzle) -> bool:
    """Judged by what the kernel does, not by its comments: True only when its body is still the
    puzzle's stub (a `# FILL ME IN` line kept above real code does not count)."""
    try:
        mine = _body(inspect.getsource(py_func(kernel)))
    except (OSError, TypeError):
        return False
    try:
        stub = _body(puzzle.stub)
        if stub == _body(puzzle.source):  # a worked example: no solution was cut out, so no stub
            return False
    except (OSError, TypeError):
        return False
    return mine is not None and mine == stub


def _not_a_kernel(kernel) -> str | None:
    """Python a CUDA kernel cannot be, said plainly (also where the compile check is unavailable)."""
    import ast
    import textwrap

    fn = py_func(kernel)
    if fn.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR | inspect.CO_COROUTINE):
        return (
            "it uses `yield` (or async): generators are not supported in a kernel. Write the values "
            "to an output array instead."
        )
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == fn.__name__:
            return (
                f"line {fn.__code__.co_firstlineno + node.lineno - 1} calls `{fn.__name__}` from inside "
                "itself: recursion is not supported in a kernel. Use a loop."
            )
    return None


def _ptx(puzzle, kernel, case, ctx):
    from . import ptx

    plain = _not_a_kernel(kernel)
    if plain:
        raise CompileRejected(f"Puzzle `{puzzle.name}`: this kernel cannot run on a GPU: {plain}")
    if not ptx.available():
        return
    args, roles, _, _ = prepare_args(puzzle, case)
    try:
        ptx.ptx_check(kernel, args)
    except ptx.NumbaRejected as e:
        msg = f"Puzzle `{puzzle.name}`: {e}"
        try:  # where the simulator knows more (a local array sized by an argument...), show it too
            _launch(puzzle, kernel, case, args, roles, ctx.seed, trace=False, deadline=ctx.deadline)
        except (sim.errors.Unsupported, sim.errors.LaunchError) as s:
            msg += f"\nThe simulator says: {s}"
        except Exception:  # noqa: BLE001 - any other outcome adds nothing to Numba's verdict
            pass
        raise CompileRejected(msg) from None
    ctx.ptx = True


def _fail(exc: PuzzleFailure, record: RunRecord) -> PuzzleFailure:
    exc.run = record
    return exc


# problems that change the answer whatever the values read: they lead over an uninitialised read
_ORDER_PROBLEMS = (sim.errors.DataRace, sim.errors.BarrierDivergence, sim.errors.Deadlock)


def _outputs_right(puzzle, case, outputs, args) -> bool:
    _, _, _, pristine = prepare_args(puzzle, case)
    want = expected(puzzle, case, pristine)
    return all(compare(want[n], outputs[n], puzzle) is None for n in puzzle.outputs)


def _pending_text(ctx) -> str:
    k, case, err = ctx.pending
    return f"case {k + 1} ({case.launch_text()}): {type(err).__name__}: {err}"


def _leading(err: Exception) -> tuple[Exception, list]:
    """(the problem to lead with, the others worth naming after it) of one run.

    The simulator runs past uninitialised reads (`defer_uninit`) and hands them over as
    `.secondary` of the error that stopped the run. A race, a barrier divergence or a deadlock leads
    (it changes the answer whatever value was read); any other error (an index out of bounds, an
    exception) may have been computed from the garbage value, so the uninitialised read leads, as
    its cause."""
    secondary = list(getattr(err, "secondary", None) or ())
    if not secondary:
        return err, []
    if isinstance(err, _ORDER_PROBLEMS):
        return err, secondary[:1]
    return secondary[0], []


def _sim_case(puzzle, kernel, case, k, seed, ctx, maxima) -> RunRecord:
    args, roles, outputs, pristine = prepare_args(puzzle, case)
    record = RunRecord(puzzle, ctx.kernel_name, case, k, seed, outputs=outputs)
    try:
        launch = _launch(puzzle, kernel, case, args, roles, seed, deadline=ctx.deadline)
    except sim.SimulatorError as raised:
        if getattr(raised, "completed", False) and _outputs_right(puzzle, case, outputs, args):
            # an uninitialised read whose value reached no output: secondary; look on for a problem
            # that changes the answer, and name this one after it (or alone, at the end)
            record.diagnostic = raised
            ctx.pending = ctx.pending or (k, case, raised)
            return record
        err, also = _leading(raised)
        record.diagnostic = err
        msg = ctx.head(k, case) + f"\n{type(err).__name__}: {err}"
        for other in also:
            msg += (
                "\n\nAlso in this run (often the same missing barrier or guard; fix the one above first):\n"
                f"{type(other).__name__}: {other}"
            )
        msg += ctx.tail(k)
        if isinstance(err, sim.errors.Runaway) and ctx.deadline and time.monotonic() >= ctx.deadline - 0.05:
            msg = (
                ctx.head(k, case)
                + f"\nRunaway: a check has {CHECK_SECONDS:g} s for all {ctx.n} cases on the simulator, and "
                f"your kernel was still running case {k + 1} when they ran out.\n{err}\n"
                "If the loop does end, it does far more work per thread than this puzzle needs (the "
                "reference checks in well under a second): look for a loop whose bound is not the data's "
                "size, or one that counts far past it."
            )
        raise _fail(KernelDiagnosed(msg, err), record) from None
    record.launch = launch
    trace = launch.trace
    out_ids = [trace.array(n).id for n in puzzle.outputs]
    writes = np.isin(trace.acc["array"], out_ids) & (trace.acc["kind"] != READ)
    if k == 0 and not writes.any():
        raise _fail(
            NotSolvedYet(
                f"Puzzle `{puzzle.name}`: not solved yet: `{ctx.kernel_name}` wrote nothing to "
                f"{', '.join(puzzle.outputs)} ({case.launch_text()}). Fill in the kernel; if you "
                "have, check that your guard lets some threads through."
            ),
            record,
        )
    for n, v in pristine.items():
        if not np.array_equal(np.asarray(args[puzzle.signature.index(n)]), v, equal_nan=True):
            raise _fail(
                InputModified(ctx.head(k, case) + f"\nthe kernel changed its input `{n}`." + ctx.tail(k)),
                record,
            )
    want = expected(puzzle, case, pristine)
    for n in puzzle.outputs:
        problem = compare(want[n], outputs[n], puzzle)
        if problem:
            raise _fail(
                WrongAnswer(ctx.head(k, case) + f"\n`{n}` is wrong:\n{problem}" + ctx.tail(k)), record
            )
    _apply_rules(puzzle, case, record, ctx, k, maxima)
    return record


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


def _apply_rules(puzzle, case, record, ctx, k, maxima):
    """Every rule of the puzzle's table on this run; the first broken one raises OverBudget."""
    rules = puzzle.all_rules
    run = _without_print_reads(record.launch)
    for r in rules:
        if r.per == "thread" and r.values is not None:
            v = r.values(run.trace)
            maxima[r.name] = max(maxima.get(r.name, 0), int(v.max()) if v.size else 0)
    for r in rules:
        found = r.check(run, case)
        if found is not None:
            raise _fail(
                OverBudget(
                    ctx.head(k, case) + "\n" + found.message + ctx.tail(k, found.view),
                    found.rule,
                    found.count,
                    found.limit,
                ),
                record,
            )


def compare(want: np.ndarray, got: np.ndarray, puzzle: Puzzle) -> str | None:
    """None if equal (exactly for integers, within tolerance for floats), else a compact view."""
    if want.shape != got.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if got.dtype.kind in "iub" or want.dtype.kind in "iub":  # integer data: exact
        bad = want != got
    else:
        bad = ~np.isclose(got, want, rtol=puzzle.rtol, atol=puzzle.atol, equal_nan=False)
    if not bad.any():
        return None
    return render_diff(want, got, bad)


def _fmt(v):
    if isinstance(v, (float, np.floating)):
        return "nan" if np.isnan(v) else f"{v:.4g}"
    return str(v)


def render_diff(want, got, bad) -> str:
    never = np.isnan(got) if got.dtype.kind == "f" else np.zeros_like(bad)
    lines = [
        f"{int(bad.sum())} of {bad.size} elements wrong"
        + (f" ({int((never & bad).sum())} never written: still the poison value)" if never.any() else "")
        + "; first ones:"
    ]
    for idx in list(zip(*np.nonzero(bad)))[:6]:
        i = tuple(int(x) for x in idx)
        s = ", ".join(map(str, i))
        lines.append(
            f"  [{s}]: expected {_fmt(want[i])}, got {_fmt(got[i])}"
            + (" (never written)" if never[i] else "")
        )
    if want.ndim == 1 and want.size <= 32:
        w = max(max(len(_fmt(x)) for x in want), max(len(_fmt(x)) for x in got), 3)
        lines.append("  expected " + " ".join(_fmt(x).rjust(w) for x in want))
        lines.append("  got      " + " ".join(_fmt(x).rjust(w) for x in got))
        lines.append("           " + " ".join(("X" if b else ".").rjust(w) for b in bad))
    elif want.ndim == 2 and want.shape[0] <= 16 and want.shape[1] <= 32:
        lines.append("  wrong cells (X), rows top to bottom:")
        for r in range(want.shape[0]):
            lines.append("    " + "".join("X" if b else "." for b in bad[r]))
    return "\n".join(lines)


def _gpu_case(puzzle, kernel, case, k, ctx):
    from numba import cuda

    from . import engine

    # numba-cuda's own functions: `helpers.use("sim")` may have replaced the ones on `cuda`
    to_device, synchronize = engine.STATE.real("to_device"), engine.STATE.real("synchronize")
    args, _, outputs, pristine = prepare_args(puzzle, case)
    dev = [to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    if not hasattr(kernel, "py_func"):
        kernel = cuda.jit(kernel)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=engine.LOW_OCCUPANCY_WARNING)
        engine.gpu_launch(kernel, case.grid, case.block, dev, case.shared_bytes)
    synchronize()
    want = expected(puzzle, case, pristine)
    for n in puzzle.outputs:
        got = dev[puzzle.signature.index(n)].copy_to_host()
        problem = compare(want[n], got, puzzle)
        if problem:
            raise GpuMismatch(
                ctx.head(k, case) + f"\non the real GPU `{n}` is wrong although the simulator "
                f"run was right (tell the course authors: this is a simulator gap):\n{problem}"
            )


def expect_failure(exc_type: type, fn: Callable, *args: Any, **kwargs: Any) -> BaseException:
    """Call fn; print the failure it raises. Raise AssertionError if it does not fail with exc_type.

    For notebook cells that show a wrong kernel being caught."""
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        print(f"{type(e).__name__} (as expected):\n{e}")
        # returned for tests; a cell that ends with this call must not echo it a second time
        e._ipython_display_ = _quiet
        return e
    except Exception as e:
        raise AssertionError(f"expected {exc_type.__name__}, but got {type(e).__name__}: {e}") from e
    raise AssertionError(f"expected {exc_type.__name__}, but nothing failed")
