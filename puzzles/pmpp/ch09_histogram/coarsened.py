"""Histogram ladder 2, coarsening and aggregation: fewer, busier threads (each with the shared-memory
private histogram of ch09_hist_private_shared).

    ch09_hist_coarse_contiguous   each thread counts CFACTOR neighbouring elements
    ch09_hist_coarse_interleaved  grid-stride: the threads of a warp read neighbouring elements
    ch09_hist_aggregated          runs of equal bins counted in a register, one atomic per run
    ch09_hist_unrolled            interleaved, four loads issued before any atomic (for the GPU)

The spec, the data and the cases are in common.py (the atomics ladder shares them).
"""

import numpy as np
from numba import cuda, int32

from helpers.puzzle import Budget, Puzzle
from helpers.rules import max_shared_atomics, min_coalescing

from .common import (
    BIN_WIDTH,
    CFACTOR,
    CHAPTER,
    COMMON,
    FLUSH,
    NUM_BINS,
    PRIVATE,
    UNROLL,
    cases_contiguous,
    cases_interleaved,
    spec,
)

COALESCED = 0.5  # the interleaved loop is ~100%; a contiguous run per thread a fraction of that
# the reads of `data` must be coalesced (the flush's atomics skip empty bins: sparse by nature)
INTERLEAVED_RULES = (min_coalescing(COALESCED, arrays=("data",)),)

# ---------------------------------------------------------------------------- rung 1: contiguous


