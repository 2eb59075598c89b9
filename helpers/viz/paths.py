"""Paths per warp: one row per warp, one square per lane, coloured by the path it took (grey: idle).
A path is the set of source lines (access sites) a lane executed; the legend names them."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from helpers import metrics
from helpers.sim.trace import Trace
from helpers.viz import style

PATH_COLOURS = ("#0072B2", "#009E73", "#CC79A7", "#56B4E9", "#F0E442", "#000000")  # never vermillion


def path_lines(trace: Trace, block: int = 0) -> list[list[int]]:
    """The source lines of each path of `block`, numbered as metrics.lane_paths numbers them."""
    rows = trace.select(block=block)
    sites: dict = {}
    for t, s in zip(rows["thread"].tolist(), rows["site"].tolist()):
        sites.setdefault(t, set()).add(s)
    order: dict = {}
    for t in sorted(sites):
        order.setdefault(frozenset(sites[t]), len(order))
    return [sorted({metrics.line_of(trace, s)[1] for s in path}) for path in order]


def paths_view(trace: Trace, block: int = 0, *, title: str | None = None) -> Figure:
    """Figure: the path (set of access sites) each lane of `block` took; see metrics.paths_per_warp."""
    from matplotlib.colors import ListedColormap

    grid = metrics.lane_paths(trace, block)
    lines = path_lines(trace, block)
    n = len(PATH_COLOURS)
    colours = ListedColormap([style.EMPTY, *PATH_COLOURS])
    fig = style.new_figure(8.5, 0.3 * grid.shape[0] + 1.2)
    ax = fig.subplots()
    shown = np.where(grid < 0, 0, grid % n + 1)  # more than 6 paths: colours repeat, the legend says so
    ax.imshow(shown, cmap=colours, vmin=-0.5, vmax=n + 0.5, aspect="equal", interpolation="nearest")
    ax.set_xticks(np.arange(grid.shape[1] + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(grid.shape[0] + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", lw=1)
    ax.tick_params(which="minor", length=0)
    ax.set_xlabel("lane", fontsize=style.FONT["label"])
    ax.set_ylabel("warp", fontsize=style.FONT["label"])
    ax.set_yticks(range(grid.shape[0]))
    ax.tick_params(labelsize=style.FONT["label"])
    handles = [
        Patch(color=PATH_COLOURS[k % n], label=f"path {k}: lines {', '.join(map(str, ls))}")
        for k, ls in enumerate(lines[:12])
    ]
    if (grid < 0).any():
        handles.append(Patch(color=style.EMPTY, label="idle (touched no memory)"))
    if handles:
        ax.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize=style.FONT["label"],
            frameon=False,
        )
    counts = metrics.paths_per_warp(trace)[block]
    style.title(fig, f"{title or 'Paths'}, block {block}: paths per warp {counts.tolist()}")
    return fig
