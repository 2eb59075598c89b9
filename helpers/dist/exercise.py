"""An exercise for many ranks, checked like a kernel: its cases run on the in-process checker and
the verdict is one of the course's (`helpers.verdicts`): NotSolvedYet, KernelDiagnosed (its
`.diagnostic` a `helpers.dist.errors.CommError`), WrongAnswer naming rank and index, InputModified."""

from __future__ import annotations

import inspect
import secrets
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..puzzle import make_stub
from ..source import is_stub
from ..verdicts import InputModified, KernelDiagnosed, NotSolvedYet, Result, WrongAnswer
from .errors import CommError
from .sim import SECONDS, World


class DistResult(Result):
    """A passed check of an exercise for many ranks."""

    def __repr__(self):
        text = f"Passed: {self.puzzle}, {self.cases} cases on {' + '.join(self.stages)}."
        if self.maxima:
            text += "\n" + "; ".join(f"{k} {v}" for k, v in self.maxima.items()) + "."
        return text + "".join(f"\nNote: {n}" for n in self.notes)


@dataclass
class Case:
    """One run: `size` ranks, rank r called as fn(comm, **args[r]). `note` says what the case tests."""

    size: int
    args: list  # per rank: {parameter: value}
    note: str = ""

    def describe(self) -> str:
        parts = [
            f"{k}: {v.dtype}[{', '.join(map(str, v.shape))}]" if isinstance(v, np.ndarray) else f"{k}={v}"
            for k, v in self.args[0].items()
        ]
        return f"{self.size} ranks, each with " + ", ".join(parts) + (f" ({self.note})" if self.note else "")


@dataclass
class Exercise:
    """What `check` needs. `spec(case)` -> [{output: expected} per rank]; an output is a parameter
    the function fills in place, or "return" for its return value. `inputs`: parameters it must
    leave as they were."""

    name: str
    title: str
    statement: str
    reference: Callable
    spec: Callable
    cases: Callable  # cases(rng) -> list[Case]
    outputs: tuple = ("return",)
    inputs: tuple = ()
    hints: tuple = ()
    rtol: float = 1e-5
    atol: float = 1e-6
    chapter: str = "many-gpus"
    seconds: float = SECONDS

    @property
    def source(self) -> str:
        return inspect.getsource(self.reference)

    @property
    def stub(self) -> str:
        return make_stub(self.source)

    def hint(self, n: int = 1) -> str:
        text = "\n".join(f"Hint {i + 1}: {h}" for i, h in enumerate(self.hints[:n]))
        return text or "No hints for this one."


def _copy(args: dict) -> dict:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}


def _wrong(ex: Exercise, case: Case, k: int, rank: int, name: str, got, want) -> str | None:
    if got is None:
        return f"rank {rank} returned None for `{name}`: return the array."
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"rank {rank}'s `{name}` has shape {got.shape}, expected {want.shape}."
    if want.dtype.kind in "fc":
        bad = ~np.isclose(got, want, rtol=ex.rtol, atol=ex.atol, equal_nan=False)
    else:
        bad = got != want
    if not bad.any():
        return None
    idx = np.flatnonzero(bad)
    i = int(idx[0])
    g, w = got.reshape(-1)[i], want.reshape(-1)[i]  # NumPy scalars: printed with their dtype's digits
    nan = " (NaN: what a receive buffer holds before its message lands)" if g != g else ""
    return (
        f"rank {rank}, `{name}`[{i}]: got {g!s}, expected {w!s}{nan}; {idx.size} of {want.size} elements "
        f"wrong on this rank (first at {', '.join(map(str, idx[:6]))}{', ...' if idx.size > 6 else ''})."
    )


def check(ex: Exercise, fn: Callable, seed: int | None = None) -> Result:
    """Every case of `ex` on the in-process ranks; a Result, or the first failure raised."""
    if is_stub(fn, ex):
        raise NotSolvedYet(f"{ex.name}: the function is still the stub. Write its body, then run the check.")
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    cases = ex.cases(np.random.default_rng(seed))
    name = getattr(fn, "__name__", "fn")
    ratio = 0.0  # most bytes one rank sent, over the bytes of its arguments
    for k, case in enumerate(cases):
        head = (
            f"{ex.name}, case {k}: {case.describe()}\n(seed {seed}: "
            f"dist.check({ex.name!r}, {name}, seed={seed}) repeats this run)"
        )
        args = [_copy(a) for a in case.args]
        try:
            world = World(case.size, ex.seconds)
            got = world.run(fn, args)
        except CommError as e:
            raise KernelDiagnosed(f"{head}\n\n{type(e).__name__}: {e}", e) from None
        want = ex.spec(case)
        for r in range(case.size):
            for name in ex.inputs:
                if not np.array_equal(args[r][name], case.args[r][name], equal_nan=True):
                    i = int(np.flatnonzero(args[r][name] != case.args[r][name])[0])
                    raise InputModified(
                        f"{head}\n\nrank {r} changed its input `{name}` (first at index {i}): copy it "
                        "into a work buffer and change that."
                    )
            for name, w in want[r].items():
                text = _wrong(ex, case, k, r, name, got[r] if name == "return" else args[r][name], w)
                if text:
                    raise WrongAnswer(f"{head}\n\n{text}")
            own = sum(v.nbytes for v in case.args[r].values() if isinstance(v, np.ndarray))
            ratio = max(ratio, world.sent[r] / own if own else 0.0)
    sizes = sorted({c.size for c in cases})
    return DistResult(
        puzzle=ex.name,
        cases=len(cases),
        stages=(f"in-process ranks ({sizes[0]} to {sizes[-1]})",),
        maxima={"Most one rank sent point to point:": f"{ratio:.2f}x its own data"},
        budget={},
    )
