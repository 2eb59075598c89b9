"""Mutants of puzzles/pmpp/ch10_reduction/sum.py."""

import numba
import numpy as np
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import (
    BarrierDivergence,
    DataRace,
    OutOfBounds,
    UninitializedRead,
    WarpDivergence,
)
from puzzles.pmpp import ch10_reduction as ch10
from puzzles.pmpp import ch12_merge as ch12

TPB = ch10.TPB
SEGMENT = ch10.SEGMENT
FULL_MASK = 0xFFFFFFFF
TILE = ch12.TILE


@cuda.jit
def convergent_barrier_in_if(out, a, n):
    part = cuda.shared.array(SEGMENT, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    part[t] = a[t] if t < n else 0.0
    part[t + bd] = a[t + bd] if t + bd < n else 0.0
    stride = bd
    while stride >= 1:
        if t < stride:
            cuda.syncthreads()  # only the active threads get here
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] = part[0]


@cuda.jit
def convergent_no_barrier(out, a, n):
    part = cuda.shared.array(SEGMENT, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    part[t] = a[t] if t < n else 0.0
    part[t + bd] = a[t + bd] if t + bd < n else 0.0
    stride = bd
    while stride >= 1:
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] = part[0]


@cuda.jit
def convergent_no_padding(out, a, n):
    part = cuda.shared.array(SEGMENT, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    part[t] = a[t]  # n may be smaller than the block
    part[t + bd] = a[t + bd]
    stride = bd
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] = part[0]


@cuda.jit
def segmented_plain_add(out, a, n):
    part = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = 2 * bd * cuda.blockIdx.x + t
    part[t] = (a[i] if i < n else 0.0) + (a[i + bd] if i + bd < n else 0.0)
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] += part[0]  # every block: read-modify-write, no atomic


@cuda.jit
def segmented_local_index(out, a, n):
    part = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = t  # every block sums the first segment
    part[t] = (a[i] if i < n else 0.0) + (a[i + bd] if i + bd < n else 0.0)
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, part[0])


@cuda.jit
def segmented_atomic_per_thread(out, a, n):
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = 2 * bd * cuda.blockIdx.x + t
    x = (a[i] if i < n else 0.0) + (a[i + bd] if i + bd < n else 0.0)
    cuda.atomic.add(out, 0, x)  # right answer, 16 atomics per block on one address


