# %% [markdown]
# # PMPP chapter 6: performance considerations
#
# A kernel can be correct and still use a tenth of what the GPU can do. This chapter is about the
# three habits that matter most for memory-bound kernels, all shown on one small kernel, the
# matrix transpose:
#
# 1. **Coalescing**: the 32 threads of a warp should touch neighbouring addresses in the same
#    instruction, so that the hardware serves them with a few wide memory transactions.
# 2. **Corner turning**: when one side of the computation must walk a matrix the "wrong" way, turn
#    the corner in shared memory, where strided access is cheap, and keep both global sides
#    coalesced.
# 3. **Thread coarsening**: give each thread several elements, so fixed per-thread costs (index
#    arithmetic, barriers, block start-up) are paid once for many elements.
#
# The chapter ends with the optimisation checklist and a timing on the GPU.

# %% setup

# %%
from numba import cuda, float32

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, OverBudget, expect_failure
from puzzles.pmpp import ch06_performance as ch06
from puzzles.pmpp.ch06_performance import *  # its constants: TILE (32), TILE_P (TILE + 1), ROWS (8)

# %% [markdown]
# ## Coalescing: what a warp asks of memory
#
# Global memory is read in segments of 32 bytes (sectors), grouped in 128-byte lines. When the
# 32 lanes of a warp read 32 consecutive floats, that is 128 bytes: four sectors, one request.
# When each lane reads a float `w` elements away from its neighbour, the warp needs 32 separate
# sectors, of which it uses 4 bytes each: an eighth of the bandwidth, at best.
#
# Which lanes form a warp? Threads are numbered with `threadIdx.x` varying fastest, then
# `threadIdx.y`: in a `32 x 32` block, warp `k` is row `threadIdx.y = k` of the block, 32 threads
# side by side. (With narrower blocks a warp spans several rows: with 8-wide blocks, four of them,
# and the sector arithmetic below comes out differently. That is why these puzzles use the tile a
# GPU wants, `TILE = 32`.) So the rule of thumb is: **`threadIdx.x` should move along the last
# (contiguous) index** of every array a warp reads or writes.
#
# The naive transpose below breaks this rule on one side, and cannot avoid it: `out[y, x] = a[x, y]`
# makes `threadIdx.x` move along a row of `out` (good) and down a column of `a` (bad). Swapping
# `x` and `y` only moves the problem to the writes.

# %% [markdown] statement:ch06_transpose_naive

# %% kernel:ch06_transpose_naive

# %% [markdown]
# The coalescing view shows, for each source line, how many 32-byte sectors its warp instructions
# moved compared with the fewest possible, and below, the worst warp instruction lane by lane. Case 0
# is a 40 x 36 matrix, so most warps are full. The write of `out` is ideal: 4 sectors per warp, 100%.
# The read of `a` needs 32 sectors where 4 would do: 12.5% efficient, an eighth.

# %%
puzzles.show("ch06_transpose_naive", transpose_naive, view="coalescing")

# %%
puzzles.check("ch06_transpose_naive", transpose_naive)

# %% [markdown]
# ## Corner turning
#
# The book introduces corner turning for matrix multiplication with `B` stored column by column:
# the threads that need a row of `B` would read down a column of memory. The cure is the same as
# here: load a tile **in the order memory likes** (coalesced), keep it in shared memory, and read it
# back in the order the computation likes. Shared memory has no sectors to waste; its cost model is
# banks (32 four-byte banks; lanes hitting different addresses in the same bank wait in turn),
# which is what `TILE_P = TILE + 1` is for.

# %% [markdown] statement:ch06_transpose_tiled

# %% kernel:ch06_transpose_tiled

# %% [markdown]
# Now both sides run along rows. The write is ideal again (4 sectors per warp); the read of a row of
# `a` needs 4 sectors, or 5 when the row starts in the middle of a sector (a row of 36 floats is 144
# bytes, so every other row does): 90.9% over the case, against 12.5% before.

# %%
puzzles.show("ch06_transpose_tiled", transpose_tiled, view="coalescing")

# %% [markdown]
# And the banks view, for the shared-memory side of the turn. The store `tile[ty, tx]` puts lane `tx`
# on word `ty * TILE_P + tx`, 32 consecutive words in 32 banks; the load `tile[tx, ty]` walks down a
# column, words `tx * 33 + ty`, which are in banks `(tx + ty) % 32`: again all 32 different. Both are
# conflict-free: one pass each.

# %%
puzzles.show("ch06_transpose_tiled", transpose_tiled, view="banks")

# %%
puzzles.check("ch06_transpose_tiled", transpose_tiled)

# %% [markdown]
# Two classic mistakes, caught. Without the barrier, a thread may read `tile[tx, ty]` before the
# thread that loads it has run. Reading `tile[ty, tx]` on the way out copies the tile without
# turning it; at the edges of the matrix that even reads tile cells no thread loaded, and the
# simulator stops there (on a GPU it would read leftovers of an earlier kernel).


