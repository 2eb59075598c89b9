# %% [markdown]
# # PMPP chapters 2 and 3: data-parallel kernels and multidimensional grids
#
# Data parallelism: the same small computation applied independently to many elements. A CUDA
# kernel is the per-element computation written once for one thread; the launch
# `kernel[blocks, threads_per_block](...)` creates a **grid** of **blocks** of threads, and every
# thread works out from its coordinates which element is its own.
#
# This notebook builds up vector addition (chapter 2), asks when moving data to the GPU pays off,
# then goes to 2-D grids over images and matrices (chapter 3).

# %% setup

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
from numba import cuda, float32

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, expect_failure
from puzzles.pmpp import ch02_vector_add as ch02
from puzzles.pmpp import ch03_grids as ch03
from puzzles.pmpp.ch03_grids import *  # its constants: BLUR (the blur radius)

# %% [markdown]
# ## Vector addition, one element per thread
#
# Thread `threadIdx.x` of block `blockIdx.x` has the global index
# `blockIdx.x * blockDim.x + threadIdx.x`. The number of blocks is rounded up so the grid covers
# all `n` elements, which leaves the tail of the last block with no element: the `if i < n` guard.

# %% [markdown] statement:ch02_vecadd

# %% kernel:ch02_vecadd

# %% [markdown]
# A launch by hand: copy the inputs to the device, launch, copy the result back. Without a GPU the
# same lines run on the simulator.

# %%
n = 1000
a = np.random.default_rng(0).uniform(-1, 1, n).astype(np.float32)
b = np.random.default_rng(1).uniform(-1, 1, n).astype(np.float32)
d_a, d_b = cuda.to_device(a), cuda.to_device(b)
d_out = cuda.device_array(n, np.float32)
threads = 128
blocks = math.ceil(n / threads)  # 8 blocks, 1024 threads, 24 of them idle
vecadd_kernel[blocks, threads](d_out, d_a, d_b, n)
print("max error:", np.abs(d_out.copy_to_host() - (a + b)).max())

# %%
puzzles.show("ch02_vecadd", vecadd_kernel)

# %%
puzzles.check("ch02_vecadd", vecadd_kernel)

# %% [markdown] solutions
# ### The same kernel in CUDA C++
#
# The solution above, spelled in CUDA C++ and checked on the same cases against the same spec
# (compiled for the T4 with NVRTC; run where there is a GPU).
# The grid, the guard and the one element per thread are the same; C++ writes every type out and has
# no `cuda.` prefix.

# %% [markdown] cpp-names solutions

# %% cpp:ch02_vecadd solutions

# %% [markdown]
# ## Exercise: a grid-stride loop
#
# Sizing the grid to the data ties the launch to `n`. Sizing it to the machine (a few blocks per
# SM) and looping over the data instead works for any `n`, and pays the per-thread set-up once for
# many elements. The checker launches fewer threads than there are elements.

# %% [markdown] statement:ch02_vecadd_grid_stride

# %% kernel:ch02_vecadd_grid_stride

# %%
puzzles.show("ch02_vecadd_grid_stride", vecadd_grid_stride_kernel)

# %%
puzzles.check("ch02_vecadd_grid_stride", vecadd_grid_stride_kernel)

# %% [markdown]
# ## More bytes in flight
#
# A load from GPU memory takes several hundred nanoseconds. To keep terabytes per second flowing,
# the machine needs megabytes of loads outstanding at any moment, and each thread contributes only the
# loads it has issued and not yet used. The unrolled loop below issues eight loads before it needs
# any of them. Each warp's accesses are still one contiguous 128-byte run per instruction: the
# coalescing view shows it.

# %% [markdown] statement:ch02_vecadd_x4

# %% kernel:ch02_vecadd_x4

# %%
puzzles.show("ch02_vecadd_x4", vecadd_x4_kernel, view="coalescing")

# %%
puzzles.check("ch02_vecadd_x4", vecadd_x4_kernel)

# %% [markdown]
# ## When is the GPU worth the trip?
#
# A GPU kernel launch costs a few microseconds before any work starts, and the data has to cross
# PCIe (about 5-25 GB/s from ordinary pageable host memory, against 0.3 TB/s inside a T4 and
# 3-5 TB/s inside an H100 or H200).
# Vector addition does one addition per 12 bytes moved, so for it the copies dominate at every size:
# it only pays when the data already lives on the GPU, or when the copies are shared by many
# kernels. A rough rule: below 50-100 microseconds of GPU work, launch and transfer overheads
# decide, not the kernel. The table below measures the three parts against NumPy on this machine.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    print(ch02.transfer_table(ch02.transfer_study()))

# %% [markdown]
# ## Multidimensional grids: images
#
# Blocks and grids can be 2-D (or 3-D): `kernel[(gx, gy), (bx, by)]`. For an image stored as a
# C-order array `img[row, col]`, let `x` run along columns, the contiguous direction, and `y` along
# rows: the 32 lanes of a warp (consecutive `threadIdx.x`) then touch neighbouring pixels.

