"""Mutants and variants of puzzle 10, `dot` (puzzles/gpu_puzzles/p10_dot.py)."""

import numba
from numba import cuda

from mutants.common import BARRIER, NO_BARRIER, RACE, UNINIT, WRONG, over

TPB = 8


@cuda.jit
def dot_a_squared(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * a[i]
    cuda.syncthreads()
    if i == 0:
        total = 0.0
        for k in range(size):
            total += cache[k]
        out[0] = total


@cuda.jit
def dot_all_threads_write(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * b[i]
    cuda.syncthreads()
    total = 0.0
    for k in range(size):
        total += cache[k]
    out[0] = total  # every thread writes the same value: still a race


@cuda.jit
def dot_missing_syncthreads(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * b[i]
    if i == 0:
        total = 0.0
        for k in range(size):
            total += cache[k]
        out[0] = total


@cuda.jit
def dot_no_zero_padding(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * b[i]
    cuda.syncthreads()
    if i == 0:
        total = 0.0
        for k in range(TPB):  # sums slots nobody wrote when size < TPB
            total += cache[k]
        out[0] = total


@cuda.jit
def dot_barrier_in_branch(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * b[i]
        cuda.syncthreads()
    if i == 0:
        total = 0.0
        for k in range(size):
            total += cache[k]
        out[0] = total


@cuda.jit
def dot_no_shared(out, a, b, size):
    if cuda.threadIdx.x == 0:
        total = 0.0
        for k in range(size):
            total += a[k] * b[k]
        out[0] = total


@cuda.jit
def dot_tree(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    cache[i] = a[i] * b[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if i < stride:
            cache[i] += cache[i + stride]
        cuda.syncthreads()
        stride //= 2
    if i == 0:
        out[0] = cache[0]


@cuda.jit
def dot_last_thread_sums(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * b[i]
    else:
        cache[i] = 0.0
    cuda.syncthreads()
    if i == TPB - 1:
        total = numba.float32(0.0)
        for k in range(TPB):
            total += cache[k]
        out[0] = total


MUTANTS = {
    "dot": [
        ("a_squared", dot_a_squared, *WRONG),
        ("all_threads_write", dot_all_threads_write, *RACE),
        ("missing_syncthreads", dot_missing_syncthreads, *NO_BARRIER),
        ("no_zero_padding", dot_no_zero_padding, *UNINIT),
        ("barrier_in_branch", dot_barrier_in_branch, *BARRIER),
        ("no_shared", dot_no_shared, *over("global_reads")),
    ],
}

VARIANTS = {
    "dot": [("tree", dot_tree), ("last_thread_sums", dot_last_thread_sums)],
}
