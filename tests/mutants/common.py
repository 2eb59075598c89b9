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

from helpers.check import CompileRejected, KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import BarrierDivergence, DataRace, OutOfBounds, ReadOnlyWrite, UninitializedRead

OOB = (KernelDiagnosed, OutOfBounds)
RACE = (KernelDiagnosed, DataRace)
UNINIT = (KernelDiagnosed, UninitializedRead)
BARRIER = (KernelDiagnosed, BarrierDivergence)
READONLY = (KernelDiagnosed, ReadOnlyWrite)
NO_BARRIER = (KernelDiagnosed, (DataRace, UninitializedRead))
WRONG = (WrongAnswer, None)

__all__ = [
    "BARRIER",
    "CompileRejected",
    "KernelDiagnosed",
    "NO_BARRIER",
    "OOB",
    "OverBudget",
    "RACE",
    "READONLY",
    "UNINIT",
    "WRONG",
    "WrongAnswer",
    "over",
]


def over(field):
    return (OverBudget, field)
