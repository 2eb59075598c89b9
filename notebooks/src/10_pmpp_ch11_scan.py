# %% [markdown]
# # PMPP chapter 11: prefix sum (scan)
#
# An inclusive scan writes every running total: `out[i] = a[0] + a[1] + ... + a[i]`. An exclusive
# scan stops one short: `out[i] = a[0] + ... + a[i - 1]`, and `out[0] = 0`. Scans are everywhere:
# allocating output slots (each thread learns where to write), stream compaction, radix sort,
# sparse matrices, summed-area tables.
#
# Sequentially a scan is one addition per element. In parallel it looks impossible at first, since
# every output depends on all the inputs before it, yet it takes `log2(n)` steps. The ladder:
#
# 1. **Kogge-Stone**: fast and simple, `n log n` additions; inclusive, exclusive, double-buffered.
# 2. **Brent-Kung**: a reduction tree and its mirror, about `2n` additions.
# 3. **Coarsened three-phase**: each thread scans a run of elements sequentially.
# 4. **Hierarchical**: any length, with three launches.
# 5. **Single pass**: any length in one launch, blocks handing their totals to their successors:
#    first as a chain of dominoes, then with **decoupled look-back**, the fast one.
#
# The first puzzles scan **sections**: each block scans its own slice and restarts at zero, which is
# exactly the building block the hierarchical and single-pass scans need.

# %% setup

# %%
import inspect

import numba
import numpy as np
from numba import cuda

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, expect_failure
from puzzles.pmpp import ch11_scan as ch11
from puzzles.pmpp.ch11_scan import *  # TPB, BK_SECTION, COARSE, THREE_SECTION, ITEMS, LB_TILE, FULL_MASK

# %% [markdown]
# ## Kogge-Stone
#
# Keep the section in shared memory, `xy[t]` for thread `t`. In the step with stride `s`, every
# thread `t >= s` adds `xy[t - s]` to its own value. After the step with stride `s`, `xy[t]` holds
# the sum of the `2s` elements ending at `t` (or all of them from the section start): strides
# 1, 2, 4, ... double the span, and `log2(TPB)` steps finish the scan.
#
# The trap: in one step thread `t` **reads** `xy[t - s]` while thread `t - s` **writes** it. Which
# happens first is up to the hardware. So each step reads into a temporary, waits at a barrier, and
# only then writes.

# %% [markdown] statement:ch11_kogge_stone

# %% kernel:ch11_kogge_stone

# %%
puzzles.show("ch11_kogge_stone", kogge_stone_scan)

# %%
puzzles.check("ch11_kogge_stone", kogge_stone_scan)

# %% [markdown] solutions
# ### The same kernel in CUDA C++
#
# The solution above, spelled in CUDA C++ and checked on the same cases against the same spec
# (compiled for the T4 with NVRTC; run where there is a GPU).
# One difference of the languages shows: in C++ the temporary `tmp` must be declared where every
# thread sees it, while Numba lets a variable appear under an `if`.

# %% [markdown] cpp-names solutions

# %% cpp:ch11_kogge_stone solutions

# %% [markdown]
# Drop the temporary and the second barrier, `xy[t] += xy[t - stride]`, and thread `t` may read a
# value that thread `t - stride` already updated in this step. Within one warp of a real GPU it
# often works, because the lanes happen to read before any of them writes; nothing guarantees that
# (since Volta, lanes are scheduled independently), and across warps it fails. The simulator reports
# the race:


# %%
@cuda.jit
def ks_in_place(out, a, n):
    xy = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    xy[t] = a[i] if i < n else 0.0
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            xy[t] += xy[t - stride]
        stride *= 2
    if i < n:
        out[i] = xy[t]


expect_failure(KernelDiagnosed, puzzles.check, "ch11_kogge_stone", ks_in_place)

# %% [markdown]
# ### Exclusive, and double-buffered
#
# Loading the section shifted right by one (`xy[t] = a[i - 1]`, and 0 for the first thread) turns
# the inclusive scan into the exclusive one.

# %% [markdown] statement:ch11_kogge_stone_exclusive

# %% kernel:ch11_kogge_stone_exclusive

# %%
puzzles.check("ch11_kogge_stone_exclusive", kogge_stone_exclusive)

# %% [markdown]
# The second barrier per step can go if reads and writes use **different buffers**: read from one,
# write the other, swap. Twice the shared memory, half the barriers.

# %% [markdown] statement:ch11_kogge_stone_double

# %% kernel:ch11_kogge_stone_double

# %%
puzzles.show("ch11_kogge_stone_double", kogge_stone_double, view="banks")

# %%
puzzles.check("ch11_kogge_stone_double", kogge_stone_double)

