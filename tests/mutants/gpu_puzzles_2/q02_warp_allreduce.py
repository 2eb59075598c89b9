"""Known-wrong and known-right kernels for Puzzles II.2 (warp all-reduce)."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import OutOfBounds, WarpDivergence

FULL_MASK = 0xFFFFFFFF
ROWS = 4


@cuda.jit
def shfl_down_only(out, a, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows:
        x = a[r, lane] if lane < cols else numba.float32(0)
        total = x
        d = 16
        while d > 0:
            total += cuda.shfl_down_sync(FULL_MASK, total, d)  # only lane 0 gets the full sum
            d //= 2
        if lane < cols:
            out[r, lane] = x - total / cols


@cuda.jit
def mean_over_32(out, a, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows:
        x = a[r, lane] if lane < cols else numba.float32(0)
        total = x
        m = 16
        while m > 0:
            total += cuda.shfl_xor_sync(FULL_MASK, total, m)
            m //= 2
        if lane < cols:
            out[r, lane] = x - total / 32  # the padding lanes are not part of the row


@cuda.jit
def column_guard_around_shuffles(out, a, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows and lane < cols:
        x = a[r, lane]
        total = x
        m = 16
        while m > 0:
            total += cuda.shfl_xor_sync(FULL_MASK, total, m)
            m //= 2
        out[r, lane] = x - total / cols


@cuda.jit
def no_row_guard(out, a, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    x = a[r, lane] if lane < cols else numba.float32(0)
    total = x
    m = 16
    while m > 0:
        total += cuda.shfl_xor_sync(FULL_MASK, total, m)
        m //= 2
    if lane < cols:
        out[r, lane] = x - total / cols


@cuda.jit
def overwrites_own_value(out, a, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows:
        x = a[r, lane] if lane < cols else numba.float32(0)
        m = 16
        while m > 0:
            x += cuda.shfl_xor_sync(FULL_MASK, x, m)  # x is now the sum, not the element
            m //= 2
        if lane < cols:
            out[r, lane] = x - x / cols


@cuda.jit
def shared_row(out, a, rows, cols):
    row = cuda.shared.array((ROWS, 32), numba.float32)
    lane = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r = cuda.blockIdx.x * ROWS + ty
    x = numba.float32(0)
    if r < rows and lane < cols:
        x = a[r, lane]
    row[ty, lane] = x
    cuda.syncthreads()
    total = numba.float32(0)
    for k in range(32):
        total += row[ty, k]
    if r < rows and lane < cols:
        out[r, lane] = x - total / cols


@cuda.jit
def down_then_broadcast(out, a, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows:
        x = a[r, lane] if lane < cols else numba.float32(0)
        total = x
        d = 16
        while d > 0:
            total += cuda.shfl_down_sync(FULL_MASK, total, d)
            d //= 2
        total = cuda.shfl_sync(FULL_MASK, total, 0)  # lane 0's total, to everyone
        if lane < cols:
            out[r, lane] = x - total / numba.float32(cols)


@cuda.jit
def mean_first(out, a, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r >= rows:
        return
    x = numba.float32(0)
    if lane < cols:
        x = a[r, lane]
    mean = x / numba.float32(cols)
    for m in (1, 2, 4, 8, 16):
        mean += cuda.shfl_xor_sync(FULL_MASK, mean, m)
    if lane < cols:
        out[r, lane] = x - mean


MUTANTS = {
    "warp_allreduce": [
        ("shfl_down_only", shfl_down_only, WrongAnswer, None),
        ("mean_over_32", mean_over_32, WrongAnswer, None),
        ("column_guard_around_shuffles", column_guard_around_shuffles, KernelDiagnosed, WarpDivergence),
        ("no_row_guard", no_row_guard, KernelDiagnosed, OutOfBounds),
        ("overwrites_own_value", overwrites_own_value, WrongAnswer, None),
        ("shared_row", shared_row, OverBudget, "shared_bytes"),
    ]
}
VARIANTS = {"warp_allreduce": [("down_then_broadcast", down_then_broadcast), ("mean_first", mean_first)]}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
