"""Diagnostic: the access map up to the fault, with the faulting thread and cell in vermillion."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from helpers.sim.trace import Trace
from helpers.viz import analysis as an
from helpers.viz import style
from helpers.viz.access import Focus, draw_access_map


def _linear(dims, idx) -> int | None:
    if idx is None:
        return None
    idx = tuple(int(i) for i in np.atleast_1d(idx)) + (0, 0)
    gx, gy = dims[0], dims[1]
    return idx[0] + idx[1] * gx + idx[2] * gx * gy


def _flat(shape, index) -> int | None:
    """Flat C-order index of an in-bounds index, else None."""
    idx = tuple(int(i) for i in np.atleast_1d(index))
    if len(idx) == 1 and len(shape) > 1:
        n = int(np.prod(shape))
        return idx[0] if 0 <= idx[0] < n else None
    if len(idx) != len(shape) or any(not 0 <= i < s for i, s in zip(idx, shape)):
        return None
    return int(np.ravel_multi_index(idx, shape))


def focus_of(err, trace: Trace) -> Focus:
    """What to mark: the faulting block/thread, the cell named by the error, and (for races and the
    like) every thread of that block that touched that cell in the same barrier interval."""
    block = _linear(trace.grid, err.block)
    thread = _linear(trace.block, err.thread)
    if block is None and len(trace.acc):
        block = int(trace.acc["block"][-1])
    focus = Focus(block=block, threads=(thread,) if thread is not None else ())
    name = getattr(err, "array", None)
    index = getattr(err, "index", None)
    if name is None or index is None:
        return focus
    try:
        info = trace.array(name)
    except KeyError:
        return focus
    rows = trace.acc[trace.acc["block"] == block] if block is not None else trace.acc
    mine = rows[rows["thread"] == thread] if thread is not None else rows
    epoch = int(mine["epoch"][-1]) if len(mine) else (int(rows["epoch"].max()) if len(rows) else 0)
    ekey = an.node_epoch(trace, info.id, epoch)
    if ekey >= 0:
        focus.extra_epochs[info.id] = ekey
    idx = tuple(int(i) for i in np.atleast_1d(index))
    text = f"{name}[{', '.join(map(str, idx))}]"
    flat = _flat(info.shape, idx)
    if flat is None:
        who = f"thread {an.thread_name(trace, thread)}: " if thread is not None else ""
        text = f"{who}{text} is outside {name} (shape {tuple(info.shape)})"
    else:
        same = rows[(rows["array"] == info.id) & (rows["index"] == flat)]
        if ekey >= 0:
            same = same[same["epoch"] == ekey]
        others = sorted(set(same["thread"].tolist()) - {thread})
        if others:
            focus.threads = tuple(focus.threads) + tuple(others)
            text += "  also: thread " + ", ".join(an.thread_name(trace, t) for t in others[:4])
    focus.marks.append((info.id, ekey, idx, text))
    return focus


def diagnostic_view(err: Exception, trace: Trace | None = None, *, title: str | None = None) -> Figure:
    """Figure for a `helpers.sim.errors.SimulatorError`: the access map of the faulting block up to
    the fault, the faulting thread's lines and cells in vermillion, the offending cell hatched
    (drawn past the edge of its array when the index was out of bounds), the source line and
    the simulator's explanation on top."""
    trace = trace if trace is not None else getattr(err, "trace", None)
    kind = type(err).__name__
    source = getattr(err, "source", None)
    where = (
        f"line {err.line}" + (f": {style.short(source, 70)}" if source else "")
        if getattr(err, "line", None)
        else ""
    )
    head = title or f"{kind}" + (f" at {where}" if where else "")
    lines = [ln for ln in str(err).split("\n") if ln.strip()]
    # the simulator's first line repeats the place (block, thread, line); the rest explains
    explain = " ".join(lines[1:]) if len(lines) > 1 else (lines[0] if lines else "")
    if len(lines) > 1 and getattr(err, "thread", None) is not None:
        head += f"   ({lines[0].split(', line')[0]})"
    explain = style.short(explain, 520)
    if getattr(err, "reached", None) is not None:  # a barrier not every thread reached: who did
        return barrier_view(err, trace, head, explain)
    if trace is None or not an.drawn_arrays(trace):
        return style.message_figure(head, explain, color=style.BAD)
    return draw_access_map(trace, title=f"{head}\n{explain}", focus=focus_of(err, trace), min_width=9.0)


def barrier_view(err: Exception, trace: Trace | None, head: str, explain: str) -> Figure:
    """The threads of the block that hit a divergent barrier: which waited at it, which had already
    exited the kernel, which wait at another barrier or warp operation."""
    import matplotlib

    dims = tuple(trace.block) if trace is not None else None
    groups = (
        ("waited at the barrier", getattr(err, "reached", []), style.GOOD),
        ("exited without reaching it", getattr(err, "exited", []), style.MUTED),
        ("waiting somewhere else", getattr(err, "elsewhere", []), style.BAD),
    )
    if dims is None:
        every = [t for _, ts, _ in groups for t in ts]
        dims = (max(t[0] for t in every) + 1, max(t[1] for t in every) + 1, 1)
    bx, by = int(dims[0]), int(dims[1]) * int(dims[2])
    grid = np.full((by, bx), -1)
    for k, (_, ts, _) in enumerate(groups):
        for t in ts:
            t = tuple(t) + (0, 0)
            grid[t[1] + t[2] * int(dims[1]), t[0]] = k
    fig = style.new_figure(max(7.0, 0.32 * bx + 3.0), max(2.6, 0.32 * by + 2.4))
    ax = fig.add_subplot()
    colors = [style.EMPTY] + [c for _, _, c in groups]
    cmap = matplotlib.colors.ListedColormap(colors)
    ax.imshow(grid + 1, cmap=cmap, vmin=-0.5, vmax=len(colors) - 0.5, interpolation="nearest")
    ax.set_xticks(np.arange(bx), [str(x) if bx <= 16 or x % 4 == 0 else "" for x in range(bx)])
    ax.set_yticks(np.arange(by), [str(y) if by <= 16 or y % 4 == 0 else "" for y in range(by)])
    ax.set_xticks(np.arange(bx + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(by + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", lw=1.5)
    ax.tick_params(which="both", length=0, labelsize=style.FONT["label"])
    ax.set_xlabel("threadIdx.x", fontsize=style.FONT["label"])
    ax.set_ylabel("threadIdx.y" if by > 1 else "", fontsize=style.FONT["label"])
    handles = [
        matplotlib.patches.Patch(color=c, label=f"{label} ({len(ts)})") for label, ts, c in groups if ts
    ]
    ax.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=len(handles),
        fontsize=style.FONT["label"],
        frameon=False,
    )
    style.footnote(fig, explain)
    style.title(fig, head, color=style.BAD)
    return fig
