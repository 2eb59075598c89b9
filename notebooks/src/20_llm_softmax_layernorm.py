# %% [markdown]
# # Transformer kernels 1: softmax and layer normalisation
#
# A transformer spends most of its FLOPs in matrix multiplications, but a good part of its *time* in
# the small row-wise kernels between them: the softmax of every attention row and of the output
# logits, and the LayerNorm before every attention and MLP block. These kernels do a handful of
# operations per element they read, so they are **memory-bound**: a fast one moves each byte once,
# and its speed is measured against a plain copy of the same bytes.
#
# This notebook builds them as ladders, each rung removing a pass over memory or a barrier:
#
# 1. softmax in three passes, one thread per row; one **block** per row with tree reductions;
#    one **warp** per row with shuffles; the **online softmax**, which finds the maximum and the
#    sum in one pass; and the row kept in registers, read once;
# 2. LayerNorm forward, two passes versus **Welford**; its backward pass, whose weight and bias
#    gradients are sums over rows (atomics, then a deterministic two-stage version); RMSNorm.
#
# Every kernel here is checked against a NumPy version computed in float64, within a tolerance
# derived from float32 arithmetic (each op file of `puzzles/llm/softmax_layernorm/` says how), on shapes
# drawn per seed: one row, one feature, widths that are not multiples of 32, rows that are fully
# masked, logits around +-100.

# %% setup

# %%
import math
import warnings

import numba
import numpy as np
from numba import cuda

import puzzles
from helpers import sim, timing
from helpers.check import KernelDiagnosed, WrongAnswer, expect_failure
from puzzles.llm import softmax_layernorm as llm1
from puzzles.llm.softmax_layernorm import *  # its constants:

# WARP = 32 lanes; FULL_MASK: every lane of the warp takes part in a shuffle; TPB = 64 threads per
# block for the block-per-row softmax; ROWS_PER_BLOCK = 2 warps (rows) per block for the warp-per-row
# kernels; PER_LANE = 8 floats per lane in the register-cached kernels; NEG_INF: float32 -inf;
# EPS = 1e-5, LayerNorm's epsilon

# %% [markdown]
# ## Softmax and its numbers
#
# `softmax(x)_j = exp(x_j) / sum_k exp(x_k)` turns a row of scores (logits) into probabilities.
# Written like that it fails in float32: `exp` overflows to `inf` above 88.7, and `inf / inf` is
# NaN; below -103 it underflows to 0, and a row of zeros divides `0 / 0`. Logits of 100 are not
# exotic (an untrained output layer over 50000 tokens, attention scores before scaling).
#
# The fix is an identity: for any constant `c`, `exp(x_j - c) / sum_k exp(x_k - c)` is the same
# softmax (the factor `exp(-c)` cancels). Take `c = m = max_k x_k`: every exponent is `<= 0`, so no
# term overflows, and the largest term is exactly `exp(0) = 1`, so the sum lies in `[1, n]` and is
# never zero.
#
# **Masked rows.** Attention masks a position by setting its score to `-inf` (`exp(-inf) = 0`). A
# row where *every* position is masked (padding) has `m = -inf` and `x - m = -inf - (-inf) = NaN`.
# Such a row has no distribution to normalise. We define its output as zeros (it attends to
# nothing), because a NaN would spread through every later sum: one padded sequence would poison
# the loss of a whole batch. (PyTorch's softmax returns NaN there; FlashAttention returns zeros.)
#
# **Tolerance.** Each output carries the rounding of `x - m`, the error of the GPU's `expf` (2 units
# in the last place), the rounding of a sum of `n` terms in whatever order the kernel adds them,
# and one division: a relative error of at most about `(n + 110) * 2**-24`, which is the check's
# `rtol`. The simulator's `math.exp` is computed in float64 and rounded to float32 (more accurate
# than the GPU), so the same bound covers both.

# %%
print(f"softmax rtol = {llm1.SOFTMAX_RTOL:.2e} for rows up to {llm1.SOFTMAX_MAX_COLS} columns")
row = np.array([100.0, 99.0, 90.0], np.float32)
with np.errstate(over="ignore", invalid="ignore"):
    print("without the max:", np.exp(row) / np.exp(row).sum())
print("with the max:   ", np.exp(row - row.max()) / np.exp(row - row.max()).sum())

# %% [markdown]
# ## Three passes, one thread per row
#
# The direct version: one thread per row, three loops over the row (maximum, sum, normalise).

# %% [markdown] statement:llm1_softmax_three_pass

# %% kernel:llm1_softmax_three_pass

# %%
puzzles.check("llm1_softmax_three_pass", softmax_three_pass)

# %% [markdown]
# Forget the maximum and every fully masked row (`0 / 0`) and every row of logits near 100
# (`inf / inf`) comes back as NaN. (The checker fills outputs with NaN before the launch, so its
# report counts a NaN the kernel wrote as "never written": either way, not a number.)


# %%
@cuda.jit
def softmax_no_max(out, x, rows, cols):
    r = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if r < rows:
        s = np.float32(0.0)
        for j in range(cols):
            s += math.exp(x[r, j])
        for j in range(cols):
            out[r, j] = math.exp(x[r, j]) / s


with warnings.catch_warnings():  # the simulator's float32 overflows, quietly
    warnings.simplefilter("ignore", RuntimeWarning)
    expect_failure(WrongAnswer, puzzles.check, "llm1_softmax_three_pass", softmax_no_max, seed=0)

# %% [markdown]
# It is correct and slow. Look at how a warp reads: its 32 threads own 32 different rows, so each
# load instruction touches 32 rows, `cols * 4` bytes apart. Almost every byte of the 32-byte
# sectors the hardware moves is wasted (the caches rescue some of it, not enough):

# %%
puzzles.show("llm1_softmax_three_pass", softmax_three_pass, view="coalescing", case=4)

# %% [markdown]
# ## One block per row
#
# Turn it around: give each row a block. Thread `t` covers columns `t, t + blockDim, ...`, so in
# every step the threads of a warp read 32 neighbouring floats (coalesced). The maximum and the sum
# are now block-wide reductions: the shared-memory tree of the reduction chapter, once with `max`
# and once with `+`, in the same shared array. The one new danger is the reuse: every thread reads
# the maximum from `part[0]` and then writes its partial sum into `part[t]`; thread 0's write must
# not overtake another thread's read, so a barrier goes between them.

# %% [markdown] statement:llm1_softmax_block

# %% kernel:llm1_softmax_block

# %%
puzzles.check("llm1_softmax_block", softmax_block)

# %% [markdown]
# Without that barrier, thread 0 (the first to finish the read) overwrites the maximum while other
# threads still need it. The simulator sees the race:


# %%
@cuda.jit
def softmax_block_no_barrier(out, x, rows, cols):
    part = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    m = NEG_INF
    for j in range(t, cols, bd):
        m = max(m, x[r, j])
    part[t] = m
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] = max(part[t], part[t + stride])
        stride //= 2
    cuda.syncthreads()
    m = part[0]
    s = np.float32(0.0)
    if m != NEG_INF:
        for j in range(t, cols, bd):
            s += math.exp(x[r, j] - m)
    part[t] = s  # no barrier since part[0] was read
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    cuda.syncthreads()
    s = part[0]
    for j in range(t, cols, bd):
        out[r, j] = math.exp(x[r, j] - m) / s if m != NEG_INF else np.float32(0.0)


expect_failure(KernelDiagnosed, puzzles.check, "llm1_softmax_block", softmax_block_no_barrier, seed=0)

# %% [markdown]
# ## One warp per row: shuffles
#
# A block per row pays for about `2 * log2(blockDim)` barriers per row. Rows of a few thousand
# columns need no more than one warp, and within a warp the reduction needs neither shared memory
# nor barriers: `cuda.shfl_xor_sync(mask, v, k)` gives each lane the `v` of lane `lane ^ k`. After
# exchanging at `k = 16, 8, 4, 2, 1` (a **butterfly**), every lane holds the maximum (or the sum) of
# all 32: unlike `shfl_down_sync`, no broadcast is needed afterwards. Several rows share a block,
# one per warp.

# %% [markdown] statement:llm1_softmax_warp

