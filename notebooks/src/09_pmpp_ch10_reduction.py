# %% [markdown]
# # PMPP chapter 10: reduction
#
# A reduction turns many values into one: a sum, a maximum, a count. Sequentially it is one loop;
# in parallel it is a **tree**: pairs are added in one step, pairs of pairs in the next, and
# `n` values need only `log2(n)` steps, each with half as many additions as the one before.
#
# The tree is easy; doing it fast is the chapter. We build it up as a ladder:
#
# 1. a simple tree in one block, then the **convergent** tree that keeps whole warps busy;
# 2. the first step done while loading: half the shared memory;
# 3. **any length**: one segment per block, combined with one atomic per block;
# 4. **thread coarsening**: each thread adds several elements before the tree;
# 5. **warp shuffles** and a grid-stride loop: the shape of a fast GPU reduction.
#
# A note on the book's first kernels: they reduce in place, overwriting the input in global memory.
# The checker here never lets a kernel change its input (so that you can rerun any cell), so our
# versions copy their segment into shared memory first.

# %% setup

# %%
import numba
import numpy as np
from numba import cuda

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, expect_failure
from puzzles.pmpp import ch10_reduction as ch10
from puzzles.pmpp.ch10_reduction import *  # its constants: TPB, SEGMENT, COARSE, FULL_MASK

# %% [markdown]
# ## The simple tree
#
# Thread `t` owns position `2t` of the shared copy. At stride 1 every thread adds its right-hand
# neighbour; at stride 2 only the even threads work, at stride 4 every fourth, and so on. After
# `log2(2 * TPB)` steps, position 0 holds the sum. Every step starts with a barrier: a thread reads a
# partial sum that another thread wrote in the step before.

# %% [markdown] statement:ch10_reduce_simple

# %% kernel:ch10_reduce_simple

# %%
puzzles.show("ch10_reduce_simple", reduce_simple)

# %%
puzzles.check("ch10_reduce_simple", reduce_simple)

# %% [markdown]
# It is correct, but look at which threads work: `t % stride == 0` picks threads spread across the
# whole block. With 1024 threads and stride 16, one thread in 16 adds, yet **every warp** still has
# an active thread, so every warp is scheduled and runs at a sixteenth of its width. That is
# control divergence, and it costs all the way down the tree.
#
# ## The convergent tree
#
# Renumber the work so that the active threads are always the **first** ones: thread `t` owns
# position `t`, and at stride `s` the threads `t < s` add `part[t + s]`. The strides now shrink:
# `blockDim, blockDim / 2, ..., 1`. Whole warps go idle together and stop costing anything, until
# the last five steps, which run inside one warp.

# %% [markdown] statement:ch10_reduce_convergent

# %% kernel:ch10_reduce_convergent

# %%
puzzles.show("ch10_reduce_convergent", reduce_convergent)

# %%
puzzles.check("ch10_reduce_convergent", reduce_convergent)

# %% [markdown]
# The classic mistake: putting the barrier inside `if t < stride`. Only the active threads reach
# it, and a barrier that some threads of a block never reach is undefined behaviour on a GPU (a
# hang, or silently wrong sums). The simulator refuses it:


# %%
@cuda.jit
def convergent_barrier_in_if(out, a, n):
    part = cuda.shared.array(SEGMENT, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    part[t] = a[t] if t < n else 0.0
    part[t + bd] = a[t + bd] if t + bd < n else 0.0
    stride = bd
    while stride >= 1:
        if t < stride:
            cuda.syncthreads()
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] = part[0]


expect_failure(KernelDiagnosed, puzzles.check, "ch10_reduce_convergent", convergent_barrier_in_if)

# %% [markdown]
# ## The first step while loading
#
# The first step of the convergent tree adds `part[t + blockDim]` to `part[t]`: both came straight
# from global memory. Add them as they arrive, and the shared array needs only `TPB` floats, with
# one barrier fewer. The puzzle's budget enforces both: two global reads per thread, `TPB * 4` bytes
# of shared memory.

# %% [markdown] statement:ch10_reduce_shared

# %% kernel:ch10_reduce_shared

# %%
puzzles.show("ch10_reduce_shared", reduce_shared, view="counts")

# %%
puzzles.check("ch10_reduce_shared", reduce_shared)

# %% [markdown]
# ## Any length: a segment per block
#
# One block can hold at most 1024 threads, so one block sums at most 2048 elements this way. For
# more, give each block its own segment and combine the block totals. The simplest combination is
# one `cuda.atomic.add` per block into `out[0]`: the hardware serialises the additions to that one
# address, but there is only one per block. The kernel adds to whatever `out[0]` holds, so the check
# starts it at a sum left by earlier launches (a kernel that sets or clears it is wrong); for a fresh
# sum you zero it before the launch.

