"""Many GPUs (PMPP chapter 20 and the collectives): exercises for several ranks, written against
`helpers.dist`'s Comm and checked on its in-process ranks (`helpers.dist.check`), then run on the
real engines (MPI on CPUs, NCCL on GPUs) with `python -m helpers.dist.launch`.

Op files (each defines `EXERCISES`, a list of `helpers.dist.Exercise`):
- allreduce.py: ring_allreduce, the learner's ring all-reduce (reduce-scatter, then all-gather) over
  point-to-point messages, compared with the engine's own all-reduce.
- the stencil with halo exchange, data-parallel training and ZeRO-1 files (see their docstrings).

    from puzzles import dist
    dist.check("ring_allreduce", ring_allreduce)   # a Result, or a PuzzleFailure naming rank and line
    dist.hint("ring_allreduce", 2)
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from typing import Callable

from helpers import dist as engine
from helpers.dist import Exercise

CHAPTER = "many-gpus"
_REGISTRY: dict[str, Exercise] = {}
_MODULES: dict[str, str] = {}


def _load() -> dict[str, Exercise]:
    if not _REGISTRY:
        for m in sorted(pkgutil.iter_modules(__path__, __name__ + "."), key=lambda m: m.name):
            module = importlib.import_module(m.name)
            for ex in getattr(module, "EXERCISES", ()):
                if ex.name in _REGISTRY:
                    where = f"{_MODULES[ex.name]} and {m.name}"
                    raise RuntimeError(f"exercise {ex.name!r} defined twice ({where})")
                _REGISTRY[ex.name], _MODULES[ex.name] = ex, m.name
    return _REGISTRY


def names() -> list[str]:
    return list(_load())


def get(name: str) -> Exercise:
    reg = _load()
    if name not in reg:
        close = difflib.get_close_matches(name, list(reg), n=1)
        raise KeyError(f"no exercise named {name!r}" + (f"; did you mean `{close[0]}`?" if close else ""))
    return reg[name]


def module_of(name: str) -> str:
    get(name)
    return _MODULES[name]


def check(name: str, fn: Callable, *, seed: int | None = None):
    """Check `fn` on exercise `name`'s cases on in-process ranks: a Result, or a PuzzleFailure."""
    return engine.check(get(name), fn, seed=seed)


def hint(name: str, n: int = 1) -> None:
    print(get(name).hint(n))


__all__ = ["CHAPTER"]
