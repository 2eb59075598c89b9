"""The pictures of notebook 26 (matplotlib Figures; none runs a rank or a kernel): the ring's
schedule, a grid cut into slabs with their halos, a step's timeline without and with overlap, the
memory of a data-parallel replica against ZeRO-1's, and measured scaling."""

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from .slabs import slab

RANK_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")


def ring_schedule(size: int = 4) -> Figure:
    """Which chunk each rank sends at each step of a ring all-reduce: reduce-scatter, then all-gather."""
    steps = 2 * (size - 1)
    fig = Figure(figsize=(1.0 + 0.75 * steps, 0.9 + 0.5 * size))
    ax = fig.subplots()
    for r in range(size):
        for s in range(steps):
            gather = s >= size - 1
            chunk = (r - s) % size if not gather else (r + 1 - (s - size + 1)) % size
            ax.add_patch(
                Rectangle(
                    (s, size - 1 - r), 0.94, 0.9, color=RANK_COLOURS[chunk % 8], alpha=0.35 if gather else 0.8
                )
            )
            ax.text(s + 0.47, size - 0.55 - r, f"c{chunk}", ha="center", va="center", fontsize=9)
    ax.axvline(size - 1 - 0.03, color="black", lw=1)
    ax.set_xlim(0, steps)
    ax.set_ylim(0, size)
    ax.set_xticks([s + 0.47 for s in range(steps)], [str(s + 1) for s in range(steps)])
    ax.set_yticks([size - 0.55 - r for r in range(size)], [f"rank {r}" for r in range(size)])
    ax.set_xlabel("step (left of the line: reduce-scatter, adds; right: all-gather, copies)", fontsize=9)
    ax.set_title(f"Ring all-reduce on {size} ranks: the chunk each rank sends to rank + 1", fontsize=10)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def slab_layout(nz: int = 10, size: int = 3) -> Figure:
    """The global grid's z planes (left) and each rank's slab (right): owned planes in the rank's
    colour, the two halos in the neighbour's colour, hatched, with the message that fills each."""
    fig = Figure(figsize=(2.2 + 1.6 * size, 0.6 + 0.32 * (nz + 2)))
    ax = fig.subplots()
    h = 0.8
    for z in range(nz):
        owner = next(r for r in range(size) if slab(nz, size, r)[0] <= z < slab(nz, size, r)[1])
        ax.add_patch(Rectangle((0, z), 1.2, h, color=RANK_COLOURS[owner], alpha=0.8))
        ax.text(-0.1, z + h / 2, f"z={z}", ha="right", va="center", fontsize=7)
    ax.text(0.6, nz + 0.4, "global grid", ha="center", fontsize=9)
    for r in range(size):
        z0, z1 = slab(nz, size, r)
        x = 2.2 + 1.6 * r
        ax.text(x + 0.5, nz + 0.4, f"rank {r}", ha="center", fontsize=9, color=RANK_COLOURS[r])
        for k in range(z1 - z0 + 2):
            z = z0 + k - 1
            if not 0 <= z < nz:
                continue
            halo = k in (0, z1 - z0 + 1)
            colour = RANK_COLOURS[r - 1 if k == 0 else r + 1] if halo else RANK_COLOURS[r]
            edge = "black" if halo else colour
            ax.add_patch(Rectangle((x, z), 1.0, h, facecolor=colour, alpha=0.35 if halo else 0.8,
                                   hatch="///" if halo else None, edgecolor=edge))  # fmt: skip
            label = f"u[{k}]" + (" halo" if halo else "")
            ax.text(x + 0.5, z + h / 2, label, ha="center", va="center", fontsize=6.5)
        for src, z in ((r - 1, z0 - 1), (r + 1, z1)):
            if 0 <= src < size:  # the neighbour's edge plane travels into this halo
                xs = 2.2 + 1.6 * src + (1.0 if src < r else 0.0)
                arrow = FancyArrowPatch((xs, z + h / 2), (x + (0.0 if src < r else 1.0), z + h / 2),
                                        arrowstyle="->", mutation_scale=8, color="black", lw=0.8)  # fmt: skip
                ax.add_patch(arrow)
    ax.set_xlim(-0.9, 2.4 + 1.6 * size)
    ax.set_ylim(-0.3, nz + 1)
    ax.axis("off")
    ax.set_title(
        f"{nz} planes over {size} ranks: each slab keeps a copy of its neighbours' edge planes", fontsize=9
    )
    fig.tight_layout()
    return fig


