# %% [markdown]
# # Transformer kernels 5: the backward pass
#
# The previous notebooks built every kernel of a GPT-2 forward pass and a few backward ones
# (LayerNorm, GELU, cross-entropy fused with the softmax, the embeddings, AdamW). Training needs the
# rest: the gradient of every linear layer and of attention. This notebook writes them, then
# assembles the whole model's backward pass from the course's kernels and checks it, at every
# parameter, against a float64 NumPy reference: the **gradient check**.
#
# The rules of the backward pass are the chain rule, one operation at a time, walking the forward
# backwards. For a product `Y = X W` (`X` is `N x C_in`, `W` is `C_in x C_out`):
#
# ```
# dX = dY W^T        (N x C_out) (C_out x C_in): the same product with W read transposed
# dW = X^T dY        (C_in x N) (N x C_out): a sum over the N rows, every position of the batch
# db = sum_n dY[n]   the bias was added to every row, so its gradient sums them
# ```
#
# A residual connection `y = x + f(x)` passes the gradient on to `x` unchanged and through `f`; the
# two are added: its backward is the residual add you already have.
#
# The ladder:
#
# 1. the linear layer: `dX`, then `dW` tiled like the forward, then `dW` with the rows split across
#    blocks (atomics), then the bias gradient with atomics and without (deterministic);
# 2. attention: `dP = dO V^T`, the softmax backward on a row, then `dQ`, `dK` and `dV`;
# 3. the gradient check of the whole model.

# %% setup

# %%
import math  # noqa: F401  (the attention kernel cells use math.sqrt)

import numba
import numpy as np
from numba import cuda

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, WrongAnswer, expect_failure
from puzzles.llm import backward as bw
from puzzles.llm.backward import *  # its constants:
from puzzles.llm.training import gradcheck, kernels, reference

# TILE = 4: matrix-product tiles in the puzzles (16 on the GPU); TPB = 32 threads in the
# one-dimensional kernels; SPLIT_ROWS = 8 rows per block in the split weight gradient; HS_MAX = 16,
# the head size the flash backward's per-thread accumulators hold

# %% [markdown]
# ## dX = dY W^T
#
# The forward's tiled product read `w[c0 + ty, o]`: row `c0 + ty` of `W`, the block's columns. The
# backward needs `W^T`. Reading `w` down its columns would make neighbouring threads read addresses
# `C_out` floats apart (uncoalesced); instead, load the tile along `w`'s rows as stored, and do the
# transpose when reading shared memory, where any order is cheap.

# %% [markdown] statement:llm5_matmul_nt

# %% kernel:llm5_matmul_nt

# %%
puzzles.check("llm5_matmul_nt", matmul_nt)

# %% [markdown]
# ## dW = X^T dY
#
# Now the sum runs over the rows: both operands are read along their rows, a tile of `TILE` rows at
# a time, and each thread owns one element of `dW`.

# %% [markdown] statement:llm5_matmul_tn

# %% kernel:llm5_matmul_tn

# %%
puzzles.check("llm5_matmul_tn", matmul_tn)

# %% [markdown]
# ## More blocks: split the rows
#
# At training sizes `N` (batch times positions) is thousands and `dW` is small: `C x C` is 64 x 64 at
# the course's model size, sixteen 16 x 16 tiles, sixteen blocks for a GPU with 132 multiprocessors.
# Splitting the sum over `N` across blocks gives the GPU work, at the price of several blocks adding
# to the same element.

# %% [markdown] statement:llm5_matmul_tn_split

# %% kernel:llm5_matmul_tn_split

# %%
puzzles.check("llm5_matmul_tn_split", matmul_tn_split)

# %% [markdown]
# The classic mistake, `out[c, o] += acc`: the checker runs blocks in a shuffled order and sees two
# of them read and write the same element with nothing ordering them.


# %%
@cuda.jit
def dw_no_atomic(out, a, b):
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    b_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    c = cuda.blockIdx.y * TILE + ty
    K, cols = a.shape
    outs = b.shape[1]
    ac = cuda.blockIdx.y * TILE + tx
    start = cuda.blockIdx.z * SPLIT_ROWS
    stop = min(K, start + SPLIT_ROWS)
    acc = np.float32(0.0)
    for k0 in range(start, stop, TILE):
        a_t[ty, tx] = a[k0 + ty, ac] if k0 + ty < stop and ac < cols else np.float32(0.0)
        b_t[ty, tx] = b[k0 + ty, o] if k0 + ty < stop and o < outs else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[kk, ty] * b_t[kk, tx]
        cuda.syncthreads()
    if c < cols and o < outs:
        out[c, o] += acc  # a race between the row blocks


expect_failure(KernelDiagnosed, puzzles.check, "llm5_matmul_tn_split", dw_no_atomic, seed=0)

# %% [markdown]
# ## The bias gradient
#
# `db` sums `dY` over the rows: a reduction per column. With atomics, each thread sums a strip of
# rows and adds it with one atomic; the result depends on the order the atomics land in (float
# addition is not associative), so two runs can differ in the last bits. Without atomics, one
# block per column reduces in two stages (PMPP chapter 10): the same bits every run.

# %% [markdown] statement:llm5_bias_grad_atomic

# %% kernel:llm5_bias_grad_atomic

# %%
puzzles.check("llm5_bias_grad_atomic", bias_grad_atomic)

# %% [markdown] statement:llm5_bias_grad_two_stage

# %% kernel:llm5_bias_grad_two_stage

# %%
puzzles.check("llm5_bias_grad_two_stage", bias_grad_two_stage)