@cuda.jit
def hist_coarse_contiguous(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    start = cuda.grid(1) * CFACTOR
    for i in range(start, min(start + CFACTOR, n)):
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


CONTIGUOUS = (
    f"""\
**Coarsening, contiguous.** Fewer threads, each counting `CFACTOR = {CFACTOR}` neighbouring
elements `[i*CFACTOR, (i+1)*CFACTOR)` (with `i = cuda.grid(1)`): the private histogram is zeroed
and flushed once per `CFACTOR` times as many elements. But in each step the lanes of a warp read
addresses `CFACTOR` elements apart: on a GPU that wastes most of each memory transaction
(look at the coalescing view)."""
    + COMMON
    + FLUSH
)

HIST_COARSE_CONTIGUOUS = Puzzle(
    name="ch09_hist_coarse_contiguous",
    title="Histogram, coarsened (contiguous)",
    statement=CONTIGUOUS,
    outputs=("hist",),
    spec=spec,
    cases=cases_contiguous,
    reference=hist_coarse_contiguous,
    accumulate=("hist",),
    budget=Budget(global_atomics_per_block=NUM_BINS, global_reads=CFACTOR),
    chapter=CHAPTER,
)


# ---------------------------------------------------------------------------- rung 2: interleaved


@cuda.jit
def hist_coarse_interleaved(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    ### BEGIN SOLUTION
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    ### END SOLUTION
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


INTERLEAVED = (
    f"""\
**Coarsening, interleaved.** Launch a fixed, modest number of blocks and let each thread walk the
data with a grid-stride loop: element `i`, `i + gridsize`, `i + 2*gridsize`... In each step the
lanes of a warp read neighbouring elements (coalesced), and the number of blocks no longer
depends on `n`. Fill in the counting loop; zeroing and flushing are given. A contiguous run of
elements per thread is rejected here: every line's reads of `data` must be at least
{COALESCED:.0%} coalesced."""
    + COMMON
    + FLUSH
)

HIST_COARSE_INTERLEAVED = Puzzle(
    name="ch09_hist_coarse_interleaved",
    title="Histogram, coarsened (interleaved)",
    statement=INTERLEAVED,
    outputs=("hist",),
    spec=spec,
    cases=cases_interleaved,
    reference=hist_coarse_interleaved,
    accumulate=("hist",),
    budget=PRIVATE,
    rules=INTERLEAVED_RULES,
    chapter=CHAPTER,
    hints=(
        "`for i in range(cuda.grid(1), n, cuda.gridsize(1)):`",
        "The body is the same shared atomic as in the privatised kernel.",
    ),
)


# ---------------------------------------------------------------------------- rung 3: aggregated


@cuda.jit
def hist_aggregated(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    ### BEGIN SOLUTION
    prev = -1  # the bin of the current run (none yet)
    run = 0  # its length so far
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        b = data[i] // BIN_WIDTH
        if b == prev:
            run += 1
        else:
            if run > 0:
                cuda.atomic.add(hist_s, prev, run)
            prev = b
            run = 1
    if run > 0:
        cuda.atomic.add(hist_s, prev, run)
    ### END SOLUTION
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


AGGREGATED = (
    """\
**Aggregation.** When the data has long runs of values in the same bin (images with flat regions,
sorted data), a thread keeps adding 1 to the same shared counter, and the atomics on one address
serialise. Count the current run in a register instead: while the bin stays the same, `run += 1`;
when it changes (and once at the end), add the whole run with one atomic. Use the interleaved
loop. Checked: at most one shared atomic per run of equal bins in each thread's sequence."""
    + COMMON
    + FLUSH
)


def runs_in_thread_order(case):
    """The shared atomics aggregation needs on `case`: one per run of equal bins in each thread's
    grid-stride sequence (what the reference issues; one atomic per element is more on every case
    with a run longer than the grid)."""
    n, stride = case.args["n"], case.grid * case.block
    bins = case.args["data"][:n] // BIN_WIDTH
    sequences = (bins[t::stride] for t in range(min(n, stride)))
    return sum(1 + int(np.count_nonzero(s[1:] != s[:-1])) for s in sequences)


AGGREGATION = (
    "Keep the current run's bin and length in registers and add the run with one atomic when the bin "
    "changes, and once after the loop."
)

HIST_AGGREGATED = Puzzle(
    name="ch09_hist_aggregated",
    title="Histogram, aggregated runs",
    statement=AGGREGATED,
    outputs=("hist",),
    spec=spec,
    cases=cases_interleaved,
    reference=hist_aggregated,
    accumulate=("hist",),
    budget=PRIVATE,
    rules=(*INTERLEAVED_RULES, max_shared_atomics(runs_in_thread_order, AGGREGATION)),
    chapter=CHAPTER,
    hints=(
        "Two registers: the bin of the current run (start with -1: no bin) and its length.",
        "On a change of bin, add the finished run (if any) and start a new one of length 1.",
        "After the loop the last run is still unflushed.",
    ),
)


# ---------------------------------------------------------------------------- rung 4: unrolled


@cuda.jit
def hist_unrolled(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    v = cuda.local.array(UNROLL, int32)  # registers: the loops over UNROLL unroll
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    stride = cuda.gridsize(1)
    # UNROLL independent loads per trip, all issued before the first atomic waits on one:
    # UNROLL times the bytes in flight per thread of the plain grid-stride loop.
    for i in range(cuda.grid(1), n, UNROLL * stride):
        if i + (UNROLL - 1) * stride < n:
            for k in range(UNROLL):  # a whole trip: no bounds tests between the loads
                v[k] = data[i + k * stride]
            for k in range(UNROLL):
                cuda.atomic.add(hist_s, v[k] // BIN_WIDTH, 1)
        else:
            for k in range(UNROLL):
                if i + k * stride < n:
                    cuda.atomic.add(hist_s, data[i + k * stride] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


UNROLLED = (
    """\
**Coarsening for memory-level parallelism** (a worked example, written for the GPU). In the
interleaved loop each thread loads one element and then waits for it before its atomic: one
element in flight per thread, too few bytes in flight to keep a modern GPU's memory busy. This
version loads `UNROLL = 4` elements (a whole trip of the loop, `stride` apart so each load stays
coalesced) before the first atomic needs any of them; only the last, partial trip tests each
index."""
    + COMMON
    + FLUSH
)

HIST_UNROLLED = Puzzle(
    name="ch09_hist_unrolled",
    title="Histogram, UNROLL loads in flight",
    statement=UNROLLED,
    outputs=("hist",),
    spec=spec,
    cases=cases_interleaved,
    reference=hist_unrolled,
    accumulate=("hist",),
    budget=PRIVATE,
    chapter=CHAPTER,
)

PUZZLES = [HIST_COARSE_CONTIGUOUS, HIST_COARSE_INTERLEAVED, HIST_AGGREGATED, HIST_UNROLLED]
