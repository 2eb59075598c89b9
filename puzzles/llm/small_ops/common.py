"""What the op files of transformer kernels 2 share: the launch constants, the float32 unit
roundoff and the element-wise sizes (GELU, residual add and AdamW draw them alike)."""

import math

import numpy as np

CHAPTER = "llm-2"


WARP = 32


FULL_MASK = 0xFFFFFFFF


ROWS_PER_BLOCK = 2  # warp-per-row kernels: rows per block in the puzzles


TPB = 32  # element-wise kernels: threads per block in the puzzles


UNROLL = 2  # unrolled kernels: elements per thread per round (the GPU benchmark uses 4)


NEG_INF = np.float32(-np.inf)


GELU_K = np.float32(math.sqrt(2.0 / math.pi))


GELU_C = np.float32(0.044715)


U = 2.0**-24


def warp_per_row(rows):
    return (rows + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK, ROWS_PER_BLOCK * WARP


def elementwise_sizes(rng):
    """(n, grid): one element, a block minus one, a block plus one, grids too small (the loop goes round)."""
    return [
        (1, 1),
        (TPB - 1, 1),
        (TPB + 1, 2),
        (int(rng.integers(100, 200)), 2),
        (int(rng.integers(200, 400)), 3),
    ]


_ELT = dict(chapter=CHAPTER)