# %% [markdown]
# ## Attention backward
#
# The forward (per head, causal): `S = scale Q K^T` with `scale = 1 / sqrt(hs)`, masked above the
# diagonal; `P = softmax(S)` by rows; `O = P V`. Backwards, from `dO`:
#
# ```
# dP = dO V^T            dV = P^T dO
# dS = P * (dP - rowsum(P * dP))        the softmax backward
# dQ = scale dS K        dK = scale dS^T Q
# ```
#
# The forward saved `P` (a `T x T` matrix per head; the flash-style forward saves only each row's
# maximum and sum and recomputes `P`, which is where a fused backward would go next). Above the
# diagonal nothing exists: the cases fill those entries of `P`, `dP` and `dS` with NaN, so a
# backward that forgets the mask reads them and fails.

# %% [markdown] statement:llm5_attn_backward_dp

# %% kernel:llm5_attn_backward_dp

# %%
puzzles.check("llm5_attn_backward_dp", attn_backward_dp)

# %% [markdown]
# The softmax's backward is not element-wise: `p_j = exp(s_j) / sum_k exp(s_k)` depends on every
# score of its row, so `dp_j / ds_k = p_j ([j == k] - p_k)`, and the chain rule gives
# `ds_k = p_k (dp_k - sum_j p_j dp_j)`. The row's dot product `sum_j p_j dp_j` is computed once per
# row. Forgetting it (`ds = p * dp`) is the classic mistake:

# %% [markdown] statement:llm5_softmax_backward

# %% kernel:llm5_softmax_backward

# %%
puzzles.check("llm5_softmax_backward", softmax_backward)


# %%
@cuda.jit
def softmax_backward_no_dot(ds, p, dp):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    b = cuda.blockIdx.y
    T = p.shape[1]
    if i < T:
        for j in range(T):
            ds[b, i, j] = p[b, i, j] * dp[b, i, j] if j <= i else np.float32(0.0)


expect_failure(WrongAnswer, puzzles.check, "llm5_softmax_backward", softmax_backward_no_dot, seed=0)

# %% [markdown] statement:llm5_attn_backward_qkv

# %% kernel:llm5_attn_backward_qkv

# %%
puzzles.check("llm5_attn_backward_qkv", attn_backward_qkv)

# %% [markdown]
# ## Flash-style: recompute, store nothing
#
# The three kernels above read and write `P`, `dP` and `dS`: three `T x T` arrays per head, 50 MB per
# layer at GPT-2 small's `T = 1024` and batch 8 with 12 heads, per array. The flash forward (notebook
# 22) never forms `P`; it can save one number per query row, the log of its softmax denominator
# `L_i`, and then `p_ij = exp(scale q_i . k_j - L_i)` is one dot product away. The row dot product of
# the softmax backward needs no row of `P` either: `sum_j p_ij dp_ij = do_i . o_i`. So the backward can
# recompute everything from `Q, K, V, O, dO, L`: more arithmetic, far fewer bytes.

# %% [markdown] statement:llm5_attn_flash_backward

# %% kernel:llm5_attn_flash_backward

# %%
puzzles.check("llm5_attn_flash_backward", attn_flash_backward)

# %% [markdown]
# ## The gradient check of the whole model
#
# `puzzles.llm.training` assembles GPT-2's forward, loss and backward from the course's kernels:
# yours for every kernel whose check passed above (and in the earlier notebooks, if run in this
# session), the course's solution for the rest. The truth is a GPT-2 written in NumPy for this course
# (`puzzles/llm/training/reference.py`), run in float64 on the same weights and batch.
#
# The tolerance, derived: float32 rounding through the whole backward chain. Rather than bound that
# by hand (a worst case far above the real error), the same formulas are run in NumPy float32 on the
# same batch, which measures what float32 costs on these inputs. The kernels sum in another order, so
# their error is of the same size, not the same value: each tensor passes when its largest error is
# at most 8 times float32 NumPy's plus `64 u` of its largest gradient (`u = 2**-24`). A wrong kernel is
# off by about the gradient's own size.
#
# On the simulator the model is tiny (one layer, `C = 8`, two heads, `T = 4`: seconds); on a GPU it
# is the training size of the next notebook (two layers, `C = 64`, four heads, `T = 64`, batch 8).

# %%
yours = kernels.learner_kernels(globals(), puzzles)
print("your kernels in the model:", sorted(yours) or "none yet (the course's solutions run)")
on_gpu = timing.skip_reason() is None
cfg = reference.CONFIGS["small" if on_gpu else "check"]
extra = dict(tile=16, B=8) if on_gpu else {}
rows = gradcheck.check(kernels.KernelBackend, cfg, kernels=yours, **extra)
print(gradcheck.report(rows))
assert all(ok for *_, ok in rows), "a gradient is off: the row marked FAIL names the parameter"

# %% [markdown]
# The check can fail: the softmax backward without its row dot product, swapped into the model, puts
# the attention's weights (`w_qkv`) far outside the tolerance.

# %%
wrong = gradcheck.check(
    kernels.KernelBackend, cfg, kernels={"softmax_backward": softmax_backward_no_dot}, **extra
)
print("\n".join(line for line in gradcheck.report(wrong).splitlines() if "FAIL" in line))
assert not all(ok for *_, ok in wrong)

# %% [markdown]
# ## Measure it
#
# On a GPU: one whole training step (forward, loss, backward, AdamW) of the next notebook's model,
# in tokens per second, with the course's kernels (tiles recompiled at 16 x 16) against PyTorch eager
# FP32 and `torch.compile` on the same model and batch, validated first (the kernels' first loss
# equals PyTorch's). The goal: at least PyTorch eager's throughput. One launch per operation and
# simple tiled products leave a lot on the table (llm.c fuses and uses cuBLAS): the table says how
# much. On a CPU machine this cell says so and does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    print(timing.table(bw.benchmark()))

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("llm-5")
