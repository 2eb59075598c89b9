"""Paths per warp: one row per warp, one square per lane, coloured by the path it took (grey: idle)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from helpers import metrics
from helpers.sim.trace import Trace
from helpers.viz import style


def paths_view(trace: Trace, block: int = 0, *, title: str | None = None) -> Figure:
    """Figure: the path (set of access sites) each lane of `block` took; see metrics.paths_per_warp."""
    from matplotlib.colors import ListedColormap

    grid = metrics.lane_paths(trace, block)
    colours = ListedColormap(["0.85", "tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"])
    fig = style.new_figure(8, 0.45 * grid.shape[0] + 1.6)
    ax = fig.subplots()
    ax.imshow(np.clip(grid + 1, 0, 5), cmap=colours, vmin=0, vmax=5, aspect="equal")
    ax.set_xlabel("lane")
    ax.set_ylabel("warp")
    ax.set_yticks(range(grid.shape[0]))
    counts = metrics.paths_per_warp(trace)[block]
    style.title(fig, f"{title or 'Paths'}, block {block}: paths per warp {counts.tolist()}")
    return fig