# %% [markdown]
# ## Brent-Kung
#
# Kogge-Stone does `n log2 n` additions where a sequential scan does `n`: with more data than
# threads, that extra work is paid in time. Brent-Kung does about `2n`:
#
# - **up-sweep**: a reduction tree in place. After it, position `2^k (j + 1) - 1` holds the sum of
#   the `2^k` elements ending there; the last position holds the section total.
# - **down-sweep**: the mirror tree. With strides `TPB / 2, ..., 1`, each of those partial sums is
#   added to the position `stride` places to its right, filling in the missing totals.
#
# Each block of `TPB` threads scans `2 * TPB` elements: in the up-sweep's first step every thread
# adds one pair.

# %% [markdown] statement:ch11_brent_kung

# %% kernel:ch11_brent_kung

# %%
puzzles.show("ch11_brent_kung", brent_kung_scan, view="counts")

# %%
puzzles.check("ch11_brent_kung", brent_kung_scan)

# %% [markdown]
# ## Coarsened three-phase scan
#
# With far more elements than threads, give each thread a run of `COARSE` consecutive elements:
#
# 1. load the section into shared memory **coalesced** (neighbouring threads, neighbouring elements),
#    then each thread scans its own run sequentially: cheap, no barriers;
# 2. a Kogge-Stone scan over the threads' run totals;
# 3. each thread adds the total of all the runs before its own.
#
# Phase 1 reads shared memory with a stride of `COARSE` between threads: look at the banks view for
# what that costs.

# %% [markdown] statement:ch11_three_phase

# %% kernel:ch11_three_phase

# %%
puzzles.show("ch11_three_phase", three_phase_scan, view="banks")

# %%
puzzles.check("ch11_three_phase", three_phase_scan)

# %% [markdown]
# ## Hierarchical scan: any length, three launches
#
# 1. Scan each section and also write the section's total to `sums[block]`.
# 2. Scan `sums` (with the same method: recursively, if there are more sections than fit in one).
# 3. Add the scanned total of all earlier sections to every element of each section.

# %% [markdown] statement:ch11_scan_blocks

# %% kernel:ch11_scan_blocks

# %%
puzzles.check("ch11_scan_blocks", scan_blocks)

# %% [markdown] statement:ch11_add_sums

# %% kernel:ch11_add_sums

# %%
puzzles.show("ch11_add_sums", add_block_sums)

# %%
puzzles.check("ch11_add_sums", add_block_sums)

# %% [markdown]
# The host function chains the launches (see `ch11.hierarchical_scan`): it runs on the simulator
# here and on the GPU where there is one. Here with the course's kernels, on 1000 elements: 63
# sections of 16, whose totals need a second level of 4 sections, then a third.

# %%
a = np.random.default_rng(1).uniform(-1, 1, 1000).astype(np.float32)
got = ch11.hierarchical_scan(a).copy_to_host()
timing.validate("hierarchical scan", got, np.cumsum(a, dtype=np.float64), rtol=1e-5, atol=1e-4)
print("hierarchical scan of 1000 elements: right; last total", got[-1])

# %% [markdown]
# It reads and writes the data twice (steps 1 and 3): on a GPU, where a scan is limited by memory
# bandwidth, that is half the speed it could have.
#
# ## Single pass: the domino scan
#
# Scan everything in **one** launch. Each block scans its section, then waits for its predecessor
# to publish the running total up to the predecessor's end, adds its own total, and publishes that
# for its successor. Blocks talk through global memory: a value and a flag, with `threadfence()`
# between writing the value and setting the flag (so that nobody sees the flag before the value),
# and the mirror on the other side: an atomic read of the flag, `threadfence()`, an atomic read of
# the value (so that the value is not read before the flag, nor from a stale cached copy).
#
# One subtlety: a block may wait only for a block that is already running. A GPU starts blocks in
# whatever order it likes, and block 5 spinning on block 4, which has not started and cannot start
# until a slot frees up, waits forever. So blocks do not use `blockIdx.x` as their section number;
# each takes the next number from an atomic counter when it starts. Whoever holds section `s - 1`
# is therefore already running.

# %% [markdown] statement:ch11_domino

# %% kernel:ch11_domino

# %%
puzzles.check("ch11_domino", domino_scan)

# %% [markdown]
# The weakness: the totals pass from block to block one at a time, a chain as long as the grid,
# each link a round trip through global memory.
#
# ## Decoupled look-back
#
# The fix (Merrill and Garland's single-pass scan) is to publish **two** things: a tile's own total
# as soon as it has scanned its tile (flag 1), and later its inclusive running total (flag 2). A
# block looks back: it adds the own totals of flag-1 predecessors until it meets a flag-2 one, then
# stops. Nobody waits for a long chain. The first warp looks back 32 tiles at a time (lane `k` reads
# tile `tile - 1 - k`; a ballot finds the nearest flag-2 tile and a shuffle sum adds what counts), so
# a long look-back costs a few round trips to memory, not one per tile. The block scan inside uses
# warp shuffles (`shfl_up_sync`) rather than a shared-memory tree: each warp scans its own `ITEMS`
# rows of 32 elements, kept in registers and loaded all at once, with a single barrier before the
# warps' totals are combined. The tile is large, so there are few tiles to look back over.
#
# The look-back itself is a device function, run by the block's first warp; the kernel below calls
# it once the tile's total is known:

