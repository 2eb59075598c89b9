# %% [markdown]
# # Transformer kernels 4: a GPT-2 block from your kernels
#
# A GPT-2 model is an embedding, twelve identical **blocks**, a final LayerNorm and a projection to
# the vocabulary. Each block maps the residual stream `x` (`B` sequences of `T` tokens, `C` channels)
# to a new one:
#
# ```
# h = x + proj(attention(ln1(x)))        causal self-attention, NH heads of hs = C / NH channels
# y = h + fcproj(gelu(fc(ln2(h))))       an MLP: C -> 4C -> C
# ```
#
# Everything in it is a kernel this course has built: LayerNorm, GELU and the residual add
# (*Transformer kernels 1 and 2*), the tiled matrix product (PMPP chapter 5) for the four linear
# layers, and attention (*Transformer kernels 3*). This notebook adds what is missing to assemble them
# (a linear layer with a bias, and two small kernels that move the heads in and out of the layout
# attention wants), then **fuses** the memory-bound steps, counts the bytes each version moves, and
# checks the whole block against NumPy on random weights.
#
# GPT-2 small has `C = 768`, `NH = 12` heads of 64, and a context of `T = 1024`; on the simulator
# the same code runs at `C = 16` with two heads.

# %% setup

# %%
import math

import numba
import numpy as np
from numba import cuda

import puzzles
from helpers import timing
from helpers.check import WrongAnswer, expect_failure
from puzzles.llm import gpt2_block as gb
from puzzles.llm.gpt2_block import *  # its constants:

# TILE = 4: matrix-product tiles in the puzzles (16 on the GPU); WARP; FULL_MASK; EPS = 1e-5,
# LayerNorm's epsilon; GELU_K, GELU_C: GPT-2's GELU; ROWS_PER_BLOCK
gelu_tanh = gb.gelu_tanh  # GPT-2's GELU, a device function the kernels below call

# %% [markdown]
# ## The linear layer
#
# GPT-2 stores a linear layer's weight as `(C_in, C_out)`, so `out = inp @ w + bias`. The product
# is the tiled one of PMPP chapter 5: each block computes a `TILE x TILE` patch of `out`, walking the
# inner dimension a tile at a time through shared memory; the bias is added once, at the end.

# %% [markdown] statement:llm4_linear

# %% kernel:llm4_linear

# %%
puzzles.check("llm4_linear", linear)

# %% [markdown]
# ## Heads in and out
#
# The QKV product gives, for every token, one row `[q | k | v]` with the heads side by side inside
# each part. Attention wants each head's `(T, hs)` matrices contiguous, as the kernels of
# *Transformer kernels 3* read them: `(B * NH, T, hs)`. Two copy kernels move the data there and
# back. (A production kernel reads the strided layout directly and saves both copies; here they
# keep each kernel simple, and the byte count below shows what they cost.)

# %% [markdown] statement:llm4_split_heads

# %% kernel:llm4_split_heads

# %%
puzzles.check("llm4_split_heads", split_heads)

# %% [markdown] statement:llm4_merge_heads

# %% kernel:llm4_merge_heads

# %%
puzzles.check("llm4_merge_heads", merge_heads)

# %% [markdown]
# ## Why fuse
#
# Count what each step of the block must read and write, at least once each, against the work it
# does. The four linear layers do `2 C_in` FLOPs per output element, hundreds per byte at `C = 768`:
# their time is arithmetic. Everything else (LayerNorm, GELU, the residual adds, the head copies)
# does a few FLOPs per element: its time is the bytes it moves, so the only way to make it faster is
# to move fewer bytes. Two neighbours that each read and write a whole `N x C` array can become one
# kernel that keeps the intermediate in registers:
#
# - **the product, the bias and GELU**: the MLP's first layer writes its `N x 4C` pre-activation and
#   GELU reads it straight back; applied in the product's epilogue, GELU costs no memory traffic;
# - **the residual add and the LayerNorm after it**: the add writes `h` and LayerNorm reads it; one
#   kernel reads `x` and `proj` once, writes `h` (the last residual add needs it) and `ln2(h)`;
# - **attention**, fused in *Transformer kernels 3*: the `T x T` scores and weights never exist.
#
# ## Fused: the product with a GELU epilogue

# %% [markdown] statement:llm4_linear_gelu

# %% kernel:llm4_linear_gelu

# %%
puzzles.check("llm4_linear_gelu", linear_gelu)

# %% [markdown]
# GPT-2 uses the tanh approximation of GELU, not the exact `x * Phi(x)` with the error function.
# They differ by up to about `5e-4`: small, but a model trained with one and run with the other is a
# different model, and the check sees it:


