"""Colour to grayscale: one pixel per thread of a 2-D grid of 2-D blocks.

Rungs:
- ch03_grayscale (worked): `gray = 0.21 r + 0.72 g + 0.07 b`; x indexes columns, y rows, and the
  threads past the right or bottom edge do nothing.
"""

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import CHAPTER, _grid2d, _image_shapes

# ---------------------------------------------------------------------------- spec


def spec_grayscale(rgb, height, width):
    w = np.array([0.21, 0.72, 0.07], np.float32)
    return (rgb * w).sum(axis=2, dtype=np.float32)


# ---------------------------------------------------------------------------- cases


def cases_grayscale(rng):
    out = []
    for (h, w), block in _image_shapes(rng):
        rgb = rng.random((h, w, 3), dtype=np.float32)
        out.append(
            Case(
                grid=_grid2d(h, w, block),
                block=block,
                args={"gray": np.empty((h, w), np.float32), "rgb": rgb, "height": h, "width": w},
            )
        )
    return out


# ---------------------------------------------------------------------------- colour to grayscale


@cuda.jit
def grayscale_kernel(gray, rgb, height, width):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < height and col < width:
        gray[row, col] = (
            float32(0.21) * rgb[row, col, 0]
            + float32(0.72) * rgb[row, col, 1]
            + float32(0.07) * rgb[row, col, 2]
        )


CH03_GRAYSCALE = Puzzle(
    name="ch03_grayscale",
    title="PMPP 3: Colour to grayscale",
    statement="""\
`rgb` is a `height x width x 3` image (red, green, blue in [0, 1]); write
`gray[r, c] = 0.21 * red + 0.72 * green + 0.07 * blue`. The launch is a 2-D grid of 2-D blocks:
`x` indexes columns and `y` rows, so neighbouring threads of a warp touch neighbouring pixels of
one row. The grid is rounded up in both directions, so threads past the right or bottom edge must
do nothing. Budget per thread: 3 global reads, 1 global write.""",
    outputs=("gray",),
    spec=spec_grayscale,
    cases=cases_grayscale,
    reference=grayscale_kernel,
    budget=Budget(global_reads=3, global_writes=1),
    chapter=CHAPTER,
)


PUZZLES = [CH03_GRAYSCALE]
