"""One run of one case on the simulator: fresh arguments (poisoned outputs, copied inputs), the
launch as the harness makes it, the spec's answer, and the RunRecord that keeps all three with the
wrong cells. `helpers.check` runs these for every case; `puzzles.show` runs one alone.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Callable

import numpy as np

from . import sim
from .compare import wrong_mask
from .puzzle import Case, Puzzle, RunRecord
from .sim.poison import poison  # the one poison policy, shared with the simulator

__all__ = ["expected", "poison", "prepare_args", "run_case", "run_once", "tolerances"]


def prepare_args(puzzle: Puzzle, case: Case) -> tuple[list, dict, dict, dict]:
    """(args list, roles, outputs dict, pristine inputs dict) for one run: fresh every time."""
    args, roles, outputs, pristine = [], {}, {}, {}
    for name in puzzle.signature:
        v = case.args[name]
        if name in puzzle.outputs:
            if name in puzzle.accumulate:  # starts at what an earlier launch left: `=` for `+=` shows
                arr = np.array(v, copy=True)
            else:
                arr = np.zeros_like(v) if name in puzzle.zeroed else poison(v)
            roles[name] = "inout" if name in puzzle.zeroed or name in puzzle.accumulate else "out"
            outputs[name] = arr
            args.append(arr)
        elif name in puzzle.scratch:  # work memory: garbage, as cudaMalloc leaves it, unless the
            if name in puzzle.zeroed:  # host clears it first (a counter, a ticket, flags)
                roles[name] = "inout"
                args.append(np.zeros_like(v))
            else:
                roles[name] = "scratch"
                args.append(poison(v))
        elif isinstance(v, np.ndarray):
            pristine[name] = v.copy()
            roles[name] = "in"
            args.append(v.copy())
        else:
            args.append(v)
    return args, roles, outputs, pristine


def _spec_args(puzzle: Puzzle, case: Case, pristine: dict) -> dict:
    return {
        n: (pristine[n].copy() if n in pristine else case.args[n])
        for n in puzzle.signature
        if (n not in puzzle.outputs or n in puzzle.accumulate) and n not in puzzle.scratch
    }


def tolerances(puzzle: Puzzle, case: Case, pristine: dict) -> dict[str, np.ndarray]:
    """{output: per-element tolerance} of a puzzle with a `tolerance` rule; {} for rtol/atol ones."""
    if puzzle.tolerance is None:
        return {}
    tol = puzzle.tolerance(**_spec_args(puzzle, case, pristine))
    if not isinstance(tol, dict):
        tol = {puzzle.outputs[0]: tol}
    return {n: np.asarray(tol[n], np.float64) for n in puzzle.outputs}


def expected(puzzle: Puzzle, case: Case, pristine: dict) -> dict[str, np.ndarray]:
    """The spec's outputs for `case` (from `pristine` copies of the inputs where given)."""
    want = puzzle.spec(**_spec_args(puzzle, case, pristine))
    if not isinstance(want, dict):
        want = {puzzle.outputs[0]: want}
    return {n: np.asarray(want[n]) for n in puzzle.outputs}


def _judge(record: RunRecord, pristine: dict) -> None:
    """Fill `record.expected` (the spec, run once) and `record.wrong` ({output: flat indices})."""
    record.expected = expected(record.puzzle, record.case, pristine)
    record.tol = tolerances(record.puzzle, record.case, pristine)
    record.wrong = {}
    for n, got in record.outputs.items():
        bad = wrong_mask(record.expected[n], got, record.puzzle, record.tol.get(n))
        if bad is not None and bad.any():
            record.wrong[n] = np.flatnonzero(bad).tolist()


def _launch(puzzle, kernel, case, args, roles, seed, trace=True, deadline=None, order="shuffle"):
    return sim.launch(
        kernel,
        case.grid,
        case.block,
        args,
        shared_bytes=case.shared_bytes,
        roles=roles,
        trace=trace,
        block_order=order,
        seed=seed,
        cross_block_races=puzzle.cross_block_races,
        deadline=deadline,
        defer_uninit=True,  # a race or divergence found later in the run leads (see verdicts.leading)
    )


def run_case(puzzle: Puzzle, kernel: Callable, case: Case, *, seed: int = 0, trace: bool = True):
    """Run one case on the simulator with every diagnostic on.

    Returns (launch, outputs); raises helpers.sim.errors.SimulatorError on a diagnostic."""
    args, roles, outputs, _ = prepare_args(puzzle, case)
    launch = _launch(puzzle, kernel, case, args, roles, seed, trace)
    return launch, outputs


def run_once(puzzle: Puzzle, kernel: Callable, *, case: int = 0, seed: int = 0) -> RunRecord:
    """One simulator run of case number `case` (cases drawn with `seed`, numbered from 0), exactly
    as `check` runs it, as a RunRecord (with the expected outputs and wrong cells of a run that
    finished); a diagnostic is kept on the record, not raised. For pictures of a kernel that has not
    been checked with this seed."""
    cases = puzzle.cases_for(kernel, np.random.default_rng(seed))
    if not 0 <= case < len(cases):
        raise IndexError(f"{puzzle.name} has {len(cases)} cases (0..{len(cases) - 1}); asked for case {case}")
    c = cases[case]
    record = RunRecord(puzzle, _kernel_name(kernel), c, case, seed)
    args, roles, record.outputs, pristine = prepare_args(puzzle, c)
    with _quiet_numpy():
        try:
            record.launch = _launch(puzzle, kernel, c, args, roles, seed)
        except sim.SimulatorError as err:
            record.diagnostic = err
            return record
        _judge(record, pristine)
    return record


def _kernel_name(kernel) -> str:
    return getattr(kernel, "__name__", None) or getattr(
        getattr(kernel, "py_func", None), "__name__", "kernel"
    )


@contextmanager
def _quiet_numpy():
    """NumPy's RuntimeWarnings from poison arithmetic (NaN + 1, sentinel * 2) are no verdict: the
    learner reads the verdict, not warnings printed before it."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
