"""Access map: which thread read which cells and wrote which cells, one panel per block.

Arrays are grids of cells (1-D: a row, wrapped past 32; 2-D: a matrix); inputs on
the left, shared memory in the middle (one copy per barrier interval, because a
`syncthreads` separates "before" from "after"), outputs on the right. Every thread
has a colour; a dot is a read, a filled cell a write, a line links the reads of a
thread to the write they fed.

Longer than 500 lines on purpose: layout, panels and legend of one figure share their geometry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import matplotlib
import numpy as np
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, PathPatch, Rectangle
from matplotlib.path import Path

from helpers.sim.trace import READ, Trace
from helpers.viz import analysis as an
from helpers.viz import style

WRAP = 32  # 1-D arrays longer than this wrap onto more rows
MAX_BLOCKS = 4
MAX_THREADS = 256  # 16 x 16
VALUE_CELLS = 96  # arrays up to this many cells show their values
LABEL_CELLS = 48  # ... and, when written, the writer's thread id
BIG_ARRAY = 1024  # arrays with more cells are drawn as one image
MAX_TEXTS = 500  # cell labels per figure at most (text is what makes drawing slow)
MAX_EPOCHS = 6  # shared-memory copies (barrier intervals) drawn at most
MAX_LINES = 48  # read -> write lines per panel; beyond, only one thread's lines (a tangle teaches nothing)
WRONG_GID = "wrong cells"  # the gid of the patch framing them (tests find it by it)
LEGEND_THREADS = 16  # a legend entry per thread up to this many; beyond, tN labels name the writers


@dataclass
class Placed:
    """Where one array (or one barrier-interval copy of a shared array) sits in a panel."""

    array: int
    epoch: int  # -1 for one copy (global/const); barrier interval for shared copies
    x0: float
    y0: float
    rows: int
    cols: int
    size: int
    label: str

    def cell(self, flat):
        """(x, y) of the centre of flat element `flat` (array-like ok)."""
        flat = np.asarray(flat)
        return self.x0 + flat % self.cols + 0.5, self.y0 + flat // self.cols + 0.5

    def cell_at(self, index) -> tuple:
        """(x, y) centre for an index as the kernel wrote it, possibly outside the array
        (then drawn just past the edge it crossed)."""
        idx = [int(i) for i in np.atleast_1d(index)]
        if len(idx) == 1:
            i = idx[0]
            if i < 0:
                r, c = 0, max(i, -2)
            elif self.rows == 1:
                r, c = 0, min(i, self.cols + 1)
            else:
                r, c = divmod(i, self.cols)
        else:
            r, c = idx[-2], idx[-1]
        r = min(max(r, -2), self.rows + 1)
        c = min(max(c, -2), self.cols + 1)
        return self.x0 + c + 0.5, self.y0 + r + 0.5


@dataclass
class Layout:
    placed: list
    width: float
    height: float
    by_key: dict = field(default_factory=dict)  # (array, epoch) -> Placed
    right_ids: set = field(default_factory=set)  # output arrays (show values after the launch)
    shared_ids: set = field(default_factory=set)
    ever_written: dict = field(default_factory=dict)  # array id -> indices any block wrote
    dot_size: float = 20.0
    line_width: float = 1.4
    several: bool = False  # some cell had several writers
    values: bool = True  # write values in cells
    writer_labels: bool = True  # write "t3" in written cells
    label_size: float = 8.0  # font sizes, scaled with the cells
    cell_size: float = 6.5
    epochs_shown: int = 0
    epochs_total: int = 0


def _grid(info) -> tuple:
    size = int(np.prod(info.shape, dtype=np.int64)) if len(info.shape) else 1
    if len(info.shape) >= 2:
        cols = int(info.shape[-1])
    else:
        cols = max(1, min(size, WRAP))
    return max(1, -(-size // cols)), cols, size


def _ordinal(n: int) -> str:
    return f"{n}{'tsnrhtdd'[(n // 10 % 10 != 1) * (n % 10 < 4) * n % 10 :: 4]}"


def _label(info, epoch: int) -> str:
    shape = "x".join(map(str, info.shape))
    if info.space == "shared":  # later copies short: a long label would be wider than its array
        if epoch == 0:
            return f"{info.name}  (shared {info.dtype}[{shape}]), before any syncthreads"
        return f"{info.name} after the {_ordinal(epoch)} syncthreads"
    role = {"in": "input", "out": "output", "inout": "in/out", "scratch": "work memory"}.get(
        info.role, info.space
    )
    return f"{info.name}  ({role} {info.dtype}[{shape}])"


def columns(trace: Trace) -> tuple:
    """(inputs, shared, outputs) array ids; outputs are globals declared out/inout/scratch, or written."""
    written = set(trace.acc["array"][trace.acc["kind"] != READ].tolist())
    ins, mid, outs = [], [], []
    for a in an.drawn_arrays(trace):
        if a.space == "shared":
            mid.append(a.id)
        elif a.role in ("out", "inout", "scratch") or (a.role == "" and a.id in written):
            outs.append(a.id)
        else:
            ins.append(a.id)
    return ins, mid, outs


BAND_WIDTH = 70  # cells; a band wider than this wraps
ARRAY_GAP = 2.0  # cells between arrays side by side
BAND_GAP = 2.2  # cells between bands: room for the lines to slant
LABEL_CHARS = 6.0  # label characters per cell width (8 pt labels, 0.45 inch cells)


def layout(trace: Trace, blocks, extra_epochs=None) -> Layout:
    """Bands from top to bottom, as data flows: inputs; shared memory, one band per barrier
    interval any shown block used; outputs. Arrays of a band sit side by side."""
    ins, mid, outs = columns(trace)
    epochs = an.shared_epochs(trace, blocks)
    for aid, ep in (extra_epochs or {}).items():
        epochs[aid] = sorted(set(epochs.get(aid, [])) | {ep})
    all_epochs = sorted({e for a in mid for e in (epochs.get(a) or [0])})
    if len(all_epochs) > MAX_EPOCHS:  # the first few and the last tell the story; a fault's is kept
        keep = set(all_epochs[: MAX_EPOCHS - 1]) | {all_epochs[-1]} | set((extra_epochs or {}).values())
        all_epochs = [e for e in all_epochs if e in keep]
    bands = [[(a, -1) for a in ins]]
    bands += [[(a, e) for a in mid if e in (epochs.get(a) or [0])] for e in all_epochs]
    bands += [[(a, -1) for a in outs]]
    rows_of = []  # each band cut into lines no wider than BAND_WIDTH
    for band in (b for b in bands if b):
        line, width = [], 0.0
        for item in band:
            w = max(
                _grid(trace.arrays[item[0]])[1], len(_label(trace.arrays[item[0]], item[1])) / LABEL_CHARS
            )
            if line and width + ARRAY_GAP + w > BAND_WIDTH:
                rows_of.append(line)
                line, width = [], 0.0
            width += (ARRAY_GAP if line else 0) + w
            line.append(item)
        rows_of.append(line)

    def foot(item):  # an array's width, or its label's if wider
        return max(_grid(trace.arrays[item[0]])[1], len(_label(trace.arrays[item[0]], item[1])) / LABEL_CHARS)

    widths = [sum(foot(it) for it in line) + ARRAY_GAP * (len(line) - 1) for line in rows_of]
    total_w = max(widths, default=1)
    placed, y = [], 0.0
    for line, w in zip(rows_of, widths):
        x = (total_w - w) / 2
        y += 1.3  # room for the labels
        tallest = 0
        for aid, ep in line:
            rows, cols, size = _grid(trace.arrays[aid])
            placed.append(Placed(aid, ep, x, y, rows, cols, size, _label(trace.arrays[aid], ep)))
            x += foot((aid, ep)) + ARRAY_GAP
            tallest = max(tallest, rows)
        y += tallest + BAND_GAP
    lay = Layout(placed, total_w, y - BAND_GAP + 0.6)
    lay.epochs_shown, lay.epochs_total = (
        len(all_epochs),
        len({e for a in mid for e in (epochs.get(a) or [0])}),
    )
    lay.by_key = {(p.array, p.epoch): p for p in placed}
    return lay


@dataclass
class Focus:
    """What the diagnostic view marks in red."""

    block: int | None = None
    threads: tuple = ()  # linear thread ids in `block`
    marks: list = field(default_factory=list)  # (array id, epoch key, index as written, text)
    extra_epochs: dict = field(default_factory=dict)


def _cell_texts(trace: Trace, lay: Layout, p: Placed, wr: dict) -> list:
    """(x, y, value text, writer label, flat index) per cell worth labelling."""
    info = trace.arrays[p.array]
    values = None
    if lay.values and info.space != "shared" and p.size <= VALUE_CELLS:
        src = trace.after if info.id in lay.right_ids else trace.before
        if info.name in src:
            values = np.asarray(src[info.name]).reshape(-1)
    labels = lay.writer_labels and p.size <= LABEL_CELLS
    if values is None and not labels:
        return []
    ever = lay.ever_written.get(p.array, set())
    out = []
    for i in range(p.size):
        x, y = p.x0 + i % p.cols + 0.5, p.y0 + i // p.cols + 0.5
        who = wr.get((p.array, p.epoch, i), ())
        txt = ""
        if values is not None:
            if info.id in lay.right_ids and i not in ever:
                txt = "·"  # poison: nobody wrote it
            elif i < values.size:
                txt = style.fmt_value(values[i])
        label = ""
        if who and labels:
            label = f"t{an.thread_name(trace, who[0])}" if len(who) == 1 else f"{len(who)} threads"
        if txt or label:
            out.append((x, y, txt, label, i))
    return out


def _faces(sel: np.ndarray, size: int, colors: dict) -> tuple:
    """RGBA per cell from the accesses `sel` to one array copy: the writer's colour; a lighter shade
    of the reader's; grey where several threads wrote. Returns (faces, several writers?)."""
    faces = np.tile(matplotlib.colors.to_rgba(style.EMPTY), (size, 1))

    def one_thread(kind_mask):
        pairs = np.unique(np.stack([sel["index"][kind_mask], sel["thread"][kind_mask]], axis=1), axis=0)
        idx, first, n = np.unique(pairs[:, 0], return_index=True, return_counts=True)
        return idx, pairs[first, 1], n

    def rgba(threads, shade):
        return np.array(
            [
                matplotlib.colors.to_rgba(shade(colors[t]) if t in colors else style.MUTED)
                for t in threads.tolist()
            ]
        ).reshape(-1, 4)

    idx, who, n = one_thread(sel["kind"] == READ)
    ok = idx < size
    faces[idx[ok]] = matplotlib.colors.to_rgba(style.READ_TINT)
    one = ok & (n == 1)
    faces[idx[one]] = rgba(who[one], style.tint)
    idx, who, n = one_thread(sel["kind"] != READ)
    ok = idx < size
    one = ok & (n == 1)
    faces[idx[one]] = rgba(who[one], lambda c: c)
    faces[idx[ok & (n > 1)]] = matplotlib.colors.to_rgba(style.MUTED)
    return faces, bool((ok & (n > 1)).any())


