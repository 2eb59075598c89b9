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