# %%
look_back = ch11.look_back
print(inspect.getsource(look_back.py_func))

# %% [markdown] statement:ch11_lookback

# %% kernel:ch11_lookback

# %%
puzzles.check("ch11_lookback", lookback_scan)

# %% [markdown]
# ## Measure it
#
# On a GPU, these scans process 256 MiB of floats, after each is checked against NumPy on fresh
# data with several block shapes:
#
# - the hierarchical scan (sections of 1024);
# - the domino scan;
# - the decoupled look-back;
# - `ch11_lookback_raked`, written for the GPU only.
#
# The bytes counted are the minimum: the input read once and the output written once. Flags and
# ticket counter are zeroed by a tiny kernel before every single-pass launch (two host-issued copies
# instead more than doubled the look-back's time on an H200).
#
# `ch11_lookback_raked` is the look-back scan with the work inside a tile moved into registers, as
# in the three-phase scan. Each thread scans a run of consecutive elements serially, and a warp
# shuffle-scans only the threads' totals. Loads and stores stay coalesced: rows of 32 pass through
# shared memory, one padding word per 32 keeping both directions free of bank conflicts.
#
# It is an experiment that failed, kept because of why it failed. **What the profiler found** (Nsight
# Compute on an H100, 64 Mi floats, each kernel at its best block shape):
#
# | kernel | time | issue slots used | waiting at a barrier (cycles per instruction) |
# |---|---|---|---|
# | `lookback_scan`, 256 threads x 48 | 211 us | 33% | 9.5 |
# | `lookback_raked`, 512 threads x 16 | 283 us | 34% | 13.6 |
#
# Neither kernel is short of issue slots: two thirds go unused. The shuffles were not what set the
# pace. Most warps sit at the barrier while the first warp looks back: global atomics read the
# flags and totals of earlier tiles, a round trip to L2 each, and nothing else in the block can
# proceed meanwhile. Cheaper work inside the tile does not shorten that wait.
#
# Closing the remaining gap to the copy would take hiding the look-back:
#
# - a block loading its next tile while its first warp looks back;
# - reading the flags with plain acquire loads instead of atomics (which Numba does not expose);
# - giving the other warps work while the first one looks back.
#
# `ch11_lookback_fast` tries the last one. It searches two GPU-only kernels (`lookback32.py`) with
# the block shapes above. `lookback_u32` is the look-back scan with 32-bit indices: Numba computes
# indices in 64 bits, and 32 halve the machine code per element (`python -m tools.ptx_count ch11`).
# `lookback_overlap` also reorders the tile's work: every warp first only adds up its elements, so
# the tile's total is known after one barrier; then the first warp looks back while the other
# warps scan their rows.
#
# Every search's block shapes are tuned on your GPU (winners in brackets). The goal, judged on
# `ch11_lookback_fast`, is 85% of the device copy measured in the same run, and at least the speed
# of CuPy's `cumsum` (the peer) in that run. On a CPU machine this cell says so and does nothing.
#
# **Measured on an H100** (driver 580, numba-cuda 0.30.4; `python -m tools.bench --only ch11 --json
# b11.json`): `ch11_lookback_fast` picked `lookback_overlap` at 384 threads x 32 items: 2386 GB/s
# against the copy's 2968, **80.4%: the 85% goal is not met** (7.1x `cupy.cumsum`'s 335 GB/s: that
# goal is met). `python -m tools.ncu_summary ch11` on `lookback_u32` (the profile's launch) shows the
# look-back wait still in charge: 15.7 cycles per issued instruction at the block barrier, the top
# stall, with issue slots 21% busy and DRAM 74%; the 32-bit indices cut the instructions (0.67 warp
# instructions per element against 1.06) but not the wait. Reaching 85% would need the block not to
# wait for its look-back: one warp does the decoupled look-back alone while the others store their
# tile's local scan and fetch the next tile, adding the prefix in a second pass over registers
# rather than at a block barrier, and flags read with acquire loads instead of atomics (Numba exposes
# neither the loads nor a named barrier for part of a block). **On a T4** (`python -m tools.bench
# --assume t4 --from b11.json`, scaled by memory bandwidth): about 228 GB/s against a 284 GB/s copy,
# 2.4 ms for 256 MiB.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch11.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Scan (256 MiB of float32)")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-11")
