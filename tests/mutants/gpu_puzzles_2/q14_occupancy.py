"""Known-wrong and known-right kernels for Puzzles II.14 (occupancy: the learner's BLOCK)."""

import types

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, UninitializedRead

BINS = 2048
BLOCK = 128


def with_block(fn, block):
    """`fn` compiled as if the learner's cell had said BLOCK = block."""
    g = dict(fn.__globals__)
    g["BLOCK"] = block
    return cuda.jit(types.FunctionType(fn.__code__, g, fn.__name__))


def histogram(out, keys, size):
    bins = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    for k in range(t, BINS, BLOCK):
        bins[k] = 0
    cuda.syncthreads()
    for i in range(cuda.blockIdx.x * BLOCK + t, size, cuda.gridDim.x * BLOCK):
        cuda.atomic.add(bins, keys[i], 1)
    cuda.syncthreads()
    for k in range(t, BINS, BLOCK):
        c = bins[k]
        if c != 0:
            cuda.atomic.add(out, k, c)


def wide_bins(out, keys, size):
    bins = cuda.shared.array(BINS, numba.int64)  # 16 KiB: half as many blocks fit
    t = cuda.threadIdx.x
    for k in range(t, BINS, BLOCK):
        bins[k] = 0
    cuda.syncthreads()
    for i in range(cuda.blockIdx.x * BLOCK + t, size, cuda.gridDim.x * BLOCK):
        cuda.atomic.add(bins, keys[i], 1)
    cuda.syncthreads()
    for k in range(t, BINS, BLOCK):
        c = bins[k]
        if c != 0:
            cuda.atomic.add(out, k, numba.int32(c))


def one_key_per_thread(out, keys, size):
    bins = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    for k in range(t, BINS, BLOCK):
        bins[k] = 0
    cuda.syncthreads()
    i = cuda.blockIdx.x * BLOCK + t  # the grid is smaller than the data
    if i < size:
        cuda.atomic.add(bins, keys[i], 1)
    cuda.syncthreads()
    for k in range(t, BINS, BLOCK):
        c = bins[k]
        if c != 0:
            cuda.atomic.add(out, k, c)


def never_cleared(out, keys, size):
    bins = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    for i in range(cuda.blockIdx.x * BLOCK + t, size, cuda.gridDim.x * BLOCK):
        cuda.atomic.add(bins, keys[i], 1)
    cuda.syncthreads()
    for k in range(t, BINS, BLOCK):
        c = bins[k]
        if c != 0:
            cuda.atomic.add(out, k, c)


def clear_stride_of_a_warp(out, keys, size):
    bins = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    for k in range(t, BINS, 32):  # warps clear the same bins
        bins[k] = 0
    cuda.syncthreads()
    for i in range(cuda.blockIdx.x * BLOCK + t, size, cuda.gridDim.x * BLOCK):
        cuda.atomic.add(bins, keys[i], 1)
    cuda.syncthreads()
    for k in range(t, BINS, BLOCK):
        c = bins[k]
        if c != 0:
            cuda.atomic.add(out, k, c)


def no_barrier_before_merge(out, keys, size):
    bins = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    for k in range(t, BINS, BLOCK):
        bins[k] = 0
    cuda.syncthreads()
    for i in range(cuda.blockIdx.x * BLOCK + t, size, cuda.gridDim.x * BLOCK):
        cuda.atomic.add(bins, keys[i], 1)
    for k in range(t, BINS, BLOCK):
        c = bins[k]
        if c != 0:
            cuda.atomic.add(out, k, c)


def while_loops(out, keys, size):
    bins = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    k = t
    while k < BINS:
        bins[k] = 0
        k += cuda.blockDim.x
    cuda.syncthreads()
    i = cuda.grid(1)
    while i < size:
        cuda.atomic.add(bins, keys[i], 1)
        i += cuda.gridsize(1)
    cuda.syncthreads()
    k = t
    while k < BINS:
        cuda.atomic.add(out, k, bins[k])
        k += cuda.blockDim.x


def clears_out_first(out, keys, size):
    bins = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    for k in range(t, BINS, BLOCK):
        bins[k] = 0
        if cuda.blockIdx.x == 0:
            cuda.atomic.exch(out, k, 0)  # as if out started as garbage: earlier batches' counts lost
    cuda.syncthreads()
    for i in range(cuda.blockIdx.x * BLOCK + t, size, cuda.gridDim.x * BLOCK):
        cuda.atomic.add(bins, keys[i], 1)
    cuda.syncthreads()
    for k in range(t, BINS, BLOCK):
        c = bins[k]
        if c != 0:
            cuda.atomic.add(out, k, c)


def contiguous_keys(out, keys, size):
    bins = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    for k in range(t, BINS, BLOCK):
        bins[k] = 0
    cuda.syncthreads()
    threads = cuda.gridDim.x * BLOCK
    chunk = (size + threads - 1) // threads
    start = (cuda.blockIdx.x * BLOCK + t) * chunk
    for i in range(start, min(start + chunk, size)):  # a run of keys per thread: lanes chunk apart
        cuda.atomic.add(bins, keys[i], 1)
    cuda.syncthreads()
    for k in range(t, BINS, BLOCK):
        c = bins[k]
        if c != 0:
            cuda.atomic.add(out, k, c)


MUTANTS = {
    "occupancy": [
        ("block_of_64", with_block(histogram, 64), OverBudget, "occupancy"),
        ("int64_bins", with_block(wide_bins, 128), OverBudget, "occupancy"),
        ("one_key_per_thread", with_block(one_key_per_thread, 128), WrongAnswer, None),
        ("never_cleared", with_block(never_cleared, 128), KernelDiagnosed, UninitializedRead),
        ("clear_stride_of_a_warp", with_block(clear_stride_of_a_warp, 128), KernelDiagnosed, DataRace),
        (
            "no_barrier_before_merge",
            with_block(no_barrier_before_merge, 256),
            KernelDiagnosed,
            (DataRace, UninitializedRead),
        ),
        ("clears_out_first", with_block(clears_out_first, 128), WrongAnswer, None),
        ("contiguous_keys", with_block(contiguous_keys, 128), OverBudget, "min_coalescing"),
        ("contiguous_keys_1024", with_block(contiguous_keys, 1024), OverBudget, "min_coalescing"),
    ]
}
VARIANTS = {
    "occupancy": [
        ("block_of_256", with_block(histogram, 256)),
        ("while_loops_1024", with_block(while_loops, 1024)),
    ]
}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
