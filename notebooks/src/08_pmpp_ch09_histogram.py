# %% [markdown]
# # PMPP chapter 9: histogram
#
# Until now every output had one owner: the thread that computes it. A histogram breaks that rule:
# any thread may need to add to any bin, and two threads adding to one bin at once must not lose a
# count. This chapter is about **atomic operations** and how to need fewer of them, under
# contention: **privatisation** (private copies, merged once), **coarsening** (fewer, busier threads,
# and the order in which they read), and **aggregation** (one atomic per run of equal bins).
#
# The data here are int32 values in `[0, MAX_VALUE)`, counted into `NUM_BINS` bins of
# `BIN_WIDTH` values each. (The book counts the letters of a text; four-byte elements keep the
# fast kernels simple, see the end.) The shared-memory privatisation, the interleaved loop and the
# aggregation are your exercises.

# %% setup

# %%
import numpy as np
from numba import cuda, int32  # noqa: F401  (int32: the shared arrays in the kernel cells)

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, OverBudget, expect_failure
from puzzles.pmpp import ch09_histogram as ch09
from puzzles.pmpp.ch09_histogram import *  # its constants: NUM_BINS, BIN_WIDTH, CFACTOR, UNROLL

# %%
print(f"{NUM_BINS} bins of {BIN_WIDTH} values, values in [0, {ch09.MAX_VALUE})")

# %% [markdown]
# ## Atomics
#
# `hist[b] += 1` is three steps: read, add, write. Two threads that read the same old value both
# write old + 1, and one count is gone. The hardware offers a read-modify-write that no other thread
# can interrupt: `cuda.atomic.add(array, index, value)`. Watch the simulator catch the plain version
# (the check cell raises `KernelDiagnosed` with a `DataRace`):


# %%
@cuda.jit
def hist_racy(hist, data, n):
    i = cuda.grid(1)
    if i < n:
        hist[data[i] // BIN_WIDTH] += 1


expect_failure(KernelDiagnosed, puzzles.check, "ch09_hist_atomic", hist_racy)

# %% [markdown] statement:ch09_hist_atomic

# %% kernel:ch09_hist_atomic

# %%
puzzles.check("ch09_hist_atomic", hist_atomic)

# %% [markdown]
# Atomics on one address are processed one after another (in the L2 cache for global memory).
# Every thread of the grid is now waiting on the same 64 counters: throughput is bounded by how fast
# those counters can be updated, not by memory bandwidth.
#
# ## Privatisation
#
# Give each block its own copy of the histogram; the only contention left is inside a block. At the
# end, merge the copies into the real one.

# %% [markdown] statement:ch09_hist_private_global

# %% kernel:ch09_hist_private_global

# %%
puzzles.check("ch09_hist_private_global", hist_private_global)

# %% [markdown]
# The copies need not live in global memory at all: a block's private histogram fits in shared
# memory, where atomics are much cheaper (they are done in the SM, with no trip to L2). That
# bounds the global atomics per block by the number of bins, which the budget of the next exercise
# enforces.

# %% [markdown] statement:ch09_hist_private_shared

# %% kernel:ch09_hist_private_shared

# %%
puzzles.show("ch09_hist_private_shared", hist_private_shared, view="counts")

# %%
puzzles.check("ch09_hist_private_shared", hist_private_shared)

# %% [markdown]
# The plain atomic kernel computes the same counts, but makes one global atomic per element: with
# blocks larger than `NUM_BINS`, the budget catches it.

# %%
expect_failure(OverBudget, puzzles.check, "ch09_hist_private_shared", ch09.hist_atomic)

# %% [markdown]
# ## Coarsening: contiguous or interleaved?
#
# Each block now pays a fixed cost: zero `NUM_BINS` counters, two barriers, flush `NUM_BINS`
# counters. Spread it over more elements by giving each thread several. Which several? Giving
# thread `i` the contiguous run `[i*CFACTOR, (i+1)*CFACTOR)` feels natural on a CPU; on a GPU the
# 32 lanes of a warp then read addresses `CFACTOR` elements apart in every step. Interleaving (a
# grid-stride loop) makes the lanes read neighbouring elements. Compare the coalescing views.

# %% [markdown] statement:ch09_hist_coarse_contiguous

# %% kernel:ch09_hist_coarse_contiguous

# %%
puzzles.show("ch09_hist_coarse_contiguous", hist_coarse_contiguous, view="coalescing")

# %%
puzzles.check("ch09_hist_coarse_contiguous", hist_coarse_contiguous)

# %% [markdown] statement:ch09_hist_coarse_interleaved

# %% kernel:ch09_hist_coarse_interleaved

# %%
puzzles.show("ch09_hist_coarse_interleaved", hist_coarse_interleaved, view="coalescing")

# %%
puzzles.check("ch09_hist_coarse_interleaved", hist_coarse_interleaved)

# %% [markdown]
# ## Aggregation
#
# Real data often has runs: an image's sky, a sorted column. Then a thread adds 1 to the same
# counter many times in a row, and those atomics queue on one address. Count the run in a register
# and add it once. The test data here is half runs, half uniform values.

# %% [markdown] statement:ch09_hist_aggregated

# %% kernel:ch09_hist_aggregated

# %%
puzzles.check("ch09_hist_aggregated", hist_aggregated)

# %% [markdown]
# ## Bytes in flight
#
# A GPU hides the several hundred nanoseconds of memory latency by having many loads in flight at
# once. In the interleaved loop, a thread issues one load and then waits for it, because the atomic
# needs the value and the next load sits behind the loop's bounds test: one element in flight per
# thread. The last version issues a whole trip's `UNROLL` loads (4 here, 8 on the GPU) before the
# first atomic, that many times the bytes in flight for the same threads. (This is also why the data
# here are int32: one-byte elements would need packing four to a load to get the same effect.)

# %% [markdown] statement:ch09_hist_unrolled

# %% kernel:ch09_hist_unrolled

# %%
puzzles.check("ch09_hist_unrolled", hist_unrolled)

# %% [markdown]
# ## Measure it
#
# On a GPU: every variant on 256 MiB of uniform random int32 values (256-thread blocks; the
# grid-stride kernels with eight blocks per SM), against a device copy of the same size and CuPy's
# `histogram` (the peer: what you would call instead), both measured in the same run. The minimum
# traffic is the data read once and the bins written once. Expect the first two to be far behind:
# one global atomic per element.
#
# One more kernel is written for the GPU only: `ch09_hist_unsigned`, the unrolled kernel with
# unsigned arithmetic. The data is viewed as `uint32` (its values are never negative), so a bin is
# a shift instead of Python's floor division of a signed value. Every index is unsigned, so Numba
# emits no wrap-around code for negative indices (`a[-1]` is the last element, as in Python).
#
# On an H200 the profiler found `hist_unrolled` with its integer pipe 94% busy, not waiting on
# memory. The unsigned version takes 70 us instead of 98 us on the same data: from 66% to 94% of the
# copy. Both kernels' launch shapes are searched on your GPU (winners in brackets).

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch09.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Histogram, 64 bins")

# %% [markdown]
# Your own run, launched directly (GPU if present, else the simulator):

# %%
vals = np.random.default_rng(5).integers(0, ch09.MAX_VALUE, 3000).astype(np.int32)
d_hist = cuda.to_device(np.zeros(NUM_BINS, np.int32))
hist_unrolled[4, 64](d_hist, cuda.to_device(vals), vals.size)
print("counts equal NumPy's:", bool((d_hist.copy_to_host() == ch09.histogram(vals)).all()))

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-09")