# %%
@cuda.jit
def transpose_no_barrier(out, a, h, w):
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    col0 = cuda.blockIdx.y * TILE
    if row0 + ty < h and col0 + tx < w:
        tile[ty, tx] = a[row0 + ty, col0 + tx]
    if col0 + ty < w and row0 + tx < h:
        out[col0 + ty, row0 + tx] = tile[tx, ty]


expect_failure(KernelDiagnosed, puzzles.check, "ch06_transpose_tiled", transpose_no_barrier)


# %%
@cuda.jit
def transpose_no_turn(out, a, h, w):
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    col0 = cuda.blockIdx.y * TILE
    if row0 + ty < h and col0 + tx < w:
        tile[ty, tx] = a[row0 + ty, col0 + tx]
    cuda.syncthreads()
    if col0 + ty < w and row0 + tx < h:
        out[col0 + ty, row0 + tx] = tile[ty, tx]


expect_failure(KernelDiagnosed, puzzles.check, "ch06_transpose_tiled", transpose_no_turn)

# %% [markdown]
# And the padding. Without it, word `tx * 32 + ty` of a column read is in bank `ty` for every lane:
# all 32 lanes of the warp in one bank, a 32-way conflict, 32 passes where 1 would do. The answer is
# still right, so only the bank rule can catch it; the banks view shows the column in one bank.


# %%
@cuda.jit
def transpose_unpadded(out, a, h, w):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    col0 = cuda.blockIdx.y * TILE
    if row0 + ty < h and col0 + tx < w:
        tile[ty, tx] = a[row0 + ty, col0 + tx]
    cuda.syncthreads()
    if col0 + ty < w and row0 + tx < h:
        out[col0 + ty, row0 + tx] = tile[tx, ty]


expect_failure(OverBudget, puzzles.check, "ch06_transpose_tiled", transpose_unpadded)

# %%
puzzles.show("ch06_transpose_tiled", transpose_unpadded, view="banks")

# %% [markdown]
# ## Thread coarsening
#
# Every thread pays for itself: computing its indices, checking its bounds, waiting at the barrier,
# and the block it belongs to must be scheduled and retired. When the hardware could not run more
# threads at once anyway, giving each thread several elements does the same work with less
# overhead. The price: less parallelism to hide latency with, and more registers per thread. Coarsen
# until the GPU is just full, not further.

# %% [markdown] statement:ch06_transpose_coarse

# %% kernel:ch06_transpose_coarse

# %%
puzzles.show("ch06_transpose_coarse", transpose_coarse, view="counts")

# %%
puzzles.check("ch06_transpose_coarse", transpose_coarse)

# %% [markdown]
# ## The optimisation checklist
#
# The book closes the chapter with a list of optimisations that recur through the rest of it. In
# short, and with where this course uses each:
#
# | optimisation | what it buys | where in this course |
# |---|---|---|
# | occupancy: enough warps on every SM | memory latency hidden by switching warps | grid-stride loops |
# | coalesced global access | whole memory transactions used | this notebook, matmul, stencil |
# | uniform control flow | all 32 lanes doing useful work | reduction (ch 10) |
# | tiling of reused data | fewer global reads for the same result | matmul, convolution, stencil |
# | privatisation | less contention on shared results | histogram (ch 9) |
# | thread coarsening | less per-thread overhead and redundant work | this notebook, stencil, histogram |
#
# How, in one line each: occupancy comes from enough blocks and not too many registers or too much
# shared memory per block (both cap how many blocks fit on an SM); coalescing from `threadIdx.x`
# along the contiguous index, with corner turning where the algorithm fights it; uniform control
# flow from branches that split whole warps, or from padding the data instead of special-casing it;
# tiling from staging what many threads need in shared memory or registers; privatisation from
# private copies merged once at the end; coarsening from several outputs per thread, once the GPU is
# already full.
#
# None of these is free: each costs registers, shared memory, code or parallelism. Measure before
# and after; the next cell does that for the transpose.

# %% [markdown]
# ## Measure it
#
# On a GPU, the three kernels and one written for the GPU only move a 256 MiB matrix; the
# device-to-device copy measured in the same run is the ceiling, and CuPy's transpose copy
# (`cp.ascontiguousarray(a.T)`) the peer: what you would call instead. A transpose moves the same
# bytes as a copy, so it can come close to it. The coarsened kernels' tile (32 or 64) and rows per
# thread are searched on your GPU (winners in brackets).
#
# The GPU-only kernel, `ch06_transpose_batched`, is `transpose_coarse` with its loads issued
# together: all of a thread's elements go to registers first (indices clamped into the matrix, so no
# branch separates the loads), then into the tile. In `transpose_coarse` each store to shared memory
# waits for its own load before the next load is issued, so a thread has one load in flight. On an
# H100 the profiler shows `transpose_coarse` stalled on loads for 16 cycles per instruction, the
# batched kernel for 9, and the time drops from 238 to 195 us (both read the 270 MB matrix from DRAM
# once).
#
# On a CPU machine this cell says so and does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch06.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Transpose: naive vs corner-turned vs coarsened")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-06")
