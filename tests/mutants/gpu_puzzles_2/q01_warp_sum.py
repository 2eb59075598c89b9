"""Known-wrong and known-right kernels for Puzzles II.1 (warp sum)."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds, WarpDivergence

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def shfl_up_instead(out, a, size):
    lane = cuda.threadIdx.x
    x = a[lane] if lane < size else numba.float32(0)
    offset = 16
    while offset > 0:
        x += cuda.shfl_up_sync(FULL_MASK, x, offset)  # the sum gathers in lane 31, not lane 0
        offset //= 2
    if lane == 0:
        out[0] = x


@cuda.jit
def starts_at_eight(out, a, size):
    lane = cuda.threadIdx.x
    x = a[lane] if lane < size else numba.float32(0)
    offset = 8  # lanes 16..31 never reach lane 0
    while offset > 0:
        x += cuda.shfl_down_sync(FULL_MASK, x, offset)
        offset //= 2
    if lane == 0:
        out[0] = x


@cuda.jit
def shuffle_under_guard(out, a, size):
    lane = cuda.threadIdx.x
    if lane < size:  # lanes past size skip the shuffles
        x = a[lane]
        offset = 16
        while offset > 0:
            x += cuda.shfl_down_sync(FULL_MASK, x, offset)
            offset //= 2
        if lane == 0:
            out[0] = x


@cuda.jit
def every_lane_writes(out, a, size):
    lane = cuda.threadIdx.x
    x = a[lane] if lane < size else numba.float32(0)
    offset = 16
    while offset > 0:
        x += cuda.shfl_down_sync(FULL_MASK, x, offset)
        offset //= 2
    out[0] = x


@cuda.jit
def no_load_guard(out, a, size):
    lane = cuda.threadIdx.x
    x = a[lane]
    offset = 16
    while offset > 0:
        x += cuda.shfl_down_sync(FULL_MASK, x, offset)
        offset //= 2
    if lane == 0:
        out[0] = x


@cuda.jit
def shared_tree(out, a, size):
    cache = cuda.shared.array(32, numba.float32)  # right answer, but the lesson is registers
    lane = cuda.threadIdx.x
    cache[lane] = a[lane] if lane < size else 0.0
    stride = 16
    while stride > 0:
        cuda.syncthreads()
        if lane < stride:
            cache[lane] += cache[lane + stride]
        stride //= 2
    if lane == 0:
        out[0] = cache[0]


@cuda.jit
def butterfly(out, a, size):
    lane = cuda.threadIdx.x
    x = a[lane] if lane < size else numba.float32(0)
    mask = 16
    while mask > 0:
        x += cuda.shfl_xor_sync(FULL_MASK, x, mask)  # every lane ends with the sum
        mask //= 2
    if lane == 31:
        out[0] = x


@cuda.jit
def unrolled(out, a, size):
    lane = cuda.laneid
    x = numba.float32(0)
    if lane < size:
        x = a[lane]
    x += cuda.shfl_down_sync(FULL_MASK, x, 16)
    x += cuda.shfl_down_sync(FULL_MASK, x, 8)
    x += cuda.shfl_down_sync(FULL_MASK, x, 4)
    x += cuda.shfl_down_sync(FULL_MASK, x, 2)
    x += cuda.shfl_down_sync(FULL_MASK, x, 1)
    if lane == 0:
        out[0] = x


MUTANTS = {
    "warp_sum": [
        ("shfl_up_instead", shfl_up_instead, WrongAnswer, None),
        ("starts_at_eight", starts_at_eight, WrongAnswer, None),
        ("shuffle_under_guard", shuffle_under_guard, KernelDiagnosed, WarpDivergence),
        ("every_lane_writes", every_lane_writes, KernelDiagnosed, DataRace),
        ("no_load_guard", no_load_guard, KernelDiagnosed, OutOfBounds),
        ("shared_tree", shared_tree, OverBudget, "shared_bytes"),
    ]
}
VARIANTS = {"warp_sum": [("butterfly", butterfly), ("unrolled", unrolled)]}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
