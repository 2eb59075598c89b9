"""What the test files share: the learner's stub compiled as a notebook cell would compile it, the
mutants file of an exercise module (tests/mutants/ mirrors puzzles/), and the checks already
made in this process (`checked`). Not in conftest.py: the repository root has a conftest.py too, and
`import conftest` would be ambiguous."""

from __future__ import annotations

import importlib
import linecache
import sys
from types import ModuleType, SimpleNamespace

from helpers.puzzle import Puzzle

MUTANTS_PACKAGE = "mutants"  # tests/mutants, importable as pytest puts tests/ on sys.path


_STUBS: dict[tuple, object] = {}


def stub_kernel(p: Puzzle):
    """The learner's stub of `p`, compiled in a copy of its module's globals (as a notebook cell
    that follows `from <module> import *` would), with its source visible to inspect. One function per
    puzzle and stub text, so that `checked` knows it again."""
    key = (p.name, p.stub)
    if key not in _STUBS:
        _STUBS[key] = _compile_stub(p)
    return _STUBS[key]


def _compile_stub(p: Puzzle):
    module = sys.modules[p.reference.py_func.__module__]
    filename = f"<stub {p.name}>"
    source = p.stub
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = dict(vars(module))
    exec(compile(source, filename, "exec"), namespace)
    return namespace[p.reference.py_func.__name__]


def mutants_module(puzzle_module: str, package: str = MUTANTS_PACKAGE) -> ModuleType | None:
    """The mutants module mutants.X.Y (tests/mutants/X/Y.py) of exercise module puzzles.X.Y, or
    None when it has none yet."""
    rel = puzzle_module.split(".", 1)[1] if "." in puzzle_module else puzzle_module
    try:
        return importlib.import_module(f"{package}.{rel}")
    except ModuleNotFoundError as e:
        if e.name and (e.name == f"{package}.{rel}" or f"{package}.{rel}".startswith(e.name + ".")):
            return None
        raise


def controls(puzzle_module: str, package: str = MUTANTS_PACKAGE) -> SimpleNamespace:
    """MUTANTS, VARIANTS, SEEDS of one exercise module (empty when it has no mutants file)."""
    m = mutants_module(puzzle_module, package)
    return SimpleNamespace(
        MUTANTS=getattr(m, "MUTANTS", {}), VARIANTS=getattr(m, "VARIANTS", {}), SEEDS=getattr(m, "SEEDS", {})
    )


# (puzzle, kernel, seed, engine) -> (kernel, what check returned or raised), for one puzzle at a time:
# conftest.py runs a puzzle's tests one after another (and on one xdist worker)
_CHECKS: dict[tuple, tuple] = {}


def checked(puzzle: Puzzle, kernel, seed: int, *, fresh: bool = False):
    """`helpers.check.check(puzzle, kernel, seed=seed, gpu=False)` on the simulator engine in use
    (`helpers.sim.config.engine`): the Result, or the PuzzleFailure it raised (returned, not raised).
    Made once: test_exercises.py and test_engines_agree.py ask for the same checks, and the second
    asker reads the first one's. Kept for the puzzle at hand only (a check holds its traces).
    `fresh`: check again and keep nothing (a test that patches the simulator)."""
    from helpers import sim
    from helpers.check import PuzzleFailure, check

    key = (puzzle.name, id(kernel), seed, sim.config.engine)
    if fresh:
        try:
            return check(puzzle, kernel, seed=seed, gpu=False)
        except PuzzleFailure as failure:
            return failure
    if key not in _CHECKS:
        if any(k[0] != puzzle.name for k in _CHECKS):
            _CHECKS.clear()
        try:
            got = check(puzzle, kernel, seed=seed, gpu=False)
        except PuzzleFailure as failure:
            got = failure
        _CHECKS[key] = (kernel, got)  # the kernel kept alive, so its id is not reused
    return _CHECKS[key][1]
