"""Every puzzle and exercise of the course, by short name.

    import puzzles
    puzzles.check("map", my_kernel)     # raises on any failure, returns a Result
    puzzles.show("map", my_kernel)      # draws what the kernel did (the run check made, if any)
    puzzles.hint("map", 2)

Each exercise module (`puzzles/gpu_puzzles/*.py`, `puzzles/pmpp/*.py`, `puzzles/llm/*.py`, or any
package on `SEARCH`) defines `PUZZLES`, a list of `helpers.puzzle.Puzzle`.
"""

from __future__ import annotations

import difflib
import importlib
import json
import pathlib
import pkgutil
import sys
from typing import Callable

from matplotlib.figure import Figure

from helpers import check as harness
from helpers import environment, viz
from helpers.puzzle import Puzzle, RunRecord

# packages whose modules (recursively) hold exercises; a test may add one
SEARCH: list[str] = [__name__]
_REGISTRY: dict[str, Puzzle] = {}
_MODULES: dict[str, str] = {}  # puzzle name -> module name
_LAST: dict[str, tuple] = {}  # puzzle name -> (kernel, seed, {case: RunRecord}) of the last check
_KINDS: dict[str, list[str]] = {}  # puzzle name -> how each of its mutants is caught (see _mutant_kinds)
_PASSED: set[str] = set()  # puzzles whose check passed in this session


def _load() -> dict[str, Puzzle]:
    if _REGISTRY:
        return _REGISTRY
    for pkg_name in SEARCH:
        pkg = importlib.import_module(pkg_name)
        mods = sorted(m.name for m in pkgutil.walk_packages(pkg.__path__, pkg_name + ".") if not m.ispkg)
        for mod in mods:
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
        close = difflib.get_close_matches(name, list(reg), n=3, cutoff=0.6)
        guess = f"puzzles.names() lists all {len(reg)}"
        if close:
            guess = f"did you mean `{close[0]}`?" + (
                f" (also close: {', '.join(f'`{c}`' for c in close[1:])})" if close[1:] else ""
            )
        raise KeyError(f"no puzzle named {name!r}; {guess}")
    return reg[name]


def names(chapter: str | None = None) -> list[str]:
    kernels = [n for n, p in _load().items() if chapter is None or p.chapter == chapter]
    return kernels + [n for n, ex in _many_ranks().items() if chapter is not None and ex.chapter == chapter]


def _many_ranks() -> dict:
    """The exercises for many ranks (puzzles/dist, helpers.dist.Exercise), by name: checked through
    `check` too, and counted by `summary`, but not kernel puzzles (`get`, `show` are for those)."""
    from puzzles import dist

    return {n: dist.get(n) for n in dist.names()}


def module_of(name: str) -> str:
    """The module that defines puzzle `name`, e.g. "puzzles.pmpp.ch10_reduction"."""
    get(name)
    return _MODULES[name]


def check(name: str, kernel: Callable, *, seed: int | None = None, gpu: bool | None = None) -> harness.Result:
    """Check `kernel` against puzzle `name`: raise a PuzzleFailure (an AssertionError) or return a Result."""
    environment.require_setup()  # in a notebook, the setup cell first: one sentence, not a traceback
    if name not in _load() and name in _many_ranks():  # a function of many ranks, on in-process ranks
        from puzzles import dist

        result = dist.check(name, kernel, seed=seed)
        _PASSED.add(name)
        return result
    runs: list[RunRecord] = []  # every case the check ran, the failing one last
    try:
        result = harness.check(get(name), kernel, seed=seed, gpu=gpu, runs=runs)
    finally:
        if runs:
            _LAST[name] = (kernel, runs[0].seed, {r.case_index: r for r in runs})
    _PASSED.add(name)
    return result


def last_run(name: str, kernel: Callable, *, case: int = 0, seed: int | None = None) -> RunRecord | None:
    """The run the last `check(name, kernel)` made of `case` (with `seed`, if given), or None."""
    kept = _LAST.get(name)
    if kept is None or kept[0] is not kernel or (seed is not None and kept[1] != seed):
        return None
    return kept[2].get(case)