# %%
@cuda.jit
def linear_gelu_erf(out, inp, w, bias):
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    w_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    n = cuda.blockIdx.y * TILE + ty
    rows, cin = inp.shape
    cout = w.shape[1]
    acc = np.float32(0.0)
    for c0 in range(0, cin, TILE):
        a_t[ty, tx] = inp[n, c0 + tx] if n < rows and c0 + tx < cin else np.float32(0.0)
        w_t[ty, tx] = w[c0 + ty, o] if c0 + ty < cin and o < cout else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[ty, kk] * w_t[kk, tx]
        cuda.syncthreads()
    if n < rows and o < cout:
        z = acc + bias[o]
        # the exact GELU, with erf
        out[n, o] = np.float32(0.5) * z * (np.float32(1.0) + math.erf(z / math.sqrt(np.float32(2.0))))


expect_failure(WrongAnswer, puzzles.check, "llm4_linear_gelu", linear_gelu_erf)

# %% [markdown]
# ## Fused: the residual add and LayerNorm
#
# One warp per row, as in *Transformer kernels 1*. Each lane adds its elements of `x` and `y`, writes
# them to `res`, and sums them; `shfl_xor_sync` combines the 32 partial sums so that every lane has
# the total. The second pass reads back `res`: each lane reads only the elements it wrote itself, so
# no barrier is needed.

# %% [markdown] statement:llm4_residual_layernorm

# %% kernel:llm4_residual_layernorm

# %%
puzzles.check("llm4_residual_layernorm", residual_layernorm)

# %% [markdown]
# Why two passes: the one-pass formula `var = E[h^2] - E[h]^2` subtracts two numbers of about
# `300^2 = 90000` to get a variance of about 1. float32 keeps 7 digits, so the difference has almost
# none left. The cases include rows with a mean of 300 (a residual stream that drifted), and the
# one-pass kernel fails on them:


