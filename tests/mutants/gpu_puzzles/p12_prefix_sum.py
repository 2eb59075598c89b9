"""Mutants and variants of puzzle 12, `prefix_sum` (puzzles/gpu_puzzles/p12_prefix_sum.py)."""

import numba
from numba import cuda

from mutants.common import BARRIER, OOB, RACE, UNINIT, WRONG, over

TPB = 8


@cuda.jit
def prefix_sum_thread0_loop(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    if local_i == 0:  # right answer, but one thread does all the adding
        total = 0.0
        for k in range(TPB):
            total += cache[k]
        out[cuda.blockIdx.x] = total


@cuda.jit
def prefix_sum_missing_sync_in_loop(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        stride //= 2
    cuda.syncthreads()
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_barrier_in_branch(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
            cuda.syncthreads()  # only the active half arrives
        stride //= 2
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_no_zero_padding(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i] = a[i]
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_global_index_out(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[i] = cache[0]  # out has one slot per block, not per element


@cuda.jit
def prefix_sum_all_threads_write(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_stops_early(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 1:  # the last halving (stride 1) never runs
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_interleaved(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if i < size:
        cache[t] = a[i]
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
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_fold(out, a, size):
    # Fold the live part of the array in half each step: slot t gets slot (2*half - 1 - t).
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    cache[t] = a[i] if i < size else 0.0
    cuda.syncthreads()
    half = TPB // 2
    while half > 0:
        if t < half:
            cache[t] += cache[2 * half - 1 - t]
        cuda.syncthreads()
        half //= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_thread0_register(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    v = a[i] if i < size else 0.0
    cache[local_i] = v
    cuda.syncthreads()
    if local_i == 0:  # sequential, its running total in a register: only 7 shared reads
        total = v
        for k in range(1, TPB):
            total += cache[k]
        out[cuda.blockIdx.x] = total


@cuda.jit
def prefix_sum_kept_fill_me_in(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    # FILL ME IN (roughly 13 lines)
    cache[local_i] = a[i]  # no guard: the last block reads past the end
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_unpadded_tree(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i] = a[i]
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:  # only pairs that both exist are added: no padding needed
        if local_i < stride and i + stride < size:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]


MUTANTS = {
    "prefix_sum": [
        ("thread0_loop", prefix_sum_thread0_loop, *over("shared_reads")),
        ("thread0_register", prefix_sum_thread0_register, *over("shared_readers")),
        ("kept_fill_me_in", prefix_sum_kept_fill_me_in, *OOB),
        ("missing_sync_in_loop", prefix_sum_missing_sync_in_loop, *RACE),
        ("barrier_in_branch", prefix_sum_barrier_in_branch, *BARRIER),
        ("no_zero_padding", prefix_sum_no_zero_padding, *UNINIT),
        ("global_index_out", prefix_sum_global_index_out, *OOB),
        ("all_threads_write", prefix_sum_all_threads_write, *RACE),
        ("stops_early", prefix_sum_stops_early, *WRONG),
    ],
}

VARIANTS = {
    "prefix_sum": [
        ("interleaved", prefix_sum_interleaved),
        ("fold", prefix_sum_fold),
        ("unpadded_tree", prefix_sum_unpadded_tree),
    ],
}

SEEDS = {"prefix_sum": (0, 1, 2)}
