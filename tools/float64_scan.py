"""Check every registered reference and correct variant (tests/mutants/ VARIANTS) once, on seed 0, and
list those that fail, print a NumPy RuntimeWarning, or pass with a float64 note (float64 arithmetic in
a float32 exercise: helpers/float64.py). The course's own code should be clean on all three.

    python -m tools.float64_scan [puzzle names...]     # run from the repository root
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import puzzles


def _variants(name: str) -> list:
    sys.path.insert(0, str(Path("tests").resolve()))
    from support import controls  # tests/support.py: the mutants file of a puzzle's module

    return list(controls(puzzles.module_of(name)).VARIANTS.get(name, ()))


def scan(names: list[str]) -> list[str]:
    """One line per finding: `<puzzle> <kernel>: <what>`."""
    findings = []
    for name in names:
        kernels = [("reference", puzzles.get(name).reference), *_variants(name)]
        for label, kernel in kernels:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    result = puzzles.check(name, kernel, seed=0)
                except Exception as e:  # noqa: BLE001 - a failing reference is a finding, not a crash
                    findings.append(f"{name} {label}: FAILS {type(e).__name__}: {str(e)[:200]}")
                    continue
            for w in caught:
                if issubclass(w.category, RuntimeWarning):
                    findings.append(f"{name} {label}: RuntimeWarning {w.message} ({w.filename}:{w.lineno})")
            for note in result.notes:
                if "float64" in note:
                    findings.append(f"{name} {label}: float64 note: {note[:160]}")
            print(f"checked {name} {label}", file=sys.stderr, flush=True)
    return findings


if __name__ == "__main__":
    found = scan(sys.argv[1:] or puzzles.names())
    print("\n".join(found) or "all clean")
    sys.exit(1 if found else 0)
