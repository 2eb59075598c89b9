"""The fragment layout of mma.sync m16n8k8, drawn lane by lane: which lane holds which element of
A, B and C (a picture for notebook 28; it runs no kernel). The layout itself is helpers/sim/mma.py's
`position`, the one the simulator and the checks use."""

from helpers.sim.mma import SHAPE, SIZE, position

TITLES = {
    "a": "A (16x8 fp16): a[i] = A[g + 8(i>>1), 2t + (i&1)]",
    "b": "B (8x8 fp16): b[i] = B[2t + i, g]",
    "c": "C, D (16x8 fp32): c[i] = C[g + 8(i>>1), 2t + (i&1)]",
}


def owners(frag: str) -> dict:
    """{(row, column): (lane, i)} for fragment `frag`."""
    return {position(frag, lane, i): (lane, i) for lane in range(32) for i in range(SIZE[frag])}


def draw_fragments():
    """A, B and C side by side, each cell labelled `lane[i]` and coloured by the lane's group
    (lane >> 2: the lanes that share rows of A and C, and a column of B)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 6.2), gridspec_kw={"width_ratios": [8, 8, 8]})
    cmap = plt.get_cmap("tab10")
    for ax, frag in zip(axes, "abc"):
        rows, cols = SHAPE[frag]
        for (r, c), (lane, i) in owners(frag).items():
            ax.add_patch(
                plt.Rectangle((c, r), 1, 1, facecolor=cmap(lane >> 2), alpha=0.35 + 0.15 * (lane & 3))
            )
            ax.text(c + 0.5, r + 0.5, f"{lane}[{i}]", ha="center", va="center", fontsize=7)
        ax.set_xlim(0, cols)
        ax.set_ylim(rows, 0)
        ax.set_xticks([x + 0.5 for x in range(cols)], [str(x) for x in range(cols)], fontsize=7)
        ax.set_yticks([y + 0.5 for y in range(rows)], [str(y) for y in range(rows)], fontsize=7)
        ax.set_aspect("equal")
        ax.set_title(TITLES[frag], fontsize=9)
        ax.set_xlabel("column (k for A, n for B and C)" if frag != "b" else "column n", fontsize=8)
        ax.set_ylabel("row m" if frag != "b" else "row k", fontsize=8)
    fig.suptitle(
        "mma.sync m16n8k8: the element each lane holds, as lane[i] "
        "(g = lane >> 2 colours, t = lane & 3 shades)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def draw_register_tiles(tm: int = 2, tn: int = 2):
    """A warp's part of C in tc_mma_reg_gemm: a tm x tn grid of 16x8 mma tiles, each labelled with
    its accumulator, beside the A fragments (one per tile row, left) and B fragments (one per tile
    column, top) a step loads once from shared memory and reuses from registers."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 6.4))
    cmap = plt.get_cmap("tab10")
    k = 8  # K per step: A's fragments are 16 x k, B's k x 8
    for i in range(tm):  # A: left of C, one fragment per tile row
        ax.add_patch(plt.Rectangle((0, k + 16 * i), k, 16, facecolor=cmap(i), alpha=0.45, edgecolor="k"))
        ax.text(
            k / 2, k + 16 * i + 8, f"fa[{i}]\n16x8 of A\nused {tn}x", ha="center", va="center", fontsize=9
        )
    for j in range(tn):  # B: above C, one fragment per tile column
        ax.add_patch(plt.Rectangle((k + 8 * j, 0), 8, k, facecolor=cmap(tm + j), alpha=0.45, edgecolor="k"))
        ax.text(k + 8 * j + 4, k / 2, f"fb[{j}]\n8x8 of B\nused {tm}x", ha="center", va="center", fontsize=8)
    for i in range(tm):  # C: the tiles, each coloured half by its A and half by its B fragment
        for j in range(tn):
            x, y = k + 8 * j, k + 16 * i
            ax.add_patch(plt.Rectangle((x, y), 4, 16, facecolor=cmap(i), alpha=0.25))
            ax.add_patch(plt.Rectangle((x + 4, y), 4, 16, facecolor=cmap(tm + j), alpha=0.25))
            ax.add_patch(plt.Rectangle((x, y), 8, 16, fill=False, edgecolor="k"))
            ax.text(x + 4, y + 8, f"tile ({i},{j})\nfc[{tn * i + j}]", ha="center", va="center", fontsize=9)
    ax.set_xlim(0, k + 8 * tn)
    ax.set_ylim(k + 16 * tm, 0)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    loads, separate = tm * 4 + tn * 2, tm * tn * 6
    ax.set_title(
        f"One warp, one step: {tm * tn} mma from {tm} A + {tn} B fragments\n"
        f"shared reads per lane: {loads} (each fragment once), not {separate} (per tile)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig
