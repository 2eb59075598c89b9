# %% [markdown]
# # PMPP chapter 16: deep learning
#
# A convolutional network spends nearly all its time in its **convolutional layers**. A layer
# takes a batch of `N` images of `C` channels (`x[n, c, h, w]`), holds `K` filters of `C x FS x FS`
# weights (`w[k, c, p, q]`) and one bias per filter (`b[k]`), and produces `K` output channels:
#
#     y[n, k, h, w] = b[k] + sum over c, p, q of x[n, c, h + p, w + q] * w[k, c, p, q]
#
# Here with stride 1 and no padding, so the output is `HO x WO` with `HO = H - FS + 1` (a "same"
# layer pads the input with zeros first). Like cuDNN, and unlike textbook signal processing, the
# filter is not flipped. Each output is a dot product of length `C * FS * FS`, so a layer is a lot
# of arithmetic on a little data: the chapter is about feeding that arithmetic.
#
# The ladder, in the book's order:
#
# 1. the **direct** forward pass, one thread per output element;
# 2. shared-memory **input tiles**, with the filter bank in **constant memory**;
# 3. convolution as **matrix multiplication**: unroll the input ("im2col"), then the chapter 5 tiled
#    SGEMM;
# 4. **pooling**;
# 5. the **backward pass**: the gradient with respect to the input (a gather), and the gradient with
#    respect to the weights, a reduction, first with atomics and then without.
#
# **Tolerances.** Every output here is a float32 sum. Added in any order, a float32 sum of `n` terms
# is within `n * eps * sum|terms|` of the exact sum, with `eps = 2^-24` (float32's unit roundoff).
# The module's `sum_tolerance(n, term_max)` is that bound for `n` terms of size at most `term_max`,
# and each puzzle's `atol` is it, evaluated at the largest sum its cases can produce. The reference
# is computed in float64, so the bound covers any correct summation order; a missing bias
# (`|b| >= 0.5`) or a wrong tap is thousands of times larger.

# %% setup

# %%
import numpy as np
from numba import cuda, float32

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer, expect_failure
from puzzles.pmpp import ch16_deep_learning as ch16
from puzzles.pmpp.ch16_deep_learning import *  # TILE, TPB, POOL, EPS32, BANK, BANK_BIAS, ...

print(f"forward atol = sum_tolerance({3 * 9 + 1}, 2.0) = {ch16.FWD_ATOL:.2e}")
print(f"weight-gradient atol = sum_tolerance({2 * 18 * 10}, 2.0) = {ch16.WGRAD_ATOL:.2e}")

# %% [markdown]
# ## The direct forward pass
#
# One thread per output element. The output has four dimensions and a grid has three, so the two
# spatial ones go to x and y (tiles of `TILE x TILE` threads) and the (image, filter) pair is
# numbered along z: `blockIdx.z = n * K + k`. The cases draw every size: one image or two, one
# channel or three, 1x1, 2x2 and 3x3 filters, outputs one short of a tile, one past it, not square.

# %% [markdown] statement:ch16_conv_forward

# %% kernel:ch16_conv_forward

# %%
puzzles.show("ch16_conv_forward", conv_forward, view="counts")

# %%
puzzles.check("ch16_conv_forward", conv_forward)

# %% [markdown]
# Forgetting the bias is the most common slip, and the cases make it visible: every bias is at
# least 0.5 in size, thousands of times the tolerance.


