# %% [markdown]
# # Transformer kernels 2: cross-entropy, GELU, AdamW, embeddings
#
# The previous notebook built the row-wise kernels of a transformer (softmax, LayerNorm). This one
# builds the rest of the small kernels a GPT-2 training step needs, each checked against NumPy:
#
# 1. the **cross-entropy** loss over the vocabulary, then its backward pass **fused** with the
#    softmax, so that the probabilities are never written to memory;
# 2. **GELU** (the tanh approximation GPT-2 uses), forward and backward, and the **residual add**:
#    element-wise kernels with a grid-stride loop;
# 3. **AdamW**, one kernel that updates every parameter of the model in one launch, and
#    **schedule-free AdamW**, which needs no learning-rate schedule;
# 4. the **embeddings**: token plus position forward, and a backward pass where repeated tokens
#    collide: atomics first, then a **deterministic** version by buckets.
#
# All of them are memory-bound: the question for each is how many bytes it must move, and whether
# it moves more.

# %% setup

# %%
import math
import warnings

import numpy as np
from numba import cuda

import puzzles
from helpers import sim, timing
from helpers.check import KernelDiagnosed, WrongAnswer, expect_failure
from puzzles.llm import small_ops as llm2
from puzzles.llm.small_ops import *  # its constants:

# WARP = 32 lanes; FULL_MASK; ROWS_PER_BLOCK = 2 rows (warps) per block in the row-wise puzzles;
# TPB = 32 threads per block in the element-wise puzzles; UNROLL; NEG_INF; GELU_K = sqrt(2 / pi);
# GELU_C = 0.044715

# %% [markdown]
# ## Cross-entropy
#
# A language model outputs one row of logits per position, one logit per token of the vocabulary
# (50257 for GPT-2). The loss at a position whose next token is `t` is
# `-log softmax(x)_t = -(x_t - log sum_j exp(x_j))`. Computed naively, `softmax` would be written
# out (50257 floats per position) only for one of them to be read back. Instead, with the row's
# maximum `m` and `d = sum_j exp(x_j - m)` (the online softmax pair of the previous notebook),
#
# `loss = log(d) + m - x_t`.
#
# No probability is formed, nothing overflows (`d` lies in `[1, n]`), and a very negative `x_t`
# gives a large finite loss instead of `log(0)`. The tolerance: `d` carries the softmax's relative
# error `(n + 109) * 2**-24`, which `log` turns into the same absolute error, plus the roundings of
# sums of numbers as large as the logits.

# %% [markdown] statement:llm2_crossentropy_forward

# %% kernel:llm2_crossentropy_forward

# %%
puzzles.check("llm2_crossentropy_forward", crossentropy_forward)

# %% [markdown]
# ## The backward pass, fused with the softmax
#
# The gradient of `loss = log(d) + m - x_t` with respect to logit `j` is
# `exp(x_j - m) / d - [j == t] = p_j - [j == t]`: the probability, minus one at the target. Times
# the upstream gradient `dloss` (for a mean over the `rows` positions, `1 / rows`).
#
# Unfused, this is three kernels and three trips through memory: softmax (read the logits, write
# the probabilities), cross-entropy (read one probability per row), backward (read the
# probabilities, write the gradient). Fused, one kernel reads the logits twice (once for `(m, d)`,
# once to write) and writes the gradient once. At GPT-2's vocabulary and 4096 positions the
# probabilities alone would be 823 MB written and read back.

# %% [markdown] statement:llm2_crossentropy_softmax_backward

# %% kernel:llm2_crossentropy_softmax_backward

# %%
puzzles.check("llm2_crossentropy_softmax_backward", crossentropy_softmax_backward)

# %% [markdown]
# The most common slip is the one at the target column: the gradient there is `p_t - 1`, not `p_t`.


