"""A sliding window in registers: each thread slides a 3x3 window down ROWS rows of one column.

Rungs:
- ch07_conv2d_register (worked, written for the GPU): clamped, branch-free loads, three new pixels
  per row; the benchmark adds a GPU-only version with BATCH rows' loads in flight.
"""

import math

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import _COMMON, CHAPTER, FILTER, _image, _shapes, spec_const

ROWS = 3  # register: output rows per thread (16 on the GPU)


# ---------------------------------------------------------------------------- cases


def cases_register(rng):
    # 8 x 4 threads, ROWS rows each: blocks cover 8 x 4*ROWS pixels.
    return [
        Case(
            grid=(math.ceil(w / 8), math.ceil(h / (4 * ROWS))),
            block=(8, 4),
            args={"out": np.empty((h, w), np.float32), "a": _image(rng, h, w), "h": h, "w": w},
        )
        for h, w in _shapes(rng, 8, 4 * ROWS)
    ]


# ---------------------------------------------------------------------------- sliding window


@cuda.jit
def conv2d_register(out, a, h, w):
    f = cuda.const.array_like(FILTER)
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * ROWS
    if col >= w or row0 >= h:
        return
    # Clamped neighbour indices are always safe to load, so no branch stands between a row's
    # loads; the taps of a ghost column are zeroed once, up front, instead.
    cl = max(col - 1, 0)
    cr = min(col + 1, w - 1)
    ml = float32(1.0) if col >= 1 else float32(0.0)
    mr = float32(1.0) if col + 1 < w else float32(0.0)
    k00, k01, k02 = f[0, 0] * ml, f[0, 1], f[0, 2] * mr
    k10, k11, k12 = f[1, 0] * ml, f[1, 1], f[1, 2] * mr
    k20, k21, k22 = f[2, 0] * ml, f[2, 1], f[2, 2] * mr
    t = max(row0 - 1, 0)
    mt = float32(1.0) if row0 >= 1 else float32(0.0)
    # The window: rows r-1 (a), r (b), r+1 (c), three columns each, all in registers.
    a0, a1, a2 = a[t, cl] * mt, a[t, col] * mt, a[t, cr] * mt
    b0, b1, b2 = a[row0, cl], a[row0, col], a[row0, cr]
    for r in range(row0, min(row0 + ROWS, h)):
        nxt = min(r + 1, h - 1)
        mb = float32(1.0) if r + 1 < h else float32(0.0)
        c0, c1, c2 = a[nxt, cl] * mb, a[nxt, col] * mb, a[nxt, cr] * mb
        out[r, col] = (
            k00 * a0 + k01 * a1 + k02 * a2 + k10 * b0 + k11 * b1 + k12 * b2 + k20 * c0 + k21 * c1 + k22 * c2
        )
        a0, a1, a2 = b0, b1, b2
        b0, b1, b2 = c0, c1, c2


REGISTER = (
    f"""\
**A sliding window in registers** (a worked example, written for the GPU). Each thread computes
`ROWS = {ROWS}` outputs of one column, rows `row0 .. row0 + ROWS - 1` with
`row0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS`. The 3 x 3 window of pixels lives in nine
registers; moving down one row loads only the three pixels of the new bottom row (the left and
right ones are also loaded by the neighbouring lanes, so the L1 cache serves them). The loads use
clamped indices, always inside the image, and ghost cells are zeroed by multiplying with 0, so no
branch stands between a thread's loads and the GPU keeps them all in flight."""
    + _COMMON
    + f"""

Budget per thread: `3 * (ROWS + 2) = {3 * (ROWS + 2)}` global reads, `ROWS` writes."""
)


CH07_CONV2D_REGISTER = Puzzle(
    name="ch07_conv2d_register",
    title="2-D convolution, sliding window in registers",
    statement=REGISTER,
    outputs=("out",),
    spec=spec_const,
    cases=cases_register,
    reference=conv2d_register,
    budget=Budget(global_reads=3 * (ROWS + 2), global_writes=ROWS),
    chapter=CHAPTER,
)


PUZZLES = [CH07_CONV2D_REGISTER]
