"""Known-wrong and known-right kernels for Puzzles II.3 (warp scan)."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import OutOfBounds, WarpDivergence

FULL_MASK = 0xFFFFFFFF
TPB = 64


@cuda.jit
def adds_own_value_back(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    x = a[i] if i < size else numba.float32(0)
    d = 1
    while d < 32:
        x += cuda.shfl_up_sync(FULL_MASK, x, d)  # lanes below d double their own value
        d *= 2
    if i < size:
        out[i] = x


@cuda.jit
def exclusive(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    x = a[i] if i < size else numba.float32(0)
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if lane >= d:
            x += y
        d *= 2
    prev = cuda.shfl_up_sync(FULL_MASK, x, 1)
    if i < size:
        out[i] = prev if lane > 0 else 0.0  # the sum before i, not up to i


@cuda.jit
def stops_at_eight(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    x = a[i] if i < size else numba.float32(0)
    d = 1
    while d < 16:  # no d = 16 step: lanes 16.. miss the first values
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if lane >= d:
            x += y
        d *= 2
    if i < size:
        out[i] = x


@cuda.jit
def shuffle_under_guard(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    if i < size:
        x = a[i]
        d = 1
        while d < 32:
            y = cuda.shfl_up_sync(FULL_MASK, x, d)
            if lane >= d:
                x += y
            d *= 2
        out[i] = x


@cuda.jit
def block_lane(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    lane = cuda.threadIdx.x  # 32..63 in the second warp: never below d
    x = a[i] if i < size else numba.float32(0)
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if lane >= d:
            x += y
        d *= 2
    if i < size:
        out[i] = x


@cuda.jit
def unguarded_write(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    x = a[i] if i < size else numba.float32(0)
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if lane >= d:
            x += y
        d *= 2
    out[i] = x


@cuda.jit
def shared_scan(out, a, size):
    buf = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    lane = t % 32
    x = a[i] if i < size else numba.float32(0)
    buf[t] = x
    d = 1
    while d < 32:
        cuda.syncthreads()
        y = buf[t - d] if lane >= d else numba.float32(0)
        cuda.syncthreads()
        x += y
        buf[t] = x
        d *= 2
    if i < size:
        out[i] = x


@cuda.jit
def multiply_by_flag(out, a, size):
    i = cuda.grid(1)
    lane = cuda.laneid
    x = numba.float32(0)
    if i < size:
        x = a[i]
    for d in (1, 2, 4, 8, 16):
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        x += y * (lane >= d)
    if i < size:
        out[i] = x


@cuda.jit
def unrolled_selp(out, a, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x & 31
    x = a[i] if i < size else numba.float32(0)
    y = cuda.shfl_up_sync(FULL_MASK, x, 1)
    x = x + y if lane >= 1 else x
    y = cuda.shfl_up_sync(FULL_MASK, x, 2)
    x = x + y if lane >= 2 else x
    y = cuda.shfl_up_sync(FULL_MASK, x, 4)
    x = x + y if lane >= 4 else x
    y = cuda.shfl_up_sync(FULL_MASK, x, 8)
    x = x + y if lane >= 8 else x
    y = cuda.shfl_up_sync(FULL_MASK, x, 16)
    x = x + y if lane >= 16 else x
    if i < size:
        out[i] = x


MUTANTS = {
    "warp_scan": [
        ("adds_own_value_back", adds_own_value_back, WrongAnswer, None),
        ("exclusive", exclusive, WrongAnswer, None),
        ("stops_at_eight", stops_at_eight, WrongAnswer, None),
        ("shuffle_under_guard", shuffle_under_guard, KernelDiagnosed, WarpDivergence),
        ("block_lane", block_lane, WrongAnswer, None),
        ("unguarded_write", unguarded_write, KernelDiagnosed, OutOfBounds),
        ("shared_scan", shared_scan, OverBudget, "shared_bytes"),
    ]
}
VARIANTS = {"warp_scan": [("multiply_by_flag", multiply_by_flag), ("unrolled_selp", unrolled_selp)]}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