# %%
@cuda.jit
def ce_backward_no_minus_one(dlogits, losses, logits, targets, dloss, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    m = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = logits[r, j]
        if v > m:
            d = d * math.exp(m - v) + np.float32(1.0)
            m = v
        else:
            d += math.exp(v - m)
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
        dlogits[r, j] = math.exp(logits[r, j] - m) / d * dloss[r]  # p_j, also at j == target
    if lane == 0:
        losses[r] = math.log(d) + m - logits[r, targets[r]]


expect_failure(
    WrongAnswer, puzzles.check, "llm2_crossentropy_softmax_backward", ce_backward_no_minus_one, seed=0
)

# %% [markdown]
# ## GELU and the residual add
#
# GPT-2's MLP uses GELU, in the tanh approximation:
# `GELU(x) = 0.5 x (1 + tanh(k (x + c x^3)))` with `k = sqrt(2 / pi)` and `c = 0.044715`. Its
# derivative, by the product and chain rules, with `u = k (x + c x^3)`:
#
# `GELU'(x) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) k (1 + 3 c x^2)`.
#
# Element-wise kernels need only a grid-stride loop: the grid is sized to fill the GPU, and each
# thread walks the data in steps of the whole grid. The checker's grids are deliberately smaller than
# the data. Tolerance: a handful of float32 roundings and `tanhf`'s 2 ulp, relative; where `x` is very
# negative, `1 + tanh u` cancels (tanh is near -1), so an absolute `8 * 8 * 2**-24` too.

# %% [markdown] statement:llm2_gelu_forward

# %% kernel:llm2_gelu_forward

# %%
puzzles.check("llm2_gelu_forward", gelu_forward)

# %% [markdown] statement:llm2_gelu_backward

# %% kernel:llm2_gelu_backward

# %%
puzzles.check("llm2_gelu_backward", gelu_backward)

# %% [markdown]
# Forgetting the chain rule through `u` (the factor `k (1 + 3 c x^2)`) is wrong everywhere but
# far out in the tails, where `1 - tanh^2 u` is 0 anyway:


# %%
@cuda.jit
def gelu_backward_no_chain(dx, x, dout, n):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        v = x[i]
        th = math.tanh(GELU_K * (v + GELU_C * v * v * v))
        dx[i] = dout[i] * (
            np.float32(0.5) * (np.float32(1.0) + th) + np.float32(0.5) * v * (np.float32(1.0) - th * th)
        )
        i += step


expect_failure(WrongAnswer, puzzles.check, "llm2_gelu_backward", gelu_backward_no_chain, seed=0)

# %% [markdown]
# The residual connection adds a block's input to its output: `out = a + b`, three arrays through
# memory for one addition. It is the clearest case for fusion (adding inside the kernel that produced
# `b` saves a full write and read); the fusion notebook measures that.

# %% [markdown] statement:llm2_residual_add

# %% kernel:llm2_residual_add

# %%
puzzles.check("llm2_residual_add", residual_add)

# %% [markdown]
# ## AdamW
#
# Adam keeps two running averages per parameter: `m` of the gradient and `v` of its square. Both
# start at 0, so for the first steps they are biased towards 0 by a factor `1 - beta^t` (at step 1,
# `m = (1 - beta1) g` exactly). Dividing by it, the **bias correction**, fixes that; `t` counts steps
# from 1. Then each parameter moves by `lr * m_hat / (sqrt(v_hat) + eps)`: a step whose size does not
# depend on the gradient's scale.
#
# AdamW's "W" (Loshchilov and Hutter, 2019) is **decoupled weight decay**: the weight is shrunk by
# `lr * wd * p` directly. Adding `wd * p` to the gradient instead (L2 regularisation) sends the decay
# through `m` and `v`, where the division by `sqrt(v_hat)` rescales it differently for every
# parameter. GPT-2 training decays the matrices but not the biases or LayerNorm parameters.
#
# A model has hundreds of parameter tensors. One kernel launch per tensor costs a launch each (and
# many are tiny); instead, every parameter lives in one flat buffer, the tensors to decay first, and
# one grid-stride kernel updates all of them: `i < n_decay` says whether element `i` decays. Each
# element needs its `p`, `g`, `m`, `v` read once and `p`, `m`, `v` written once: 28 bytes per
# parameter, 3.5 GB for GPT-2 small's 124M. That is the whole cost, so the goal is the copy's speed.
#
# The checker's cases include the first step (where a bias correction computed with `t - 1` divides
# by zero) and tiny gradients (where `v_hat` is near `eps^2` and where `eps` goes matters).

# %% [markdown] statement:llm2_adamw

# %% kernel:llm2_adamw

# %%
puzzles.check("llm2_adamw", adamw)

# %% [markdown]
# Counting steps from 0 is the classic bias-correction slip: at the first step `1 - beta^0 = 0`.


# %%
@cuda.jit
def adamw_step_from_zero(
    p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n
):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    b1 = np.float32(beta1)
    b2 = np.float32(beta2)
    c1 = np.float32(1.0 - beta1 ** (step - 1))
    c2 = np.float32(1.0 - beta2 ** (step - 1))
    while i < n:
        g = grads[i]
        mi = b1 * m[i] + (np.float32(1.0) - b1) * g
        vi = b2 * v[i] + (np.float32(1.0) - b2) * g * g
        p = params[i]
        wd = np.float32(weight_decay) if i < n_decay else np.float32(0.0)
        p_out[i] = p - np.float32(lr) * ((mi / c1) / (math.sqrt(vi / c2) + np.float32(eps)) + wd * p)
        m_out[i] = mi
        v_out[i] = vi
        i += stride


with warnings.catch_warnings():  # the simulator's float32 divides by zero, quietly
    warnings.simplefilter("ignore", RuntimeWarning)
    expect_failure(WrongAnswer, puzzles.check, "llm2_adamw", adamw_step_from_zero, seed=0)

# %% [markdown]
# ## Schedule-free AdamW
#
# AdamW reaches its best loss only with a learning-rate **schedule**: a warmup, then a decay to zero
# at a step count fixed before the run starts. Stop early and the decay has not happened; train
# longer and you must start again. Schedule-free AdamW (Defazio et al., 2024, "The Road Less
# Scheduled") needs no schedule. It keeps two sequences per parameter: `z` takes plain steps at a
# constant learning rate, and `x` is a running average of the `z`'s, weighted by `lr_t^2` so that the
# small warmup steps count less (`c = lr_t^2 / sum_i lr_i^2`). Averaging does what the decay did: it
# damps the noise of the late steps. Each gradient is taken at `y = (1 - beta1) z + beta1 x`, a
# point between them, which gives the effect of momentum without a first moment `m`: `beta1` is now
# an interpolation weight.
#
# Adam's second moment `v` stays, with its bias correction folded into the step size:
# `lr_t = lr * min(1, t / warmup) * sqrt(1 - beta2^t)`. Weight decay is decoupled as in AdamW, and
# taken at `y`, where the gradient was. **Evaluate at `x`**: validation, sampling and the saved
# model use `x`; `y` is only where gradients are taken (notebook 25 trains with it and compares the
# loss curves). The same flat buffer and grid-stride loop as AdamW: four arrays in (`z`, `x`, `v`, the
# gradient), four out (`y`, `z`, `x`, `v`). The host keeps `weight_sum`, the sum of `lr_i^2` so far.

# %% [markdown] statement:llm2_sf_adamw

# %% kernel:llm2_sf_adamw

# %%
puzzles.check("llm2_sf_adamw", sf_adamw)

# %% [markdown]
# The slip of a learner who knows Adam: taking the next gradient at `z` (the sequence that steps)
# instead of at `y`. The update of `z` and `x` is right; the parameters handed to the model are not.


# %%
@cuda.jit
def sf_adamw_gradient_at_z(
    y_out, z_out, x_out, v_out, z, x, v, grads, lr, beta1, beta2, eps, weight_decay, step, warmup,
    weight_sum, n_decay, n,
):  # fmt: skip
    sched = min(1.0, step / warmup) if warmup > 0 else 1.0
    lr_t = lr * sched * math.sqrt(1.0 - beta2**step)
    c = np.float32(lr_t * lr_t / weight_sum)
    b1 = np.float32(beta1)
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        zi = z[i]
        xi = x[i]
        g = grads[i]
        y = (np.float32(1.0) - b1) * zi + b1 * xi
        vi = np.float32(beta2) * v[i] + np.float32(1.0 - beta2) * g * g
        wd = np.float32(weight_decay) if i < n_decay else np.float32(0.0)
        zn = zi - np.float32(lr_t) * (g / (math.sqrt(vi) + np.float32(eps)) + wd * y)
        xn = (np.float32(1.0) - c) * xi + c * zn
        y_out[i] = zn  # the model gets z: its next gradient is taken at the wrong point
        z_out[i] = zn
        x_out[i] = xn
        v_out[i] = vi


expect_failure(WrongAnswer, puzzles.check, "llm2_sf_adamw", sf_adamw_gradient_at_z, seed=0)

# %% [markdown]
# ## Embeddings
#
# GPT-2's input is the sum of a token embedding and a position embedding:
# `out[i] = wte[tokens[i]] + wpe[i % T]` for the `n = B * T` positions of a batch of `B` sequences
# of length `T`. A gather: each output row is two rows read from tables. Thread `k` handles channel
# `k % C` of row `k // C`, so the threads of a warp read consecutive channels of the same row.

# %% [markdown] statement:llm2_embedding_forward

# %% kernel:llm2_embedding_forward

# %%
puzzles.check("llm2_embedding_forward", embedding_forward)

# %% [markdown]
# ## Embedding backward: collisions
#
# The backward pass scatters: `dwte[tokens[i]] += dout[i]`, `dwpe[i % T] += dout[i]`. Text repeats
# tokens ("the", ",", " ") so two positions often add into the same row of `dwte` at the same time,
# and every sequence of the batch adds into the same row of `dwpe`. Atomics make the updates safe.

# %% [markdown] statement:llm2_embedding_backward_atomic

# %% kernel:llm2_embedding_backward_atomic

# %%
puzzles.check("llm2_embedding_backward_atomic", embedding_backward_atomic)

# %% [markdown]
# Without atomics, two threads read the same `dwte` element, both add, and one write is lost. The
# checker's cases always repeat a token:


# %%
@cuda.jit
def embedding_backward_racy(dwte, dwpe, dout, tokens, n, T, C):
    k = cuda.grid(1)
    step = cuda.gridsize(1)
    while k < n * C:
        i = k // C
        c = k % C
        dwte[tokens[i], c] += dout[i, c]
        dwpe[i % T, c] += dout[i, c]
        k += step


expect_failure(
    KernelDiagnosed, puzzles.check, "llm2_embedding_backward_atomic", embedding_backward_racy, seed=0
)

# %% [markdown]
# ## Deterministic: buckets per token
#
# The atomic version is right and **not deterministic**: float additions happen in whatever order
# the threads arrive, and float addition is not associative, so two runs can differ in the last
# bits. The simulator, running blocks in a different order per seed, shows it:

# %%
rng = np.random.default_rng(3)
B, T, C, V = 8, 8, 4, 3  # 64 positions, 3 distinct tokens: many collisions
n = B * T
tokens = rng.integers(0, V, n).astype(np.int32)
dout = rng.normal(0, 1, (n, C)).astype(np.float32)
grads = []
for seed in (1, 2, 3):
    dwte, dwpe = np.zeros((V, C), np.float32), np.zeros((T, C), np.float32)
    # the module's reference kernel, so that this cell runs before your exercise is solved too
    sim.launch(
        llm2.embedding_backward_atomic,
        8,
        TPB,
        [dwte, dwpe, dout, tokens, n, T, C],
        block_order="shuffle",
        seed=seed,
    )
    grads.append(dwte)
print("dwte identical across runs:", all(np.array_equal(grads[0], g) for g in grads[1:]))
print("largest difference:", max(float(np.abs(grads[0] - g).max()) for g in grads[1:]))

# %% [markdown]
# For a deterministic sum, give every output element one owner that adds its terms in a fixed order.
# The tokens are known on the host before the backward pass starts (they are the input), so the CPU
# can group the positions by token while the GPU runs the forward pass: `bucket_tokens` sorts the
# positions by token (stably, so each bucket lists its positions in order). Then one thread per
# (bucket, channel) sums its bucket's rows of `dout` and writes `dwte[token, c]` once; the positions'
# sums over the batch need no buckets at all (position `t` is rows `t, T + t, 2T + t, ...`).

# %%
example = np.array([5, 2, 5, 7, 2, 5], np.int32)
ex_order, ex_start, ex_token = llm2.bucket_tokens(example)
print("tokens      ", example)
print("order       ", ex_order)
print("bucket_start", ex_start)
print("bucket_token", ex_token)

# %% [markdown] statement:llm2_embedding_backward_buckets

# %% kernel:llm2_embedding_backward_buckets

# %%
puzzles.check("llm2_embedding_backward_buckets", embedding_backward_buckets)

# %%
order, bucket_start, bucket_token = llm2.bucket_tokens(tokens)
det = []
for seed in (1, 2, 3):
    dwte, dwpe = np.zeros((V, C), np.float32), np.zeros((T, C), np.float32)
    sim.launch(
        llm2.embedding_backward_buckets,
        (1, len(bucket_token) + T),
        TPB,
        [dwte, dwpe, dout, order, bucket_start, bucket_token, len(bucket_token), B, T, C],
        block_order="shuffle",
        seed=seed,
    )
    det.append(dwte)
print("bucketed dwte identical across runs:", all(np.array_equal(det[0], g) for g in det[1:]))
print("agrees with the atomic version:", np.allclose(det[0], grads[0], rtol=1e-5, atol=1e-5))

# %% [markdown]
# The price: a sort on the host, and load balance. A token that fills 30% of the batch gives one
# thread per channel 30% of all rows to add, while the others finish at once; llm.c splits large
# buckets across warps for that reason.
#
# ## Measure it
#
# On a GPU, each kernel is validated against NumPy on fresh data, then timed at GPT-2 small's sizes:
# the fused cross-entropy over 4096 rows of 50257 logits, GELU and the residual add over 64 Mi
# floats, AdamW over 124M parameters in place, and the embeddings for 8 sequences of 1024 tokens.
# The ceiling is a device-to-device copy in the same run; where PyTorch is installed its kernels run
# on the same data in float32 (TF32 off: `torch.backends.cuda.matmul.allow_tf32 = False`,
# `torch.backends.cudnn.allow_tf32 = False`): `F.cross_entropy` forward and backward,
# `F.gelu(approximate="tanh")` and its backward, `a + b`, and `torch.optim.AdamW(fused=True)`. Goals:
# AdamW at 80% of the copy and at least as fast as PyTorch's fused AdamW. On a CPU machine this cell
# says so and does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = llm2.benchmark()
    print(timing.table(rows))
    for name, against, ratio, need, met in llm2.goals(rows):
        verdict = "missing" if ratio is None else f"{ratio:.2f} (goal {need:.2f}): {met}"
        print(f"{name} vs {against}: {verdict}")
    timing.bar_chart(rows, title="Cross-entropy, GELU, AdamW, embeddings (float32)")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("llm-2")
