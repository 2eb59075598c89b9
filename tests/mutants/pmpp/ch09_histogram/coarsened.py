"""Mutants of puzzles/pmpp/ch09_histogram/coarsened.py."""

from numba import cuda, int32

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import OutOfBounds
from puzzles.pmpp.ch09_histogram import BIN_WIDTH, NUM_BINS
from puzzles.pmpp.ch09_histogram.atomics import hist_private_shared
from puzzles.pmpp.ch09_histogram.coarsened import hist_coarse_interleaved


@cuda.jit
def hist_block_stride(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), n, cuda.blockDim.x):  # every block walks the whole tail
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_aggregated_no_last_run(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    prev = -1
    run = 0
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        b = data[i] // BIN_WIDTH
        if b == prev:
            run += 1
        else:
            if run > 0:
                cuda.atomic.add(hist_s, prev, run)
            prev = b
            run = 1
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_aggregated_new_bin(hist, data, n):
    # flushes the finished run into the new bin instead of its own
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    prev = -1
    run = 0
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        b = data[i] // BIN_WIDTH
        if b == prev:
            run += 1
        else:
            if run > 0:
                cuda.atomic.add(hist_s, b, run)
            prev = b
            run = 1
    if run > 0:
        cuda.atomic.add(hist_s, prev, run)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_contiguous_runs(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    per = (n + cuda.gridsize(1) - 1) // cuda.gridsize(1)  # right counts, lanes `per` elements apart
    start = cuda.grid(1) * per
    for i in range(start, min(start + per, n)):
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


@cuda.jit
def hist_interleaved_while(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    while i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
        i += cuda.blockDim.x * cuda.gridDim.x
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


@cuda.jit
def hist_interleaved_six_trips(hist, data, n):
    # six trips round the grid, enough for the statement-sized examples (1000 elements, 3 x 64 threads)
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    for k in range(6):
        i = cuda.grid(1) + k * cuda.gridsize(1)
        if i < n:
            cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


@cuda.jit
def hist_interleaved_two_bins_each(hist, data, n):
    # the given zeroing and flushing rewritten as "two bins per thread" (right for 32 to 64 threads)
    # with no bounds test on the first: a block of more threads than bins runs off hist_s
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    hist_s[t] = 0
    if t + bd < NUM_BINS:
        hist_s[t + bd] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, bd):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


MUTANTS = {
    "ch09_hist_coarse_interleaved": [
        ("hist_interleaved_six_trips", hist_interleaved_six_trips, WrongAnswer, None),
        ("hist_block_stride", hist_block_stride, WrongAnswer, None),
        ("hist_private_shared", hist_private_shared, WrongAnswer, None),
        ("hist_contiguous_runs", hist_contiguous_runs, OverBudget, "min_coalescing"),
        ("hist_interleaved_two_bins_each", hist_interleaved_two_bins_each, KernelDiagnosed, OutOfBounds),
    ],
    "ch09_hist_aggregated": [
        ("hist_aggregated_no_last_run", hist_aggregated_no_last_run, WrongAnswer, None),
        ("hist_aggregated_new_bin", hist_aggregated_new_bin, WrongAnswer, None),
        ("hist_coarse_interleaved", hist_coarse_interleaved, OverBudget, "shared_atomics"),
    ],
}
VARIANTS = {
    "ch09_hist_coarse_interleaved": [("hist_interleaved_while", hist_interleaved_while)],
}
# interleaved on seeds 0-9: every seed's cases hold blocks smaller and larger than the histogram
# aggregated on seeds 0-9: every seed has a run longer than the grid, where one atomic per element is
# more than the technique needs
SEEDS = {"ch09_hist_coarse_interleaved": tuple(range(10)), "ch09_hist_aggregated": tuple(range(10))}
