"""Mutants and variants of puzzle 9, `pool` (puzzles/gpu_puzzles/p09_pool.py)."""

import numba
from numba import cuda

from mutants.common import BARRIER, NO_BARRIER, OOB, UNINIT, WRONG, over

TPB = 8
CACHE = TPB + 2


@cuda.jit
def pool_no_padding(out, a, size):
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i + 2] = a[i]
    cuda.syncthreads()
    if i < size:
        # assumes the slots before the block hold zeros: they hold garbage
        out[i] = cache[local_i] + cache[local_i + 1] + cache[local_i + 2]


@cuda.jit
def pool_block_start_boundary(out, a, size):
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i + 2] = a[i]
    cuda.syncthreads()
    if i < size:
        total = cache[local_i + 2]
        if local_i >= 1:  # treats each block as the start of the array: no halo
            total += cache[local_i + 1]
        if local_i >= 2:
            total += cache[local_i]
        out[i] = total


@cuda.jit
def pool_missing_syncthreads(out, a, size):
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i + 2] = a[i]
    if local_i < 2 and i >= 2:
        cache[local_i] = a[i - 2]
    if i < size:
        total = cache[local_i + 2]
        if i >= 1:
            total += cache[local_i + 1]
        if i >= 2:
            total += cache[local_i]
        out[i] = total


@cuda.jit
def pool_barrier_in_branch(out, a, size):
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i + 2] = a[i]
        if local_i < 2 and i >= 2:
            cache[local_i] = a[i - 2]
        cuda.syncthreads()
        total = cache[local_i + 2]
        if i >= 1:
            total += cache[local_i + 1]
        if i >= 2:
            total += cache[local_i]
        out[i] = total


@cuda.jit
def pool_all_global(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        total = a[i]
        if i >= 1:
            total += a[i - 1]
        if i >= 2:
            total += a[i - 2]
        out[i] = total


@cuda.jit
def pool_negative_halo(out, a, size):
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i + 2] = a[i]
    if local_i < 2:
        cache[local_i] = a[i - 2]  # block 0 has no halo: a[-2] silently wraps in Numba
    cuda.syncthreads()
    if i < size:
        total = cache[local_i + 2]
        if i >= 1:
            total += cache[local_i + 1]
        if i >= 2:
            total += cache[local_i]
        out[i] = total


@cuda.jit
def pool_tail_halo(out, a, size):
    # The last two threads fetch the halo, and the terms are summed in a loop.
    cache = cuda.shared.array(CACHE, numba.float32)
    start = cuda.blockIdx.x * cuda.blockDim.x
    t = cuda.threadIdx.x
    i = start + t
    if i < size:
        cache[t + 2] = a[i]
    if t >= TPB - 2:
        h = start - TPB + t
        if h >= 0:
            cache[t - TPB + 2] = a[h]
    cuda.syncthreads()
    if i < size:
        total = numba.float32(0.0)
        for k in range(3):
            if i - k >= 0:
                total += cache[t + 2 - k]
        out[i] = total


@cuda.jit
def pool_zero_padded(out, a, size):
    # Missing neighbours are stored as zeros, so every thread adds three slots.
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    cache[t + 2] = a[i] if i < size else 0.0
    if t < 2:
        cache[t] = a[i - 2] if i >= 2 else 0.0
    cuda.syncthreads()
    if i < size:
        out[i] = cache[t] + cache[t + 1] + cache[t + 2]


MUTANTS = {
    "pool": [
        ("no_padding", pool_no_padding, *UNINIT),
        ("block_start_boundary", pool_block_start_boundary, *WRONG),
        ("missing_syncthreads", pool_missing_syncthreads, *NO_BARRIER),
        ("barrier_in_branch", pool_barrier_in_branch, *BARRIER),
        ("all_global", pool_all_global, *over("global_reads")),
        ("negative_halo", pool_negative_halo, *OOB),
    ],
}

VARIANTS = {
    "pool": [("tail_halo", pool_tail_halo), ("zero_padded", pool_zero_padded)],
}

SEEDS = {"pool": (0, 1, 2)}