# %% kernel:llm1_softmax_warp

# %%
puzzles.show("llm1_softmax_warp", softmax_warp, view="coalescing", case=4)

# %%
puzzles.check("llm1_softmax_warp", softmax_warp)

# %% [markdown] solutions
# ### The same kernel in CUDA C++
#
# The solution above, spelled in CUDA C++ and checked on the same cases against the same spec
# (compiled for the T4 with NVRTC; run where there is a GPU).
# `math.exp` on a float32 is `expf`, `max` is `fmaxf`, `cuda.shfl_xor_sync` is `__shfl_xor_sync`.
# Minus infinity is spelled by its bits, `__int_as_float(0xff800000)`: NVRTC has no `<cmath>` to
# give `-INFINITY`.

# %% [markdown] cpp-names solutions

# %% cpp:llm1_softmax_warp solutions

# %% [markdown]
# ## The online softmax
#
# The warp version still reads each element three times: once for the maximum, once for the sum,
# once to write. The first two passes can be one (Milakov and Gimelshein, *Online normalizer
# calculation for softmax*, 2018). Keep, after the first `k` elements,
#
# - `m_k = max(x_1, ..., x_k)`, and
# - `d_k = sum_{i <= k} exp(x_i - m_k)`, the sum *relative to the current maximum*.
#
# When `x_{k+1}` arrives, `m_{k+1} = max(m_k, x_{k+1})`, and every old term must be re-expressed
# relative to the new maximum: `exp(x_i - m_{k+1}) = exp(x_i - m_k) * exp(m_k - m_{k+1})`, so
#
# `d_{k+1} = d_k * exp(m_k - m_{k+1}) + exp(x_{k+1} - m_{k+1})`.
#
# When the maximum does not change the rescale factor is 1; when it does, the old sum shrinks. By
# induction `d_n = sum_i exp(x_i - m_n)`: exactly the denominator of the three-pass version.
#
# The same algebra merges two partial results over disjoint parts of the row: with
# `m = max(m_a, m_b)`, `d = d_a * exp(m_a - m) + d_b * exp(m_b - m)`. This merge is associative and
# commutative, so the lanes can each run the recurrence over their own columns and then be merged
# by any tree, the shuffle butterfly included. Two reads per element instead of three. The same
# `(m, d)` pair, carried across tiles of keys, is what lets FlashAttention compute attention
# without ever storing the score matrix (the next notebooks).
#
# Two cases need care: a `-inf` element adds nothing (and `exp(-inf - (-inf))` is NaN, so skip it
# rather than exponentiate it), and a merge of two empty pairs (`m = -inf`) stays empty.

# %% [markdown] statement:llm1_softmax_online

# %% kernel:llm1_softmax_online

# %%
puzzles.check("llm1_softmax_online", softmax_online)

# %% [markdown]
# The classic slip is to update the maximum and forget to rescale the sum that was accumulated
# against the old one: the terms added before a new maximum arrived are too large by
# `exp(m_new - m_old)`.


