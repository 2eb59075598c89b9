# %% [markdown]
# # PMPP chapter 7: convolution
#
# A 2-D convolution replaces every pixel by a weighted sum of its neighbourhood: blur, sharpen,
# edge detection, and the first layer of every image network. Each output needs `FW x FW` inputs,
# and each input is needed by `FW x FW` outputs, so the chapter is about **reuse**: where to keep
# the filter (constant memory) and where to keep the image pixels that neighbouring threads share
# (shared memory, or the caches).
#
# The ladder: a basic kernel, the filter in constant memory, a tiled kernel whose blocks cover the
# *input* tile (halo included), and a tiled kernel whose blocks cover the *output* tile and leave
# the halo to the caches. The two tiled kernels are your exercises.

# %% setup

# %%
import numpy as np
from numba import cuda, float32

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, OverBudget, expect_failure
from puzzles.pmpp import ch07_convolution as ch07
from puzzles.pmpp.ch07_convolution import *  # its constants: R, FW, FILTER, IN_TILE, OUT_TILE, TILE, ROWS

# %% [markdown]
# ## The basic kernel
#
# One thread per output pixel. Positions of the window that fall outside the image contribute
# nothing (the book calls them ghost cells, with value 0). The outer loop skips whole rows of the
# window that are outside, the inner loop single pixels.

# %% [markdown] statement:ch07_conv2d_basic

# %%
print(f"R = {R} (a {FW} x {FW} filter), IN_TILE = {IN_TILE}, OUT_TILE = {OUT_TILE}, TILE = {TILE}")
print(FILTER)  # the filter the constant-memory kernels bake in

# %% kernel:ch07_conv2d_basic

# %%
puzzles.show("ch07_conv2d_basic", conv2d_basic, view="counts")

# %%
puzzles.check("ch07_conv2d_basic", conv2d_basic)

# %% [markdown]
# ## The filter in constant memory
#
# Three things are true of the filter: it is small, it does not change while the kernel runs, and
# all threads of a warp read the same element at the same time. That is exactly what **constant
# memory** is built for: a small cached bank where one read is broadcast to the whole warp. In
# Numba, `cuda.const.array_like(A)` inside the kernel turns the module-level NumPy array `A` into
# such an array, its values fixed when the kernel is compiled. The kernel loses its `f` parameter,
# and its global reads drop to the image alone.

# %% [markdown] statement:ch07_conv2d_const

# %% kernel:ch07_conv2d_const

# %%
puzzles.check("ch07_conv2d_const", conv2d_const)

# %% [markdown]
# ## Tiling with the input tile
#
# With `R = 1`, each pixel is read by nine threads. If the nine threads sit in the same block, one
# global read and eight shared reads do the job. The block therefore loads an input tile, which is
# its output tile plus a halo of `R` pixels on every side. The book's first design makes the block
# exactly as big as the input tile, so each thread loads one pixel; the price is that the halo
# threads have no output of their own and sit idle while the others compute (here
# `IN_TILE^2 - OUT_TILE^2 = 28` of 64 threads; with 32 x 32 blocks on the GPU, 124 of 1024).

# %% [markdown] statement:ch07_conv2d_tiled_in

# %% kernel:ch07_conv2d_tiled_in

# %%
puzzles.show("ch07_conv2d_tiled_in", conv2d_tiled_in, view="access")

# %%
puzzles.check("ch07_conv2d_tiled_in", conv2d_tiled_in)

# %% [markdown]
# A correct answer is not enough here: the point of the tile is that each thread reads global
# memory once. The constant-memory kernel, launched with this puzzle's blocks, computes the right
# image but reads up to nine pixels per thread, and the budget says so.

# %%
expect_failure(OverBudget, puzzles.check, "ch07_conv2d_tiled_in", ch07.conv2d_const)

# %% [markdown]
# Forgetting the ghost cells leaves tile entries that no thread wrote; a real GPU would use
# whatever that shared memory happened to hold. The simulator refuses to read them.


# %%
@cuda.jit
def conv2d_no_ghosts(out, a, h, w):
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * OUT_TILE + tx - R
    row = cuda.blockIdx.y * OUT_TILE + ty - R
    if 0 <= row < h and 0 <= col < w:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    if R <= tx < IN_TILE - R and R <= ty < IN_TILE - R and row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                acc += f[i, j] * tile[ty - R + i, tx - R + j]
        out[row, col] = acc


expect_failure(KernelDiagnosed, puzzles.check, "ch07_conv2d_tiled_in", conv2d_no_ghosts)

# %% [markdown]
# ## Tiling with the output tile, the halo from the caches
#
# The second design keeps blocks the size of the output tile, so no thread idles, and loads only
# the tile's own pixels into shared memory. The halo pixels are also some neighbouring block's tile
# pixels: that block reads them from global memory too, so by the time this block wants them they
# are most likely in the L2 cache (the L1 is per SM, and the neighbour may run on another SM).
# Reading them from global memory then costs little.
# The kernel branches per tap (tile, halo, or ghost), which costs instructions; on recent GPUs, with
# large caches, this design often wins.

