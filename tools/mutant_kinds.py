"""How each registered mutant (tests/mutants/) is caught, in words, per puzzle: the data behind the
last line of `puzzles.summary()`. Computed when the notebooks are built (`python -m tools.nbbuild`
writes puzzles/mutant_kinds.json, which the wheel ships), so an installed course, which has no tests/,
shows the same summary as a checkout."""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from pathlib import Path

FILE = Path("puzzles") / "mutant_kinds.json"  # relative to the repository root

# a diagnostic class, a failure class or a rule name -> what the learner reads
_WORDS = {
    "WrongAnswer": "a wrong answer",
    "OutOfBounds": "an out-of-bounds access",
    "DataRace": "a data race",
    "UninitializedRead": "a read of memory nobody wrote",
    "BarrierDivergence": "a barrier not every thread reaches",
    "WarpDivergence": "a warp-divergent shuffle or vote",
    "Deadlock": "a deadlock",
    "Runaway": "a kernel that never ends",
    "ReadOnlyWrite": "a write to an input",
    "CompileRejected": "code Numba cannot compile",
    "InputModified": "a modified input",
    "NotSolvedYet": "a kernel that writes nothing",
    # many ranks (helpers.dist)
    "CommDeadlock": "a deadlock between ranks",
    "CountMismatch": "a send and receive that disagree",
    "BufferInUse": "a buffer used before its message completed",
    "RequestNotWaited": "a request never waited",
}
# a missing barrier is caught as either, depending on which thread ran first (tests/mutants/common.py)
_MISSING_BARRIER = {"DataRace", "UninitializedRead"}


def caught_as(exc: type, detail) -> str:
    """One MUTANTS entry's (exception class, detail) in words: the detail first (the diagnostic class,
    or the rule an OverBudget names), then the exception."""
    if exc.__name__ == "OverBudget" and detail == "float64":
        return "float64 arithmetic in a float32 exercise"
    if exc.__name__ == "OverBudget":
        return "over budget: " + str(detail).replace("_", " ")
    details = detail if isinstance(detail, tuple) else (detail,) if detail is not None else ()
    names = {d.__name__ for d in details}
    if len(names) > 1 and names == _MISSING_BARRIER:
        return "a missing barrier"
    for name in [d.__name__ for d in details] + [exc.__name__]:
        if name in _WORDS:
            return _WORDS[name]
    return "a known mistake"


def kinds(folder: Path, package: str = "mutants") -> dict[str, list[str]]:
    """{puzzle: [how each of its mutants is caught]} over every mutants file of `package` (the folder
    folder/package, e.g. root/tests/mutants), imported (so a table built by code counts as written),
    sorted by puzzle name."""
    tests = str(folder)
    sys.path.insert(0, tests)
    try:
        top = importlib.import_module(package)
        found: dict[str, tuple] = {}  # puzzle -> (module, its entries)
        for info in pkgutil.walk_packages(top.__path__, package + "."):
            module = importlib.import_module(info.name)
            for puzzle, entries in getattr(module, "MUTANTS", {}).items():
                # a package's __init__ may gather its op files' tables: the same entries, once
                if puzzle in found and list(found[puzzle][1]) != list(entries):
                    raise RuntimeError(
                        f"{found[puzzle][0]} and {info.name} register different mutants for {puzzle!r}"
                    )
                found.setdefault(puzzle, (info.name, entries))
    finally:
        sys.path.remove(tests)
    return {p: [caught_as(e[2], e[3]) for e in entries] for p, (_, entries) in sorted(found.items())}


def text(root: Path) -> str:
    """The JSON file's text: one line per puzzle, so a diff shows which puzzle's mutants changed."""
    table = kinds(root / "tests")
    lines = [f" {json.dumps(p)}: {json.dumps(v)}" for p, v in table.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"
