"""Mutants and variants of puzzle 13, `axis_sum` (puzzles/gpu_puzzles/p13_axis_sum.py)."""

import numba
from numba import cuda

from mutants.common import BARRIER, NO_BARRIER, OOB, RACE, UNINIT, over

TPB = 8


@cuda.jit
def axis_sum_row_from_x(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.x  # always 0: the grid is (1, rows)
    local_i = cuda.threadIdx.x
    cache[local_i] = a[row, local_i] if local_i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_swapped_index(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    cache[local_i] = a[local_i, row] if local_i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_thread0_loop(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    cache[local_i] = a[row, local_i] if local_i < size else 0.0
    cuda.syncthreads()
    if local_i == 0:
        total = 0.0
        for k in range(TPB):
            total += cache[k]
        out[row, 0] = total


@cuda.jit
def axis_sum_missing_sync(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    cache[local_i] = a[row, local_i] if local_i < size else 0.0
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_no_zero_padding(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    if local_i < size:
        cache[local_i] = a[row, local_i]
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_barrier_in_branch(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    cache[local_i] = a[row, local_i] if local_i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
            cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_interleaved(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    t = cuda.threadIdx.x
    if t < size:
        cache[t] = a[row, t]
    else:
        cache[t] = 0.0
    cuda.syncthreads()
    stride = 1
    while stride < TPB:
        if t % (2 * stride) == 0:
            cache[t] += cache[t + stride]
        cuda.syncthreads()
        stride *= 2
    if t == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_fold(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    t = cuda.threadIdx.x
    cache[t] = a[row, t] if t < size else 0.0
    cuda.syncthreads()
    half = TPB // 2
    while half > 0:
        if t < half:
            cache[t] += cache[2 * half - 1 - t]
        cuda.syncthreads()
        half //= 2
    if t == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_thread0_register(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    v = a[row, local_i] if local_i < size else 0.0
    cache[local_i] = v
    cuda.syncthreads()
    if local_i == 0:  # sequential, its running total in a register
        total = v
        for k in range(1, size):
            total += cache[k]
        out[row, 0] = total


@cuda.jit
def axis_sum_literal_size(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    if local_i < 6:  # case 0's row length, hard-coded
        cache[local_i] = a[row, local_i]
    else:
        cache[local_i] = 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


MUTANTS = {
    "axis_sum": [
        ("literal_size", axis_sum_literal_size, *OOB),
        ("row_from_x", axis_sum_row_from_x, *RACE),
        ("swapped_index", axis_sum_swapped_index, *OOB),
        ("thread0_loop", axis_sum_thread0_loop, *over("shared_reads")),
        ("thread0_register", axis_sum_thread0_register, *over("shared_readers")),
        ("missing_sync", axis_sum_missing_sync, *NO_BARRIER),
        ("no_zero_padding", axis_sum_no_zero_padding, *UNINIT),
        ("barrier_in_branch", axis_sum_barrier_in_branch, *BARRIER),
    ],
}

VARIANTS = {
    "axis_sum": [("interleaved", axis_sum_interleaved), ("fold", axis_sum_fold)],
}
