# %% [markdown]
# # GPU Puzzles II: warps, atomics, banks and the grid
#
# Fifteen more puzzles, each one idea harder than the last, past the point where the first
# notebook stopped: the 32 threads of a **warp** trading registers (shuffles, votes, ballots,
# matches), **atomics** (privatized, compare-and-swap, a ticket that finds the last block),
# shared-memory **banks**, and a barrier across the whole **grid**. Same rules as before: real Numba
# CUDA kernels, random cases of awkward sizes, a strict simulator, and a budget or rule in every
# puzzle that only the intended idea fits.

# %% setup

# %%
import numba  # noqa: F401  (the kernel cells below use numba.float32)
import numpy as np
from numba import cuda

import puzzles
from helpers import sim
from helpers.check import OverBudget, expect_failure
from helpers.metrics import t4_occupancy
from helpers.sim.errors import LaunchError

# %% [markdown]
# ## Warps
#
# A block's threads run in groups of 32 consecutive threads (counting `threadIdx.x` first, then
# `.y`), the **warps**; inside a warp each thread is a **lane**, `0..31`. The lanes of a warp can
# read each other's registers directly, with no shared memory and no `cuda.syncthreads()`: the
# `*_sync` functions below take a `mask` of the lanes that take part, and every lane named in the
# mask must reach the same call. `FULL_MASK = 0xFFFFFFFF` names all 32. Putting a warp function
# under an `if` that some lanes of the mask skip is undefined behaviour on a GPU; the simulator
# stops with `WarpDivergence`. The first puzzles forbid shared memory altogether
# (`0 bytes of shared memory` in their budgets), so the registers are the only way.

# %% [markdown] statement:warp_sum

# %%
FULL_MASK = 0xFFFFFFFF

# %% kernel:warp_sum

# %%
puzzles.show("warp_sum", warp_sum_kernel)

# %%
puzzles.check("warp_sum", warp_sum_kernel)

# %%
puzzles.hint("warp_sum", 1)

# %% [markdown] statement:warp_allreduce

# %%
FULL_MASK = 0xFFFFFFFF
ROWS = 4

# %% kernel:warp_allreduce

# %%
puzzles.show("warp_allreduce", warp_allreduce_kernel)

# %%
puzzles.check("warp_allreduce", warp_allreduce_kernel)

# %%
puzzles.hint("warp_allreduce", 1)

# %% [markdown] statement:warp_scan

# %%
FULL_MASK = 0xFFFFFFFF
TPB = 64

# %% kernel:warp_scan

# %%
puzzles.show("warp_scan", warp_scan_kernel)

# %%
puzzles.check("warp_scan", warp_scan_kernel)

# %%
puzzles.hint("warp_scan", 1)

# %% [markdown] statement:block_sum

# %%
FULL_MASK = 0xFFFFFFFF
TPB = 128
WARPS = TPB // 32


@cuda.jit(device=True)
def warp_total(x):
    """The sum of `x` over the 32 lanes, in lane 0 (puzzle II.1)."""
    offset = 16
    while offset > 0:
        x += cuda.shfl_down_sync(FULL_MASK, x, offset)
        offset //= 2
    return x


# %% kernel:block_sum

# %%
puzzles.show("block_sum", block_sum_kernel)

# %%
puzzles.check("block_sum", block_sum_kernel)

# %%
puzzles.hint("block_sum", 1)

# %% [markdown] statement:block_scan

# %%
FULL_MASK = 0xFFFFFFFF
TPB = 128
WARPS = TPB // 32


@cuda.jit(device=True)
def warp_scan(x):
    """Inclusive scan of `x` over the 32 lanes (puzzle II.3)."""
    lane = cuda.threadIdx.x % 32
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if lane >= d:
            x += y
        d *= 2
    return x


# %% kernel:block_scan

# %%
puzzles.show("block_scan", block_scan_kernel)

# %%
puzzles.check("block_scan", block_scan_kernel)

# %%
puzzles.hint("block_scan", 1)

# %% [markdown] statement:vote

# %%
FULL_MASK = 0xFFFFFFFF
ROWS = 2

# %% kernel:vote

# %%
puzzles.show("vote", vote_kernel)

# %%
puzzles.check("vote", vote_kernel)

# %%
puzzles.hint("vote", 1)

# %% [markdown] statement:compact

# %%
FULL_MASK = 0xFFFFFFFF
TPB = 64

# %% kernel:compact

# %%
puzzles.show("compact", compact_kernel)

# %%
puzzles.check("compact", compact_kernel)

# %%
puzzles.hint("compact", 1)

# %% [markdown]
# ## Atomics
#
# An atomic read-modify-write (`cuda.atomic.add`, `max`, `cas`, ...) on one address is never torn
# by another thread's, in any block; it returns the value it replaced. Atomics are how blocks that
# cannot wait for each other still combine results, and their cost grows with the number of
# threads that hit the same address, so the next puzzles are about doing fewer of them.

# %% [markdown] statement:histogram

# %%
TPB = 64
BINS = 16

# %% kernel:histogram

# %%
puzzles.show("histogram", histogram_kernel, case=3)

# %%
puzzles.check("histogram", histogram_kernel)

# %%
puzzles.hint("histogram", 1)

# %% [markdown] statement:atomic_cas

# %%
TPB = 64
ABS_BITS = 0x7FFFFFFF

# %% kernel:atomic_cas

# %%
puzzles.show("atomic_cas", atomic_cas_kernel)

# %%
puzzles.check("atomic_cas", atomic_cas_kernel)

# %%
puzzles.hint("atomic_cas", 1)

# %% [markdown] statement:last_block

# %%
TPB = 32

# %% kernel:last_block

# %%
puzzles.show("last_block", last_block_kernel, case=3)

