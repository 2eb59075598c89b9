# %% [markdown]
# # GPU Puzzles: from map to matrix multiply
#
# Fourteen small kernels, each one idea harder than the last, in the order of Sasha Rush's
# GPU-Puzzles: one thread per element, guards, blocks, 2-D indexing, shared memory, barriers,
# reductions and finally a tiled matrix multiply. You write real Numba CUDA kernels; the same code
# runs on a GPU if you have one and on a strict simulator if you do not.

# %% setup

# %%
import numba  # noqa: F401  (the kernel cells below use numba.float32)
import numpy as np
from numba import cuda

import puzzles
from helpers.check import WrongAnswer, expect_failure

# %% [markdown]
# ## How CUDA looks from Numba
#
# A **kernel** is a function decorated with `@cuda.jit`. It returns nothing; it writes its results
# into arrays it is given. By the convention of this course the outputs come first, then the
# inputs, then sizes: `kernel(out, a, size)`.
#
# One launch runs the kernel body once per **thread**, conceptually all at once (the hardware runs
# them in groups of 32, **warps**, as fast as it can). Threads are grouped into **blocks**, and the
# blocks form the **grid**:
#
# ```python
# kernel[blocks, threads_per_block](out, a, size)
# ```
#
# Both numbers may be tuples for 2-D launches: `kernel[(bx, by), (tx, ty)](...)`. Inside the
# kernel each thread finds out who it is:
#
# | name | meaning |
# |---|---|
# | `cuda.threadIdx.x`, `.y` | this thread's position inside its block (restarts at 0 in every block) |
# | `cuda.blockIdx.x`, `.y` | this block's position in the grid |
# | `cuda.blockDim.x`, `.y` | threads per block along each axis |
# | `cuda.gridDim.x`, `.y` | blocks along each axis |
#
# In 2-D this course uses the usual CUDA habit: **x runs along columns, y along rows**, and a
# matrix element is `m[row, column]`. So a thread that owns cell `out[i, j]` computes
# `i` from the `.y` components and `j` from the `.x` ones.
#
# Threads of one block can share a small fast scratch array, `cuda.shared.array(shape, dtype)`,
# and wait for each other at `cuda.syncthreads()`. Threads of different blocks cannot.
#
# Launching a kernel yourself works like this (on a machine without a GPU the simulator runs it;
# the first cell printed which engine you have):


# %%
@cuda.jit
def negate_kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = -a[i]


a = np.array([1.5, -2.0, 3.25], np.float32)
out = np.zeros_like(a)
negate_kernel[1, 3](out, a)  # one block of three threads
print(out)

# %% [markdown]
# ## How your kernels are checked
#
# `puzzles.check("map", map_kernel)` runs your kernel on five or more cases and either returns a
# short summary or raises an exception that says what went wrong. It is strict on purpose, because
# on a real GPU most mistakes do not crash; they quietly produce garbage, or worse, the right answer
# by luck:
#
# - inputs are random floats of both signs (never `0, 1, 2, ...`), sizes change from case to case,
#   and are rarely a multiple of the block size;
# - outputs start filled with NaN, so an element you forgot to write cannot look right;
# - the simulator stops at the first out-of-bounds index (negative ones too), read of memory no
#   thread wrote, race between two threads, or barrier that not all threads reach (`KernelDiagnosed`);
# - inputs are read-only; the expected answer comes from NumPy on untouched copies (`WrongAnswer`);
# - some puzzles have a **budget** of memory accesses per thread (`OverBudget`);
# - the kernel is also compiled for a real GPU (an NVIDIA T4) to catch Python that Numba cannot
#   compile (`CompileRejected`); on a GPU the kernel also runs there.
#
# An unsolved puzzle raises `NotSolvedYet`. `puzzles.show(name, kernel)` draws which thread touched
# which element, and draws the diagnosis when the simulator stopped your kernel. If you are stuck,
# `puzzles.hint(name, n)` prints the first `n` hints; each gives away a little more.

# %% [markdown] statement:map

# %% kernel:map

# %%
puzzles.show("map", map_kernel)

# %%
puzzles.check("map", map_kernel)

# %% [markdown] solutions
# The same kernel in CUDA C++, checked on the same cases against the same spec (compiled for the
# T4 with NVRTC; run where there is a GPU). Notebook 29 has all fourteen puzzles as C++ exercises;
# the names map one to one:

# %% [markdown] cpp-names solutions

# %% cpp:map solutions

