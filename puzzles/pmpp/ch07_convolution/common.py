"""What chapter 7's op files share: the filter (radius, width, the constant-memory taps), the NumPy
truth, the image shapes and pixels every rung's cases draw, and the statement's common paragraph.

Pixels outside the image count as 0 ("ghost cells"). Like the book, "convolution" here means
out[r, c] = sum_ij f[i, j] * a[r - R + i, c - R + j] (no flip).
"""

import numpy as np

from helpers.puzzle import edge_sizes

CHAPTER = "pmpp-07"


R = 1  # filter radius
FW = 2 * R + 1  # filter width


# The constant-memory filter: fixed at compile time, every tap distinct and non-zero, not symmetric.
FILTER = np.array([[0.25, -0.5, 0.75], [1.5, -1.25, 0.625], [-0.875, 1.0, 0.125]], np.float32)


# ---------------------------------------------------------------------------- spec


def conv2d(a, f):
    """NumPy truth: zero-padded correlation of `a` with the (2R+1) x (2R+1) filter `f`."""
    h, w = a.shape
    r = f.shape[0] // 2
    p = np.zeros((h + 2 * r, w + 2 * r), np.float64)
    p[r : r + h, r : r + w] = a
    out = np.zeros((h, w), np.float64)
    for i in range(f.shape[0]):
        for j in range(f.shape[1]):
            out += float(f[i, j]) * p[i : i + h, j : j + w]
    return out.astype(np.float32)


def spec_const(a, h, w):
    return conv2d(a, FILTER)


# ---------------------------------------------------------------------------- cases


SHAPES = ((13, 22), (5, 4), (20, 9), (17, 31), (9, 14))  # (h, w): never square, sizes off the tile


def _shapes(rng, bw, bh):
    """Case 0 the notebook's 13 x 22; then per seed, per axis, the edges around one block of `bw` x
    `bh` outputs (1, block-1, block, block+1, a few blocks) and a side wider (32-36) or taller (21-24)
    than the old fixed shapes, the two axes paired at random."""
    pair = rng.spawn(1)[0]  # its own stream: case 0's data stay what they were
    ws = edge_sizes(rng, SHAPES[0][1], bw, (32, 36))[1:]
    hs = edge_sizes(rng, SHAPES[0][0], bh, (21, 24))[1:]
    k = max(len(ws), len(hs))
    ws += [int(pair.integers(1, 3 * bw)) for _ in range(k - len(ws))]
    hs += [int(pair.integers(1, 3 * bh)) for _ in range(k - len(hs))]
    return [SHAPES[0], *zip(pair.permutation(hs).tolist(), ws)]


def _image(rng, h, w):
    return rng.uniform(-10, 10, (h, w)).astype(np.float32)


# ---------------------------------------------------------------------------- statements


_COMMON = f"""

`a` and `out` are `h x w` float32 images; `R = {R}`, the filter is `FW x FW` with `FW = 2*R + 1`.
`out[r, c] = sum over i, j of f[i, j] * a[r - R + i, c - R + j]`, where pixels outside the image
count as 0. `cuda.grid(2)` gives `(x, y)`: x is the column, y the row."""