def _draw_panel(
    ax, trace: Trace, lay: Layout, block: int, threads: list, colors: dict, focus, line_threads=None
):
    rows = trace.acc[trace.acc["block"] == block]
    wr = an.writers(trace, block)
    bad_threads = set(focus.threads) if focus and focus.block == block else set()
    cells, faces, texts = [], [], []
    for p in lay.placed:
        sel = rows[rows["array"] == p.array]
        if p.epoch >= 0:
            sel = sel[sel["epoch"] == p.epoch]
        face, several = _faces(sel, p.size, colors)
        lay.several |= several
        if p.size > BIG_ARRAY:  # one image: no cell borders, but fast
            img = np.ones((p.rows * p.cols, 4))
            img[: p.size] = face
            ax.imshow(
                img.reshape(p.rows, p.cols, 4),
                extent=(p.x0, p.x0 + p.cols, p.y0 + p.rows, p.y0),
                interpolation="nearest",
                zorder=2,
            )
        else:
            for i in range(p.size):
                x, y = p.x0 + i % p.cols, p.y0 + i // p.cols
                cells.append(((x, y), (x + 1, y), (x + 1, y + 1), (x, y + 1)))
            faces.append(face)
        texts += [(x, y, txt, label, face[i]) for x, y, txt, label, i in _cell_texts(trace, lay, p, wr)]
        style.text(  # on a white ground: lines run under an array's label, never through it
            ax,
            p.x0,
            p.y0 - 0.25,
            p.label,
            fontsize=lay.label_size,
            ha="left",
            va="bottom",
            color=style.INK,
            zorder=3,
            bbox={"fc": "white", "ec": "none", "pad": 0.4, "alpha": 0.9},
        )
    # cells sit above the lines: a line shows between the cells it joins, not across values
    if cells:
        ax.add_collection(
            PolyCollection(
                cells, facecolors=np.concatenate(faces), edgecolors="#BBBBBB", linewidths=0.6, zorder=2
            )
        )
    empty = matplotlib.colors.to_rgba(style.EMPTY)
    for x, y, txt, label, face in texts:
        ink = style.ink_on(face) if tuple(face) != empty else style.MUTED  # grey: another block's doing
        if txt and label:
            style.text(
                ax, x, y - 0.12, txt, fontsize=lay.cell_size, ha="center", va="center", zorder=4, color=ink
            )
            style.text(
                ax,
                x,
                y + 0.28,
                label,
                fontsize=lay.cell_size - 1,
                ha="center",
                va="center",
                zorder=4,
                color=ink,
            )
        else:
            style.text(
                ax,
                x,
                y,
                txt or label,
                fontsize=lay.cell_size,
                ha="center",
                va="center",
                zorder=4,
                color=ink if txt != "·" else style.MUTED,
            )

    # read -> write lines, from the edge of the read cell to the facing edge of the written one
    e = an.edges(trace, block)
    e = e[np.isin(e["thread"], threads if line_threads is None else line_threads)]
    segs, segcol, widths = [], [], []
    for r in e:
        ps = lay.by_key.get((int(r["src_array"]), int(r["src_epoch"])))
        pd = lay.by_key.get((int(r["dst_array"]), int(r["dst_epoch"])))
        if ps is None or pd is None:
            continue
        (xs, ys), (xd, yd) = ps.cell(r["src_index"]), pd.cell(r["dst_index"])
        if (xs, ys) == (xd, yd):
            continue  # read-modify-write of one cell
        dy = np.sign(yd - ys)
        if dy:
            segs.append(((xs, ys + 0.5 * dy), (xd, yd - 0.5 * dy)))
        else:  # same row: an arc under the cells, so it is not hidden behind them
            drop = min(1.2, 0.3 + 0.12 * abs(xd - xs))
            segs.append(((xs, ys + 0.5), ((xs + xd) / 2, ys + 0.5 + drop), (xd, yd + 0.5)))
        bad = int(r["thread"]) in bad_threads
        segcol.append(style.BAD if bad else colors[int(r["thread"])])
        widths.append(2.2 if bad else lay.line_width)
    if segs:
        ax.add_collection(LineCollection(segs, colors=segcol, linewidths=widths, alpha=0.75, zorder=1))
    # a dot on the lower edge of every cell a shown thread read
    rd = rows[np.isin(rows["thread"], threads) & (rows["kind"] == READ)]
    xs, ys, cs = [], [], []
    for t, arr, idx, ep in zip(
        rd["thread"].tolist(), rd["array"].tolist(), rd["index"].tolist(), rd["epoch"].tolist()
    ):
        p = lay.by_key.get((arr, an.node_epoch(trace, arr, ep)))
        if p is not None:
            x, y = p.cell(idx)
            xs.append(x)
            ys.append(y + 0.5)
            cs.append(style.BAD if t in bad_threads else colors[t])
    if xs:
        ax.scatter(xs, ys, s=lay.dot_size, c=cs, zorder=5, linewidths=0.4, edgecolors="white")
    # the faulting thread's written cells get a vermillion frame, the faulting cell a hatched one
    if bad_threads:
        wrows = rows[np.isin(rows["thread"], list(bad_threads)) & (rows["kind"] != READ)]
        framed = []
        for arr, idx, ep in zip(wrows["array"].tolist(), wrows["index"].tolist(), wrows["epoch"].tolist()):
            p = lay.by_key.get((arr, an.node_epoch(trace, arr, ep)))
            if p is not None:
                framed.append(p.cell(idx))
        if framed:
            ax.add_artist(_squares(framed, ec=style.BAD, lw=2))
    if focus and focus.block == block:
        for aid, ep, index, text in focus.marks:
            p = lay.by_key.get((aid, ep))
            if p is None:
                continue
            x, y = p.cell_at(index)
            ax.add_patch(
                Rectangle((x - 0.5, y - 0.5), 1, 1, fc="white", ec=style.BAD, lw=2.5, hatch="xxx", zorder=7)
            )
            ax.annotate(
                text,
                (x, y + 0.5),
                xytext=(0, -3),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=style.FONT["label"],
                color=style.BAD,
                fontweight="bold",
                zorder=9,
                annotation_clip=False,
                bbox={"fc": "white", "ec": "none", "alpha": 0.85, "pad": 0.5},
            )


