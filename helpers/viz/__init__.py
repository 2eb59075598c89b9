"""Pictures of what a kernel did, drawn from the simulator's `Trace` (matplotlib only).

    puzzles.show("map", kernel)                      # access map of case 0
    puzzles.show("dot", kernel, view="counts")       # per-thread reads/writes vs the budget
    puzzles.show("transpose", kernel, view="coalescing")
    puzzles.show("reduce", kernel, view="banks")

Every view is also a plain function of a Trace returning a matplotlib Figure:
`access_map(trace)`, `counts_view(trace, limits)`, `coalescing_view(trace)`,
`banks_view(trace)`, `diagnostic_view(err)`. The numbers behind them are in
`helpers.viz.analysis` (pure functions, no drawing).
"""

from __future__ import annotations

import numpy as np

from helpers.viz import analysis
from helpers.viz.access import access_map
from helpers.viz.counts import counts_view
from helpers.viz.diagnostic import diagnostic_view
from helpers.viz.memory import banks_view, coalescing_view

VIEWS = ("access", "counts", "coalescing", "banks")

__all__ = [
    "VIEWS",
    "access_map",
    "analysis",
    "banks_view",
    "coalescing_view",
    "counts_view",
    "diagnostic_view",
    "show",
    "trace_of",
]


def _case(puzzle, case, seed):
    cases = puzzle.cases(np.random.default_rng(seed))
    if not 0 <= case < len(cases):
        raise IndexError(f"{puzzle.name} has {len(cases)} cases (0..{len(cases) - 1}); asked for case {case}")
    return cases[case]


def trace_of(puzzle, kernel, *, case=0, seed=0):
    """(trace, case) of one case of `puzzle` run through the simulator; a simulator diagnostic
    is raised as the `helpers.sim.errors.SimulatorError` itself (with `.trace`)."""
    from helpers.check import KernelDiagnosed, run_case

    c = _case(puzzle, case, seed)
    try:
        launch, _ = run_case(puzzle, kernel, c, seed=seed)
    except KernelDiagnosed as e:
        raise e.diagnostic from None
    return launch.trace, c


def show(puzzle, kernel, view: str = "access", *, case: int = 0, seed: int = 0):
    """Run case `case` of `puzzle` with `kernel` on the simulator and draw it.

    view: "access" (who read and wrote which cells), "counts" (per-thread accesses vs the
    budget), "coalescing" (global-memory sectors per warp access), "banks" (shared-memory
    bank conflicts). When the simulator diagnoses a mistake, draws that instead (the access
    map up to the fault, the culprit in vermillion). Returns a matplotlib Figure: it shows
    inline in Jupyter/Colab, and `fig.savefig("x.png")` or `("x.svg")` saves it.
    """
    from helpers.sim.errors import SimulatorError

    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(map(repr, VIEWS))}; got {view!r}")
    name = getattr(kernel, "__name__", None) or getattr(
        getattr(kernel, "py_func", None), "__name__", "kernel"
    )
    try:
        trace, c = trace_of(puzzle, kernel, case=case, seed=seed)
    except SimulatorError as err:
        return diagnostic_view(err)
    head = f"{puzzle.title}: {name}, case {case}, {c.launch_text()}"
    if view == "access":
        return access_map(trace, title=f"Access map - {head}")
    if view == "counts":
        limits = analysis.resolve_budget(puzzle.budget, c)
        return counts_view(trace, limits, title=f"Accesses per thread vs budget - {head}")
    if view == "coalescing":
        return coalescing_view(trace, title=f"Coalescing - {head}")
    return banks_view(trace, title=f"Shared-memory banks - {head}")
