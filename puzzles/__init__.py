"""Every puzzle and exercise of the course, by short name.

    import puzzles
    puzzles.check("map", my_kernel)     # raises on any failure, returns a Result
    puzzles.show("map", my_kernel)      # draws what the kernel did (the run check made, if any)
    puzzles.hint("map", 2)

Each exercise module (`puzzles/gpu_puzzles/*.py`, `puzzles/pmpp/*.py`, `puzzles/llm/*.py`, or any
package on `SEARCH`) defines `PUZZLES`, a list of `helpers.puzzle.Puzzle`.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from matplotlib.figure import Figure

from helpers import check as harness
from helpers import viz
from helpers.puzzle import Puzzle, RunRecord

# packages whose modules (recursively) hold exercises; a test may add one
SEARCH: list[str] = [__name__]
_REGISTRY: dict[str, Puzzle] = {}
_MODULES: dict[str, str] = {}  # puzzle name -> module name
_LAST: dict[str, tuple] = {}  # puzzle name -> (kernel, seed, {case: RunRecord}) of the last check
_SKIP = {"puzzles.bench"}  # tools living in the package


def _load() -> dict[str, Puzzle]:
    if _REGISTRY:
        return _REGISTRY
    for pkg_name in SEARCH:
        pkg = importlib.import_module(pkg_name)
        mods = sorted(m.name for m in pkgutil.walk_packages(pkg.__path__, pkg_name + ".") if not m.ispkg)
        for mod in mods:
            if mod in _SKIP:
                continue
            module = importlib.import_module(mod)
            for p in getattr(module, "PUZZLES", ()):
                if p.name in _REGISTRY:
                    raise RuntimeError(f"puzzle name {p.name!r} defined twice ({_MODULES[p.name]} and {mod})")
                _REGISTRY[p.name] = p
                _MODULES[p.name] = mod
    return _REGISTRY


def reload() -> None:
    """Forget the registry (after adding a package to SEARCH); the next call walks again."""
    _REGISTRY.clear()
    _MODULES.clear()
    _LAST.clear()


def get(name: str) -> Puzzle:
    reg = _load()
    if name not in reg:
        raise KeyError(f"no puzzle named {name!r}; known: {', '.join(reg)}")
    return reg[name]


def names(chapter: str | None = None) -> list[str]:
    return [n for n, p in _load().items() if chapter is None or p.chapter == chapter]


def module_of(name: str) -> str:
    """The module that defines puzzle `name`, e.g. "puzzles.pmpp.ch10_reduction"."""
    get(name)
    return _MODULES[name]


def check(name: str, kernel: Callable, *, seed: int | None = None, gpu: bool | None = None) -> harness.Result:
    """Check `kernel` against puzzle `name`: raise a PuzzleFailure (an AssertionError) or return a Result."""
    try:
        result = harness.check(get(name), kernel, seed=seed, gpu=gpu)
    except harness.PuzzleFailure as failure:
        if failure.run is not None:
            _LAST[name] = (kernel, failure.run.seed, {failure.run.case_index: failure.run})
        raise
    if result.runs:
        _LAST[name] = (kernel, result.runs[0].seed, {r.case_index: r for r in result.runs})
    return result


def last_run(name: str, kernel: Callable, *, case: int = 0, seed: int | None = None) -> RunRecord | None:
    """The run the last `check(name, kernel)` made of `case` (with `seed`, if given), or None."""
    kept = _LAST.get(name)
    if kept is None or kept[0] is not kernel or (seed is not None and kept[1] != seed):
        return None
    return kept[2].get(case)


def show(
    name: str, kernel: Callable, view: str = "access", *, case: int = 0, seed: int | None = None
) -> Figure:
    """Draw what `kernel` did on case `case` of puzzle `name` (see helpers.viz.draw for the views).

    Draws the run the last check of this kernel made when there is one (same case and seed);
    otherwise runs that one case once on the simulator (seed 0 unless given)."""
    viz.check_view(view)
    run = last_run(name, kernel, case=case, seed=seed)
    if run is None:
        run = harness.run_once(get(name), kernel, case=case, seed=0 if seed is None else seed)
    return viz.draw(run, view)


def hint(name: str, n: int = 1) -> None:
    print(get(name).hint(n))


__all__ = ["SEARCH", "check", "get", "hint", "last_run", "module_of", "names", "reload", "show"]
