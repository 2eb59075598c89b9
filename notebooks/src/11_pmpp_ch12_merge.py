# %% [markdown]
# # PMPP chapter 12: merge
#
# Merging two sorted arrays into one sorted array is the heart of merge sort and of many database
# joins. Sequentially it is one loop: compare the heads, take the smaller. In parallel the problem
# is that where output element `k` comes from depends on every comparison before it.
#
# The key is the **co-rank**: for any output position `k`, the first `k` outputs consist of the
# first `i` elements of `A` and the first `j = k - i` of `B`, for exactly one `i`, and a binary
# search finds it in `log2` steps without merging anything. Each thread can then find where its own
# piece of the output starts in `A` and `B`, and merge that piece on its own.
#
# The ladder: co-rank itself; a basic merge (one piece per thread, straight from global memory);
# a tiled merge (blocks stage their inputs in shared memory with coalesced loads); a circular-buffer
# merge (each input element loaded once).
#
# Ties: when an element of `A` equals one of `B`, `A`'s goes first. That keeps the merge stable and
# makes the co-rank unique.

# %% setup

# %%
import inspect

import numba  # noqa: F401 (the kernel cells use numba.float32)
import numpy as np
from numba import cuda

import puzzles
from helpers import timing
from helpers.check import WrongAnswer, expect_failure
from puzzles.pmpp import ch12_merge as ch12
from puzzles.pmpp.ch12_merge import *  # its constants: TPB, TILE

# %% [markdown]
# ## Co-rank
#
# Guess `i = min(k, m)` (take as much of `A` as possible) and `j = k - i`. The guess is right when
# both `A[i - 1] <= B[j]` (the last `A` element taken does not belong after the first `B` element
# left out) and `B[j - 1] < A[i]` (and vice versa, strictly: on a tie `A` goes first). If the first
# test fails, `i` is too big; if the second fails, `j` is. Each correction halves the distance to
# the last bound known to be safe: a binary search on a diagonal of the "merge grid".

# %% [markdown] statement:ch12_co_rank

# %% kernel:ch12_co_rank

# %%
puzzles.show("ch12_co_rank", co_rank_kernel)

# %%
puzzles.check("ch12_co_rank", co_rank_kernel)

# %% [markdown]
# The tie rule matters: with `>=` and `>` swapped, `B` wins ties, the merge is still sorted, but
# the co-ranks differ wherever `A` and `B` share a value, and two threads that disagree about
# where a piece starts would write some outputs twice and others never.


# %%
@cuda.jit
def co_rank_ties_to_b(out, a, b, m, n):
    k = cuda.grid(1)
    if k <= m + n:
        i = min(k, m)
        j = k - i
        i_low = max(0, k - n)
        j_low = max(0, k - m)
        while True:
            if i > 0 and j < n and a[i - 1] >= b[j]:
                delta = (i - i_low + 1) // 2
                j_low = j
                i -= delta
                j += delta
            elif j > 0 and i < m and b[j - 1] > a[i]:
                delta = (j - j_low + 1) // 2
                i_low = i
                i += delta
                j -= delta
            else:
                break
        out[k] = i


expect_failure(WrongAnswer, puzzles.check, "ch12_co_rank", co_rank_ties_to_b)

# %% [markdown]
# ## Two device functions
#
# The same search, packaged as a **device function** (`@cuda.jit(device=True)`): callable from
# any kernel, and usually inlined by the compiler. With it, and a one-thread sequential merge, the merge
# kernels below are short.

# %%
co_rank = ch12.co_rank
merge_sequential = ch12.merge_sequential
co_rank_circular = ch12.co_rank_circular
merge_sequential_circular = ch12.merge_sequential_circular
print(inspect.getsource(co_rank.py_func))
print(inspect.getsource(merge_sequential.py_func))

# %% [markdown]
# ## Basic merge
#
# Every thread of the grid produces `ceil((m + n) / threads)` consecutive outputs: it co-ranks
# where its piece starts and where the next thread's starts, then merges sequentially.
#
# It is correct and fully parallel, but look at the memory: each thread walks its own stretch of
# `A` and `B`, so the 32 lanes of a warp read 32 scattered addresses per instruction, and the
# co-rank searches jump around all of both arrays.

# %% [markdown] statement:ch12_merge_basic

# %% kernel:ch12_merge_basic

# %%
puzzles.show("ch12_merge_basic", merge_basic, view="coalescing")

# %%
puzzles.check("ch12_merge_basic", merge_basic)

