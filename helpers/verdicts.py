"""What a check answers: `Result` when the kernel passed, one `PuzzleFailure` subclass per kind of
verdict otherwise, and `Message`, the parts a failure's text is assembled from (once).

`helpers.check` decides the verdict; this module only says it. The classes are re-exported by
`helpers.check`, where notebooks and tests import them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .puzzle import RunRecord
from .sim import errors


class PuzzleFailure(AssertionError):
    """Base of every verdict other than success. `.run` is the RunRecord of the failing case (None
    when no simulator run was made, e.g. CompileRejected); `helpers.check.check(..., runs=[])` hands
    every case's record over without an exception too."""

    run: RunRecord | None = None

    def _render_traceback_(self) -> list[str]:
        """What IPython/Jupyter shows for an uncaught failure: the verdict itself, not the harness's
        stack (which would bury it under 40-50 lines of frames the learner did not write)."""
        return [
            f"\x1b[0;31m{type(self).__name__}\x1b[0m: " + (str(self).splitlines() or [""])[0],
            *str(self).splitlines()[1:],
            "",
            "(The checker's own traceback is hidden: run `%tb` in a new cell to see it.)",
        ]


class NotSolvedYet(PuzzleFailure):
    """The kernel's body is still the stub."""


class CompileRejected(PuzzleFailure):
    """Real Numba refuses to compile the kernel."""


class KernelDiagnosed(PuzzleFailure):
    """The simulator caught the kernel doing something a GPU would not forgive."""

    def __init__(self, message: str, diagnostic: Exception):
        super().__init__(message)
        self.diagnostic = diagnostic


class WrongAnswer(PuzzleFailure):
    """The output differs from the spec (or was never written)."""


class OverBudget(PuzzleFailure):
    """A rule of the exercise is broken: more memory accesses (or shared memory) than allowed, poor
    coalescing, divergence, float64 arithmetic where the exercise forbids it..."""

    def __init__(self, message: str, field: str, count, limit):
        super().__init__(message)
        self.field, self.count, self.limit = field, count, limit


class InputModified(PuzzleFailure):
    """The kernel changed one of its inputs."""


class GpuMismatch(PuzzleFailure):
    """The real GPU's output differs from the spec."""


@dataclass
class Message:
    """A failure's text, from its parts: `head` (puzzle, case, seed), `body` (what went wrong and the
    fix), `also` (other problems of the run, each a paragraph), `tail` (how to see the run)."""

    head: str
    body: str
    also: list = field(default_factory=list)
    tail: str = ""

    def text(self) -> str:
        text = "\n\n".join(p.strip("\n") for p in (self.head, self.body, *self.also) if p)
        return text + (f"\n{self.tail.strip()}" if self.tail else "")


@dataclass
class Result:
    """A passed check: how many cases, on which stages (simulator, PTX sm_75, GPU), the most each
    per-thread rule measured, and every case's RunRecord. `notes`: what passed but deserves a word
    (float64 arithmetic in a float32 exercise)."""

    puzzle: str
    cases: int
    stages: tuple
    maxima: dict  # budget field -> max per thread over all cases
    budget: dict  # budget field -> limit text
    runs: list = field(default_factory=list, repr=False)  # RunRecord per case, in case order
    notes: tuple = ()

    @property
    def engines(self) -> tuple:
        """The stages' name before the rename (one word, one meaning: `stages`)."""
        return self.stages

    def __repr__(self):
        parts = []
        for f, m in self.maxima.items():
            lim = self.budget.get(f)
            parts.append(f"{f.replace('_', ' ')} {m}" + (f" (budget {lim})" if lim is not None else ""))
        text = (
            f"Passed: {self.puzzle}, {self.cases} cases on {' + '.join(self.stages)}.\n"
            f"Most per thread: {', '.join(parts)}."
        )
        return text + "".join(f"\nNote: {n}" for n in self.notes)

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))


def _quiet() -> None:
    """An `_ipython_display_` that shows nothing: the message was printed already."""


def expect_failure(exc_type: type, fn: Callable, *args: Any, **kwargs: Any) -> BaseException:
    """Call fn; print the failure it raises. Raise AssertionError if it does not fail with exc_type.

    For notebook cells that show a wrong kernel being caught."""
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        print(f"{type(e).__name__} (as expected):\n{e}")
        # returned for tests; a cell that ends with this call must not echo it a second time
        e._ipython_display_ = _quiet
        return e
    except Exception as e:
        raise AssertionError(f"expected {exc_type.__name__}, but got {type(e).__name__}: {e}") from e
    raise AssertionError(f"expected {exc_type.__name__}, but nothing failed")


# problems that change the answer whatever the values read: they lead over an uninitialised read
ORDER_PROBLEMS = (errors.DataRace, errors.BarrierDivergence, errors.Deadlock)


def leading(err: Exception) -> tuple[Exception, list]:
    """(the problem to lead with, the others worth naming after it) of one run.

    The simulator runs past uninitialised reads (`defer_uninit`) and hands them over as
    `.secondary` of the error that stopped the run. A race, a barrier divergence or a deadlock leads
    (it changes the answer whatever value was read); any other error (an index out of bounds, an
    exception) may have been computed from the garbage value, so the uninitialised read leads, as
    its cause."""
    secondary = list(getattr(err, "secondary", None) or ())
    if not secondary:
        return err, []
    if isinstance(err, ORDER_PROBLEMS):
        return err, secondary[:1]
    return secondary[0], []
