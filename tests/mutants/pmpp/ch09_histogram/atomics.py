"""Mutants of puzzles/pmpp/ch09_histogram/atomics.py."""

from numba import cuda, int32

from helpers.check import KernelDiagnosed, OverBudget
from helpers.sim.errors import DataRace, UninitializedRead
from puzzles.pmpp.ch09_histogram import BIN_WIDTH, NUM_BINS
from puzzles.pmpp.ch09_histogram.atomics import hist_atomic


@cuda.jit
def hist_shared_not_atomic(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    if i < n:
        hist_s[data[i] // BIN_WIDTH] += 1
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_flush_not_atomic(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    if i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist[b] += hist_s[b]


@cuda.jit
def hist_no_zeroing(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_no_flush_barrier(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    if i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


MUTANTS = {
    "ch09_hist_private_shared": [
        ("hist_shared_not_atomic", hist_shared_not_atomic, KernelDiagnosed, DataRace),
        ("hist_flush_not_atomic", hist_flush_not_atomic, KernelDiagnosed, DataRace),
        ("hist_no_zeroing", hist_no_zeroing, KernelDiagnosed, UninitializedRead),
        ("hist_no_flush_barrier", hist_no_flush_barrier, KernelDiagnosed, DataRace),
        ("hist_atomic", hist_atomic, OverBudget, "global_atomics_per_block"),
    ],
}
SEEDS = {"ch09_hist_private_shared": (5,)}
