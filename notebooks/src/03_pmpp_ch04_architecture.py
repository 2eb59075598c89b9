# %% [markdown]
# # PMPP chapter 4: compute architecture and scheduling
#
# A GPU is a set of streaming multiprocessors (SMs). A block is placed on one SM and stays there;
# the SM runs its threads in **warps** of 32, one instruction for the whole warp at a time. Three
# consequences:
#
# 1. Which threads share a warp is fixed by their numbering; it matters for divergence and for
#    memory coalescing.
# 2. When the lanes of a warp disagree at a branch (**control divergence**), the warp runs each
#    side in turn with the other lanes switched off.
# 3. An SM hides latency by switching between many resident warps. How many fit (**occupancy**)
#    depends on threads, registers and shared memory per block.

# %% setup

# %%
import matplotlib.pyplot as plt
from numba import cuda  # noqa: F401 (the kernel cells use it)

import puzzles
from helpers import timing
from helpers.check import OverBudget, expect_failure
from puzzles.pmpp import ch04_architecture as ch04
from puzzles.pmpp.ch04_architecture import *  # its constants: WARP

# %% [markdown]
# ## Warps in a 2-D block
#
# Threads of a block are numbered `x` fastest, then `y`, then `z`, and cut into warps of 32 in
# that order. In a `16 x 4` block, warp 0 holds rows `ty = 0` and `ty = 1`. A `12 x 6` block has
# 72 threads: three warps, the last with only 8 live lanes, so 24 of its lanes are wasted.

# %% [markdown] statement:ch04_warp_lane

# %% kernel:ch04_warp_lane

# %%
puzzles.show("ch04_warp_lane", warp_lane_kernel)

# %%
puzzles.check("ch04_warp_lane", warp_lane_kernel)

# %% [markdown]
# ## Control divergence
#
# The simulator records which memory instructions each thread executed. Two lanes of one warp that
# executed different instructions took different paths, and the real warp ran those paths one
# after the other. Below, each square is a lane, each row a warp, the colour the path it took.

# %% [markdown] statement:ch04_parity_branch

# %% kernel:ch04_parity_branch

# %%
puzzles.show("ch04_parity_branch", parity_branch_kernel, view="paths")
plt.show()

# %%
puzzles.check("ch04_parity_branch", parity_branch_kernel)

# %% [markdown]
# ## Exercise: one path per warp
#
# Divergence comes from the data only through the mapping of data to threads, and the mapping is
# yours to choose. (The price here: each warp now reads every other element, so it touches twice as
# many memory sectors as it uses. Whether that is worth it depends on how much work the branch
# holds; the GPU timing at the end puts numbers on one case.)

# %% [markdown] statement:ch04_warp_uniform

# %% kernel:ch04_warp_uniform

# %%
puzzles.show("ch04_warp_uniform", warp_uniform_kernel, view="paths")
plt.show()

# %%
puzzles.check("ch04_warp_uniform", warp_uniform_kernel)

# %% [markdown]
# The divergent kernel computes the same values, and is turned down for its paths:

# %%
expect_failure(OverBudget, puzzles.check, "ch04_warp_uniform", parity_branch_kernel)

# %% [markdown]
# ## Occupancy
#
# Each SM has a fixed number of warp slots, block slots, registers and bytes of shared memory. A
# block is resident only if all of its needs fit, so the scarcest resource sets how many blocks
# (and warps) share the SM. The arithmetic, for a few launch configurations (the register count per
# thread comes from the compiler; `nvcc -Xptxas -v`, or `kernel.get_regs_per_thread()` in Numba):

# %%
configs = [
    (256, 32, 0),
    (1024, 32, 0),
    (256, 64, 0),
    (256, 128, 0),
    (128, 32, 48 * 1024),
    (32, 16, 0),
    (96, 40, 0),
]
for gpu in ("T4 (sm_75)", "H100 (sm_90)"):
    print(ch04.occupancy_table(configs, gpu=gpu))
    print()

# %% [markdown]
# Things to notice: 32-thread blocks cannot fill an H100 SM (32 blocks x 1 warp = half of the 64
# warp slots); 128 registers per thread leave room for only 16 warps; 1024-thread blocks on a T4
# fit exactly once per SM. Full occupancy is not the goal in itself: it is one way to have enough
# independent work in flight, and instruction-level parallelism inside a thread (chapter 2's
# unrolled vector add, chapter 5's register tiles) is another.
#
# ## This GPU
#
# The limits above, as the driver reports them (GPU only):

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    for key, value in ch04.device_query().items():
        print(f"{key:40} {value}")

# %% [markdown]
# ## Measure it
#
# The divergent and the warp-uniform kernel, each with 256 multiply-adds per element in each branch
# so that the cost of running both sides shows. Expect the divergent one to take about twice as
# long.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch04.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Divergence (ch. 4)")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-04")
