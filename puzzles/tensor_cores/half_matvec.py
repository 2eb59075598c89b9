"""Half-precision storage, single-precision arithmetic, one rung:

    tc_half_matvec   y = W @ x with W and x stored as fp16 (half the bytes of fp32), every product
                     and the sum in fp32; one warp per row, a shuffle reduction

Tolerance, derived: fp16 x fp16 is exact in fp32 (11 + 11 significant bits <= 24), so the only error
is fp32's rounding of the sums: each lane adds cols/32 products, then five shuffle levels add the
lanes. Its probabilistic bound (Higham) is sqrt(cols/32 + 5) * U32 * sum|W x|, under 8e-6 for these
cases (cols <= 1000, W scaled by 1/sqrt(cols): sum|W x| <= 21): `atol` = `rtol` = 1e-5. Multiplying in
fp16 (each product rounded to 11 bits) or summing in fp16 costs U16 / U32 = 8192 times more per
rounding: measured, at least 1e-5 * sum|W x| on every case of more than one column, so both fail.
"""

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes

from .common import CHAPTER, FULL_MASK, ROWS_PER_BLOCK, WARP


def spec(w, x, rows, cols):
    return (w.astype(np.float64) @ x.astype(np.float64)).astype(np.float32)


def cases(rng):
    out = []
    for cols in edge_sizes(rng, 200, WARP, (300, 1000)):
        rows = int(rng.integers(4, 12))
        scale = 1.0 / np.sqrt(cols)  # |y| stays O(1), far from fp16's overflow either way
        w = (rng.standard_normal((rows, cols)) * scale).astype(np.float16)
        x = rng.standard_normal(cols).astype(np.float16)
        grid = (rows + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
        args = dict(y=np.zeros(rows, np.float32), w=w, x=x, rows=rows, cols=cols)
        out.append(Case(grid, ROWS_PER_BLOCK * WARP, args))
    return out


@cuda.jit
def half_matvec(y, w, x, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * ROWS_PER_BLOCK + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    acc = float32(0.0)
    for j in range(lane, cols, WARP):
        acc += float32(w[r, j]) * float32(x[j])  # widen first: the product is then exact
    for offset in (16, 8, 4, 2, 1):
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, offset)
    if lane == 0:
        y[r] = acc
    ### END SOLUTION


HALF_MATVEC = Puzzle(
    name="tc_half_matvec",
    title="fp16 storage, fp32 arithmetic: a matrix-vector product",
    statement=f"""`y = w @ x`, with `w` (`rows x cols`) and `x` stored as **float16**: half the bytes of
float32, so a memory-bound kernel like this one reads its data twice as fast. The arithmetic stays in
**float32**: widen each value (`float32(w[r, j])`) before multiplying, and keep the sum in float32.
One warp per row (`{ROWS_PER_BLOCK}` rows per block), lanes striding along the row, a shuffle
reduction, lane 0 writes `y[r]` (float32). Tolerance: `rtol` = `atol` = 1e-5, derived in the op
file's docstring from fp32's rounding; multiplying or summing in fp16 misses it.""",
    outputs=("y",),
    spec=spec,
    cases=cases,
    reference=half_matvec,
    float64="reject",
    budget=Budget(shared_bytes=0),
    hints=(
        "`float32(w[r, j]) * float32(x[j])`: fp16 times fp16 is exact once both are float32.",
        "The accumulator starts as `float32(0.0)`: a float16 one rounds every partial sum to 11 bits.",
        "Reduce with `cuda.shfl_xor_sync(FULL_MASK, acc, offset)` for offset 16, 8, 4, 2, 1.",
    ),
    rtol=1e-5,
    atol=1e-5,
    chapter=CHAPTER,
)

PUZZLES = [HALF_MATVEC]