def draw_access_map(
    trace: Trace,
    *,
    min_width: float = 8.0,
    title: str | None = None,
    focus: Focus | None = None,
    max_blocks: int = MAX_BLOCKS,
    max_threads: int = MAX_THREADS,
    values: bool = True,
    wrong: dict | None = None,
    thread: int | None = None,
):
    """The access-map figure for `trace` (see the module docstring); `focus` marks a fault in red,
    `wrong` ({output name: flat indices}) the output cells whose value differs from the spec,
    `thread` (a linear thread id) draws that thread in colour and every other one faint."""
    must_b = [focus.block] if focus and focus.block is not None else []
    ran = sorted(set(trace.acc["block"].tolist()))
    if focus is not None and ran and len(ran) < trace.nblocks:
        # a diagnosed run stopped early: blocks that never ran have nothing to show
        pool = sorted(set(ran) | set(must_b))
        blocks = [pool[i] for i in an.sample(len(pool), max_blocks, [pool.index(b) for b in must_b])]
    else:
        ran = list(range(trace.nblocks))
        blocks = an.sample(trace.nblocks, max_blocks, must_b)
    picked = [thread] if thread is not None and 0 <= thread < trace.nthreads else []
    threads = an.sample(trace.nthreads, max_threads, (list(focus.threads) if focus else []) + picked)
    lay = layout(trace, blocks, focus.extra_epochs if focus else None)
    if lay.epochs_shown >= 4 and len(blocks) > 2 and not focus:
        blocks = blocks[:1] + blocks[-1:]  # tall panels: two blocks stay legible, four do not
    lay.right_ids = set(columns(trace)[2])
    lay.shared_ids = set(columns(trace)[1])
    lay.ever_written = {}
    wrote = trace.acc[trace.acc["kind"] != READ]
    for a in set(wrote["array"].tolist()):
        lay.ever_written[a] = set(wrote["index"][wrote["array"] == a].tolist())
    # panels in the grid whose overall shape is closest to landscape 4:3
    pw, ph = lay.width + 1.6, lay.height + 1.2
    ncols = min(
        range(1, len(blocks) + 1), key=lambda c: abs(np.log(c * pw / (-(-len(blocks) // c) * ph) / 1.33))
    )
    nrows = -(-len(blocks) // ncols)
    cell = min(0.45, 14.0 / (ncols * pw), 28.0 / (nrows * ph))  # inches per cell
    lay.dot_size = max(3.0, 22 * (cell / 0.45) ** 2)
    lay.line_width = 1.4 if len(threads) <= 32 else 0.8
    # text is the slow part of drawing: values and thread labels only where they are legible and few
    value_cells = sum(p.size for p in lay.placed if p.size <= VALUE_CELLS and p.array not in lay.shared_ids)
    label_cells = sum(p.size for p in lay.placed if p.size <= LABEL_CELLS)
    lay.values = values and cell >= 0.3 and value_cells * len(blocks) <= MAX_TEXTS
    lay.writer_labels = cell >= 0.3 and (label_cells + value_cells * lay.values) * len(blocks) <= MAX_TEXTS
    lay.label_size = float(np.clip(8 * cell / 0.4, 5, 8))
    lay.cell_size = float(np.clip(6.5 * cell / 0.42, 5, 7))
    # every thread has its colour (cells of threads left out of the sample too: grey means "several
    # writers"); only the sampled threads get dots and lines
    if picked:  # one thread stands out: its reads, lines and writes; the others are context
        colors = dict.fromkeys(range(trace.nthreads), style.FADED)
        colors[thread] = style.GOOD
    else:
        colors = dict(enumerate(style.thread_colors(trace.nthreads, trace.block[0])))

    legend_w = 1.3 if len(threads) <= LEGEND_THREADS or picked else 1.7
    fig = style.new_figure(max(ncols * pw * cell + legend_w, min_width), nrows * ph * cell + 1.3)
    axes = fig.subplots(nrows, ncols, squeeze=False).reshape(-1)
    for ax in axes[len(blocks) :]:
        ax.set_axis_off()
    notes = []
    wrong_cells = 0
    line_threads = None
    if not picked:
        e = an.edges(trace, blocks[0]) if blocks else None
        if e is not None and np.isin(e["thread"], threads).sum() > MAX_LINES:
            # one thread's lines, the one with the most: enough to see the pattern, never a tangle
            counts = np.bincount(e["thread"], minlength=trace.nthreads)
            line_threads = [int(np.argmax(counts))] + (list(focus.threads) if focus else [])
            notes.append(
                f"lines of thread {an.thread_name(trace, line_threads[0])} only; "
                "show(..., thread=(x, y)) picks another"
            )
    for ax, b in zip(axes, blocks):
        _draw_panel(ax, trace, lay, b, picked or threads, colors, focus, line_threads)
        wrong_cells = max(wrong_cells, _mark_wrong(ax, trace, lay, wrong or {}))
        ax.set_xlim(-0.8, lay.width + 0.8)
        ax.set_ylim(lay.height + 0.2, -0.2)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        for s in ax.spines.values():
            s.set_color("#DDDDDD")
        bad = " (the faulting block)" if focus and focus.block == b else ""
        ax.set_title(
            f"{an.block_name(trace, b)}{bad}: {trace.nthreads} threads",
            loc="left",
            fontsize=style.FONT["panel"],
            color=style.BAD if bad else style.INK,
        )

    if len(ran) < trace.nblocks:
        notes.append(
            f"{trace.nblocks - len(ran)} of {trace.nblocks} blocks never ran (the run stopped at the fault)"
        )
    if len(blocks) < len(ran):
        notes.append(
            f"showing {len(blocks)} of {len(ran)} blocks" + (" that ran" if len(ran) < trace.nblocks else "")
        )
    if wrong_cells:
        notes.append(f"{wrong_cells} output cells shown hold a wrong value (hatched vermillion frame)")
    if len(threads) < trace.nthreads:
        notes.append(f"showing {len(threads)} of {trace.nthreads} threads per block, evenly spread")
    if not (trace.acc["kind"] != READ).any():
        style.text(
            axes[0],
            0.5,
            0.5,
            "Nothing written yet: no thread wrote anything.",
            transform=axes[0].transAxes,
            ha="center",
            va="center",
            fontsize=style.FONT["title"],
            color=style.BAD,
            bbox={"fc": "white", "ec": style.BAD, "pad": 6},
            zorder=10,
        )
    key = [
        "dot = a thread read this cell;  filled cell = a thread wrote it (colour and tN: which thread);  "
        "line = a read that fed a write (the writer's own, or another lane's through a warp shuffle)"
    ]
    if lay.epochs_shown < lay.epochs_total:
        notes.append(
            f"shared memory: {lay.epochs_shown} of {lay.epochs_total} barrier intervals "
            f"(the first {MAX_EPOCHS - 1} and the last)"
        )
    if lay.right_ids and lay.values:
        key.append("values: inputs before the launch, outputs after it (· = never written)")
    if picked:
        notes.append(
            f"thread {an.thread_name(trace, thread)} in blue (its reads, lines, writes); others faint"
        )
    if notes:
        key.append("; ".join(notes))
    style.footnote(fig, *key)
    style.title(
        fig,
        title or "Access map: who read what, who wrote what",
        margin=legend_w,
        color=style.BAD if focus else style.INK,
    )
    _legend(fig, trace, picked or threads, colors, focus, lay.several, bool(wrong_cells))
    return fig


def _mark_wrong(ax, trace: Trace, lay: Layout, wrong: dict) -> int:
    """Frame in vermillion the output cells whose value differs from the spec; returns how many."""
    centres = []
    for name, cells in wrong.items():
        try:
            info = trace.array(name)
        except KeyError:
            continue
        p = lay.by_key.get((info.id, -1))
        if p is not None:
            centres.append(np.column_stack(p.cell(np.asarray(cells, dtype=np.int64))))
    if centres:
        ax.add_artist(_squares(np.concatenate(centres), ec=style.BAD, lw=2.2, hatch="////", gid=WRONG_GID))
    return sum(len(c) for c in centres)


def _squares(centres, **style_kw) -> PathPatch:
    """Unfilled unit squares around cell centres (n x 2), drawn above the cells, as ONE path: a patch
    (or a collection) per square costs seconds on a stub's thousands of wrong cells, mostly hatching."""
    square = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5], [0.0, 0.0]])
    verts = np.asarray(centres, dtype=float).reshape(-1, 1, 2) + square
    verts[:, 4] = verts[:, 0]  # CLOSEPOLY's vertex is ignored; the start keeps the extent right
    codes = np.tile([Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY], len(verts))
    return PathPatch(Path(verts.reshape(-1, 2), codes), fill=False, zorder=6, snap=True, **style_kw)


def squares_centres(patch: PathPatch) -> list:
    """The centres of the squares `_squares` drew (tests read the picture back with it)."""
    return [tuple(c) for c in patch.get_path().vertices.reshape(-1, 5, 2)[:, :4].mean(axis=1)]


def _legend(fig, trace: Trace, threads, colors, focus, several, wrong=False):
    handles = []
    if len(threads) <= LEGEND_THREADS:
        handles = [
            Line2D([], [], color=colors[t], lw=3, label=f"thread {an.thread_name(trace, t)}") for t in threads
        ]
    if several:
        handles.append(Patch(fc=style.MUTED, ec="#BBBBBB", label="written by\nseveral threads"))
    if wrong:
        handles.append(Patch(fill=False, ec=style.BAD, hatch="////", lw=2, label="wrong value"))
    if focus is not None and (focus.threads or focus.marks):
        handles.append(Patch(fc="white", ec=style.BAD, hatch="xxx", lw=2, label="the fault"))
    if handles and len(threads) <= LEGEND_THREADS:
        fig.legend(handles=handles, loc="outside right upper", fontsize=style.FONT["label"], frameon=False)
    if len(threads) > LEGEND_THREADS:
        bx = trace.block[0]
        key = "written cells: tN names the writer; neighbouring threads get distant shades"
        if trace.block[1] > 1 or trace.block[2] > 1:
            key += f"; thread (x, y) is linear id x + y*{bx}"
        key += "; pick one with show(..., thread=(x, y))"
        handles.append(Patch(fc="none", ec="none", label=style.textwrap.fill(key, 24)))
        fig.legend(handles=handles, loc="outside right upper", fontsize=style.FONT["label"], frameon=False)


def access_map(
    trace: Trace,
    *,
    title: str | None = None,
    max_blocks: int = MAX_BLOCKS,
    max_threads: int = MAX_THREADS,
    values: bool = True,
    wrong: dict | None = None,
    thread: int | None = None,
) -> Figure:
    """Figure: per block, arrays as grids, each thread's reads (dots) -> writes (filled cells);
    `wrong` ({output name: flat indices}) frames the cells whose value differs from the spec;
    `thread` (linear id) shows that one thread in colour, the others faint."""
    return draw_access_map(
        trace,
        title=title,
        max_blocks=max_blocks,
        max_threads=max_threads,
        values=values,
        wrong=wrong,
        thread=thread,
    )