# %%
@cuda.jit
def softmax_online_no_rescale(out, x, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    m = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = x[r, j]
        m = max(m, v)
        if v != NEG_INF:
            d += math.exp(v - m)  # the old d still counts against the old maximum
    offset = 16
    while offset > 0:
        m2 = cuda.shfl_xor_sync(FULL_MASK, m, offset)
        d2 = cuda.shfl_xor_sync(FULL_MASK, d, offset)
        mn = max(m, m2)
        if mn != NEG_INF:
            d = d * math.exp(m - mn) + d2 * math.exp(m2 - mn)
        m = mn
        offset //= 2
    for j in range(lane, cols, WARP):
        out[r, j] = math.exp(x[r, j] - m) / d if m != NEG_INF else np.float32(0.0)


expect_failure(WrongAnswer, puzzles.check, "llm1_softmax_online", softmax_online_no_rescale, seed=0)

# %% [markdown]
# ## The row in registers
#
# The minimum a softmax must move is one read and one write of each element. When the row is
# short enough, each lane keeps its `cols / 32` elements in a small local array: with a constant
# size and loops of constant trip count, Numba unrolls them and the array lives in registers. Then
# the classic three passes run over registers, and global memory is touched once each way. (The
# benchmark below recompiles the kernel with `PER_LANE = 32` for rows of 1024.)

# %% [markdown] statement:llm1_softmax_warp_cached

# %% kernel:llm1_softmax_warp_cached

# %%
puzzles.show("llm1_softmax_warp_cached", softmax_warp_cached, view="counts", case=4)

# %%
puzzles.check("llm1_softmax_warp_cached", softmax_warp_cached)

# %% [markdown]
# ## LayerNorm
#
# LayerNorm normalises each row (one token's features) to mean 0 and variance 1, then scales and
# shifts it with learned `weight` and `bias`:
#
# `mean = sum(x) / n`, `var = sum((x - mean)^2) / n`, `rstd = 1 / sqrt(var + eps)`,
# `out = (x - mean) * rstd * weight + bias`.
#
# The variance divides by `n` (the biased estimate, as in PyTorch and GPT-2), not `n - 1`. The
# forward pass saves `mean` and `rstd` per row: the backward pass needs them and would otherwise
# recompute them.
#
# Why two passes? The one-pass formula `var = E[x^2] - mean^2` is exact algebra and poor floating
# point: when the mean is large against the spread, it subtracts two nearly equal large numbers.
# With a mean of 1000 and a standard deviation of 1, `E[x^2]` is about `10^6`, where float32 numbers
# are `0.0625` apart, and the rounding errors of a sum of such squares are as large as the
# variance itself:

# %%
x = (1000 + np.random.default_rng(1).integers(-128, 129, 100) / 64).astype(np.float32)
mean32 = x.sum(dtype=np.float32) / np.float32(x.size)
one_pass = (x * x).sum(dtype=np.float32) / np.float32(x.size) - mean32 * mean32
two_pass = ((x - mean32) ** 2).sum(dtype=np.float32) / np.float32(x.size)
print(
    f"float64 variance {x.astype(np.float64).var():.6f}; float32 one pass {one_pass:.6f}, "
    f"two passes {two_pass:.6f}"
)

# %% [markdown] statement:llm1_layernorm_forward

# %% kernel:llm1_layernorm_forward

# %%
puzzles.check("llm1_layernorm_forward", layernorm_forward)

# %% [markdown]
# The checker's cases include rows around +-1000, so the one-pass formula is caught:


# %%
@cuda.jit
def layernorm_one_pass(out, mean, rstd, x, weight, bias, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    s = np.float32(0.0)
    q = np.float32(0.0)
    for j in range(lane, cols, WARP):
        s += x[r, j]
        q += x[r, j] * x[r, j]
    offset = 16
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        q += cuda.shfl_xor_sync(FULL_MASK, q, offset)
        offset //= 2
    mu = s / np.float32(cols)
    var = max(q / np.float32(cols) - mu * mu, np.float32(0.0))
    rs = np.float32(1.0) / math.sqrt(var + EPS)
    for j in range(lane, cols, WARP):
        out[r, j] = (x[r, j] - mu) * rs * weight[j] + bias[j]
    if lane == 0:
        mean[r] = mu
        rstd[r] = rs


expect_failure(WrongAnswer, puzzles.check, "llm1_layernorm_forward", layernorm_one_pass, seed=0)

# %% [markdown]
# ## Welford: mean and variance in one pass, stably
#
# Welford's algorithm keeps, after `k` elements, the count `k`, the mean `mu_k` and
# `M2_k = sum_{i <= k} (x_i - mu_k)^2`. A new element updates them with small numbers only:
#
# `delta = x - mu_{k-1}`, `mu_k = mu_{k-1} + delta / k`, `M2_k = M2_{k-1} + delta * (x - mu_k)`.
#
# (The last line follows from expanding `sum (x_i - mu_k)^2` around `mu_{k-1}`; nothing of size
# `mean^2` is ever formed, so nothing cancels.) Two summaries of disjoint parts merge exactly
# (Chan, Golub and LeVeque): with `delta = mu_b - mu_a` and `n = n_a + n_b`,
#
# `mu = mu_a + delta * n_b / n`, `M2 = M2_a + M2_b + delta^2 * n_a * n_b / n`,
#
# so each lane runs Welford over its columns and the butterfly merges the lanes. `var = M2 / n`.
#
# Which is faster? Welford reads the row once for the statistics but divides once per element; the
# two-pass version reads it twice. With the row held in registers (as for the softmax), the second
# pass costs no memory traffic at all, which is what fast LayerNorm kernels do for rows that fit;
# Welford is the choice when the data stream past once (very long rows, statistics over a batch).

# %% [markdown] statement:llm1_layernorm_welford

# %% kernel:llm1_layernorm_welford

# %%
puzzles.check("llm1_layernorm_welford", layernorm_welford)

# %% [markdown]
# ## LayerNorm backward
#
# With `x_hat = (x - mean) * rstd` and `out = x_hat * w + b`, the upstream gradient `dout` gives:
#
# - `dbias_j = sum over rows of dout_j` and `dweight_j = sum over rows of dout_j * x_hat_j`;
# - for the input, write `g = w * dout` (the gradient reaching `x_hat`). `x_hat` depends on every
#   `x` of its row through the mean and the variance; differentiating through both gives
#
#   `dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat))`,
#
#   where the means run over the row: the first subtracts what flows back through the mean, the
#   second what flows back through the variance.
#
# `dx` is row-wise like the forward pass (two row sums, then one pass). `dweight` and `dbias` are the
# opposite: sums over **rows**, per column, and every row's warp adds into the same `cols` totals at
# the same time. The simple answer is `cuda.atomic.add`, which makes each read-add-write indivisible.

# %% [markdown] statement:llm1_layernorm_backward

# %% kernel:llm1_layernorm_backward

# %%
puzzles.check("llm1_layernorm_backward", layernorm_backward)

# %% [markdown]
# A plain `+=` instead of the atomic loses updates when two rows add to the same column at once.
# On a GPU that is a different wrong answer each run; the simulator names the race:


# %%
@cuda.jit
def layernorm_backward_racy(dx, dweight, dbias, dout, x, mean, rstd, weight, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    mu = mean[r]
    rs = rstd[r]
    gsum = np.float32(0.0)
    gxsum = np.float32(0.0)
    for j in range(lane, cols, WARP):
        xh = (x[r, j] - mu) * rs
        g = weight[j] * dout[r, j]
        gsum += g
        gxsum += g * xh
        dweight[j] += dout[r, j] * xh  # read, add, write: another row may be doing the same
        dbias[j] += dout[r, j]
    offset = 16
    while offset > 0:
        gsum += cuda.shfl_xor_sync(FULL_MASK, gsum, offset)
        gxsum += cuda.shfl_xor_sync(FULL_MASK, gxsum, offset)
        offset //= 2
    for j in range(lane, cols, WARP):
        xh = (x[r, j] - mu) * rs
        dx[r, j] = rs * (weight[j] * dout[r, j] - gsum / np.float32(cols) - xh * gxsum / np.float32(cols))


expect_failure(KernelDiagnosed, puzzles.check, "llm1_layernorm_backward", layernorm_backward_racy, seed=0)

# %% [markdown]
# ## Determinism: the same gradient, bit for bit
#
# The atomic version is correct, but not **deterministic**: float addition is not associative
# (`(a + b) + c` and `a + (b + c)` can differ in the last bit), and the order in which blocks reach
# an atomic changes from run to run. Training twice from the same seed then gives slightly
# different weights, which makes bugs hard to reproduce. The simulator runs blocks in a shuffled
# order chosen by its seed, so three runs show it:

# %%
case = llm1.layernorm_backward_cases(np.random.default_rng(7))[0]
names = ("dx", "dweight", "dbias", "dout", "x", "mean", "rstd", "weight", "rows", "cols")
runs = []
for seed in (1, 2, 3):
    args = [case.args[n].copy() if isinstance(case.args[n], np.ndarray) else case.args[n] for n in names]
    args[1][:] = 0.0
    args[2][:] = 0.0
    # the module's reference kernel, so that this cell runs before your exercise is solved too
    sim.launch(llm1.layernorm_backward, case.grid, case.block, args, block_order="shuffle", seed=seed)
    runs.append(args[1])
print("dweight identical across runs:", all(np.array_equal(runs[0], r) for r in runs[1:]))
print("largest difference:", max(float(np.abs(runs[0] - r).max()) for r in runs[1:]))

# %% [markdown]
# The deterministic way gives every sum a fixed order, in two stages without atomics. Stage 1: the
# rows are cut into chunks; block `(bx, c)` has one thread per column, and thread `j` adds column `j`
# over the rows of chunk `c`, in order, into `dw_part[c, j]`. Neighbouring threads read neighbouring
# columns, so the loads are coalesced. Stage 2 (`column_sum`) adds the chunks of each column, in
# order. More chunks means more parallelism in stage 1 and more work in stage 2; the result is the
# same bits on every run.

# %% [markdown] statement:llm1_layernorm_param_partials

# %% kernel:llm1_layernorm_param_partials

# %%
puzzles.check("llm1_layernorm_param_partials", layernorm_param_partials)


# %%
@cuda.jit
def column_sum(out, part, chunks, cols):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if j < cols:
        s = np.float32(0.0)
        for c in range(chunks):
            s += part[c, j]
        out[j] = s


rows, cols = case.args["rows"], case.args["cols"]
chunk = 3
chunks = (rows + chunk - 1) // chunk
two_stage = []
for seed in (1, 2, 3):
    dw_part = np.zeros((chunks, cols), np.float32)
    db_part = np.zeros((chunks, cols), np.float32)
    sim.launch(
        llm1.layernorm_param_partials,
        ((cols + 31) // 32, chunks),
        32,
        [
            dw_part,
            db_part,
            case.args["dout"],
            case.args["x"],
            case.args["mean"],
            case.args["rstd"],
            rows,
            cols,
            chunk,
        ],
        block_order="shuffle",
        seed=seed,
    )
    dw = np.zeros(cols, np.float32)
    sim.launch(
        column_sum, (cols + 31) // 32, 32, [dw, dw_part, chunks, cols], block_order="shuffle", seed=seed
    )
    two_stage.append(dw)
print("two-stage dweight identical across runs:", all(np.array_equal(two_stage[0], r) for r in two_stage[1:]))
print("agrees with the atomic version:", np.allclose(two_stage[0], runs[0], rtol=1e-5, atol=1e-5))

# %% [markdown]
# ## RMSNorm
#
# RMSNorm (used by LLaMA and most recent models) drops the mean and the bias: `rstd = 1 / sqrt(
# mean(x^2) + eps)`, `out = x * rstd * weight`. One reduction instead of two. The `eps` is not a
# detail: the checker includes a row of tiny values whose mean square is far below `eps`.

# %% [markdown] statement:llm1_rmsnorm

# %% kernel:llm1_rmsnorm

# %%
puzzles.check("llm1_rmsnorm", rmsnorm_forward)

# %% [markdown]
# ## Measure it
#
# On a GPU, every softmax variant runs on 32768 rows of 1024 logits and every LayerNorm on 32768
# rows of 768 features (GPT-2 small's width), after each was checked against NumPy on fresh data
# (masked rows, logits near 100, a row of 50257 logits, rows around 1000 for LayerNorm). The bytes
# counted are the input read once and the output written once; the ceiling is a device-to-device
# copy measured in the same run. Where PyTorch is installed (Colab has it), `torch.softmax` and
# `F.layer_norm` run on the same data, in float32 (TF32 is switched off:
# `torch.backends.cuda.matmul.allow_tf32 = False`, `torch.backends.cudnn.allow_tf32 = False`; these
# two ops never use it anyway). Goals: the register-cached softmax and LayerNorm at 80% of the
# copy, and at least as fast as PyTorch's. On a CPU machine this cell says so and does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = llm1.benchmark()
    print(timing.table(rows))
    for name, against, ratio, need, met in llm1.goals(rows):
        verdict = "missing" if ratio is None else f"{ratio:.2f} (goal {need:.2f}): {met}"
        print(f"{name} vs {against}: {verdict}")
    timing.bar_chart(rows, title="Softmax (32768 x 1024) and LayerNorm (32768 x 768), float32")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("llm-1")
