"""Known-wrong and known-right kernels for Puzzles II.8 (privatized histogram)."""

import numpy as np
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, UninitializedRead

TPB = 64
BINS = 16


@cuda.jit
def global_atomics_only(out, keys, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size:
        cuda.atomic.add(out, keys[i], 1)  # right, one global atomic per element


@cuda.jit
def never_cleared(out, keys, size):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if i < size:
        cuda.atomic.add(local, keys[i], 1)  # adds to garbage
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(out, t, local[t])


@cuda.jit
def no_barrier_after_clear(out, keys, size):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if t < BINS:
        local[t] = 0
    if i < size:
        cuda.atomic.add(local, keys[i], 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(out, t, local[t])


@cuda.jit
def plain_increment(out, keys, size):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    if i < size:
        local[keys[i]] += 1  # two threads with one key lose a count
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(out, t, local[t])


@cuda.jit
def no_barrier_before_merge(out, keys, size):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    if i < size:
        cuda.atomic.add(local, keys[i], 1)
    if t < BINS:
        cuda.atomic.add(out, t, local[t])  # other threads may still be counting


@cuda.jit
def plain_merge(out, keys, size):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    if i < size:
        cuda.atomic.add(local, keys[i], 1)
    cuda.syncthreads()
    if t < BINS:
        out[t] += local[t]  # blocks race on out


@cuda.jit
def merge_nonzero_only(out, keys, size):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    if i < size:
        cuda.atomic.add(local, keys[i], 1)
    cuda.syncthreads()
    if t < BINS:
        c = local[t]
        if c != 0:
            cuda.atomic.add(out, t, c)


@cuda.jit
def last_threads_own_bins(out, keys, size):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    b = TPB - 1 - t
    if b < BINS:
        local[b] = 0
    cuda.syncthreads()
    if i < size:
        k = keys[i]
        cuda.atomic.add(local, k, 1)
    cuda.syncthreads()
    if b < BINS:
        cuda.atomic.add(out, b, local[b])


NO_BARRIER = (DataRace, UninitializedRead)


@cuda.jit
def clears_out_first(out, keys, size):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    if t < BINS:
        local[t] = 0
        if cuda.blockIdx.x == 0:
            cuda.atomic.exch(out, t, 0)  # "zero it first" applied to out: earlier batches' counts lost
    cuda.syncthreads()
    if i < size:
        cuda.atomic.add(local, keys[i], 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(out, t, local[t])


MUTANTS = {
    "histogram": [
        ("global_atomics_only", global_atomics_only, OverBudget, "global_atomics_per_block"),
        ("never_cleared", never_cleared, KernelDiagnosed, UninitializedRead),
        ("no_barrier_after_clear", no_barrier_after_clear, KernelDiagnosed, NO_BARRIER),
        ("plain_increment", plain_increment, KernelDiagnosed, DataRace),
        ("no_barrier_before_merge", no_barrier_before_merge, KernelDiagnosed, DataRace),
        ("plain_merge", plain_merge, KernelDiagnosed, DataRace),
        ("clears_out_first", clears_out_first, WrongAnswer, None),
    ]
}
VARIANTS = {
    "histogram": [
        ("merge_nonzero_only", merge_nonzero_only),
        ("last_threads_own_bins", last_threads_own_bins),
    ]
}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
