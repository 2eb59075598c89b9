"""Loaders the test files share: the learner's stub compiled as a notebook cell would compile it,
and the mutants file of an exercise module (tests/mutants/<subpackage>/<module>.py). Not in
conftest.py: the repository root has a conftest.py too, and `import conftest` would be ambiguous."""

from __future__ import annotations

import importlib
import linecache
import sys
from types import ModuleType, SimpleNamespace

from helpers.puzzle import Puzzle

MUTANTS_PACKAGE = "mutants"  # tests/mutants, importable as pytest puts tests/ on sys.path


def stub_kernel(p: Puzzle):
    """The learner's stub of `p`, compiled in a copy of its module's globals (as a notebook cell
    that follows `from <module> import *` would), with its source visible to inspect."""
    module = sys.modules[p.reference.py_func.__module__]
    filename = f"<stub {p.name}>"
    source = p.stub
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = dict(vars(module))
    exec(compile(source, filename, "exec"), namespace)
    return namespace[p.reference.py_func.__name__]


def mutants_module(puzzle_module: str, package: str = MUTANTS_PACKAGE) -> ModuleType | None:
    """tests/mutants/<subpackage>/<module>.py for exercise module puzzles.<subpackage>.<module>, or
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