# %% [markdown]
# Here is a kernel that would pass a checker fed with `a = [0, 1, 2, ...]`; with random inputs it
# fails, and the message shows which elements are wrong. (`expect_failure` runs the check and prints
# the failure it expected.)


# %%
@cuda.jit
def map_cheat(out, a):
    i = cuda.threadIdx.x
    out[i] = i + 10


expect_failure(WrongAnswer, puzzles.check, "map", map_cheat)

# %%
puzzles.hint("map", 2)

# %% [markdown] statement:zip

# %% kernel:zip

# %%
puzzles.show("zip", zip_kernel)

# %%
puzzles.check("zip", zip_kernel)

# %% cpp:zip solutions

# %% [markdown] statement:guard

# %% kernel:guard

# %%
puzzles.show("guard", guard_kernel)

# %%
puzzles.check("guard", guard_kernel)

# %% cpp:guard solutions

# %% [markdown] statement:map_2d

# %% kernel:map_2d

# %%
puzzles.show("map_2d", map_2d_kernel)

# %%
puzzles.check("map_2d", map_2d_kernel)

# %% cpp:map_2d solutions

# %% [markdown] statement:broadcast

# %% kernel:broadcast

# %%
puzzles.show("broadcast", broadcast_kernel)

# %%
puzzles.check("broadcast", broadcast_kernel)

# %% cpp:broadcast solutions

# %% [markdown] statement:blocks

# %% kernel:blocks

# %%
puzzles.show("blocks", blocks_kernel)

# %%
puzzles.check("blocks", blocks_kernel)

# %% cpp:blocks solutions

# %% [markdown] statement:blocks_2d

# %% kernel:blocks_2d

# %%
puzzles.show("blocks_2d", blocks_2d_kernel)

# %%
puzzles.check("blocks_2d", blocks_2d_kernel)

# %% cpp:blocks_2d solutions

# %% [markdown] statement:shared
#
# From here on the kernels use module-level constants such as `TPB`: Numba needs the shape of a
# shared array as a plain constant when it compiles (not even `TPB + 2` is accepted inside the
# kernel, hence names like `CACHE = TPB + 2`). Run the constants cell before the kernel cell.

# %%
TPB = 8

# %% kernel:shared

# %%
puzzles.show("shared", shared_kernel)

# %%
puzzles.check("shared", shared_kernel)

# %% cpp:shared solutions

# %% [markdown] statement:pool

# %%
TPB = 8
CACHE = TPB + 2

# %% kernel:pool

# %%
puzzles.show("pool", pool_kernel)

# %%
puzzles.check("pool", pool_kernel)

# %% cpp:pool solutions

# %% [markdown] statement:dot

# %%
TPB = 8

# %% kernel:dot

# %%
puzzles.show("dot", dot_kernel)

# %%
puzzles.check("dot", dot_kernel)

# %% cpp:dot solutions

# %% [markdown] statement:conv

# %%
TPB = 8
MAX_CONV = 4
A_TILE = TPB + MAX_CONV

# %% kernel:conv

# %%
puzzles.show("conv", conv_kernel)

# %%
puzzles.check("conv", conv_kernel)

# %% cpp:conv solutions

# %% [markdown] statement:prefix_sum

# %%
TPB = 8

# %% kernel:prefix_sum

# %%
puzzles.show("prefix_sum", prefix_sum_kernel)

# %%
puzzles.check("prefix_sum", prefix_sum_kernel)

# %% cpp:prefix_sum solutions

# %% [markdown] statement:axis_sum

# %%
TPB = 8

# %% kernel:axis_sum

# %%
puzzles.show("axis_sum", axis_sum_kernel)

# %%
puzzles.check("axis_sum", axis_sum_kernel)

# %% cpp:axis_sum solutions

# %% [markdown] statement:matmul

# %%
TPB = 8

# %% kernel:matmul

# %%
puzzles.show("matmul", matmul_kernel)

# %% [markdown]
# The `counts` view shows the budget at work: on a 2 x 2 grid of tiles each thread reads two values
# per tile from global memory, and the dot products run out of shared memory.

# %%
puzzles.show("matmul", matmul_kernel, view="counts", case=2)

# %%
puzzles.check("matmul", matmul_kernel)

# %% cpp:matmul solutions

# %% [markdown]
# ## Done
#
# That is the whole ladder: indexing, guards, blocks, shared memory, barriers, reductions and
# tiling. The next notebooks follow *Programming Massively Parallel Processors* and ask the
# question these puzzles skipped: how fast is it?

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("puzzles")
