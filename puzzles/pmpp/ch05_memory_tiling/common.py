"""What chapter 5's op files share: the chapter tag, the tile width of the shared-memory kernels,
the matmul spec (chapter 3's) and the operands and shapes every rung's cases draw.
"""

import math

import numpy as np

from helpers.puzzle import edge_sizes
from puzzles.pmpp.ch03_grids.matmul import spec_matmul

CHAPTER = "pmpp-05"
TILE = 8


# ---------------------------------------------------------------------------- spec


def spec(m, n, rows, inner, cols, tile=None):
    return spec_matmul(m, n, rows, inner, cols)


def _tiles(case, width):
    return math.ceil(case.args["inner"] / width)


# ---------------------------------------------------------------------------- cases


SHAPES = ((9, 21, 13), (4, 17, 3), (20, 5, 11), (1, 30, 10), (17, 12, 10))  # rows, inner, cols


def _operands(rng, rows, inner, cols):
    m = rng.normal(0, 1, (rows, inner)).astype(np.float32)
    n = rng.uniform(-2, 2, (inner, cols)).astype(np.float32)
    return {
        "p": np.empty((rows, cols), np.float32),
        "m": m,
        "n": n,
        "rows": rows,
        "inner": inner,
        "cols": cols,
    }


def _shapes(rng) -> list[tuple[int, int, int]]:
    """SHAPES[0] first (the one pictures show), then shapes drawn per seed: the inner size at the
    tile's edges (1, TILE-1, TILE, TILE+1), a few tiles, and up to 6 tiles, so a fixed tile count
    fails; rows and columns from 1 to 20, one of them sometimes a single row or column."""
    sub = rng.spawn(1)[0]  # its own stream: the operands drawn from `rng` stay what they were
    out = [SHAPES[0]]
    for k in edge_sizes(rng, SHAPES[0][1], TILE, (5 * TILE + 1, 6 * TILE))[1:]:
        r, c = (int(v) for v in sub.integers(1, 21, 2))
        out.append((r, k, c))
    one = int(sub.integers(1, len(out)))
    out[one] = (1, out[one][1], int(sub.integers(2, 21)))
    return out
