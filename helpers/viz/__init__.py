"""Pictures of what a kernel did, drawn from a run's `Trace` (matplotlib only). Nothing here runs a
kernel: `draw` takes the RunRecord the harness kept (helpers.check), and `puzzles.show` finds it.

    puzzles.show("map", kernel)                      # access map of case 0
    puzzles.show("dot", kernel, view="counts")       # per-thread reads/writes vs the budget
    puzzles.show("transpose", kernel, view="coalescing")
    puzzles.show("reduce", kernel, view="banks")
    puzzles.show("ch04_warp_uniform", kernel, view="paths")

Every view is also a plain function of a Trace returning a matplotlib Figure:
`access_map(trace)`, `counts_view(trace, limits)`, `coalescing_view(trace)`,
`banks_view(trace)`, `paths_view(trace)`, `diagnostic_view(err)`. The numbers behind them are
`helpers.metrics` (and `helpers.viz.analysis` for the access map).
"""

from __future__ import annotations

from matplotlib.figure import Figure

from helpers import rules
from helpers.puzzle import RunRecord
from helpers.viz import analysis
from helpers.viz.access import access_map
from helpers.viz.counts import counts_view
from helpers.viz.diagnostic import diagnostic_view
from helpers.viz.memory import banks_view, coalescing_view
from helpers.viz.paths import paths_view

VIEWS = ("access", "counts", "coalescing", "banks", "paths")

__all__ = [
    "VIEWS",
    "access_map",
    "analysis",
    "banks_view",
    "coalescing_view",
    "counts_view",
    "diagnostic_view",
    "draw",
    "paths_view",
]


def check_view(view: str) -> None:
    """Raise ValueError naming the views when `view` is not one of them."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(map(repr, VIEWS))}; got {view!r}")


def linear_thread(block: tuple, thread) -> int | None:
    """The linear id of `thread` ((x,), (x, y), (x, y, z) or an int) in blocks of shape `block`;
    ValueError naming the block shape when it lies outside."""
    if thread is None:
        return None
    idx = (int(thread),) if isinstance(thread, (int,)) else tuple(int(i) for i in thread)
    idx = idx + (0,) * (3 - len(idx))
    dims = tuple(block) + (1,) * (3 - len(block))
    if len(idx) != 3 or any(not 0 <= i < d for i, d in zip(idx, dims)):
        raise ValueError(f"thread={thread!r} is outside the block {dims[:2] if dims[2] == 1 else dims}")
    return idx[0] + idx[1] * dims[0] + idx[2] * dims[0] * dims[1]


def draw(run: RunRecord, view: str = "access", *, wrong: dict | None = None, thread=None) -> Figure:
    """Draw one run (a RunRecord kept by the harness) in `view`.

    view: "access" (who read and wrote which cells), "counts" (per-thread accesses vs the
    budget), "coalescing" (global-memory sectors per warp access), "banks" (shared-memory
    bank conflicts), "paths" (the path each lane of block 0 took). When the simulator diagnosed a
    mistake, draws that instead (the access map up to the fault, the culprit in vermillion). Returns
    a matplotlib Figure: it shows inline in Jupyter/Colab, and `fig.savefig("x.png")` saves it.
    `wrong` ({output name: flat indices}, from the facade that knows the spec) frames wrong cells;
    `thread` ((x, y) or a linear id) draws that thread in colour and the others faint (access view).
    """
    check_view(view)
    if run.diagnostic is not None:
        return diagnostic_view(run.diagnostic)
    trace, c, puzzle = run.trace, run.case, run.puzzle
    head = f"{puzzle.title}: {run.kernel_name}, case {run.case_index}, {c.launch_text()}"
    if view == "access":
        return access_map(
            trace, title=f"Access map - {head}", wrong=wrong, thread=linear_thread(trace.block, thread)
        )
    if view == "counts":
        limits = rules.limits(puzzle.all_rules, c)
        return counts_view(trace, limits, title=f"Accesses per thread vs budget - {head}")
    if view == "coalescing":
        return coalescing_view(trace, title=f"Coalescing - {head}")
    if view == "paths":
        return paths_view(trace, title=head)
    return banks_view(trace, title=f"Shared-memory banks - {head}")
