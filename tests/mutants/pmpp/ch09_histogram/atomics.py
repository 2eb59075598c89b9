"""Mutants of puzzles/pmpp/ch09_histogram/atomics.py."""

from numba import cuda, int32

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds, UninitializedRead
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


# ---------------------------------------------------------------- a block's size assumed to fit the histogram


@cuda.jit
def hist_zero_own_bin(hist, data, n):
    # each thread zeroes "its" bin: with fewer threads than bins the rest stay uninitialised
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NUM_BINS:
        hist_s[t] = 0
    cuda.syncthreads()
    if i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_flush_own_bin(hist, data, n):
    # each thread flushes "its" bin: with fewer threads than bins the last bins never reach hist
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    if i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    if t < NUM_BINS and hist_s[t] > 0:
        cuda.atomic.add(hist, t, hist_s[t])


@cuda.jit
def hist_two_bins_each(hist, data, n):
    # "two bins per thread" (right for 32 to 64 threads) with no bounds test on the first: a block of
    # more threads than bins runs off the end of hist_s
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.grid(1)
    hist_s[t] = 0
    if t + bd < NUM_BINS:
        hist_s[t + bd] = 0
    cuda.syncthreads()
    if i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, bd):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


# ---------------------------------------------------------------- the output's earlier counts lost


@cuda.jit
def hist_clears_output(hist, data, n):
    # each block clears the bins before adding its counts: right only when hist starts at zero
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
        if cuda.blockIdx.x == 0:
            cuda.atomic.exch(hist, b, hist_s[b])  # the first block "starts" the histogram
        elif hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_private_global_keeps_priv(hist, priv, data, n):
    # hist_private_global without handing the scratch back zeroed: the next launch would start
    # from this one's counts
    i = cuda.grid(1)
    blk = cuda.blockIdx.x
    if i < n:
        cuda.atomic.add(priv, (blk, data[i] // BIN_WIDTH), 1)
    cuda.syncthreads()
    for b in range(cuda.threadIdx.x, NUM_BINS, cuda.blockDim.x):
        count = priv[blk, b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


MUTANTS = {
    "ch09_hist_private_shared": [
        ("hist_shared_not_atomic", hist_shared_not_atomic, KernelDiagnosed, DataRace),
        ("hist_flush_not_atomic", hist_flush_not_atomic, KernelDiagnosed, DataRace),
        ("hist_no_zeroing", hist_no_zeroing, KernelDiagnosed, UninitializedRead),
        ("hist_no_flush_barrier", hist_no_flush_barrier, KernelDiagnosed, DataRace),
        ("hist_atomic", hist_atomic, OverBudget, "global_atomics_per_block"),
        ("hist_zero_own_bin", hist_zero_own_bin, KernelDiagnosed, UninitializedRead),
        ("hist_flush_own_bin", hist_flush_own_bin, WrongAnswer, None),
        ("hist_two_bins_each", hist_two_bins_each, KernelDiagnosed, OutOfBounds),
        ("hist_clears_output", hist_clears_output, WrongAnswer, None),
    ],
    "ch09_hist_private_global": [
        ("hist_private_global_keeps_priv", hist_private_global_keeps_priv, WrongAnswer, None),
    ],
}
# seeds 0-9: every seed's cases hold blocks smaller and larger than the histogram, and non-zero
# earlier counts in `hist` (issue 23, classes 1, 2 and 19)
SEEDS = {"ch09_hist_private_shared": tuple(range(10)), "ch09_hist_private_global": tuple(range(10))}