@cuda.jit
def shuffle_shared_tree(out, a, n):
    part = cuda.shared.array(128, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    acc = np.float32(0.0)
    start = cuda.blockIdx.x * ch10.COARSE * bd
    while start < n:
        for k in range(ch10.COARSE):
            i = start + k * bd + t
            if i < n:
                acc += a[i]
        start += cuda.gridDim.x * ch10.COARSE * bd
    part[t] = acc
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        if t % (2 * stride) == 0 and t + stride < bd:
            part[t] += part[t + stride]
        stride *= 2
    if t == 0:
        cuda.atomic.add(out, 0, part[0])


@cuda.jit
def shuffle_divergent(out, a, n):
    warp_sums = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    lane = t % 32
    warp = t // 32
    acc = np.float32(0.0)
    start = cuda.blockIdx.x * ch10.COARSE * bd
    while start < n:
        for k in range(ch10.COARSE):
            i = start + k * bd + t
            if i < n:
                acc += a[i]
        start += cuda.gridDim.x * ch10.COARSE * bd
    offset = 16
    while offset > 0:
        if lane < offset:  # the upper lanes skip the shuffle the lower ones wait on
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
        offset //= 2
    if lane == 0:
        warp_sums[warp] = acc
    cuda.syncthreads()
    if warp == 0:
        acc = warp_sums[lane] if lane < bd // 32 else np.float32(0.0)
        offset = 16
        while offset > 0:
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
            offset //= 2
        if lane == 0:
            cuda.atomic.add(out, 0, acc)


@cuda.jit
def shuffle_no_barrier(out, a, n):
    warp_sums = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    lane = t % 32
    warp = t // 32
    acc = np.float32(0.0)
    start = cuda.blockIdx.x * ch10.COARSE * bd
    while start < n:
        for k in range(ch10.COARSE):
            i = start + k * bd + t
            if i < n:
                acc += a[i]
        start += cuda.gridDim.x * ch10.COARSE * bd
    offset = 16
    while offset > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
        offset //= 2
    if lane == 0:
        warp_sums[warp] = acc
    if warp == 0:  # no barrier: the other warps may not have stored yet
        acc = warp_sums[lane] if lane < bd // 32 else np.float32(0.0)
        offset = 16
        while offset > 0:
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
            offset //= 2
        if lane == 0:
            cuda.atomic.add(out, 0, acc)


@cuda.jit
def shuffle_warp_sums_for_three(out, a, n):
    # warp_sums sized for the statement's largest block (96 threads, 3 warps): a 4-warp block overflows it
    warp_sums = cuda.shared.array(3, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    lane = t % 32
    warp = t // 32
    acc = np.float32(0.0)
    i = cuda.blockIdx.x * bd + t
    while i < n:
        acc += a[i]
        i += cuda.gridDim.x * bd
    offset = 16
    while offset > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
        offset //= 2
    if lane == 0:
        warp_sums[warp] = acc
    cuda.syncthreads()
    if warp == 0:
        acc = warp_sums[lane] if lane < bd // 32 else np.float32(0.0)
        offset = 16
        while offset > 0:
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
            offset //= 2
        if lane == 0:
            cuda.atomic.add(out, 0, acc)


# ---------------------------------------------------------------- issue 23: the convergent tree enforced


@cuda.jit
def segmented_spread_tree(out, a, n):
    # the right sum, but the tree of ch10_reduce_simple: the adding threads spread over the block
    part = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = 2 * bd * cuda.blockIdx.x + t
    x = a[i] if i < n else 0.0
    y = a[i + bd] if i + bd < n else 0.0
    part[t] = x + y
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        if t % (2 * stride) == 0:
            part[t] += part[t + stride]
        stride *= 2
    if t == 0:
        cuda.atomic.add(out, 0, part[0])


MUTANTS = {
    "ch10_reduce_convergent": [
        ("convergent_barrier_in_if", convergent_barrier_in_if, KernelDiagnosed, BarrierDivergence),
        ("convergent_no_barrier", convergent_no_barrier, KernelDiagnosed, (DataRace, UninitializedRead)),
        ("convergent_no_padding", convergent_no_padding, KernelDiagnosed, OutOfBounds),
        ("reduce_simple", ch10.reduce_simple, OverBudget, "active_threads_packed"),
    ],
    "ch10_reduce_segmented": [
        ("segmented_plain_add", segmented_plain_add, KernelDiagnosed, DataRace),
        ("segmented_local_index", segmented_local_index, WrongAnswer, None),
        ("segmented_atomic_per_thread", segmented_atomic_per_thread, OverBudget, "global_atomics_per_block"),
        ("segmented_spread_tree", segmented_spread_tree, OverBudget, "active_threads_packed"),
    ],
    "ch10_reduce_shuffle": [
        ("shuffle_shared_tree", shuffle_shared_tree, OverBudget, "shared_reads"),
        ("shuffle_divergent", shuffle_divergent, KernelDiagnosed, WarpDivergence),
        ("shuffle_no_barrier", shuffle_no_barrier, KernelDiagnosed, (DataRace, UninitializedRead)),
        ("shuffle_warp_sums_for_three", shuffle_warp_sums_for_three, KernelDiagnosed, OutOfBounds),
    ],
}
VARIANTS: dict = {}
# convergent and segmented on seeds 0-9 (issue 23: the convergent tree enforced on every seed)
SEEDS = {
    "ch10_reduce_convergent": tuple(range(10)),
    "ch10_reduce_segmented": tuple(range(10)),
    "ch10_reduce_shuffle": (3,),
}