# %%
@cuda.jit
def forward_no_bias(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < y.shape[2] and col < y.shape[3]:
        acc = float32(0.0)
        for c in range(x.shape[1]):
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += x[n, c, row + p, col + q] * w[k, c, p, q]
        y[n, k, row, col] = acc


expect_failure(WrongAnswer, puzzles.check, "ch16_conv_forward", forward_no_bias)

# %% [markdown]
# Count the traffic of the direct kernel: each output reads `C * FS * FS` inputs and as many weights,
# two global loads per multiply-add. Neighbouring outputs share most of their inputs, and every
# thread of a block reads the same weights at the same moment. Both are reuse the kernel leaves to
# the caches.
#
# ## Input tiles in shared memory, the filter bank in constant memory
#
# The weights of a trained layer do not change during inference, every thread of a warp reads the
# same weight at the same moment, and a small layer's bank fits in the 64 KB of constant memory: the
# broadcast case constant memory serves in one read. In Numba, `cuda.const.array_like(BANK)` bakes
# the module's array `BANK` into the kernel when it is compiled (CUDA C would copy it with
# `cudaMemcpyToSymbol`).
#
# The inputs go to shared memory: for each channel, the block loads the `IN_TILE x IN_TILE` input
# tile its `TILE x TILE` outputs need (the halo of `FS - 1` rows and columns included; its `TILE^2`
# threads loop over the `IN_TILE^2` pixels), and each thread then computes **all** `BANK_K` filters
# from it, keeping `BANK_K` sums in registers. One load of a pixel now serves up to
# `BANK_K * FS * FS` multiply-adds.

# %% [markdown] statement:ch16_conv_tiled

# %% kernel:ch16_conv_tiled

# %%
puzzles.show("ch16_conv_tiled", conv_tiled, view="counts")

# %%
puzzles.check("ch16_conv_tiled", conv_tiled)

# %% [markdown]
# A ResNet layer with `C = K = 64` and 3x3 filters has `64 * 64 * 9 * 4` bytes = 144 KiB of
# weights: more than constant memory holds. Such a layer takes its filters a chunk of `K` at a
# time, or keeps them in shared memory, as cuDNN does.
#
# ## Convolution as matrix multiplication
#
# Lay the inputs each output needs side by side and the layer becomes one matrix product. The
# **unrolled** (im2col) matrix of image `n` has one column per output pixel and one row per filter
# tap `(c, p, q)`: `xu[n, c * FS^2 + p * FS + q, h * WO + w] = x[n, c, h + p, w + q]`. The filters,
# flattened in the same order (`w.reshape(K, C * FS * FS)`), multiply it:
# `y[n] = wm @ xu[n] + b`. The price is memory: every input pixel appears up to `FS * FS` times in
# `xu`. The prize is that a matrix product is the best-tuned kernel there is.
#
# The row order must match the flattened filters exactly: a transposed tap index (`q * FS + p`)
# still fills every row, with the wrong pixels.

# %% [markdown] statement:ch16_im2col

# %% kernel:ch16_im2col

# %%
puzzles.show("ch16_im2col", im2col, view="coalescing")

# %%
puzzles.check("ch16_im2col", im2col)

# %% [markdown]
# The writes are coalesced: consecutive threads write consecutive columns of a row. The reads of
# neighbouring threads are neighbouring pixels too, except where a column wraps to the next
# output row.
#
# The matrix product is chapter 5's tiled kernel, with one image per `blockIdx.z` and the bias added
# to each row at the end:

# %% [markdown] statement:ch16_conv_gemm

# %% kernel:ch16_conv_gemm

# %%
puzzles.check("ch16_conv_gemm", conv_gemm)

# %% [markdown]
# Put together, im2col then SGEMM computes the same layer as the direct kernel:

# %%
rng = np.random.default_rng(0)
x = rng.uniform(-2, 2, (2, 3, 9, 7)).astype(np.float32)
w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
b = rng.uniform(-1, 1, 4).astype(np.float32)
ho, wo = 9 - 3 + 1, 7 - 3 + 1
xu = np.zeros((2, 27, ho * wo), np.float32)
im2col[(2, 3, 2), TPB](xu, x, 3)
y_gemm = np.zeros((2, 4, ho * wo), np.float32)
conv_gemm[(5, 1, 2), (TILE, TILE)](y_gemm, w.reshape(4, 27), xu, b)
y_direct = np.zeros((2, 4, ho, wo), np.float32)
conv_forward[(1, 1, 8), (TILE, TILE)](y_direct, x, w, b)
print("largest difference:", np.abs(y_gemm.reshape(2, 4, ho, wo) - y_direct).max())

# %% [markdown]
# ## Pooling
#
# A pooling layer shrinks each channel: here the maximum of each `POOL x POOL` window, at stride
# `POOL`. One thread per output, no reuse at all: it is a bandwidth-bound map, and frameworks fuse
# it into the layer before it.

# %% [markdown] statement:ch16_maxpool

# %% kernel:ch16_maxpool

# %%
puzzles.check("ch16_maxpool", maxpool)

# %% [markdown]
# ## The backward pass
#
# Training needs, for each layer, the gradient of the loss with respect to its input (to pass on
# to the layer before) and to its weights (to update them), given `dy`, the gradient with respect
# to its output. Differentiating the forward formula:
#
#     dx[n, c, h, w] = sum over k, p, q of dy[n, k, h - p, w - q] * w[k, c, p, q]
#     dw[k, c, p, q] = sum over n, h, w of dy[n, k, h, w] * x[n, c, h + p, w + q]
#
# The input gradient is a convolution of `dy` with the flipped filters, summed over `k`. Written as
# a **gather** (each `dx` element collects from the outputs it fed, skipping those off the edge),
# every thread owns its element and no atomics are needed:

# %% [markdown] statement:ch16_conv_dgrad

# %% kernel:ch16_conv_dgrad

# %%
puzzles.check("ch16_conv_dgrad", conv_dgrad)

# %% [markdown]
# The weight gradient is different: one weight collects from **every** output position of every
# image. With one thread per `dy` element (the natural scatter), thousands of threads add into the
# same `K * C * FS * FS` weights, so each update must be atomic.

# %% [markdown] statement:ch16_conv_wgrad_atomic

# %% kernel:ch16_conv_wgrad_atomic

# %%
puzzles.check("ch16_conv_wgrad_atomic", conv_wgrad_atomic)

# %% [markdown]
# Without the atomics, the read-modify-write of `dw[k, c, p, q] += ...` from two threads can
# interleave and lose an update. On a GPU the sum comes out a little different each run; the
# simulator names the two threads:


# %%
@cuda.jit
def wgrad_plain_add(dw, dy, x):
    col, row = cuda.grid(2)
    k_out = dy.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < dy.shape[2] and col < dy.shape[3]:
        g = dy[n, k, row, col]
        for c in range(x.shape[1]):
            for p in range(dw.shape[2]):
                for q in range(dw.shape[3]):
                    dw[k, c, p, q] += g * x[n, c, row + p, col + q]


expect_failure(KernelDiagnosed, puzzles.check, "ch16_conv_wgrad_atomic", wgrad_plain_add)

# %% [markdown]
# The atomics are correct but serialise: every thread of a block hits the same few addresses. Turn
# the computation around: give each weight its own block, let the block's threads split the
# `N * HO * WO` products among them (a grid-stride loop over the block), and add the partial sums
# with the chapter 10 tree. Each weight then has exactly one writer, and the puzzle's budget allows
# no atomics at all.

# %% [markdown] statement:ch16_conv_wgrad_reduce

# %% kernel:ch16_conv_wgrad_reduce

# %%
puzzles.show("ch16_conv_wgrad_reduce", conv_wgrad_reduce, view="counts")

# %%
puzzles.check("ch16_conv_wgrad_reduce", conv_wgrad_reduce)

# %% [markdown]
# "Fixing" a race by putting the atomics back passes on the numbers, but not the budget:


# %%
@cuda.jit
def reduce_atomic_per_thread(dw, dy, x):
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    acc = float32(0.0)
    for i in range(t, dy.shape[0] * ho * wo, TPB):
        n = i // (ho * wo)
        acc += dy[n, k, (i // wo) % ho, i % wo] * x[n, c, (i // wo) % ho + p, i % wo + q]
    if t == 0:
        dw[k, c, p, q] = float32(0.0)
    cuda.syncthreads()
    cuda.atomic.add(dw, (k, c, p, q), acc)


expect_failure(OverBudget, puzzles.check, "ch16_conv_wgrad_reduce", reduce_atomic_per_thread)

# %% [markdown]
# ## Measure it
#
# On a GPU: a ResNet-style layer, `N = 32` images, `C = K = 64` channels, 56x56, 3x3 filters with
# zero padding ("same"), run three ways after each is checked against a float64 reference on the
# first image: the direct kernel above (16x16 tiles); the tiled kernel with its filter bank in
# constant memory (144 KiB of weights do not fit in 64 KiB, so one kernel per group of 16 filters,
# each group compiled in: 36 KiB); im2col of the whole batch followed by an SGEMM from chapter 5
# (its register-tiled kernel or its two-stage one, searched on your GPU: the winner in brackets);
# and `torch.nn.functional.conv2d` (cuDNN). The FLOPs counted are the
# layer's `2 * N * K * HO * WO * C * 9`, the same for all three. cuDNN is pinned to true FP32, as
# our kernels: `torch.backends.cudnn.allow_tf32 = False` (its default is True: TF32 tensor cores,
# 10-bit mantissas) and `torch.backends.cuda.matmul.allow_tf32 = False`. Goals: the better direct
# kernel >= 30% and im2col + SGEMM >= 50% of cuDNN. On a CPU machine this cell says so and does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch16.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Conv layer N=32, C=K=64, 56x56, 3x3 (FP32)")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-16")
