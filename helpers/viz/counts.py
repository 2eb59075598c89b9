"""Counts: how many global/shared reads and writes each thread made, against the budget.

The panels are the per-thread and per-block rules of `helpers.rules` (the table the harness checks).
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from helpers import rules as R
from helpers.sim.trace import Trace
from helpers.viz import analysis as an
from helpers.viz import style

BARS_UP_TO = 64  # beyond this many threads in all, draw filled steps instead of bars


def _panel(ax, trace: Trace, label: str, values: np.ndarray, limit):
    nb, nt = values.shape
    flat = values.reshape(-1)
    x = np.arange(flat.size)
    over = flat > limit if limit is not None else np.zeros(flat.size, bool)
    colors = np.where(over, style.BAD, style.GOOD)
    if flat.size <= BARS_UP_TO:
        style.bars(ax, x, flat, colors, zorder=2)
    else:
        edges = np.arange(flat.size + 1) - 0.5
        ax.stairs(np.where(over, 0, flat), edges, fill=True, color=style.GOOD, zorder=2)
        if over.any():
            ax.stairs(np.where(over, flat, 0), edges, fill=True, color=style.BAD, zorder=3)
    top = max(int(flat.max()) if flat.size else 0, limit or 0, 1)
    ax.set_ylim(0, top * 1.3 + 0.5)
    ax.set_xlim(-0.6, flat.size - 0.4)
    for b in range(1, nb):
        ax.axvline(b * nt - 0.5, color="#BBBBBB", lw=0.8, zorder=1)
    if 1 < nb <= 8:
        for b in range(nb):
            style.text(
                ax,
                b * nt + nt / 2 - 0.5,
                top * 1.27 + 0.45,
                an.block_name(trace, b),
                ha="center",
                va="top",
                fontsize=style.FONT["label"] - 1,
                color=style.MUTED,
            )
    if limit is not None:
        ax.axhline(limit, color=style.BAD, ls="--", lw=1.2, zorder=4)
        style.text(
            ax,
            flat.size - 0.4,
            limit,
            f" budget {limit}",
            color=style.BAD,
            va="bottom",
            ha="right",
            fontsize=style.FONT["label"],
            zorder=5,
        )
    peak = int(flat.max()) if flat.size else 0
    who = int(np.argmax(flat)) if flat.size else 0
    b, t = divmod(who, nt)
    head = f"{label} per thread: max {peak}"
    if limit is None:
        head += " (no budget)"
    elif over.any():
        head += f" > budget {limit}:  {int(over.sum())} thread{'s' if over.sum() != 1 else ''} over"
        ax.annotate(
            f"worst: {an.block_name(trace, b)}, thread {an.thread_name(trace, t)} ({peak})",
            (who, peak),
            xytext=(0, 8),
            textcoords="offset points",
            ha="center",
            fontsize=style.FONT["label"],
            color=style.BAD,
            arrowprops={"arrowstyle": "-", "color": style.BAD},
            zorder=6,
        )
    else:
        head += f" <= budget {limit}: within budget"
    ax.set_title(head, fontsize=style.FONT["panel"], loc="left", color=style.BAD if over.any() else style.INK)
    ax.set_ylabel("accesses", fontsize=style.FONT["label"])
    ax.tick_params(labelsize=style.FONT["label"] - 1)
    ax.yaxis.get_major_locator().set_params(integer=True)
    if flat.size <= 32:
        ax.set_xticks(x, [an.thread_name(trace, i % nt) for i in x], fontsize=style.FONT["label"] - 1)
    ax.grid(axis="y", color="#EEEEEE", zorder=0)


def counts_view(trace: Trace, limits: dict | None = None, *, title: str | None = None) -> Figure:
    """Figure: per-thread global/shared reads/writes for every thread of every block; the limits
    (a dict as from `helpers.rules.limits(puzzle.all_rules, case)`) as a dashed line, threads over
    them in vermillion."""
    limits = limits or {}
    table = R.Budget().rules()
    per_thread = [r for r in table if r.per == "thread" and r.values is not None]
    atomics = next(r for r in table if r.name == "global_atomics_per_block").values(trace)
    show_atomics = bool(atomics.any()) or "global_atomics_per_block" in limits
    nrows = 3 if show_atomics else 2
    fig = style.new_figure(11, 2.4 * nrows + 0.8)
    axes = fig.subplots(nrows, 2, squeeze=False)
    for ax, rule in zip(axes.reshape(-1), per_thread):
        _panel(ax, trace, rule.label, rule.values(trace), limits.get(rule.name))
    if show_atomics:
        ax = axes[2, 0]
        lim = limits.get("global_atomics_per_block")
        over = atomics > lim if lim is not None else np.zeros(atomics.size, bool)
        style.bars(ax, np.arange(atomics.size), atomics, np.where(over, style.BAD, style.GOOD), zorder=2)
        pad = 0.05 * (atomics.size - 0.2)  # matplotlib's default margins around the bars
        ax.set_xlim(-0.4 - pad, atomics.size - 0.6 + pad)
        ax.set_ylim(0, max(int(atomics.max()), lim or 0, 1) * 1.05)
        if lim is not None:
            ax.axhline(lim, color=style.BAD, ls="--", lw=1.2)
        ax.set_title(
            f"global atomics per block: max {int(atomics.max())}"
            + (f", budget {lim}" if lim is not None else ""),
            fontsize=style.FONT["panel"],
            loc="left",
            color=style.BAD if over.any() else style.INK,
        )
        ax.set_xlabel("block (linear id)", fontsize=style.FONT["label"])
        axes[2, 1].set_axis_off()
    for ax in axes[-1 if not show_atomics else 1, :]:
        ax.set_xlabel(
            "thread" + (" (x, y)" if trace.block[1] > 1 else "") + ", grouped by block",
            fontsize=style.FONT["label"],
        )
    sb = an.shared_bytes(trace)
    lim = limits.get("shared_bytes")
    note = f"shared memory per block: {sb} bytes" + (f" (budget {lim})" if lim is not None else "")
    if lim is not None and sb > lim:
        note += "  OVER BUDGET"
    note += f".  {trace.nblocks} block(s) x {trace.nthreads} threads; every thread is a bar."
    if not len(trace.acc):
        note = "The kernel made no memory accesses at all (nothing written yet).  " + note
    style.footnote(fig, note, color=style.BAD if (lim is not None and sb > lim) else style.INK)
    style.title(fig, title or "Memory accesses per thread vs the budget")
    return fig