def show(
    name: str,
    kernel: Callable,
    view: str = "access",
    *,
    case: int = 0,
    seed: int | None = None,
    thread: tuple | int | None = None,
) -> Figure:
    """Draw what `kernel` did on case `case` of puzzle `name` (see helpers.viz.draw for the views).
    `thread=(x, y)` picks one thread of the access map: it is drawn in colour, the others faint.
    Output cells whose value is wrong are framed in vermillion.

    Draws the run the last check of this kernel made when there is one (same case and seed);
    otherwise runs that one case once on the simulator (seed 0 unless given)."""
    viz.check_view(view)
    run = last_run(name, kernel, case=case, seed=seed)
    if run is None:
        run = harness.run_once(get(name), kernel, case=case, seed=0 if seed is None else seed)
    return viz.draw(run, view, wrong=wrong_cells(run), thread=thread)


def wrong_cells(run: RunRecord) -> dict:
    """{output name: flat indices} of the cells of a finished run that differ from the spec: what the
    run's record says (the check judged it once, with `helpers.compare`'s rule)."""
    if run.diagnostic is not None or not run.outputs:
        return {}
    return dict(run.wrong)


def _mutant_kinds() -> dict[str, list[str]]:
    """{puzzle: [how each of its known-wrong kernels is caught]}: the course's mutants (tests/mutants/),
    written into the package when the notebooks are built (`python -m tools.nbbuild`), so an installed
    course has them too."""
    if not _KINDS:
        path = pathlib.Path(__file__).with_name("mutant_kinds.json")
        _KINDS.update(json.loads(path.read_text()))
    return _KINDS


def summary(chapter: str | tuple[str, ...] | None = None, *, cpp: bool = False) -> None:
    """Print `summary_text(chapter)`: the last cell of every notebook calls it. `cpp=True`: what this
    session proved of the chapter's CUDA C++ twins (puzzles/cpp/) instead."""
    if cpp:  # the C++ twins keep their own record; loaded by any C++ check (no import: no cycle)
        twins = sys.modules.get(f"{__name__}.cpp")
        if twins is None:
            print("CUDA C++: no twin was checked in this session.")
        else:
            print(twins.summary_text([n for n in names(chapter) if n in twins.names()]))
        return
    print(summary_text(chapter))


def summary_text(chapter: str | tuple[str, ...] | None = None) -> str:
    """What this session proved for `chapter` (a Puzzle.chapter such as "pmpp-06", or a tuple of
    them; None: every puzzle checked so far): the puzzles passed, the ones left, and the known-wrong
    kernels the checker rejects for the passed ones. Computed from this session's checks and the
    mutants files (as built into puzzles/mutant_kinds.json)."""
    chapters = (chapter,) if isinstance(chapter, str) else tuple(chapter or ())
    wanted = [n for c in chapters for n in names(c)] if chapters else sorted(_PASSED)
    passed = [n for n in wanted if n in _PASSED]
    left = [n for n in wanted if n not in _PASSED]
    kinds: dict[str, int] = {}
    caught = 0
    for n in passed:
        for how in _mutant_kinds().get(n, []):
            kinds[how] = kinds.get(how, 0) + 1
            caught += 1
    where = ("chapter " + " and ".join(chapters)) if chapters else "this session"
    lines = [
        f"{where}: {len(passed)} of {len(wanted)} puzzles passed"
        + (": " + ", ".join(passed) if passed else ".")
    ]
    if left:
        lines.append("still to pass: " + ", ".join(left))
    if caught:
        top = sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append(
            f"For those, the checker rejects the {caught} known-wrong kernels in the course's tests, each "
            "for its own reason: " + "; ".join(f"{k} ({v})" for k, v in top) + "."
        )
    if passed and not left:
        lines.append("Every check of this notebook passed: your kernels got through all of it.")
    return "\n".join(lines)


def hint(name: str, n: int = 1) -> None:
    print(get(name).hint(n))


__all__ = [
    "SEARCH",
    "check",
    "get",
    "hint",
    "last_run",
    "module_of",
    "names",
    "reload",
    "show",
    "summary",
    "summary_text",
]