def overlap_timeline(edge: float, interior: float, message: float, label: str = "model") -> Figure:
    """One step without overlap (sweep everything, then exchange) and with it (edges, then the
    interior while the halos travel); times in microseconds."""
    fig = Figure(figsize=(8, 2.6))
    ax = fig.subplots()
    rows = [("blocking: GPU", [(0, 2 * edge + interior, "sweep all planes", 0)]),
            ("blocking: messages", [(2 * edge + interior, message, "halos", 1)]),
            ("overlap: GPU", [(0, 2 * edge, "edges", 0), (2 * edge, interior, "interior", 0)]),
            ("overlap: messages", [(2 * edge, message, "halos", 1)])]  # fmt: skip
    for y, (_, bars) in enumerate(reversed(rows)):
        for start, width, text, kind in bars:
            ax.add_patch(
                Rectangle((start, y + 0.15), width, 0.7, color=RANK_COLOURS[2 if kind else 0], alpha=0.8)
            )
            ax.text(start + width / 2, y + 0.5, text, ha="center", va="center", fontsize=8, color="white")
    blocking, overlap = 2 * edge + interior + message, 2 * edge + max(interior, message)
    ax.set_yticks([y + 0.5 for y in range(4)], [r[0] for r in reversed(rows)])
    ax.set_xlim(0, blocking * 1.02)
    ax.set_ylim(0, 4)
    ax.set_xlabel(f"microseconds ({label})")
    ax.set_title(f"One step: {blocking:.0f} us blocking, {overlap:.0f} us overlapped", fontsize=10)
    fig.tight_layout()
    return fig


def zero_memory(n_params: int, size: int) -> Figure:
    """Bytes per rank of a float32 data-parallel replica (parameters, gradient, AdamW's m and v)
    against ZeRO-1's (m and v sharded)."""
    mb = 4 * n_params / 2**20
    plain = {"parameters": mb, "gradient": mb, "AdamW m": mb, "AdamW v": mb}
    zero = {"parameters": mb, "gradient": mb, "AdamW m": mb / size, "AdamW v": mb / size}
    fig = Figure(figsize=(6, 2.6))
    ax = fig.subplots()
    for y, parts in enumerate((zero, plain)):
        left = 0.0
        for k, (part, v) in enumerate(parts.items()):
            ax.barh(y, v, left=left, color=RANK_COLOURS[k], label=part if y == 0 else None)
            left += v
        ax.text(left, y, f" {left:.2f} MiB", va="center", fontsize=8)
    ax.set_yticks([0, 1], ["ZeRO-1", "data parallel"])
    ax.set_xlabel(f"MiB per rank ({n_params:,} float32 parameters, {size} ranks)")
    ax.set_xlim(0, 4 * mb * 1.25)
    ax.legend(fontsize=7, ncols=4, loc="upper center", bbox_to_anchor=(0.5, 1.32))
    fig.tight_layout()
    return fig


def scaling_plot(rows: list) -> Figure:
    """Efficiency against GPUs, one line per run and mode (rows of scaling.efficiency)."""
    fig = Figure(figsize=(6, 3.2))
    ax = fig.subplots()
    keys = sorted({(r["variant"], r["mode"]) for r in rows})
    for k, (v, m) in enumerate(keys):
        pts = sorted((r["gpus"], r["efficiency"]) for r in rows if (r["variant"], r["mode"]) == (v, m))
        ax.plot(*zip(*pts), "o-" if m == "weak" else "s--", color=RANK_COLOURS[k % 8], label=f"{v}, {m}")
    ax.axhline(0.9, color="grey", lw=0.8, ls=":")
    ax.set_xticks(sorted({r["gpus"] for r in rows}))
    ax.set_xlabel("GPUs")
    ax.set_ylabel("efficiency")
    ax.set_ylim(0, 1.1)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
