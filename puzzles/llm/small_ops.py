"""Transformer kernels 2: cross-entropy (fused with the softmax backward), GELU, residual add, AdamW,
embeddings (forward, backward by atomics, backward deterministic by buckets). (Over 1000 lines:
one notebook, one module: the kernels, their derived tolerances, cases and benchmark together.)

Kernel names are stable (the GPT-2 capstone imports them). Launch shapes:

    crossentropy_forward(losses, logits, targets, rows, cols)           one warp per row
    crossentropy_softmax_backward(dlogits, losses, logits, targets, dloss, rows, cols)
                                     one warp per row: loss and d(loss)/d(logits) in one kernel
    gelu_forward(out, x, n)                          grid-stride, any grid
    gelu_backward(dx, x, dout, n)                    grid-stride, any grid
    gelu_forward_unrolled(out, x, n)                 the same, UNROLL elements per thread per round
    residual_add(out, a, b, n)                       grid-stride, any grid
    adamw(p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n)
                                     grid-stride over every parameter of the model in one flat buffer;
                                     elements [0, n_decay) get weight decay; the outputs may alias the
                                     inputs on a GPU (each element is read and written by one thread)
    adamw_unrolled(...)                              the same arguments, UNROLL elements per thread per round
    embedding_forward(out, tokens, wte, wpe, n, T, C)     grid-stride over n * C; position = i % T
    embedding_backward_atomic(dwte, dwpe, dout, tokens, n, T, C)   grid-stride; dwte, dwpe zeroed
    embedding_backward_buckets(dwte, dwpe, dout, order, bucket_start, bucket_token, n_buckets, B, T, C)
                                     block (bx, y): y < n_buckets sums one token's bucket, else one position
    bucket_tokens(tokens) -> (order, bucket_start, bucket_token)   host side (NumPy)

Tolerances (u = 2**-24, one ulp <= 2u relative; the specs are float64):

- cross-entropy: loss = m + log(d) - x_t with d the sum of exp(x - m) over the row (relative error
  (n + 109)u, as for the softmax), log's 1 ulp, and the sums of numbers as large as the logits
  (|x| <= LOGIT_MAX): CE_ATOL = (n + 109)u + 4u * LOGIT_MAX, CE_RTOL = 4u. The gradient
  (p - [j = t]) * dloss is the softmax's bound times dloss (<= DLOSS_MAX) in absolute terms (p - 1
  cancels near p = 1).
- GELU: 0.5 x (1 + tanh(k (x + c x^3))): a handful of roundings and tanhf's 2 ulp, relative 16u;
  where tanh is near -1 (x << 0) the 1 + tanh cancels, so an absolute X_MAX * 8u as well.
- AdamW: a few roundings on each of m, v and the update (relative 8u); m = b1 m + (1 - b1) g may
  cancel (absolute 16u * G_MAX).
- embeddings: the forward pass is one addition (2u); the backward sums at most n terms, in any
  order: (n + 4)u relative to the sum of the magnitudes, at most n * DOUT_MAX.

The simulator's math.exp/log/tanh/sqrt compute in float64 and round to float32 at the next float32
operation (0.5 ulp, where the GPU's expf and tanhf may be 2 ulp); the bounds above take the GPU's.
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

CHAPTER = "llm-2"

WARP = 32
FULL_MASK = 0xFFFFFFFF
ROWS_PER_BLOCK = 2  # warp-per-row kernels: rows per block in the puzzles
TPB = 32  # element-wise kernels: threads per block in the puzzles
UNROLL = 2  # unrolled kernels: elements per thread per round (the GPU benchmark uses 4)
NEG_INF = np.float32(-np.inf)
GELU_K = np.float32(math.sqrt(2.0 / math.pi))
GELU_C = np.float32(0.044715)

# what `from puzzles.llm.small_ops import *` gives a notebook: constants only, never a kernel
__all__ = ["WARP", "FULL_MASK", "ROWS_PER_BLOCK", "TPB", "UNROLL", "NEG_INF", "GELU_K", "GELU_C"]

U = 2.0**-24
CE_MAX_COLS = 256
LOGIT_MAX = 112.0
DLOSS_MAX = 2.0
CE_RTOL = 4 * U
CE_ATOL = (CE_MAX_COLS + 109) * U + 4 * U * LOGIT_MAX
CE_GRAD_ATOL = (CE_MAX_COLS + 109) * U * DLOSS_MAX
X_MAX = 8.0
GELU_RTOL = 16 * U
GELU_ATOL = X_MAX * 8 * U
G_MAX = 4.0
ADAM_RTOL = 8 * U
ADAM_ATOL = 16 * U * G_MAX
EMB_MAX_N = 64
DOUT_MAX = 4.0
EMB_RTOL = (EMB_MAX_N + 4) * U
EMB_ATOL = (EMB_MAX_N + 4) * U * EMB_MAX_N * DOUT_MAX / 4  # the collisions of one row: n / 4 at most


# ===================================================================== cross-entropy


@cuda.jit
def crossentropy_forward(losses, logits, targets, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    # -log softmax(x)_t = log(sum exp(x - m)) + m - x_t, with the online (m, d) of the softmax
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
        if mn != NEG_INF:  # two lanes that saw no column (rows narrower than the warp)
            d = d * math.exp(m - mn) + d2 * math.exp(m2 - mn)
        m = mn
        offset //= 2
    if lane == 0:
        losses[r] = math.log(d) + m - logits[r, targets[r]]
    ### END SOLUTION


@cuda.jit
def crossentropy_softmax_backward(dlogits, losses, logits, targets, dloss, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
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
        if mn != NEG_INF:  # two lanes that saw no column (rows narrower than the warp)
            d = d * math.exp(m - mn) + d2 * math.exp(m2 - mn)
        m = mn
        offset //= 2
    t = targets[r]
    g = dloss[r]
    inv = np.float32(1.0) / d
    # d loss / d logit_j = softmax_j - [j == t]: the probabilities are never stored
    for j in range(lane, cols, WARP):
        p = math.exp(logits[r, j] - m) * inv
        dlogits[r, j] = (p - np.float32(1.0) if j == t else p) * g
    if lane == 0:
        losses[r] = math.log(d) + m - logits[r, t]
    ### END SOLUTION


# ===================================================================== element-wise: GELU, residual


@cuda.jit
def gelu_forward(out, x, n):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        v = x[i]
        out[i] = np.float32(0.5) * v * (np.float32(1.0) + math.tanh(GELU_K * (v + GELU_C * v * v * v)))
        i += step


@cuda.jit
def gelu_backward(dx, x, dout, n):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        ### BEGIN SOLUTION
        v = x[i]
        th = math.tanh(GELU_K * (v + GELU_C * v * v * v))
        # d/dv of 0.5 v (1 + tanh(u)) = 0.5 (1 + tanh u) + 0.5 v (1 - tanh^2 u) du/dv
        du = GELU_K * (np.float32(1.0) + np.float32(3.0) * GELU_C * v * v)
        dx[i] = dout[i] * (
            np.float32(0.5) * (np.float32(1.0) + th) + np.float32(0.5) * v * (np.float32(1.0) - th * th) * du
        )
        ### END SOLUTION
        i += step


@cuda.jit
def residual_add(out, a, b, n):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        out[i] = a[i] + b[i]
        i += step


# ===================================================================== AdamW


@cuda.jit
def adamw(p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    ### BEGIN SOLUTION
    # bias corrections: m and v start at 0, so early averages are too small by 1 - beta^step
    b1 = np.float32(beta1)
    b2 = np.float32(beta2)
    c1 = np.float32(1.0 - beta1**step)
    c2 = np.float32(1.0 - beta2**step)
    lr32 = np.float32(lr)
    eps32 = np.float32(eps)
    while i < n:
        g = grads[i]
        mi = b1 * m[i] + (np.float32(1.0) - b1) * g
        vi = b2 * v[i] + (np.float32(1.0) - b2) * g * g
        p = params[i]
        # decoupled weight decay (the W of AdamW): shrink the weight itself, not the gradient
        wd = np.float32(weight_decay) if i < n_decay else np.float32(0.0)
        p_out[i] = p - lr32 * ((mi / c1) / (math.sqrt(vi / c2) + eps32) + wd * p)
        m_out[i] = mi
        v_out[i] = vi
        i += stride
    ### END SOLUTION


@cuda.jit
def adamw_unrolled(
    p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n
):
    # the same update, UNROLL elements per thread per round: all their loads are issued before the first
    # is used, so each thread keeps 4 * UNROLL loads in flight (a load under an `if` waits for the one
    # before it, so a whole round is tested once and the last elements go one by one)
    pk = cuda.local.array(UNROLL, numba.float32)
    gk = cuda.local.array(UNROLL, numba.float32)
    mk = cuda.local.array(UNROLL, numba.float32)
    vk = cuda.local.array(UNROLL, numba.float32)
    b1 = np.float32(beta1)
    b2 = np.float32(beta2)
    c1 = np.float32(1.0 - beta1**step)
    c2 = np.float32(1.0 - beta2**step)
    lr32 = np.float32(lr)
    eps32 = np.float32(eps)
    wd32 = np.float32(weight_decay)
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    while i + (UNROLL - 1) * stride < n:
        for k in range(UNROLL):
            j = i + k * stride
            pk[k] = params[j]
            gk[k] = grads[j]
            mk[k] = m[j]
            vk[k] = v[j]
        for k in range(UNROLL):
            j = i + k * stride
            mi = b1 * mk[k] + (np.float32(1.0) - b1) * gk[k]
            vi = b2 * vk[k] + (np.float32(1.0) - b2) * gk[k] * gk[k]
            wd = wd32 if j < n_decay else np.float32(0.0)
            p_out[j] = pk[k] - lr32 * ((mi / c1) / (math.sqrt(vi / c2) + eps32) + wd * pk[k])
            m_out[j] = mi
            v_out[j] = vi
        i += UNROLL * stride
    while i < n:
        g = grads[i]
        mi = b1 * m[i] + (np.float32(1.0) - b1) * g
        vi = b2 * v[i] + (np.float32(1.0) - b2) * g * g
        p = params[i]
        wd = wd32 if i < n_decay else np.float32(0.0)
        p_out[i] = p - lr32 * ((mi / c1) / (math.sqrt(vi / c2) + eps32) + wd * p)
        m_out[i] = mi
        v_out[i] = vi
        i += stride


@cuda.jit
def gelu_forward_unrolled(out, x, n):
    xk = cuda.local.array(UNROLL, numba.float32)
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    while i + (UNROLL - 1) * stride < n:
        for k in range(UNROLL):
            xk[k] = x[i + k * stride]
        for k in range(UNROLL):
            v = xk[k]
            out[i + k * stride] = (
                np.float32(0.5) * v * (np.float32(1.0) + math.tanh(GELU_K * (v + GELU_C * v * v * v)))
            )
        i += UNROLL * stride
    while i < n:
        v = x[i]
        out[i] = np.float32(0.5) * v * (np.float32(1.0) + math.tanh(GELU_K * (v + GELU_C * v * v * v)))
        i += stride


# ===================================================================== embeddings


@cuda.jit
def embedding_forward(out, tokens, wte, wpe, n, T, C):
    # thread k handles out[k // C, k % C]: neighbouring threads, neighbouring channels
    k = cuda.grid(1)
    step = cuda.gridsize(1)
    while k < n * C:
        i = k // C
        c = k % C
        out[i, c] = wte[tokens[i], c] + wpe[i % T, c]
        k += step


@cuda.jit
def embedding_backward_atomic(dwte, dwpe, dout, tokens, n, T, C):
    k = cuda.grid(1)
    step = cuda.gridsize(1)
    while k < n * C:
        ### BEGIN SOLUTION
        i = k // C
        c = k % C
        g = dout[i, c]
        # a token that appears twice, and every sequence of the batch at position t, add to one row
        cuda.atomic.add(dwte, (tokens[i], c), g)
        cuda.atomic.add(dwpe, (i % T, c), g)
        ### END SOLUTION
        k += step


@cuda.jit
def embedding_backward_buckets(dwte, dwpe, dout, order, bucket_start, bucket_token, n_buckets, B, T, C):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y
    if c >= C:
        return
    ### BEGIN SOLUTION
    s = np.float32(0.0)
    if y < n_buckets:
        # every occurrence of one token, in a fixed order: one thread owns dwte[token, c]
        for k in range(bucket_start[y], bucket_start[y + 1]):
            s += dout[order[k], c]
        dwte[bucket_token[y], c] = s
    else:
        t = y - n_buckets
        for b in range(B):
            s += dout[b * T + t, c]
        dwpe[t, c] = s
    ### END SOLUTION


def bucket_tokens(tokens: np.ndarray):
    """Host side: positions grouped by token. (order, bucket_start, bucket_token), int32: the positions
    of bucket_token[b] are order[bucket_start[b]:bucket_start[b + 1]], in increasing order."""
    order = np.argsort(tokens, kind="stable").astype(np.int32)
    uniq, counts = np.unique(tokens, return_counts=True)
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return order, start, uniq.astype(np.int32)


# ===================================================================== specs (float64)


def _logsumexp(x):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]


def crossentropy_spec(logits, targets, rows, cols):
    lse = _logsumexp(logits)
    return (lse - logits.astype(np.float64)[np.arange(rows), targets]).astype(np.float32)


def crossentropy_backward_spec(logits, targets, dloss, rows, cols):
    x = logits.astype(np.float64)
    lse = _logsumexp(logits)
    p = np.exp(x - lse[:, None])
    p[np.arange(rows), targets] -= 1.0
    return dict(
        dlogits=(p * dloss.astype(np.float64)[:, None]).astype(np.float32),
        losses=(lse - x[np.arange(rows), targets]).astype(np.float32),
    )


def gelu_ref(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def gelu_grad_ref(x):
    x = x.astype(np.float64)
    k = math.sqrt(2.0 / math.pi)
    th = np.tanh(k * (x + 0.044715 * x**3))
    return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * k * (1.0 + 3 * 0.044715 * x * x)


def gelu_spec(x, n):
    return gelu_ref(x).astype(np.float32)


def gelu_backward_spec(x, dout, n):
    return (gelu_grad_ref(x) * dout.astype(np.float64)).astype(np.float32)


def residual_spec(a, b, n):
    return (a.astype(np.float64) + b.astype(np.float64)).astype(np.float32)


def adamw_ref(params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay):
    """float64 AdamW, PyTorch's formulation: (new params, new m, new v)."""
    p, g = params.astype(np.float64), grads.astype(np.float64)
    m = beta1 * m.astype(np.float64) + (1 - beta1) * g
    v = beta2 * v.astype(np.float64) + (1 - beta2) * g * g
    wd = np.where(np.arange(p.size) < n_decay, weight_decay, 0.0)
    p = p * (1 - lr * wd)
    p = p - lr * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + eps)
    return p, m, v