# %%
@cuda.jit
def residual_layernorm_one_pass(res, out, mean, rstd, x, y, weight, bias, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    s = np.float32(0.0)
    s2 = np.float32(0.0)
    for j in range(lane, cols, WARP):
        h = x[r, j] + y[r, j]
        res[r, j] = h
        s += h
        s2 += h * h
    for off in (16, 8, 4, 2, 1):
        s += cuda.shfl_xor_sync(FULL_MASK, s, off)
        s2 += cuda.shfl_xor_sync(FULL_MASK, s2, off)
    mu = s / np.float32(cols)
    rs = np.float32(1.0) / math.sqrt(s2 / np.float32(cols) - mu * mu + EPS)
    for j in range(lane, cols, WARP):
        out[r, j] = (res[r, j] - mu) * rs * weight[j] + bias[j]
    if lane == 0:
        mean[r] = mu
        rstd[r] = rs


expect_failure(WrongAnswer, puzzles.check, "llm4_residual_layernorm", residual_layernorm_one_pass)

# %% [markdown]
# ## The block, assembled
#
# `gb.block_plan` lists the block's launches in order, each with its kernel, grid, block and
# arguments (arrays by name); `gb.run_block` launches them. The op-by-op plan uses one kernel per
# operation and the naive attention; the fused plan uses the two kernels above and the register-tiled
# FlashAttention-style kernel. LayerNorm, GELU and the residual add are the kernels of
# *Transformer kernels 1 and 2* (`layernorm_forward`, `gelu_forward`, `residual_add`), as they are.

# %%
B, T, C, NH = 2, 7, 16, 2
for fused in (False, True):
    print("fused" if fused else "op by op")
    for label, kernel, grid, block, _ in gb.block_plan(B, T, C, NH, fused):
        print(f"   {label:28s} {gb.kernel_name(kernel):22s} grid {grid}, block {block}")

# %% [markdown]
# ## Validation against NumPy
#
# Random weights drawn as GPT-2 initialises them (normal, standard deviation 0.02, the output
# projections scaled down by `sqrt(2)`; LayerNorm's weight and bias perturbed from 1 and 0 so that a
# kernel ignoring them is caught). The truth is `gb.block_ref` in float64.
#
# The tolerance comes from float32 itself: the same formulas evaluated by NumPy in float32 differ
# from float64 by the rounding that float32 arithmetic costs on these very inputs. Our kernels round
# as often but sum in another order, so their error is of the same size, not the same values: the
# check allows 8 times NumPy's float32 error.

# %%
rng = np.random.default_rng(0)
params = gb.random_block_params(rng, C)
x = rng.normal(0, 1, (B, T, C)).astype(np.float32)
truth = gb.block_ref(x, params, NH)
tol = gb.block_tolerance(x, params, NH)
for fused in (False, True):
    got = gb.gpt2_block(x, params, NH, fused)
    err = float(np.abs(got - truth).max())
    print(f"{'fused' if fused else 'op by op':9s} largest error {err:.2e}   tolerance {tol:.2e}")
    if not err <= tol:
        raise AssertionError(f"the block differs from NumPy by {err:.3g} > {tol:.3g}")

# %% [markdown]
# The cell above runs the module's kernels (the same code as the cells of this notebook). With yours,
# by name: the kernels you wrote above replace the module's in the fused plan. (Where one of them is
# still a stub, the block's output is NaN: its output was never written.)

# %%
mine = dict(
    linear=linear,
    linear_gelu=linear_gelu,
    residual_layernorm=residual_layernorm,
    split_heads=split_heads,
    merge_heads=merge_heads,
)
got = gb.gpt2_block(x, params, NH, fused=True, kernels=mine)
print(f"your kernels: largest error {np.abs(got - truth).max():.2e}   tolerance {tol:.2e}")

# %% [markdown]
# A check that cannot fail proves nothing. Break the causal mask inside the block: hidden scores set
# to 0 instead of `-inf`, so every token also attends (a little) to the future. The block still
# produces finite, plausible numbers, and the attention is a small part of its output at GPT-2's
# initial scale; the comparison sees it anyway:


# %%
@cuda.jit
def scores_mask_zero(s, q, k, causal):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    if i < q.shape[1] and j < q.shape[1]:
        if causal and j > i:
            s[b, i, j] = 0.0  # exp(0 - max) > 0: the future leaks in
        else:
            acc = np.float32(0.0)
            for c in range(q.shape[2]):
                acc += q[b, i, c] * k[b, j, c]
            s[b, i, j] = acc / math.sqrt(q.shape[2])


wrong = gb.gpt2_block(x, params, NH, fused=False, kernels={"attn_scores": scores_mask_zero})
err = float(np.abs(wrong - truth).max())
print(f"largest error with the leaking mask: {err:.2e} (tolerance {tol:.2e})")
if not err > tol:
    raise AssertionError("the block's check missed a broken mask")

# %% [markdown]
# ## Bytes, op by op and fused
#
# Each launch must read each of its array arguments and write each of its outputs at least once;
# `gb.plan_bytes` counts that floor (for the naive attention it is far below what its threads
# actually request, as *Transformer kernels 3* counted). At GPT-2 small's shapes, batch 8:

# %%
B8, T8, C8, NH8 = 8, 1024, 768, 12
shapes = gb.block_shapes(B8, T8, C8, NH8)


class _Shape:
    """Stands in for an array: only its size is counted."""

    def __init__(self, shape):
        self.size = int(np.prod(shape))


totals = {}
for fused in (False, True):
    plan = gb.block_plan(B8, T8, C8, NH8, fused)
    sizes = {name: _Shape(s) for name, s in shapes.items()}
    sizes.update({name: _Shape(v.shape) for name, v in gb.random_block_params(rng, C8).items()})
    sizes.update({name + "_flat": sizes[name] for name in ("x", "h", "proj", "m", "out", "fc", "f")})
    rows = gb.plan_bytes(plan, sizes)
    totals[fused] = sum(b for _, b in rows)
    print("fused" if fused else "op by op")
    for label, nbytes in rows:
        print(f"   {label:28s} {nbytes / 2**20:8.1f} MiB")
print(f"whole block: {totals[False] / 2**20:.0f} MiB op by op, {totals[True] / 2**20:.0f} MiB fused")

# %% [markdown]
# Most of the saving is attention's `T x T` matrices; the two small fusions remove a write and a read
# of an `N x C` and an `N x 4C` array. On a GPU, the time tells the rest: the linear layers are
# arithmetic-bound and fusion cannot help them, so the measured gain depends on how fast your matrix
# product is (this course's simple tiled one is far from cuBLAS).
#
# ## Measure it
#
# On a GPU, the block at GPT-2 small's shapes (batch 8, `T = 1024`, `C = 768`, 12 heads), op by op
# and fused, each validated first against NumPy in float64 on the first sequence (with the
# tolerance above), then every launch timed on its own. The table shows each launch's bytes, time and
# achieved GB/s: the memory-bound launches should approach the device copy's rate, the products and
# attention will not. The goal: the fused block at least 1.5 times as fast as the op-by-op one,
# measured in the same run. On a CPU machine this cell says so and does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = gb.benchmark()
    print(timing.table(rows))

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("llm-4")
