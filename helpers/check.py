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
import warnings
from dataclasses import dataclass

import numpy as np

from . import sim
from .puzzle import Case, Puzzle
from .sim.kernel import py_func
from .sim.trace import ATOMIC, READ, WRITE, coalescing_by_line


class PuzzleFailure(AssertionError):
    """Base of every verdict other than success."""


class NotSolvedYet(PuzzleFailure):
    """The kernel is still the stub (or writes nothing at all)."""


class CompileRejected(PuzzleFailure):
    """Real Numba refuses to compile the kernel."""


class KernelDiagnosed(PuzzleFailure):
    """The simulator caught the kernel doing something a GPU would not forgive."""

    def __init__(self, message, diagnostic):
        super().__init__(message)
        self.diagnostic = diagnostic


class WrongAnswer(PuzzleFailure):
    """The output differs from the spec."""


class OverBudget(PuzzleFailure):
    """A thread or block made more memory accesses (or used more shared memory) than allowed."""

    def __init__(self, message, field, count, limit):
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
    maxima: dict           # budget field -> max per thread over all cases
    budget: dict           # budget field -> limit text

    def __repr__(self):
        parts = []
        for f, m in self.maxima.items():
            lim = self.budget.get(f)
            parts.append(f"{f.replace('_', ' ')} {m}" + (f" (budget {lim})" if lim is not None else ""))
        return (f"Passed: {self.puzzle}, {self.cases} cases on {' + '.join(self.engines)}.\n"
                f"Most per thread: {', '.join(parts)}.")

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))


_COUNTS = {
    "global_reads": ("global", READ), "global_writes": ("global", WRITE),
    "shared_reads": ("shared", READ), "shared_writes": ("shared", WRITE),
}