def adamw_spec(params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n):
    p, m2, v2 = adamw_ref(params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay)
    return dict(p_out=p.astype(np.float32), m_out=m2.astype(np.float32), v_out=v2.astype(np.float32))


def embedding_spec(tokens, wte, wpe, n, T, C):
    return (wte.astype(np.float64)[tokens] + wpe.astype(np.float64)[np.arange(n) % T]).astype(np.float32)


def embedding_grads_ref(dout, tokens, V, T):
    dwte = np.zeros((V, dout.shape[1]))
    np.add.at(dwte, tokens, dout.astype(np.float64))
    dwpe = dout.astype(np.float64).reshape(-1, T, dout.shape[1]).sum(axis=0)
    return dwte, dwpe


# ===================================================================== cases


def warp_per_row(rows):
    return (rows + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK, ROWS_PER_BLOCK * WARP


def ce_logits(rng, rows, cols, large):
    x = rng.normal(0, rng.uniform(1, 4), (rows, cols))
    if large:  # logits around +-100: exp overflows (or the sum underflows) without the max subtracted
        # both signs on every draw: rows alternate between +100 (overflow) and -100 (underflow)
        sign = rng.permutation(np.resize([1.0, -1.0], rows))[:, None]
        x = rng.uniform(-12, 12, (rows, cols)) + sign * rng.uniform(95, 100, (rows, 1))
    return x.astype(np.float32)


def ce_shapes(rng):
    return [
        (1, int(rng.integers(40, 100)), False),
        (int(rng.integers(3, 6)), 1, False),
        (int(rng.integers(3, 6)), int(rng.choice([31, 33, rng.integers(34, 70)])), False),
        (int(rng.integers(2, 5)), int(rng.integers(20, 60)), True),
        (2, int(rng.integers(CE_MAX_COLS - 60, CE_MAX_COLS + 1)), False),
    ]


def ce_cases(rng):
    out = []
    for rows, cols, large in ce_shapes(rng):
        grid, block = warp_per_row(rows)
        out.append(
            Case(
                grid,
                block,
                dict(
                    losses=np.zeros(rows, np.float32),
                    logits=ce_logits(rng, rows, cols, large),
                    targets=rng.integers(0, cols, rows).astype(np.int32),
                    rows=rows,
                    cols=cols,
                ),
            )
        )
    return out


def ce_backward_cases(rng):
    out = []
    for rows, cols, large in ce_shapes(rng):
        grid, block = warp_per_row(rows)
        out.append(
            Case(
                grid,
                block,
                dict(
                    dlogits=np.zeros((rows, cols), np.float32),
                    losses=np.zeros(rows, np.float32),
                    logits=ce_logits(rng, rows, cols, large),
                    targets=rng.integers(0, cols, rows).astype(np.int32),
                    dloss=(rng.uniform(0.5, DLOSS_MAX, rows) / rows).astype(np.float32),
                    rows=rows,
                    cols=cols,
                ),
            )
        )
    return out


def elementwise_sizes(rng):
    """(n, grid): one element, a block minus one, a block plus one, grids too small (the loop goes round)."""
    return [
        (1, 1),
        (TPB - 1, 1),
        (TPB + 1, 2),
        (int(rng.integers(100, 200)), 2),
        (int(rng.integers(200, 400)), 3),
    ]


def gelu_x(rng, n):
    x = rng.uniform(-X_MAX, X_MAX, n) * rng.choice([1.0, 0.25], n)  # saturated tails and the curved middle
    return x.astype(np.float32)


def gelu_cases(rng):
    return [
        Case(g, TPB, dict(out=np.zeros(n, np.float32), x=gelu_x(rng, n), n=n))
        for n, g in elementwise_sizes(rng)
    ]


def gelu_backward_cases(rng):
    return [
        Case(
            g,
            TPB,
            dict(
                dx=np.zeros(n, np.float32),
                x=gelu_x(rng, n),
                dout=rng.uniform(-2, 2, n).astype(np.float32),
                n=n,
            ),
        )
        for n, g in elementwise_sizes(rng)
    ]


def residual_cases(rng):
    return [
        Case(
            g,
            TPB,
            dict(
                out=np.zeros(n, np.float32),
                a=rng.normal(0, 2, n).astype(np.float32),
                b=rng.normal(0, 2, n).astype(np.float32),
                n=n,
            ),
        )
        for n, g in elementwise_sizes(rng)
    ]


def adam_state(rng, n, steps, beta1, beta2, scale):
    """Moments as a real run would leave them after `steps` updates from zero (at most 20 simulated)."""
    m = np.zeros(n)
    v = np.zeros(n)
    for _ in range(min(steps, 20)):
        g = rng.normal(0, scale, n)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
    return m.astype(np.float32), v.astype(np.float32)


def adamw_cases(rng):
    out = []
    steps = [1, int(rng.integers(2, 6)), int(rng.integers(2, 20)), int(rng.integers(100, 5000)), 1]
    for (n, g), step in zip(elementwise_sizes(rng), steps, strict=True):
        beta1, beta2 = [(0.9, 0.999), (0.9, 0.95), (0.8, 0.99)][int(rng.integers(3))]
        # the last case has tiny gradients (late in training): v is then near eps**2 ... eps matters
        scale = 1e-4 if n > 200 else float(rng.uniform(0.05, 1.0))
        m, v = adam_state(rng, n, step - 1, beta1, beta2, scale)
        out.append(
            Case(
                g,
                TPB,
                dict(
                    p_out=np.zeros(n, np.float32),
                    m_out=np.zeros(n, np.float32),
                    v_out=np.zeros(n, np.float32),
                    params=rng.normal(0, 1, n).astype(np.float32),
                    grads=rng.normal(0, scale, n).astype(np.float32),
                    m=m,
                    v=v,
                    lr=float(rng.uniform(1e-3, 1e-2)),
                    beta1=beta1,
                    beta2=beta2,
                    eps=1e-8,
                    weight_decay=float(rng.uniform(0.05, 0.2)),
                    step=step,
                    n_decay=int(rng.integers(0, n + 1)) if n > 1 else 1,
                    n=n,
                ),
            )
        )
    return out


def emb_shapes(rng):
    # (B, T, C, V): one token; one channel; channels not a multiple of the block; few tokens, many repeats
    return [
        (1, 1, int(rng.integers(5, 40)), int(rng.integers(2, 9))),
        (int(rng.integers(2, 4)), int(rng.integers(2, 6)), 1, int(rng.integers(2, 5))),
        (2, int(rng.integers(3, 9)), int(rng.choice([31, 33])), int(rng.integers(3, 7))),
        (
            int(rng.integers(2, 5)),
            int(rng.integers(4, 12)),
            int(rng.integers(8, 20)),
            int(rng.integers(5, 30)),
        ),
        (4, 16, 3, 4),
    ]


def emb_forward_cases(rng):
    out = []
    for B, T, C, V in emb_shapes(rng):
        n = B * T
        out.append(
            Case(
                int(rng.integers(1, 4)),
                TPB,
                dict(
                    out=np.zeros((n, C), np.float32),
                    tokens=rng.integers(0, V, n).astype(np.int32),
                    wte=rng.normal(0, 1, (V, C)).astype(np.float32),
                    wpe=rng.normal(0, 1, (T, C)).astype(np.float32),
                    n=n,
                    T=T,
                    C=C,
                ),
            )
        )
    return out


def emb_backward_cases(rng):
    out = []
    for B, T, C, V in emb_shapes(rng):
        n = B * T
        tokens = rng.integers(0, V, n).astype(np.int32)
        tokens[-1] = tokens[0]  # at least one repeated token whenever n > 1
        V = int(tokens.max()) + 1
        out.append(
            Case(
                int(rng.integers(1, 4)),
                TPB,
                dict(
                    dwte=np.zeros((V, C), np.float32),
                    dwpe=np.zeros((T, C), np.float32),
                    dout=rng.uniform(-DOUT_MAX, DOUT_MAX, (n, C)).astype(np.float32),
                    tokens=tokens,
                    n=n,
                    T=T,
                    C=C,
                ),
            )
        )
    return out


def emb_buckets_cases(rng):
    out = []
    for B, T, C, V in emb_shapes(rng):
        n = B * T
        tokens = rng.integers(0, V, n).astype(np.int32)
        tokens[-1] = tokens[0]
        V = int(tokens.max()) + 1
        order, start, tok = bucket_tokens(tokens)
        out.append(
            Case(
                ((C + TPB - 1) // TPB, len(tok) + T),
                TPB,
                dict(
                    dwte=np.zeros((V, C), np.float32),
                    dwpe=np.zeros((T, C), np.float32),
                    dout=rng.uniform(-DOUT_MAX, DOUT_MAX, (n, C)).astype(np.float32),
                    order=order,
                    bucket_start=start,
                    bucket_token=tok,
                    n_buckets=len(tok),
                    B=B,
                    T=T,
                    C=C,
                ),
            )
        )
    return out


def emb_atomic_spec(dout, tokens, n, T, C):
    return _emb_grads(dout, tokens, T)


def emb_buckets_spec(dout, order, bucket_start, bucket_token, n_buckets, B, T, C):
    tokens = np.empty(B * T, np.int64)
    for b in range(n_buckets):
        tokens[order[bucket_start[b] : bucket_start[b + 1]]] = bucket_token[b]
    return _emb_grads(dout, tokens, T)


def _emb_grads(dout, tokens, T):
    # the cases size the vocabulary as the largest token + 1 (the spec sees inputs only)
    dwte, dwpe = embedding_grads_ref(dout, tokens, int(tokens.max()) + 1, T)
    return dict(dwte=dwte.astype(np.float32), dwpe=dwpe.astype(np.float32))


_CE_TOL = dict(rtol=CE_RTOL, atol=CE_GRAD_ATOL)
_ELT = dict(chapter=CHAPTER)

PUZZLES = [
    Puzzle(
        name="llm2_crossentropy_forward",
        title="Cross-entropy loss, one warp per row",
        statement="""`losses[r] = -log(softmax(logits[r])[targets[r]])`, computed stably as
`log(sum_j exp(x_j - m)) + m - x_t` with `m` the row's maximum: never form the probabilities. One warp
per row (two rows per block); the online `(m, d)` pair of the softmax gives `m` and the sum in one
pass. Lane 0 writes the row's loss.""",
        outputs=("losses",),
        spec=crossentropy_spec,
        cases=ce_cases,
        reference=crossentropy_forward,
        budget=Budget(shared_bytes=0),
        hints=(
            "The online softmax gives (m, d) with d = sum exp(x - m); combine lanes with shfl_xor_sync.",
            "log(softmax_t) = x_t - m - log(d): no exp of a large number, no log of a tiny one.",
            "Only one lane writes losses[r].",
        ),
        rtol=CE_RTOL,
        atol=CE_ATOL,
        **_ELT,
    ),
    Puzzle(
        name="llm2_crossentropy_softmax_backward",
        title="Cross-entropy backward fused with the softmax",
        statement="""The loss and its gradient in one kernel: `dlogits[r, j] = (softmax(logits[r])_j - [j ==
targets[r]]) * dloss[r]` (for a mean over rows, `dloss[r] = 1 / rows`), and `losses[r]` as before. The
probabilities are recomputed from `(m, d)` as they are written, never stored: two reads of each
logit and one write (budget).""",
        outputs=("dlogits", "losses"),
        spec=crossentropy_backward_spec,
        cases=ce_backward_cases,
        reference=crossentropy_softmax_backward,
        budget=Budget(
            global_reads=lambda case: 2 * ((case.args["cols"] + WARP - 1) // WARP) + 3, shared_bytes=0
        ),
        hints=(
            "First pass: the online (m, d). Second pass: p = exp(x - m) / d, minus 1 at the target column.",
            "Multiply by dloss[r]: the upstream gradient of this row's loss.",
        ),
        rtol=CE_RTOL,
        atol=max(CE_ATOL, CE_GRAD_ATOL),
        **_ELT,
    ),
    Puzzle(
        name="llm2_gelu_forward",
        title="GELU (tanh approximation), grid-stride",
        statement="""`out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, GPT-2's activation, element by
element, with a grid-stride loop (the grid may be smaller than the data).""",
        outputs=("out",),
        spec=gelu_spec,
        cases=gelu_cases,
        reference=gelu_forward,
        budget=Budget(global_reads=lambda case: -(-case.args["n"] // (case.grid * TPB))),
        rtol=GELU_RTOL,
        atol=GELU_ATOL,
        **_ELT,
    ),
    Puzzle(
        name="llm2_gelu_backward",
        title="GELU backward",
        statement="""`dx = dout * GELU'(x)`. With `u = k (x + c x^3)` (`k = sqrt(2/pi)`, `c = 0.044715`):
`GELU'(x) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) k (1 + 3 c x^2)`. One `tanh` per element,
grid-stride loop.""",
        outputs=("dx",),
        spec=gelu_backward_spec,
        cases=gelu_backward_cases,
        reference=gelu_backward,
        budget=Budget(global_reads=lambda case: 2 * -(-case.args["n"] // (case.grid * TPB))),
        hints=(
            "Compute th = tanh(u) once and reuse it: 1 - th * th is tanh's derivative.",
            "Do not forget the chain rule through u: du/dx = k (1 + 3 c x^2).",
        ),
        rtol=GELU_RTOL,
        atol=GELU_ATOL,
        **_ELT,
    ),
    Puzzle(
        name="llm2_residual_add",
        title="Residual add",
        statement="""`out = a + b`: the residual connection around attention and the MLP, grid-stride.""",
        outputs=("out",),
        spec=residual_spec,
        cases=residual_cases,
        reference=residual_add,
        budget=Budget(global_reads=lambda case: 2 * -(-case.args["n"] // (case.grid * TPB))),
        rtol=2 * U,
        atol=0.0,
        **_ELT,
    ),
    Puzzle(
        name="llm2_adamw",
        title="AdamW: one fused kernel for every parameter",
        statement="""One step of AdamW over all the model's parameters, laid out in one flat buffer (the
tensors that get weight decay first: elements `i < n_decay`). With `t = step` (the first step is 1):
`m = beta1 m + (1 - beta1) g`, `v = beta2 v + (1 - beta2) g^2`, `m_hat = m / (1 - beta1^t)`,
`v_hat = v / (1 - beta2^t)`, `p = p - lr (m_hat / (sqrt(v_hat) + eps) + wd p)` with `wd =
weight_decay` for `i < n_decay`, else 0. Write the new `p`, `m`, `v` to `p_out`, `m_out`, `v_out`
(the checker keeps inputs unchanged; on a GPU they may be the same arrays). Grid-stride; one read of
each input and one write of each output per element (budget).""",
        outputs=("p_out", "m_out", "v_out"),
        spec=adamw_spec,
        cases=adamw_cases,
        reference=adamw,
        budget=Budget(
            global_reads=lambda case: 4 * -(-case.args["n"] // (case.grid * TPB)),
            global_writes=lambda case: 3 * -(-case.args["n"] // (case.grid * TPB)),
        ),
        hints=(
            "The bias corrections 1 - beta^step are the same for every element: compute them once, before "
            "the loop. step counts from 1.",
            "Weight decay in AdamW is decoupled: it shrinks p directly (lr * wd * p), it is not added to g.",
            "eps is added to sqrt(v_hat), outside the square root.",
        ),
        rtol=ADAM_RTOL,
        atol=ADAM_ATOL,
        **_ELT,
    ),
    Puzzle(
        name="llm2_embedding_forward",
        title="Embedding forward: token plus position",
        statement="""`out[i, :] = wte[tokens[i], :] + wpe[i % T, :]` for the `n = B * T` tokens of a batch
(sequences of length `T`, one after another). Thread `k` of a grid-stride loop computes element
`(k // C, k % C)`, so neighbouring threads read neighbouring channels of the same rows.""",
        outputs=("out",),
        spec=embedding_spec,
        cases=emb_forward_cases,
        reference=embedding_forward,
        rtol=2 * U,
        atol=0.0,
        **_ELT,
    ),
    Puzzle(
        name="llm2_embedding_backward_atomic",
        title="Embedding backward with atomics",
        statement="""`dwte[v, :]` is the sum of `dout[i, :]` over every position `i` whose token is `v`;
`dwpe[t, :]` the sum over the batch of `dout[b * T + t, :]`. A token that appears twice, and every
sequence at position `t`, add into the same row: `cuda.atomic.add` (`dwte` and `dwpe` start at zero).
Grid-stride over the `n * C` elements of `dout`.""",
        outputs=("dwte", "dwpe"),
        zeroed=("dwte", "dwpe"),
        spec=emb_atomic_spec,
        cases=emb_backward_cases,
        reference=embedding_backward_atomic,
        hints=(
            "Element k of dout is row i = k // C, channel c = k % C.",
            "cuda.atomic.add takes a tuple index for a 2-D array: cuda.atomic.add(dwte, (row, c), value).",
            "The position of row i is i % T.",
        ),
        rtol=EMB_RTOL,
        atol=EMB_ATOL,
        **_ELT,
    ),
    Puzzle(
        name="llm2_embedding_backward_buckets",
        title="Embedding backward, deterministic: buckets per token",
        statement="""The same gradients without atomics, in a fixed order. On the host, `bucket_tokens`
groups the positions by token: the positions of token `bucket_token[b]` are `order[bucket_start[b]:
bucket_start[b + 1]]`, increasing. Block `(bx, y)` has one thread per channel `c`: for `y < n_buckets`
it sums its bucket's rows of `dout` and writes `dwte[bucket_token[y], c]` once; for `y >= n_buckets`
it sums position `t = y - n_buckets` over the `B` sequences into `dwpe[t, c]`. Tokens that never occur
keep their zero gradient. No atomics (budget).""",
        outputs=("dwte", "dwpe"),
        zeroed=("dwte",),
        spec=emb_buckets_spec,
        cases=emb_buckets_cases,
        reference=embedding_backward_buckets,
        budget=Budget(global_atomics_per_block=0),
        hints=(
            "blockIdx.y picks the job: a token's bucket, or (past n_buckets) a position.",
            "The rows of bucket y are order[k] for k in range(bucket_start[y], bucket_start[y + 1]).",
            "Each output element has exactly one owner thread: a plain store, after the loop.",
        ),
        rtol=EMB_RTOL,
        atol=EMB_ATOL,
        **_ELT,
    ),
]


# ===================================================================== GPU benchmark

GOAL = {"ceiling": "copy", "fraction": 0.8, "best": "llm2_adamw (unrolled)"}
GOALS = [
    ("llm2_adamw (unrolled)", "copy", 0.8),
    ("llm2_adamw (unrolled)", "torch AdamW (fused)", 1.0),
    ("llm2_crossentropy_softmax_backward", "torch cross_entropy fwd+bwd", 1.0),
    ("llm2_gelu_forward (unrolled)", "torch gelu (tanh)", 1.0),
]


def goals(rows) -> list:
    from puzzles.llm.softmax_layernorm import goals as check_goals

    return check_goals(rows, GOALS)


def benchmark(scale: float = 1.0):
    """Validate, then time: the fused cross-entropy over GPT-2's vocabulary (4096 rows of 50257), GELU
    forward/backward and the residual add over 64 Mi floats, AdamW over GPT-2 small's 124M parameters
    (in place), the embedding forward/backward at B*T = 8192 tokens of 768 channels; PyTorch's kernels
    on the same data where torch is present; a device copy as the ceiling. Bytes counted: what each
    kernel must read and write at least."""
    from helpers import timing
    from helpers.timing import specialize
    from puzzles.llm.softmax_layernorm import softmax_rtol, torch_or_reason

    torch, why = torch_or_reason()
    if torch is None:
        print(why)
    dev = cuda.get_current_device()
    sms = dev.MULTIPROCESSOR_COUNT
    rng = np.random.default_rng(21)
    rpb = 4
    ew = (8 * sms, 256)  # element-wise kernels: a grid that fills the GPU, grid-stride

    # ---- cross-entropy, fused with the softmax backward
    def ce_launch(dl, ls, x, t, g):
        ce = crossentropy_softmax_backward
        ce[(x.shape[0] + rpb - 1) // rpb, rpb * WARP](dl, ls, x, t, g, x.shape[0], x.shape[1])

    for rows, cols, large in [(77, 50257, False), (64, 1000, True)]:
        x = ce_logits(rng, rows, cols, large)
        t = rng.integers(0, cols, rows).astype(np.int32)
        g = np.full(rows, 1.0 / rows, np.float32)
        want = crossentropy_backward_spec(x, t, g, rows, cols)
        dl, ls = cuda.device_array_like(x), cuda.device_array(rows, np.float32)
        ce_launch(dl, ls, cuda.to_device(x), cuda.to_device(t), cuda.to_device(g))
        timing.validate(
            f"llm2_crossentropy_softmax_backward ({rows}x{cols})",
            dl.copy_to_host(),
            want["dlogits"],
            rtol=CE_RTOL,
            atol=softmax_rtol(cols) * float(g[0]),
        )
        timing.validate(
            "llm2_crossentropy loss",
            ls.copy_to_host(),
            want["losses"],
            rtol=CE_RTOL,
            atol=softmax_rtol(cols) + 4 * U * LOGIT_MAX,
        )
    rows, cols = max(64, int(4096 * scale)), 50257
    x = ce_logits(rng, rows, cols, False)
    t = rng.integers(0, cols, rows).astype(np.int32)
    d_x, d_t = cuda.to_device(x), cuda.to_device(t)
    d_g = cuda.to_device(np.full(rows, 1.0 / rows, np.float32))
    dl, ls = cuda.device_array_like(x), cuda.device_array(rows, np.float32)
    results = [timing.copy_ceiling(x.nbytes)]
    seconds = timing.time_gpu(lambda: ce_launch(dl, ls, d_x, d_t, d_g))
    results.append(timing.Measurement("llm2_crossentropy_softmax_backward", seconds, bytes=2 * x.nbytes))
    if torch is not None:
        tx = torch.as_tensor(x, device="cuda").requires_grad_(True)
        tt = torch.as_tensor(t.astype(np.int64), device="cuda")

        def torch_ce():
            tx.grad = None
            torch.nn.functional.cross_entropy(tx, tt).backward()

        torch_ce()
        timing.validate(
            "torch cross_entropy grad",
            tx.grad.cpu().numpy()[:8],
            crossentropy_backward_spec(x[:8], t[:8], np.full(8, 1.0 / rows), 8, cols)["dlogits"],
            rtol=CE_RTOL,
            atol=softmax_rtol(cols) / rows,
        )
        seconds = timing.time_gpu(torch_ce)
        results.append(timing.Measurement("torch cross_entropy fwd+bwd", seconds, bytes=2 * x.nbytes))

    # ---- GELU and the residual add
    n = max(1 << 16, int((64 << 20) * scale))
    xs = gelu_x(rng, n)
    dout = rng.uniform(-2, 2, n).astype(np.float32)
    d_xs, d_dout, d_o = cuda.to_device(xs), cuda.to_device(dout), cuda.device_array(n, np.float32)
    gelu_forward[ew](d_o, d_xs, n)
    timing.validate(
        "llm2_gelu_forward",
        d_o.copy_to_host(),
        gelu_ref(xs).astype(np.float32),
        rtol=GELU_RTOL,
        atol=GELU_ATOL,
    )
    gelu_backward[ew](d_o, d_xs, d_dout, n)
    timing.validate(
        "llm2_gelu_backward",
        d_o.copy_to_host(),
        gelu_backward_spec(xs, dout, n),
        rtol=GELU_RTOL,
        atol=GELU_ATOL * 2,
    )
    residual_add[ew](d_o, d_xs, d_dout, n)
    timing.validate("llm2_residual_add", d_o.copy_to_host(), residual_spec(xs, dout, n), rtol=2 * U, atol=0.0)
    gelu_u = specialize(gelu_forward_unrolled, UNROLL=4)
    for k in (n, 1000003, 77):  # full rounds and leftovers
        gelu_u[ew](d_o, d_xs, k)
        timing.validate(
            f"llm2_gelu_forward (unrolled, n={k})",
            d_o.copy_to_host()[:k],
            gelu_ref(xs[:k]).astype(np.float32),
            rtol=GELU_RTOL,
            atol=GELU_ATOL,
        )
    for name, launch, nbytes in [
        ("llm2_gelu_forward", lambda: gelu_forward[ew](d_o, d_xs, n), 8 * n),
        ("llm2_gelu_forward (unrolled)", lambda: gelu_u[ew](d_o, d_xs, n), 8 * n),
        ("llm2_gelu_backward", lambda: gelu_backward[ew](d_o, d_xs, d_dout, n), 12 * n),
        ("llm2_residual_add", lambda: residual_add[ew](d_o, d_xs, d_dout, n), 12 * n),
    ]:
        results.append(timing.Measurement(name, timing.time_gpu(launch), bytes=nbytes))
    if torch is not None:
        F = torch.nn.functional
        tx, td = torch.as_tensor(xs, device="cuda"), torch.as_tensor(dout, device="cuda")
        timing.validate(
            "torch gelu (tanh)",
            F.gelu(tx, approximate="tanh").cpu().numpy(),
            gelu_ref(xs).astype(np.float32),
            rtol=GELU_RTOL,
            atol=GELU_ATOL,
        )
        results.append(
            timing.Measurement(
                "torch gelu (tanh)", timing.time_gpu(lambda: F.gelu(tx, approximate="tanh")), bytes=8 * n
            )
        )
        results.append(
            timing.Measurement(
                "torch gelu_backward (tanh)",
                timing.time_gpu(lambda: torch.ops.aten.gelu_backward(td, tx, approximate="tanh")),
                bytes=12 * n,
            )
        )
        results.append(timing.Measurement("torch a + b", timing.time_gpu(lambda: tx + td), bytes=12 * n))

    # ---- AdamW over GPT-2 small's parameter count, in place (p_out is params, ...)
    hyper = dict(lr=6e-4, beta1=0.9, beta2=0.95, eps=1e-8, weight_decay=0.1)
    adam_u = specialize(adamw_unrolled, UNROLL=4)
    for n_val, step in [(1_000_003, 1), (77_777, 10)]:
        p0 = rng.normal(0, 1, n_val).astype(np.float32)
        g0 = rng.normal(0, 0.1, n_val).astype(np.float32)
        m0, v0 = adam_state(rng, n_val, step - 1, hyper["beta1"], hyper["beta2"], 0.1)
        n_decay = n_val * 2 // 3
        want = adamw_spec(p0, g0, m0, v0, *hyper.values(), step, n_decay, n_val)
        for label, kern in (("llm2_adamw", adamw), ("llm2_adamw (unrolled)", adam_u)):
            dp, dm, dv = cuda.to_device(p0), cuda.to_device(m0), cuda.to_device(v0)
            kern[ew](dp, dm, dv, dp, cuda.to_device(g0), dm, dv, *hyper.values(), step, n_decay, n_val)
            for name, got in (("p", dp), ("m", dm), ("v", dv)):
                timing.validate(
                    f"{label} {name} (n={n_val}, step {step})",
                    got.copy_to_host(),
                    want[f"{name}_out"],
                    rtol=ADAM_RTOL,
                    atol=ADAM_ATOL,
                )
    n_par = max(1 << 16, int(124_439_808 * scale))
    p0 = rng.normal(0, 0.02, n_par).astype(np.float32)
    g0 = rng.normal(0, 0.01, n_par).astype(np.float32)
    dp, dg = cuda.to_device(p0), cuda.to_device(g0)
    dm, dv = cuda.to_device(np.zeros(n_par, np.float32)), cuda.to_device(np.zeros(n_par, np.float32))
    adam_bytes = 7 * 4 * n_par  # read p, g, m, v; write p, m, v
    hp = tuple(hyper.values())
    seconds = timing.time_gpu(lambda: adamw[ew](dp, dm, dv, dp, dg, dm, dv, *hp, 1, n_par, n_par))
    results.append(timing.Measurement("llm2_adamw", seconds, bytes=adam_bytes))
    seconds = timing.time_gpu(lambda: adam_u[ew](dp, dm, dv, dp, dg, dm, dv, *hp, 1, n_par, n_par))
    results.append(timing.Measurement("llm2_adamw (unrolled)", seconds, bytes=adam_bytes))
    dp = dg = dm = dv = None  # free 2 GB before PyTorch makes its copies
    if torch is not None:
        tp = torch.nn.Parameter(torch.as_tensor(p0, device="cuda"))
        tp.grad = torch.as_tensor(g0, device="cuda")
        opt = torch.optim.AdamW(
            [tp],
            lr=hyper["lr"],
            betas=(hyper["beta1"], hyper["beta2"]),
            eps=hyper["eps"],
            weight_decay=hyper["weight_decay"],
            fused=True,
        )
        results.append(timing.Measurement("torch AdamW (fused)", timing.time_gpu(opt.step), bytes=adam_bytes))
        del tp, opt

    # ---- embeddings, GPT-2 small: vocabulary 50257, 1024 positions, 768 channels, batch 8
    B, T, C, V = 8, 1024, 768, 50257
    nt = max(T, int(B * scale) * T)
    tokens = rng.integers(0, V, nt).astype(np.int32)
    tokens[rng.random(nt) < 0.3] = 13  # a frequent token: many collisions, as in real text
    wte = rng.normal(0, 0.02, (V, C)).astype(np.float32)
    wpe = rng.normal(0, 0.01, (T, C)).astype(np.float32)
    d_tok, d_wte, d_wpe = cuda.to_device(tokens), cuda.to_device(wte), cuda.to_device(wpe)
    out = cuda.device_array((nt, C), np.float32)
    embedding_forward[ew](out, d_tok, d_wte, d_wpe, nt, T, C)
    timing.validate(
        "llm2_embedding_forward",
        out.copy_to_host(),
        embedding_spec(tokens, wte, wpe, nt, T, C),
        rtol=2 * U,
        atol=0.0,
    )
    seconds = timing.time_gpu(lambda: embedding_forward[ew](out, d_tok, d_wte, d_wpe, nt, T, C))
    results.append(timing.Measurement("llm2_embedding_forward", seconds, bytes=3 * nt * C * 4))
    dout = rng.uniform(-1, 1, (nt, C)).astype(np.float32)
    d_dout = cuda.to_device(dout)
    dwte, dwpe = embedding_grads_ref(dout, tokens, V, T)
    order, start, tok = bucket_tokens(tokens)
    d_order, d_start, d_btok = cuda.to_device(order), cuda.to_device(start), cuda.to_device(tok)
    g_wte, g_wpe = cuda.to_device(np.zeros((V, C), np.float32)), cuda.to_device(np.zeros((T, C), np.float32))
    buckets_grid = ((C + 255) // 256, len(tok) + T)
    big = dict(rtol=(nt + 4) * U, atol=(nt + 4) * U * nt)
    for label, launch in [
        (
            "llm2_embedding_backward_atomic",
            lambda: embedding_backward_atomic[ew](g_wte, g_wpe, d_dout, d_tok, nt, T, C),
        ),
        (
            "llm2_embedding_backward_buckets",
            lambda: embedding_backward_buckets[buckets_grid, 256](
                g_wte, g_wpe, d_dout, d_order, d_start, d_btok, len(tok), nt // T, T, C
            ),
        ),
    ]:
        g_wte.copy_to_device(np.zeros((V, C), np.float32))
        g_wpe.copy_to_device(np.zeros((T, C), np.float32))
        launch()
        timing.validate(f"{label} dwte", g_wte.copy_to_host(), dwte.astype(np.float32), **big)
        timing.validate(f"{label} dwpe", g_wpe.copy_to_host(), dwpe.astype(np.float32), **big)
        # timed without re-zeroing (the values grow; the work does not change)
        results.append(timing.Measurement(label, timing.time_gpu(launch), bytes=2 * nt * C * 4))
    return results