# %% [markdown] statement:ch07_conv2d_tiled_cached

# %% kernel:ch07_conv2d_tiled_cached

# %%
puzzles.show("ch07_conv2d_tiled_cached", conv2d_tiled_cached, view="counts")

# %%
puzzles.check("ch07_conv2d_tiled_cached", conv2d_tiled_cached)

# %% [markdown]
# ## How much does tiling save?
#
# Count global reads of the image per output pixel, for an `OUT x OUT` output tile and radius `R`.
# The basic kernel reads `(2R+1)^2` per output (before caches). The input-tile kernel reads
# `(OUT + 2R)^2` per tile. For the 3 x 3 filter used here:

# %%
for out_tile in (6, 14, 30):
    basic = FW * FW
    tiled = (out_tile + 2 * R) ** 2 / out_tile**2
    print(
        f"output tile {out_tile:2d}: basic {basic} reads/pixel, tiled {tiled:.2f} reads/pixel, "
        f"ratio {basic / tiled:.1f}x"
    )

# %% [markdown]
# With a 3 x 3 filter a 2-D convolution does only about 2 flops per byte it must move: it is
# memory-bound on every GPU, and the target is the bandwidth of a plain copy. Reuse only has to
# stop the extra reads from reaching DRAM, and the caches of a modern GPU already do much of that,
# which is why the simple kernels do well below.

# %% [markdown]
# ## Loads in flight: a sliding window in registers
#
# On a GPU the kernels above tend to wait on their loads one at a time: each tap's load sits behind
# its own `if`, the compiler may not hoist a load above the test that guards it, so the loop issues
# a load, waits for it at the add, and only then reaches the next test. This worked example slides a 3 x 3
# window of registers down a column of `ROWS` outputs: each step loads only the three pixels of the
# new bottom row, with clamped indices that are always safe, and zeroes ghost cells by multiplying
# with 0. No branch separates the loads, so all of them are in flight together.

# %% [markdown] statement:ch07_conv2d_register

# %% kernel:ch07_conv2d_register

# %%
puzzles.check("ch07_conv2d_register", conv2d_register)

# %% [markdown]
# ## Measure it
#
# On a GPU: the five kernels and one written for the GPU only, on a 256 MiB image (32 x 8 blocks for
# the untiled ones; 32 x 32 for the tiled ones), against a device-to-device copy of the same size and
# `cupyx.scipy.ndimage.correlate` (the peer: what you would call instead), both measured in the same
# run. The minimum traffic is the image read once and the output written once. For the register
# window, the rows per thread and the block shape are searched on your GPU (winners in brackets).
#
# The GPU-only kernel, `ch07_conv2d_batched`, is the register window with one change: each thread
# issues the loads of BATCH rows before it computes any of them (`conv2d_register` loads one row,
# then waits for it). **What the profiler found** (Nsight Compute on an H100, 8192 x 8288 image):
#
# | kernel | time | DRAM read | issue slots used | waiting on loads (cycles per instruction) |
# |---|---|---|---|---|
# | `ch07_conv2d_register` | 285 us | 272 MB | 56% | 12.2 |
# | `ch07_conv2d_batched`, 4 rows in flight | 256 us | 272 MB | 64% | 6.0 |
# | `ch07_conv2d_batched`, 8 rows in flight | 248 us | 272 MB | 64% | 3.0 |
#
# Both read the 272 MB image from DRAM exactly once: the window's neighbours come from registers and
# the L1 cache, as designed. The shortfall was latency: with one row's loads in flight a thread
# waits a full trip to memory per output, and even 2048 threads per SM do not keep enough bytes in
# flight to cover it. Batching the loads halves and then quarters that wait. (Little's law: bytes in
# flight = bandwidth x latency. At about 3 TB/s and roughly half a microsecond, the GPU needs over a
# megabyte in flight, about 10 KB per SM.)
#
# On an H200 (4.1 TB/s from the same 132 SMs) the picture changes. The batched kernel takes
# 228 us there against 248 us on the H100, while the copy drops from 183 to 130 us. The profiler
# shows why: the loads no longer keep threads waiting (1.9 cycles per instruction), but 71% of the
# issue slots are used and the integer pipe is 65% busy. The kernel now runs out of instructions
# before it runs out of bandwidth. A version on flat, unsigned indices (fewer integer instructions
# per load) gained 2%. The remaining cost is the filter's nine multiply-adds and three loads per
# output, which a copy does not have.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch07.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="2-D convolution, 3 x 3 filter")

# %% [markdown]
# Check your understanding: the spec function is plain NumPy. Compare it with the kernel on a random
# image of your own, launched directly (on the GPU if there is one, else on the simulator).

# %%
img = np.random.default_rng(7).uniform(-1, 1, (20, 27)).astype(np.float32)
d_out = cuda.device_array(img.shape, np.float32)
conv2d_const[(4, 5), (8, 4)](d_out, cuda.to_device(img), img.shape[0], img.shape[1])
print("max difference from NumPy:", float(np.abs(d_out.copy_to_host() - ch07.conv2d(img, FILTER)).max()))

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-07")