# %%
puzzles.check("last_block", last_block_kernel)

# %%
puzzles.hint("last_block", 1)

# %% [markdown]
# ## Shared-memory banks
#
# Shared memory delivers 32 four-byte words per cycle, one from each of its 32 **banks** (word `w`
# is in bank `w % 32`). When the lanes of one warp access words in distinct banks, that is one
# pass; `k` distinct words in one bank cost `k` passes (lanes reading the *same* word share it).
# These two puzzles have a rule beyond the budget: every warp's shared access must be
# conflict-free. `puzzles.show(name, kernel, view="banks")` draws each access's banks.

# %% [markdown] statement:transpose_pad

# %%
TILE = 32
ROWS = 8
PADDED = TILE + 1

# %% kernel:transpose_pad

# %%
puzzles.show("transpose_pad", transpose_pad_kernel)

# %%
puzzles.check("transpose_pad", transpose_pad_kernel)

# %% [markdown]
# Here is the same kernel with a plain `TILE x TILE` tile. The answer is right; the rule is not
# met, and the banks view shows why: reading down a column, all 32 lanes wait on one bank.


# %%
@cuda.jit
def transpose_unpadded(out, a, rows, cols):
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    for k in range(0, TILE, ROWS):
        r = cuda.blockIdx.y * TILE + ty + k
        if r < rows and c < cols:
            tile[ty + k, tx] = a[r, c]
    cuda.syncthreads()
    c2 = cuda.blockIdx.y * TILE + tx
    for k in range(0, TILE, ROWS):
        r2 = cuda.blockIdx.x * TILE + ty + k
        if r2 < cols and c2 < rows:
            out[r2, c2] = tile[tx, ty + k]


expect_failure(OverBudget, puzzles.check, "transpose_pad", transpose_unpadded)

# %%
puzzles.show("transpose_pad", transpose_unpadded, view="banks")

# %%
puzzles.hint("transpose_pad", 1)

# %% [markdown] statement:transpose_swizzle

# %%
TILE = 32
ROWS = 8

# %% kernel:transpose_swizzle

# %%
puzzles.show("transpose_swizzle", transpose_swizzle_kernel)

# %%
puzzles.check("transpose_swizzle", transpose_swizzle_kernel)

# %%
puzzles.hint("transpose_swizzle", 1)

# %% [markdown]
# ## Back to the warp: matching keys
#
# One more warp function, for the histogram of puzzle II.8: lanes that hold equal keys can find
# each other in one step.

# %% [markdown] statement:match_any

# %%
FULL_MASK = 0xFFFFFFFF
TPB = 64
BINS = 8

# %% kernel:match_any

# %%
puzzles.show("match_any", match_any_kernel, case=4)

# %%
puzzles.check("match_any", match_any_kernel)

# %%
puzzles.hint("match_any", 1)

# %% [markdown]
# ## Occupancy
#
# An SM keeps many warps resident at once and switches to a ready one whenever another waits for
# memory; the fraction of its warp slots that are filled is its **occupancy**. How many blocks fit
# is decided by whichever resource runs out first: block slots, threads, registers or shared
# memory. `t4_occupancy(threads, shared_bytes)` (from `helpers.metrics`, the arithmetic the
# puzzle's rule uses) does it for a T4; here it is for blocks that each use 8 KiB of shared memory:

# %%
for threads in (32, 64, 128, 256, 512, 1024):
    occ = t4_occupancy(threads, 8 * 1024)
    print(
        f"{threads:5d} threads, 8 KiB shared: {occ.blocks_per_sm:2d} blocks per SM, "
        f"occupancy {occ.fraction:4.0%} (limited by {occ.limit})"
    )

# %% [markdown] statement:occupancy

# %%
BINS = 2048
### BEGIN SOLUTION
BLOCK = 128  # 8 blocks of 8 KiB fill the 64 KiB; 8 x 128 threads = 1024 = 32 warps
### END SOLUTION

# %% kernel:occupancy

# %%
puzzles.show("occupancy", occupancy_kernel, case=3)

# %%
puzzles.check("occupancy", occupancy_kernel)

# %%
puzzles.hint("occupancy", 1)

# %% [markdown]
# ## The grid
#
# Blocks of one launch normally cannot wait for each other: a GPU runs as many as fit and starts
# the others as those finish. The last puzzle uses the one exception.

# %% [markdown] statement:grid_sync

# %%
TPB = 32

# %% kernel:grid_sync

# %%
puzzles.show("grid_sync", grid_sync_kernel, case=3)

# %%
puzzles.check("grid_sync", grid_sync_kernel)

# %% [markdown]
# The co-residency limit, computed: 32-thread blocks with 128 bytes of shared memory fit 16 to an
# SM (the block limit), so a T4's 40 SMs hold 640 of them. A grid of 641 cannot use a grid barrier;
# the simulator refuses it the way a cooperative launch on a GPU does (here with the reference
# solution, so that the cell runs whether or not you solved the puzzle).

# %%
reference = puzzles.get("grid_sync").reference
a = np.random.default_rng(0).uniform(-1, 1, 100_000).astype(np.float32)
out = np.empty_like(a)
partial = np.zeros(641, np.float32)
expect_failure(LaunchError, sim.launch, reference, 641, TPB, (out, partial, a, a.size), trace=False)

# %%
puzzles.hint("grid_sync", 1)

# %% [markdown]
# ## Done
#
# Shuffles, votes, ballots and matches move data between the lanes of a warp without memory;
# atomics combine results across blocks, cheapest when privatized or aggregated first; banks
# decide what a shared-memory access costs; and a grid barrier is only for grids that fit on the
# GPU at once. The next notebook measures the machine these run on.

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("puzzles-2")
