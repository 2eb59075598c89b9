"""Coalescing (global memory, 32-byte sectors) and bank conflicts (shared memory, 32 banks).

Both look at warp-level accesses: the up-to-32 lanes of a warp that executed one
load or store together. Global memory moves whole 32-byte sectors, so a warp
whose lanes read neighbouring elements needs few; shared memory serves one 4-byte
word per bank per pass, so lanes whose words share a bank wait for each other.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from helpers.sim.trace import KIND_NAMES, WARP_SIZE, Trace
from helpers.viz import analysis as an
from helpers.viz import style

MAX_DETAIL = 4


def site_label(trace: Trace, site: int, array: int, kind: int, n: int = 48) -> str:
    s = trace.sites[site] if 0 <= site < len(trace.sites) else None
    where = f"line {s.lineno}: {style.short(s.text, n)}" if s else f"site {site}"
    return f"{where}\n{KIND_NAMES[kind]} {trace.arrays[array].name}"


def _pick_details(trace: Trace, items, key, bad) -> list:
    """The worst warp access of each source line (and array, kind), worst first, at most MAX_DETAIL;
    only the bad ones, or a single example when all are fine."""
    best: dict = {}
    for it in items:
        w = it.access
        k = (an.line_of(trace, w.site), w.kind, w.array)
        if k not in best or key(it) > key(best[k]):
            best[k] = it
    by_line = sorted((best[k] for k in sorted(best)), key=key, reverse=True)
    return [it for it in by_line if bad(it)][:MAX_DETAIL] or by_line[:1]


def _summary(ax, trace: Trace, summaries, measured: str, ideal: str, worst_text):
    y = np.arange(len(summaries))
    total = np.array([s.total for s in summaries], float)
    best = np.array([s.ideal for s in summaries], float)
    bad = total > best
    ax.barh(y, total, color=np.where(bad, style.BAD, style.GOOD), height=0.6, zorder=2, label=measured)
    ax.scatter(best, y, marker="|", s=400, color=style.IDEAL, linewidths=3, zorder=3, label=ideal)
    ax.set_yticks(
        y,
        [site_label(trace, s.site, s.array, s.kind) for s in summaries],
        fontsize=style.FONT["label"],
        family="monospace",
    )
    ax.invert_yaxis()
    right = max(total.max(), 1)
    for yi, s in zip(y, summaries):
        style.text(
            ax,
            right * 1.02,
            yi,
            worst_text(s),
            va="center",
            fontsize=style.FONT["label"],
            color=style.BAD if s.total > s.ideal else style.INK,
        )
    ax.set_xlim(0, right * 1.75)
    ax.legend(
        loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, fontsize=style.FONT["label"], frameon=False
    )
    ax.tick_params(axis="x", labelsize=style.FONT["label"] - 1)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(axis="x", color="#EEEEEE", zorder=0)


def _lanes(ax, xs, active, y=0.0):
    """32 lane boxes centred at xs, numbered; lanes that took part filled."""
    cells = [((x - 0.4, y), (x + 0.4, y), (x + 0.4, y + 0.8), (x - 0.4, y + 0.8)) for x in xs]
    faces = [style.tint(style.GOOD) if k in active else "#FFFFFF" for k in range(len(xs))]
    edges = [style.INK if k in active else "#CCCCCC" for k in range(len(xs))]
    ax.add_collection(PolyCollection(cells, facecolors=faces, edgecolors=edges, linewidths=0.6))
    for lane, x in enumerate(xs):
        if lane % 4 == 0 or len(xs) <= 16:
            style.text(ax, x, y + 0.4, str(lane), ha="center", va="center", fontsize=style.FONT["cell"] - 1)
    style.text(ax, xs[0] - 0.8, y + 0.4, "lane", ha="right", va="center", fontsize=style.FONT["label"])


def _coalescing_detail(ax, trace: Trace, c: an.Coalescing):
    w = c.access
    info = trace.arrays[w.array]
    per = max(1, an.SECTOR_BYTES // info.itemsize)  # elements per sector
    secs = an.sectors(w.indices, info.itemsize)
    # touched sectors side by side; a gap marks skipped memory
    xpos, x = {}, 0.0
    for k, s in enumerate(secs):
        if k and s != secs[k - 1] + 1:
            x += 1.5
        xpos[int(s)] = x
        x += per + 0.3
    row_w = x - 0.3
    width = max(row_w, WARP_SIZE * 1.0)
    off = (width - row_w) / 2
    lane_x = (np.arange(WARP_SIZE) + 0.5) * width / WARP_SIZE
    _lanes(ax, lane_x, set(w.lanes.tolist()))
    wanted = set(w.indices.tolist())
    cells, faces, segs = [], [], []
    for s, x0 in xpos.items():
        for j in range(per):
            e = s * per + j
            x = off + x0 + j
            cells.append(((x, 3), (x + 1, 3), (x + 1, 3.9), (x, 3.9)))
            faces.append(style.GOOD if e in wanted else "#DDDDDD")
        ax.add_patch(_frame(off + x0, 3, per))
        if len(xpos) > 8 and s != secs[0]:  # many sectors: the number alone, or the labels collide
            label = str(s) if len(xpos) <= 16 or s in (secs[0], secs[-1]) else ""
        else:
            label = f"sector {s}"
        style.text(
            ax,
            off + x0 + per / 2,
            4.05,
            label,
            ha="center",
            va="top",
            fontsize=style.FONT["cell"] - 1,
            color=style.MUTED,
        )
    ax.add_collection(PolyCollection(cells, facecolors=faces, edgecolors="#FFFFFF", linewidths=0.5))
    for lane, idx in zip(w.lanes.tolist(), w.indices.tolist()):
        x = off + xpos[int(idx * info.itemsize // an.SECTOR_BYTES)] + (idx % per) + 0.5
        segs.append(((lane_x[lane], 0.8), (x, 3)))
    ax.add_collection(LineCollection(segs, colors=style.GOOD, linewidths=0.8, alpha=0.7))
    ax.set_xlim(-2, width + 1)
    ax.set_ylim(4.6, -0.4)
    ax.set_axis_off()
    eff = c.efficiency
    ax.set_title(
        f"{site_label(trace, w.site, w.array, w.kind, 60).replace(chr(10), ' - ')}  "
        f"({an.block_name(trace, w.block)}, warp {w.warp}, {len(w.lanes)} lanes):  "
        f"{c.sectors} sectors moved, "
        f"{c.ideal} would do ({style.pct(eff)} efficient)",
        fontsize=style.FONT["panel"],
        loc="left",
        color=style.BAD if eff < 1 else style.INK,
    )


def _frame(x, y, w):
    return Rectangle((x, y), w, 0.9, fill=False, ec=style.INK, lw=1.0)


def coalescing_view(trace: Trace, *, title: str | None = None) -> Figure:
    """Figure: per source line, 32-byte sectors the warps moved vs the fewest possible; below, the
    worst warp access of each line, lane by lane (blue = element asked for, grey = moved for nothing)."""
    items = an.coalescing(trace)
    title = title or "Coalescing: 32-byte sectors per warp access (global memory)"
    if not items:
        return style.message_figure(
            title, "No global memory accesses to look at (nothing read or written yet)."
        )
    sums = an.coalescing_by_site(trace)
    details = _pick_details(
        trace, items, key=lambda c: (c.sectors - c.ideal, c.sectors), bad=lambda c: c.sectors > c.ideal
    )
    fig = style.new_figure(12, 1.0 + 0.55 * len(sums) + 1.9 * len(details))
    axes = fig.subplots(1 + len(details), 1, height_ratios=[0.7 + 0.45 * len(sums)] + [1.6] * len(details))
    _summary(
        axes[0],
        trace,
        sums,
        "sectors moved",
        "ideal (fewest possible)",
        lambda s: (
            f"{s.total} vs {s.ideal} ideal: {style.pct(s.efficiency)} efficient, {s.count} warp access"
            + ("es" if s.count != 1 else "")
        ),
    )
    axes[0].set_title("Per source line (all warps of all blocks)", fontsize=style.FONT["panel"], loc="left")
    axes[0].set_xlabel("32-byte sectors", fontsize=style.FONT["label"])
    for ax, c in zip(axes[1:], details):
        _coalescing_detail(ax, trace, c)
    style.footnote(
        fig,
        "A warp's 32 lanes load together; memory moves in 32-byte sectors. Neighbouring lanes "
        "on neighbouring elements (row-major) share sectors; a stride or a column walk wastes them. "
        "Blue slots: elements the lanes asked for; grey: moved for nothing.",
    )
    style.title(fig, title)
    return fig


def _bank_detail(ax, trace: Trace, b: an.BankConflict):
    w = b.access
    info = trace.arrays[w.array]
    words = an.bank_words(w.indices, info.itemsize)
    # each bank's distinct words are served one per pass; lanes on one word share it (broadcast)
    slots: dict = {}
    for lane, word, bank in zip(w.lanes.tolist(), words.tolist(), b.banks.tolist()):
        col = slots.setdefault(int(bank), {})
        col.setdefault(int(word), []).append(lane)
    depth = max(b.degree, 1)
    cells, faces, texts = [], [], []
    for bank in range(an.NUM_BANKS):
        for row in range(depth):
            cells.append(((bank, row), (bank + 1, row), (bank + 1, row + 1), (bank, row + 1)))
            faces.append("#FFFFFF")
        for row, (_word, lanes) in enumerate(sorted(slots.get(bank, {}).items())):
            faces[bank * depth + row] = style.BAD if len(slots[bank]) > 1 else style.GOOD
            lab = ",".join(map(str, lanes)) if len(lanes) <= 2 else f"{lanes[0]}+{len(lanes) - 1}"
            texts.append((bank + 0.5, row + 0.5, lab))
    ax.add_collection(
        PolyCollection(cells, facecolors=faces, edgecolors="#BBBBBB", linewidths=0.5, alpha=0.8)
    )
    for x, y, t in texts:
        style.text(
            ax,
            x,
            y,
            t,
            ha="center",
            va="center",
            fontsize=style.FONT["cell"] - (1 if len(t) > 2 else 0) - (1.5 if depth > 12 else 0),
            color="white",
        )
    ax.set_xlim(0, an.NUM_BANKS)
    ax.set_ylim(depth + 0.05, -0.05)
    ax.set_xticks(
        np.arange(an.NUM_BANKS) + 0.5,
        [str(k) if k % 2 == 0 else "" for k in range(an.NUM_BANKS)],
        fontsize=style.FONT["cell"],
    )
    ax.set_yticks(
        np.arange(depth) + 0.5,
        [
            f"pass {k + 1}" if depth <= 12 or k + 1 in (1, depth) or (k + 1) % 8 == 0 else ""
            for k in range(depth)
        ],
        fontsize=style.FONT["cell"],
    )
    ax.tick_params(length=0)
    ax.set_xlabel("bank", fontsize=style.FONT["label"], labelpad=1)
    verdict = "conflict-free" if b.degree <= 1 else f"{b.degree}-way bank conflict: {b.degree} passes"
    ax.set_title(
        f"{site_label(trace, w.site, w.array, w.kind, 60).replace(chr(10), ' - ')}  "
        f"({an.block_name(trace, w.block)}, warp {w.warp}):  {verdict}",
        fontsize=style.FONT["panel"],
        loc="left",
        color=style.BAD if b.degree > 1 else style.INK,
    )


def banks_view(trace: Trace, *, title: str | None = None) -> Figure:
    """Figure: per source line, the passes shared-memory warp accesses needed (1 = conflict-free);
    below, the worst access of each line as a 32-bank grid, the lanes in each bank's cells."""
    items = an.bank_conflicts(trace)
    title = title or "Shared-memory banks: conflicts per warp access"
    if not items:
        return style.message_figure(title, "This kernel made no shared-memory accesses: no banks to look at.")
    sums = an.bank_conflicts_by_site(trace)
    details = _pick_details(trace, items, key=lambda b: b.degree, bad=lambda b: b.degree > 1)
    heights = [min(max(b.degree, 1) * 0.35, 3.2) + 0.9 for b in details]  # a 32-way conflict stays legible
    fig = style.new_figure(12, 1.0 + 0.55 * len(sums) + sum(heights) + 0.6)
    axes = fig.subplots(1 + len(details), 1, height_ratios=[0.7 + 0.45 * len(sums)] + heights)
    _summary(
        axes[0],
        trace,
        sums,
        "passes needed",
        "one pass each (conflict-free)",
        lambda s: (
            f"worst {s.worst}-way; {s.total / s.count:.2g} passes per access, {s.count} warp accesses"
            if s.worst > 1
            else f"conflict-free over {s.count} warp access" + ("es" if s.count != 1 else "")
        ),
    )
    axes[0].set_title("Per source line (all warps of all blocks)", fontsize=style.FONT["panel"], loc="left")
    axes[0].set_xlabel("passes (sum over warp accesses)", fontsize=style.FONT["label"])
    for ax, b in zip(axes[1:], details):
        _bank_detail(ax, trace, b)
    style.footnote(
        fig,
        "Bank of an element = (index x itemsize / 4) mod 32. Each cell is one 4-byte word a "
        "bank must deliver, labelled with the lanes asking for it; lanes on the same word share it "
        "(broadcast). Two words in one bank = two passes, one after the other.",
    )
    style.title(fig, title)
    return fig
