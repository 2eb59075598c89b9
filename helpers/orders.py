"""Block order: where a puzzle's blocks talk through global memory (`Puzzle(cross_block_races=False)`)
the simulator cannot flag their races, so the check runs the case again with the blocks in other
orders and rejects a kernel whose result depends on the order, as it would on a GPU, where blocks run
in any order and at once.
"""

from __future__ import annotations

import numpy as np

from . import sim
from .compare import compare
from .runs import _launch, prepare_args
from .verdicts import KernelDiagnosed, WrongAnswer

ORDERS = ("forward", "reverse")  # besides the shuffled order of the first run
_NAMES = {"forward": "first to last (block 0 first)", "reverse": "last to first (block 0 last)"}

WHY = (
    "Why the check runs blocks in several orders: this puzzle's blocks talk through global memory, so "
    "the simulator does not flag races between blocks here; instead it runs them in several orders "
    "(shuffled, first to last, last to first), as a GPU may, and a right kernel gives the same answer "
    "in every one. A block that reads global values other blocks write must wait until they are there: "
    "take a ticket with cuda.atomic.add after a cuda.threadfence() so that only the block that arrives "
    "last reads the others' results, or split the work into two launches."
)


def _outcomes(puzzle, kernel, record, seed: int, deadline):
    """(order, diagnostic or None, first wrong output's description or None) per order of ORDERS."""
    case = record.case
    for order in ORDERS:
        args, roles, outputs, _ = prepare_args(puzzle, case)
        try:
            _launch(puzzle, kernel, case, args, roles, seed, trace=False, deadline=deadline, order=order)
        except sim.SimulatorError as err:
            if not getattr(err, "completed", False):  # an uninitialised read that finished: judge it
                yield order, err, None
                continue
        problems = (
            compare(record.expected[n], outputs[n], puzzle, tol=record.tol.get(n)) for n in puzzle.outputs
        )
        yield order, None, next(((n, p) for n, p in zip(puzzle.outputs, problems) if p), None)


def order_problem(puzzle, kernel, record, seed: int, deadline=None) -> tuple | None:
    """(verdict class, body, extra arguments) when case `record.case` ends differently with the blocks
    in another order than in the run `record` holds (whose outputs were right), else None."""
    if int(np.prod(record.case.grid)) < 2:
        return None
    for order, err, wrong in _outcomes(puzzle, kernel, record, seed, deadline):
        if err is not None:
            body = (
                f"With the blocks run {_NAMES[order]}, the kernel fails where the shuffled order "
                f"passed:\n{type(err).__name__}: {err}\n\n{WHY}"
            )
            return KernelDiagnosed, body, (err,)
        if wrong:
            body = (
                f"`{wrong[0]}` depends on the order the blocks run in: right in the shuffled order, wrong "
                f"with the blocks run {_NAMES[order]}:\n{wrong[1]}\n\n{WHY}"
            )
            return WrongAnswer, body, ()
    return None


def order_note(puzzle, kernel, record, seed: int, deadline=None) -> str:
    """For a run whose outputs were wrong: a paragraph saying so when another block order gives the
    right answer (the result depends on the order), else ""."""
    if int(np.prod(record.case.grid)) < 2:
        return ""
    for order, err, wrong in _outcomes(puzzle, kernel, record, seed, deadline):
        if err is None and not wrong:
            return (
                f"With the blocks run {_NAMES[order]} the answer is right: your result depends on the "
                f"order the blocks run in.\n{WHY}"
            )
    return ""