def poison(like: np.ndarray) -> np.ndarray:
    """A fresh array shaped like `like`, filled with values no correct kernel leaves behind."""
    if like.dtype.kind in "fc":
        return np.full(like.shape, np.nan, like.dtype)
    if like.dtype.kind in "iu":
        return np.full(like.shape, np.iinfo(like.dtype).max // 3 + 7, like.dtype)
    return np.zeros(like.shape, like.dtype)


def prepare_args(puzzle: Puzzle, case: Case):
    """(args list, roles, outputs dict, pristine inputs dict) for one run: fresh every time."""
    args, roles, outputs, pristine = [], {}, {}, {}
    for name in puzzle.signature:
        v = case.args[name]
        if name in puzzle.outputs:
            arr = np.zeros_like(v) if name in puzzle.zeroed else poison(v)
            roles[name] = "inout" if name in puzzle.zeroed else "out"
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


def run_case(puzzle: Puzzle, kernel, case: Case, *, seed: int = 0, trace: bool = True):
    """Run one case on the simulator with every diagnostic on.

    Returns (launch, outputs); raises helpers.sim.errors.SimulatorError on a diagnostic."""
    args, roles, outputs, _ = prepare_args(puzzle, case)
    launch = sim.launch(kernel, case.grid, case.block, args, shared_bytes=case.shared_bytes, roles=roles,
                        trace=trace, block_order="shuffle", seed=seed,
                        cross_block_races=puzzle.cross_block_races)
    return launch, outputs


def expected(puzzle: Puzzle, case: Case, pristine: dict) -> dict:
    kw = {n: (pristine[n].copy() if n in pristine else case.args[n])
          for n in puzzle.signature if n not in puzzle.outputs and n not in puzzle.scratch}
    want = puzzle.spec(**kw)
    if not isinstance(want, dict):
        want = {puzzle.outputs[0]: want}
    return {n: np.asarray(want[n]) for n in puzzle.outputs}


def check(puzzle: Puzzle, kernel, *, seed=None, gpu=None) -> Result:
    if kernel is None or not callable(getattr(kernel, "py_func", kernel)):
        raise TypeError(f"puzzles.check({puzzle.name!r}, kernel): kernel must be a @cuda.jit function, "
                        f"got {kernel!r}")
    from . import engine
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    cases = puzzle.cases(np.random.default_rng(seed))
    name = getattr(kernel, "__name__", "kernel")
    ctx = _Context(puzzle, name, seed, len(cases))
    try:
        _ptx(puzzle, kernel, cases[0], ctx)
        maxima = {}
        for k, case in enumerate(cases):
            _sim_case(puzzle, kernel, case, k, seed, ctx, maxima)
    except PuzzleFailure as failure:
        if _is_stub(kernel) and not isinstance(failure, NotSolvedYet):
            raise NotSolvedYet(f"Puzzle `{puzzle.name}`: not solved yet. `{name}` still has its "
                               "`# FILL ME IN` line; fill in the kernel and run this cell again.\n"
                               f"(What the checker saw so far: {type(failure).__name__}.)") from None
        raise
    engines = ["simulator", "PTX sm_75"] if ctx.ptx else ["simulator"]
    if gpu is None:
        gpu = engine.gpu_present()
    if gpu:
        for k, case in enumerate(cases):
            _gpu_case(puzzle, kernel, case, k, ctx)
        engines.append("GPU")
    budget = {f: _limit_text(getattr(puzzle.budget, f)) for f in _COUNTS
              if getattr(puzzle.budget, f) is not None}
    return Result(puzzle.name, len(cases), tuple(engines), maxima, budget)


class _Context:
    def __init__(self, puzzle, kernel_name, seed, n):
        self.puzzle, self.kernel_name, self.seed, self.n = puzzle, kernel_name, seed, n
        self.ptx = False

    def head(self, k, case):
        return (f"Puzzle `{self.puzzle.name}` failed on case {k + 1} of {self.n}: {case.describe()}\n"
                f"(seed {self.seed}: puzzles.check({self.puzzle.name!r}, {self.kernel_name}, "
                f"seed={self.seed}) repeats this run)\n")

    def tail(self, k, view="access"):
        v = "" if view == "access" else f", view={view!r}"
        return (f"\nSee what your kernel did: puzzles.show({self.puzzle.name!r}, {self.kernel_name}, "
                f"case={k}, seed={self.seed}{v})")


def _is_stub(kernel) -> bool:
    try:
        return "# FILL ME IN" in inspect.getsource(py_func(kernel))
    except (OSError, TypeError):
        return False


def _ptx(puzzle, kernel, case, ctx):
    from . import compile as ptx
    if not ptx.available():
        return
    args, _, _, _ = prepare_args(puzzle, case)
    try:
        ptx.ptx_check(kernel, args)
    except ptx.NumbaRejected as e:
        raise CompileRejected(f"Puzzle `{puzzle.name}`: {e}") from None
    ctx.ptx = True


def _sim_case(puzzle, kernel, case, k, seed, ctx, maxima):
    args, roles, outputs, pristine = prepare_args(puzzle, case)
    try:
        launch = sim.launch(kernel, case.grid, case.block, args, shared_bytes=case.shared_bytes, roles=roles,
                            block_order="shuffle", seed=seed, cross_block_races=puzzle.cross_block_races)
    except sim.SimulatorError as err:
        msg = ctx.head(k, case) + f"\n{type(err).__name__}: {err}" + ctx.tail(k)
        raise KernelDiagnosed(msg, err) from None
    trace = launch.trace
    out_ids = [trace.array(n).id for n in puzzle.outputs]
    writes = np.isin(trace.acc["array"], out_ids) & (trace.acc["kind"] != READ)
    if k == 0 and not writes.any():
        raise NotSolvedYet(f"Puzzle `{puzzle.name}`: not solved yet: `{ctx.kernel_name}` wrote nothing to "
                           f"{', '.join(puzzle.outputs)} ({case.launch_text()}). Fill in the kernel; if you "
                           "have, check that your guard lets some threads through.")
    for n, v in pristine.items():
        if not np.array_equal(np.asarray(args[puzzle.signature.index(n)]), v, equal_nan=True):
            raise InputModified(ctx.head(k, case) + f"\nthe kernel changed its input `{n}`." + ctx.tail(k))
    want = expected(puzzle, case, pristine)
    for n in puzzle.outputs:
        problem = compare(want[n], outputs[n], puzzle)
        if problem:
            raise WrongAnswer(ctx.head(k, case) + f"\n`{n}` is wrong:\n{problem}" + ctx.tail(k))
    _budgets(puzzle, case, launch, ctx, k, maxima)


def _limit(limit, case):
    return limit(case) if callable(limit) else limit


def _limit_text(limit):
    return "depends on size" if callable(limit) else limit


def _budgets(puzzle, case, launch, ctx, k, maxima):
    trace, b = launch.trace, puzzle.budget
    for field, (space, kind) in _COUNTS.items():
        counts = trace.counts(space=space, kind=kind)
        m = int(counts.max()) if counts.size else 0
        maxima[field] = max(maxima.get(field, 0), m)
        limit = _limit(getattr(b, field), case)
        if limit is not None and m > limit:
            blk, thr = np.unravel_index(int(counts.argmax()), counts.shape)
            what = field.replace("_", " ")
            raise OverBudget(
                ctx.head(k, case) + f"\nthread {trace.thread_index(int(thr))} of block "
                f"{trace.block_index(int(blk))} made {m} {what}; the budget is {limit} per thread. "
                + _BUDGET_HINT[field] + ctx.tail(k, "counts"), field, m, limit)
    limit = _limit(b.shared_bytes, case)
    if limit is not None and launch.shared_bytes > limit:
        used = launch.shared_bytes
        raise OverBudget(ctx.head(k, case) + f"\neach block uses {used} bytes of shared memory; the budget "
                         f"is {limit}." + ctx.tail(k), "shared_bytes", used, limit)
    if b.min_coalescing is not None:
        for (line, arr), (moved, ideal) in sorted(coalescing_by_line(trace).items()):
            if moved and ideal / moved < b.min_coalescing:
                raise OverBudget(
                    ctx.head(k, case) + f"\nline {line} accesses `{arr}` with {ideal / moved:.0%} coalescing:"
                    " "
                    f"its warps moved {moved} 32-byte sectors where {ideal} would do (the budget is "
                    f"{b.min_coalescing:.0%}). Neighbouring threads of a warp (threadIdx.x, x+1, ...) should "
                    "touch neighbouring addresses; load through shared memory to turn the corner."
                    + ctx.tail(k, "coalescing"), "min_coalescing", round(ideal / moved, 3), b.min_coalescing)
    limit = _limit(b.global_atomics_per_block, case)
    if limit is not None:
        rows = trace.select(space="global", kind=ATOMIC)
        per_block = np.bincount(rows["block"], minlength=trace.nblocks)
        m = int(per_block.max()) if per_block.size else 0
        if m > limit:
            blk = int(per_block.argmax())
            raise OverBudget(ctx.head(k, case) + f"\nblock {trace.block_index(blk)} made {m} atomic updates "
                             f"to global memory; the budget is {limit} per block. Accumulate privately "
                             "(shared memory) first, then merge once per block." + ctx.tail(k, "counts"),
                             "global_atomics_per_block", m, limit)


_BUDGET_HINT = {
    "global_reads": "Global memory is the slow part: load each value once (into a register or shared "
                    "memory) and reuse it.",
    "global_writes": "Write each output element once, from one thread, after the result is complete.",
    "shared_reads": "Read fewer shared values per thread: keep partial results in registers.",
    "shared_writes": "Write fewer shared values per thread.",
}


def compare(want: np.ndarray, got: np.ndarray, puzzle: Puzzle) -> str | None:
    """None if equal (exactly for integers, within tolerance for floats), else a compact view."""
    if want.shape != got.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if got.dtype.kind in "iub" or want.dtype.kind in "iub":   # integer data: exact
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
    lines = [f"{int(bad.sum())} of {bad.size} elements wrong"
             + (f" ({int((never & bad).sum())} never written: still the poison value)" if never.any() else "")
             + "; first ones:"]
    for idx in list(zip(*np.nonzero(bad)))[:6]:
        i = tuple(int(x) for x in idx)
        s = ", ".join(map(str, i))
        lines.append(f"  [{s}]: expected {_fmt(want[i])}, got {_fmt(got[i])}"
                     + (" (never written)" if never[i] else ""))
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
    args, _, outputs, pristine = prepare_args(puzzle, case)
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    if not hasattr(kernel, "py_func"):
        kernel = cuda.jit(kernel)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=engine.LOW_OCCUPANCY_WARNING)
        engine.gpu_launch(kernel, case.grid, case.block, dev, case.shared_bytes)
    cuda.synchronize()
    want = expected(puzzle, case, pristine)
    for n in puzzle.outputs:
        got = dev[puzzle.signature.index(n)].copy_to_host()
        problem = compare(want[n], got, puzzle)
        if problem:
            raise GpuMismatch(ctx.head(k, case) + f"\non the real GPU `{n}` is wrong although the simulator "
                              f"run was right (tell the course authors: this is a simulator gap):\n{problem}")


def expect_failure(exc_type, fn, *args, **kwargs):
    """Call fn; print the failure it raises. Raise AssertionError if it does not fail with exc_type.

    For notebook cells that show a wrong kernel being caught."""
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        print(f"{type(e).__name__} (as expected):\n{e}")
        return e
    except Exception as e:
        raise AssertionError(f"expected {exc_type.__name__}, but got {type(e).__name__}: {e}") from e
    raise AssertionError(f"expected {exc_type.__name__}, but nothing failed")