# %%
image = ch03.test_image()
fig, ax = plt.subplots(figsize=(4, 3))
ax.imshow(image)
ax.set_title(f"test image {image.shape[0]} x {image.shape[1]}")
ax.axis("off")
plt.show()

# %% [markdown] statement:ch03_grayscale

# %% kernel:ch03_grayscale

# %%
h, w = image.shape[:2]
block = (16, 8)
grid = (math.ceil(w / block[0]), math.ceil(h / block[1]))
d_gray = cuda.device_array((h, w), np.float32)
grayscale_kernel[grid, block](d_gray, cuda.to_device(image), h, w)
gray = d_gray.copy_to_host()
fig, ax = plt.subplots(figsize=(4, 3))
ax.imshow(gray, cmap="gray", vmin=0, vmax=1)
ax.axis("off")
plt.show()

# %%
puzzles.show("ch03_grayscale", grayscale_kernel, case=1)

# %%
puzzles.check("ch03_grayscale", grayscale_kernel)

# %% [markdown]
# ## Exercise: box blur
#
# Each thread now reads a neighbourhood, and near the edges part of it is missing. The checker
# treats a read at index -1 as the bug it is (Numba would quietly read the last row instead).

# %% [markdown] statement:ch03_blur

# %% kernel:ch03_blur

# %%
d_blur = cuda.to_device(np.zeros((h, w), np.float32))
blur_kernel[grid, block](d_blur, cuda.to_device(gray), h, w)
fig, axes = plt.subplots(1, 2, figsize=(8, 3))
for ax, img, title in zip(axes, (gray, d_blur.copy_to_host()), ("grayscale", "blurred")):
    ax.imshow(img, cmap="gray", vmin=0, vmax=1)
    ax.set_title(title)
    ax.axis("off")
plt.show()

# %%
puzzles.show("ch03_blur", blur_kernel, case=3)

# %%
puzzles.check("ch03_blur", blur_kernel)

# %% [markdown]
# What forgetting the edge test looks like: the window of a pixel in row 0 reaches row -1.


# %%
@cuda.jit
def blur_without_edge_test(out, img, height, width):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < height and col < width:
        total = float32(0)
        for dr in range(-BLUR, BLUR + 1):
            for dc in range(-BLUR, BLUR + 1):
                total += img[row + dr, col + dc]
        out[row, col] = total / (2 * BLUR + 1) ** 2


expect_failure(KernelDiagnosed, puzzles.check, "ch03_blur", blur_without_edge_test)

# %% [markdown]
# ## Exercise: matrix multiplication
#
# One thread per output element, each reading a whole row of `m` and a whole column of `n`. Row
# `row` of `m` is contiguous; column `col` of `n` is not, but at each `k` the lanes of a warp read
# neighbouring elements of one row of `n`, which is what coalescing needs.

# %% [markdown] statement:ch03_matmul

# %% kernel:ch03_matmul

# %%
puzzles.show("ch03_matmul", matmul_kernel, view="counts", case=1)

# %%
puzzles.check("ch03_matmul", matmul_kernel)

# %% [markdown]
# ## Measure it
#
# On a GPU: each variant is first checked against NumPy at several block sizes, then timed with
# CUDA events on arrays of 256 MiB and more, far larger than the caches. The ceiling is a plain
# device-to-device copy measured in the same run; the row marked "(peer)" is what you would call
# instead (CuPy's `add`, or PyTorch's where CuPy is missing), timed in the same run too. Block sizes
# are searched on your GPU the first time and cached: the table shows the winner in brackets. The
# goal for the best vector add is 90% of the copy.
#
# What "the copy" means for a Numba kernel: the ceiling is `cudaMemcpy`, and even a plain copy
# kernel written in Numba falls short of it on the fastest GPUs. Each thread moves 4 bytes per load,
# so there are more instructions per byte. The table has two rows for this:
#
# - `copy in Numba, 4-byte loads`: a grid-stride copy;
# - `copy in Numba, 8-byte loads`: the same kernel on the arrays viewed as `complex64`.
#
# Measured with 256 MiB:
#
# | Numba copy kernel | of `cudaMemcpy`, H100 | of `cudaMemcpy`, H200 |
# |---|---|---|
# | one 4-byte load per trip | 79% | 74% |
# | four 4-byte loads in flight per trip | | 90% |
# | one 8-byte load per trip | 94% | 93% |
#
# So a kernel that keeps several loads in flight, as the grid-stride x4 variant does, beats the plain
# copy kernel and is about as close as 4-byte loads get.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch02.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Vector add (ch. 2)")
    rows3 = ch03.benchmark()
    print(timing.table(rows3))
    timing.bar_chart([r for r in rows3 if not r.flops], title="Images (ch. 3)")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary(("pmpp-02", "pmpp-03"))