# %% [markdown]
# ## Tiled merge
#
# Give each **block** a contiguous slice of the output. Thread 0 co-ranks the slice's two ends once
# (in global memory); then the block works through its slice in rounds. Each round loads the next
# `TILE` elements of the block's part of `A` and of `B` into shared memory, with neighbouring
# threads loading neighbouring elements; merges the next `TILE` outputs from the tiles (every
# co-rank search now runs in shared memory); and co-ranks once more to learn how much of each tile
# it used. A round outputs at most `TILE` elements, so it never needs more than `TILE` of either
# input.

# %% [markdown] statement:ch12_merge_tiled

# %% kernel:ch12_merge_tiled

# %%
puzzles.show("ch12_merge_tiled", merge_tiled, view="coalescing")

# %%
puzzles.check("ch12_merge_tiled", merge_tiled)

# %% [markdown]
# ## Circular buffers
#
# The tiled merge reloads both tiles in full every round, although a round typically uses only
# about half of each: every input element is read from global memory about twice. Keep the tiles
# as **circular buffers** instead: a round consumes some slots at the head, and the next round
# refills only those, behind the elements still waiting. Index arithmetic moves into
# `co_rank_circular` and `merge_sequential_circular` (slot `(head + x) % TILE`); each input element
# is now loaded once.

# %% [markdown] statement:ch12_merge_circular

# %% kernel:ch12_merge_circular

# %%
puzzles.show("ch12_merge_circular", merge_circular, view="counts")

# %%
puzzles.check("ch12_merge_circular", merge_circular)

# %% [markdown]
# Launch it yourself on arrays of your own:

# %%
rng = np.random.default_rng(0)
a = np.sort(rng.uniform(-5, 5, 70)).astype(np.float32)
b = np.sort(rng.uniform(-5, 5, 45)).astype(np.float32)
c = np.zeros(a.size + b.size, np.float32)
merge_circular[3, TPB](c, a, b, a.size, b.size)
print(
    "sorted:",
    bool(np.all(np.diff(c) >= 0)),
    " same elements:",
    bool(np.array_equal(np.sort(c), np.sort(np.concatenate([a, b])))),
)

# %% [markdown]
# ## Measure it
#
# On a GPU, the three merges and one written for the GPU only combine two sorted arrays of 128 MiB
# each (tiles of 1024 elements, 128 threads per block), after checking each against NumPy with
# several launch shapes. The bytes counted are the minimum: both inputs read once, the output
# written once; the device copy measured in the same run is the ceiling, and the peer is what you
# would call instead: no library merges two sorted arrays, so CuPy's `sort` of the two concatenated.
#
# The GPU-only merge, `ch12_merge_partitioned`, works in one pass per tile:
#
# 1. A small kernel finds every tile's co-rank, one thread per tile boundary.
# 2. Each block loads its tile's slices of A and B into shared memory. Together they hold exactly
#    as many elements as the tile has outputs, so one coalesced pass loads them.
# 3. Each thread merges a fixed number of outputs with no branch on the data: it reads both heads,
#    takes the smaller and advances one index.
# 4. The block writes its staging tile out coalesced.
#
# Its tile size is searched on your GPU. On an H100 the profiler shows it is bound by integer
# instructions (the integer pipe 80% busy), not by memory: a merge does a comparison and index
# updates per element where a copy does nothing. The tiled merge spends 1.24 ms on the same data.
#
# `ch12_merge_partitioned_u32` (`partitioned32.py`) is the same merge with that integer work made
# smaller: 32-bit indices instead of Numba's 64-bit ones, halving by a shift instead of Python's
# floor division, and a co-rank that reads A and B as two ranges of the one shared tile. Its machine
# code for an H100 is about half the old one's (`python -m tools.ptx_count ch12`). The goal is judged
# on it. On a CPU machine this cell says so and does nothing.
#
# **Measured on an H100** (driver 580, numba-cuda 0.30.4; `python -m tools.bench --only ch12 --json
# b12.json`): `ch12_merge_partitioned_u32` (256 threads x 11 outputs) merges at 1723 GB/s against the
# copy's 2971: **58.0%, the 50% goal is met** (6.7x CuPy's sort of the concatenation).
# `python -m tools.ncu_summary ch12`: 2.39 warp instructions per output against the 64-bit
# partitioned merge's 5.09, 254 us against 465. **On a T4** (`python -m tools.bench --assume t4
# --from b12.json`, scaled by memory bandwidth): about 165 GB/s against a 284 GB/s copy, 3.3 ms.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch12.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Merge (2 x 128 MiB of float32)")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-12")
