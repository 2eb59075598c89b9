"""Known-wrong and known-right kernels for puzzles/tensor_cores/half_matvec.py (fp16 storage, fp32
arithmetic). The precision mutants fail on accuracy alone: their error is U16 / U32 = 8192 times
fp32's per rounding (the tolerance's derivation is in the op file's docstring)."""

import numba
import numpy as np
from numba import cuda, float32

from mutants.common import RACE, WRONG, M
from puzzles.tensor_cores import half_matvec as m
from puzzles.tensor_cores.common import FULL_MASK, WARP

hm = m.half_matvec

MUTANTS = {
    "tc_half_matvec": [
        # the running sum kept in fp16 (rounded to 11 significant bits after every add; numba cannot
        # shuffle a float16, so it is widened for the reduction)
        M(
            hm,
            "accumulates_in_fp16",
            WRONG,
            (
                "acc += float32(w[r, j]) * float32(x[j])",
                "acc = float32(np.float16(acc + float32(w[r, j]) * float32(x[j])))",
            ),
        ),
        # fp16 x fp16 rounded to fp16 before the fp32 add: each product loses 13 bits
        M(hm, "multiplies_in_fp16", WRONG, ("float32(w[r, j]) * float32(x[j])", "float32(w[r, j] * x[j])")),
        M(hm, "half_every_lane_writes", RACE, ("    if lane == 0:\n        y[r] = acc", "    y[r] = acc")),
        M(hm, "stride_of_half_a_warp", WRONG, ("range(lane, cols, WARP)", "range(lane, cols, 16)")),
        M(hm, "half_the_shuffles", WRONG, ("(16, 8, 4, 2, 1)", "(8, 4, 2, 1)")),
    ]
}


@cuda.jit
def widened_once(y, w, x, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * m.ROWS_PER_BLOCK + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    acc = np.float32(0.0)
    j = lane
    while j < cols:
        xv = numba.float32(x[j])
        acc += numba.float32(w[r, j]) * xv
        j += WARP
    offset = 1
    while offset < WARP:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
        offset *= 2
    if lane == 0:
        y[r] = acc


@cuda.jit
def two_sums(y, w, x, rows, cols):  # two accumulators (more independent adds in flight)
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * m.ROWS_PER_BLOCK + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    s0 = float32(0.0)
    s1 = float32(0.0)
    for j in range(lane, cols, 2 * WARP):
        s0 += float32(w[r, j]) * float32(x[j])
        if j + WARP < cols:
            s1 += float32(w[r, j + WARP]) * float32(x[j + WARP])
    acc = s0 + s1
    for offset in (16, 8, 4, 2, 1):
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, offset)
    if lane == 0:
        y[r] = acc


VARIANTS = {"tc_half_matvec": [("widened_once", widened_once), ("two_sums", two_sums)]}
SEEDS = {"tc_half_matvec": (0, 1, 2)}
