"""What every mutants file shares: the expected-failure shorthands.

A mutants file (`tests/mutants/<subpackage>/<module>.py`, mirroring `puzzles/`) holds
MUTANTS[puzzle] = [(name, kernel, expected exception class, detail), ...] where detail is
  - the `helpers.sim.errors` class (or tuple of classes) of `.diagnostic` when the exception is
    KernelDiagnosed,
  - the rule name (e.g. "global_reads") when it is OverBudget,
  - None otherwise;
VARIANTS[puzzle] = [(name, kernel), ...]: correct kernels written differently from the reference;
and optionally SEEDS[puzzle] = (0, 1, 2): the seeds every check of that puzzle runs with.

Every mutant is a mistake a learner makes; each is wrong on every engine (the simulator sees more,
the GPU sees at least a wrong answer or garbage), so the lead can run these on a real GPU too.
A barrier missing before the first read of freshly loaded shared memory shows up as
UninitializedRead when the simulator happens to run the reader before the writer, and as DataRace
when the writer ran first (block order is shuffled by seed): such mutants accept either
(`NO_BARRIER`, detail is a tuple). A barrier missing once every slot is initialised is always a
DataRace.
"""

import inspect
import linecache
import textwrap

from helpers.check import CompileRejected, KernelDiagnosed, OverBudget, WrongAnswer
from helpers.puzzle import strip_markers
from helpers.sim.errors import (
    BarrierDivergence,
    DataRace,
    OutOfBounds,
    ReadOnlyWrite,
    UninitializedRead,
    WarpDivergence,
)

OOB = (KernelDiagnosed, OutOfBounds)
RACE = (KernelDiagnosed, DataRace)
UNINIT = (KernelDiagnosed, UninitializedRead)
BARRIER = (KernelDiagnosed, BarrierDivergence)
READONLY = (KernelDiagnosed, ReadOnlyWrite)
WARP_DIV = (KernelDiagnosed, WarpDivergence)
NO_BARRIER = (KernelDiagnosed, (DataRace, UninitializedRead))
WRONG = (WrongAnswer, None)

__all__ = [
    "BARRIER",
    "CompileRejected",
    "KernelDiagnosed",
    "M",
    "NO_BARRIER",
    "OOB",
    "OverBudget",
    "RACE",
    "READONLY",
    "UNINIT",
    "WARP_DIV",
    "WRONG",
    "WrongAnswer",
    "mutate",
    "over",
]


def over(field):
    return (OverBudget, field)


def mutate(kernel, name, *edits):
    """A copy of `kernel` (solution markers removed) with each (old, new) text replacement applied.

    Each `old` must occur exactly once in the kernel's source, so that a mutant cannot silently turn
    into the reference (or into nothing) when the reference is edited: a stale edit raises here, at
    import."""
    f = getattr(kernel, "py_func", kernel)
    src = textwrap.dedent(strip_markers(inspect.getsource(f)))
    for old, new in edits:
        if src.count(old) != 1:
            raise ValueError(f"mutant {name}: {old!r} occurs {src.count(old)} times in {f.__name__}")
        src = src.replace(old, new)
    src = src.replace(f"def {f.__name__}(", f"def {name}(", 1)
    # one file name per mutant: lockstep reads a kernel's source back through linecache by its file
    # name, and two exercises may each have a mutant of the same name
    filename = f"<mutant {f.__module__}.{name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    namespace = dict(f.__globals__)
    exec(compile(src, filename, "exec"), namespace)
    return namespace[name]


def M(kernel, name, expected, *edits):
    """A MUTANTS entry: `mutate(kernel, name, *edits)`, expected to fail as `expected` (a shorthand)."""
    exc, detail = expected
    return (name, mutate(kernel, name, *edits), exc, detail)