# %% [markdown] statement:ch10_reduce_segmented

# %% kernel:ch10_reduce_segmented

# %%
puzzles.show("ch10_reduce_segmented", reduce_segmented)

# %%
puzzles.check("ch10_reduce_segmented", reduce_segmented)

# %% [markdown]
# ## Thread coarsening
#
# With one segment of `2 * blockDim` per block, a large input needs a huge number of blocks, and
# each pays for a full tree of barriers to add only two elements per thread. The hardware cannot
# run all those blocks at once anyway: it runs them in waves. So serialise on purpose: each thread
# first adds `2 * COARSE` elements in a register (no barriers), then the block runs one tree. The
# loads stay coalesced: in each round the threads of a warp read consecutive elements.

# %% [markdown] statement:ch10_reduce_coarsened

# %% kernel:ch10_reduce_coarsened

# %%
puzzles.show("ch10_reduce_coarsened", reduce_coarsened, view="coalescing")

# %%
puzzles.check("ch10_reduce_coarsened", reduce_coarsened)

# %% [markdown]
# A kernel is an ordinary function: launch it yourself. For a fresh sum `out` starts at zero, since
# the blocks add into it.

# %%
a = np.random.default_rng(0).uniform(-1, 1, 1000).astype(np.float32)
out = np.zeros(1, np.float32)
per_block = 2 * COARSE * TPB
reduce_coarsened[(a.size + per_block - 1) // per_block, TPB](out, a, a.size)
print(f"kernel: {out[0]:.4f}   NumPy: {a.sum(dtype=np.float64):.4f}")

# %% [markdown]
# ## Warp shuffles and a grid-stride loop
#
# Two last changes give the shape of a production reduction:
#
# - **A grid-stride loop** replaces "one segment per block": the grid is sized to fill the GPU (a
#   few blocks per SM), and each block walks the input in steps of the whole grid. Any grid covers
#   any `n`, and the number of atomics is the number of blocks, not `n / 2048`. A full round of
#   `COARSE` loads has no bounds test. A load needs no earlier load's value, so the hardware can
#   have all `COARSE` of them in flight before the first returns; but when each sits behind its own
#   bounds test, the compiler usually keeps the branches and issues the loads one branch at a time,
#   and it may not hoist a load above a test that guards it. Without the tests, the loads are issued
#   back to back. Only the last few elements are loaded with a test each.
# - **Warp shuffles** replace the last steps of the tree. `cuda.shfl_down_sync(mask, v, d)` gives
#   each lane the value `v` of the lane `d` places above it, register to register, with no shared
#   memory and no barrier: the lanes of a warp execute it together. Five shuffles sum a warp.
#
# Each warp's lane 0 then writes one value to shared memory, a single barrier, and the first warp
# sums those the same way.

# %% [markdown] statement:ch10_reduce_shuffle

# %% kernel:ch10_reduce_shuffle

# %%
puzzles.show("ch10_reduce_shuffle", reduce_shuffle, view="counts")

# %%
puzzles.check("ch10_reduce_shuffle", reduce_shuffle)

# %% [markdown] solutions
# ### The same kernel in CUDA C++
#
# The solution above, spelled in CUDA C++ and checked on the same cases against the same spec
# (compiled for the T4 with NVRTC; run where there is a GPU).
# `cuda.shfl_down_sync` is `__shfl_down_sync` and `cuda.atomic.add(out, 0, acc)` is
# `atomicAdd(&out[0], acc)`. Writing the types out shows something Numba hid: this exercise's cases
# hand `out` over as float64, so the C++ parameter is `double*`.

# %% [markdown] cpp-names solutions

# %% cpp:ch10_reduce_shuffle solutions

# %% [markdown]
# ## Measure it
#
# On a GPU, the any-length variants sum 256 MiB of floats, each with its best setting of a small
# grid searched on your GPU once and cached (shown in brackets), after checking every one against
# NumPy on fresh data. The bytes counted are the input, read once; the ceiling is a device-to-device
# copy measured in the same run, the peer CuPy's `sum`. The goal for the best
# variant is 80% of the copy's bandwidth. On a CPU machine this cell says so and does nothing.
# The benchmark launches the very kernels above, recompiled with GPU-sized constants
# (`helpers.timing.specialize`): 256 to 1024 threads per block; for the shuffle kernel `COARSE` of
# 4, 8 or 16 and 4 or 8 blocks per SM. Each timing covers a
# batch of launches back to back: one Numba launch costs the CPU about as long as this kernel runs on
# the GPU, and in a batch the GPU's queue hides that.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch10.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Reduction (sum of 256 MiB of float32)")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-10")
