"""Known-wrong and known-right kernels for puzzles/tensor_cores/int8_matvec.py (int8, dp4a, scales)."""

from numba import cuda, float32, int32

from helpers.tensor_cores import dp4a
from mutants.common import RACE, WRONG, M
from puzzles.tensor_cores import int8_matvec as m
from puzzles.tensor_cores.common import FULL_MASK, WARP

im = m.int8_matvec

MUTANTS = {
    "tc_int8_matvec": [
        # dequantization without the vector's scale
        M(
            im,
            "missing_x_scale",
            WRONG,
            ("y[r] = float32(acc) * w_scale[r] * x_scale", "y[r] = float32(acc) * w_scale[r]"),
        ),
        # dequantization without the row's scale
        M(
            im,
            "missing_row_scale",
            WRONG,
            ("y[r] = float32(acc) * w_scale[r] * x_scale", "y[r] = float32(acc) * x_scale"),
        ),
        # one scale for every row: row 0's
        M(im, "row0_scale_for_all", WRONG, ("float32(acc) * w_scale[r]", "float32(acc) * w_scale[0]")),
        # the words multiplied as whole int32 numbers, not four bytes each
        M(im, "words_not_bytes", WRONG, ("acc = dp4a(wq[r, j], xq[j], acc)", "acc += wq[r, j] * xq[j]")),
        M(
            im,
            "int8_every_lane_writes",
            RACE,
            ("    if lane == 0:\n        y[r] =", "    if True:\n        y[r] ="),
        ),
    ]
}


@cuda.jit
def bytes_by_hand(y, wq, xq, w_scale, x_scale, rows, words):  # the four products without dp4a
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * m.ROWS_PER_BLOCK + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    acc = int32(0)
    for j in range(lane, words, WARP):
        a = wq[r, j]
        b = xq[j]
        for s in range(4):
            ab = int32((a << (24 - 8 * s)) >> 24)  # sign-extended byte s
            bb = int32((b << (24 - 8 * s)) >> 24)
            acc += ab * bb
    for offset in (16, 8, 4, 2, 1):
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, offset)
    if lane == 0:
        y[r] = float32(acc) * (w_scale[r] * x_scale)


@cuda.jit
def scale_first(y, wq, xq, w_scale, x_scale, rows, words):  # one scale product, lane 31 writes
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * m.ROWS_PER_BLOCK + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    s = w_scale[r] * x_scale
    acc = int32(0)
    j = lane
    while j < words:
        acc = dp4a(wq[r, j], xq[j], acc)
        j += WARP
    for offset in (1, 2, 4, 8, 16):
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, offset)
    if lane == WARP - 1:
        y[r] = s * float32(acc)


VARIANTS = {"tc_int8_matvec": [("bytes_by_hand", bytes_by_hand), ("scale_first", scale_first)]}
SEEDS = {"tc_int8_matvec": (0, 1, 2)}
