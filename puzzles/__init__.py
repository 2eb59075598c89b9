"""Every puzzle and exercise of the course, by short name.

    import puzzles
    puzzles.check("map", my_kernel)     # raises on any failure, returns a Result
    puzzles.show("map", my_kernel)      # draws what the kernel did
    puzzles.hint("map", 2)

Each module in this package defines `PUZZLES`, a list of `helpers.puzzle.Puzzle`.
"""
import importlib
import pkgutil

from helpers.puzzle import Puzzle

_REGISTRY: dict = {}


def _load():
    if _REGISTRY:
        return _REGISTRY
    for mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        module = importlib.import_module(f"{__name__}.{mod}")
        for p in getattr(module, "PUZZLES", ()):
            if p.name in _REGISTRY:
                raise RuntimeError(f"puzzle name {p.name!r} defined twice ({mod})")
            _REGISTRY[p.name] = p
    return _REGISTRY


def get(name: str) -> Puzzle:
    reg = _load()
    if name not in reg:
        raise KeyError(f"no puzzle named {name!r}; known: {', '.join(reg)}")
    return reg[name]


def names(chapter: str | None = None) -> list:
    return [n for n, p in _load().items() if chapter is None or p.chapter == chapter]


def check(name: str, kernel, *, seed=None, gpu=None):
    """Check `kernel` against puzzle `name`: raise a PuzzleFailure (an AssertionError) or return a Result."""
    return get(name).check(kernel, seed=seed, gpu=gpu)


def show(name: str, kernel, view: str = "access", **kw):
    return get(name).show(kernel, view=view, **kw)


def hint(name: str, n: int = 1) -> None:
    print(get(name).hint(n))
