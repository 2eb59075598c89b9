"""Known-wrong and known-right kernels for puzzles/llm/small_ops.py (format: mutants/common.py).

Mutants are the reference with one learner's mistake edited in (`mutate`, in mutants/common.py);
variants are written out in full.
"""

import math

import numpy as np
from numba import cuda

from mutants.common import NO_BARRIER, OOB, RACE, WRONG, M, over  # noqa: F401
from puzzles.llm import small_ops as m

WARP, FULL_MASK, NEG_INF, GELU_K, GELU_C = m.WARP, m.FULL_MASK, m.NEG_INF, m.GELU_K, m.GELU_C

# ---------------------------------------------------------------- cross-entropy forward

cf = m.crossentropy_forward


@cuda.jit
def ce_no_max(losses, logits, targets, rows, cols):
    # log(sum exp(x)) - x_t without the maximum: exp(100) overflows float32
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        d += math.exp(logits[r, j])
    for off in (16, 8, 4, 2, 1):
        d += cuda.shfl_xor_sync(FULL_MASK, d, off)
    if lane == 0:
        losses[r] = math.log(d) - logits[r, targets[r]]


CE_FORWARD = [
    ("ce_no_max", ce_no_max, *WRONG),
    M(
        cf,
        "ce_forgets_m",
        WRONG,  # log(d) is relative to m: add it back
        ("losses[r] = math.log(d) + m - logits", "losses[r] = math.log(d) - logits"),
    ),
    M(
        cf,
        "ce_log_probability",
        WRONG,  # returns log p_t, not -log p_t
        (
            "losses[r] = math.log(d) + m - logits[r, targets[r]]",
            "losses[r] = logits[r, targets[r]] - m - math.log(d)",
        ),
    ),
    M(
        cf,
        "ce_rescale_forgotten",
        WRONG,
        ("d = d * math.exp(m - v) + np.float32(1.0)", "d = d + np.float32(1.0)"),
    ),
    M(cf, "ce_merge_no_rescale", WRONG, ("d = d * math.exp(m - mn) + d2 * math.exp(m2 - mn)", "d = d + d2")),
    M(
        cf,
        "ce_every_lane_writes",
        RACE,
        ("    if lane == 0:\n        losses[r]", "    if lane >= 0:\n        losses[r]"),
    ),
]


@cuda.jit
def ce_shfl_down(losses, logits, targets, rows, cols):
    # merging down to lane 0 is enough here: only lane 0 uses the result
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    mx = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = logits[r, j]
        mn = max(mx, v)
        d = d * math.exp(mx - mn) + math.exp(v - mn)
        mx = mn
    off = 16
    while off > 0:
        m2 = cuda.shfl_down_sync(FULL_MASK, mx, off)
        d2 = cuda.shfl_down_sync(FULL_MASK, d, off)
        mn = max(mx, m2)
        if mn > NEG_INF:
            d = d * math.exp(mx - mn) + d2 * math.exp(m2 - mn)
        mx = mn
        off //= 2
    if lane == 0:
        losses[r] = (mx - logits[r, targets[r]]) + math.log(d)


@cuda.jit
def ce_two_pass(losses, logits, targets, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    mx = NEG_INF
    for j in range(lane, cols, WARP):
        mx = max(mx, logits[r, j])
    for off in (16, 8, 4, 2, 1):
        mx = max(mx, cuda.shfl_xor_sync(FULL_MASK, mx, off))
    s = np.float32(0.0)
    for j in range(lane, cols, WARP):
        s += math.exp(logits[r, j] - mx)
    for off in (16, 8, 4, 2, 1):
        s += cuda.shfl_xor_sync(FULL_MASK, s, off)
    if lane == 0:
        losses[r] = math.log(s) + mx - logits[r, targets[r]]


# ---------------------------------------------------------------- cross-entropy backward, fused

cb = m.crossentropy_softmax_backward
CE_BACKWARD = [
    M(
        cb,
        "cesb_no_minus_one",
        WRONG,  # the target's gradient is p - 1, not p
        ("dlogits[r, j] = (p - np.float32(1.0) if j == t else p) * g", "dlogits[r, j] = p * g"),
    ),
    M(
        cb,
        "cesb_no_dloss",
        WRONG,
        (
            "dlogits[r, j] = (p - np.float32(1.0) if j == t else p) * g",
            "dlogits[r, j] = p - np.float32(1.0) if j == t else p",
        ),
    ),
    M(
        cb,
        "cesb_minus_one_everywhere",
        WRONG,
        (
            "dlogits[r, j] = (p - np.float32(1.0) if j == t else p) * g",
            "dlogits[r, j] = (p - np.float32(1.0)) * g",
        ),
    ),
    M(
        cb,
        "cesb_lanes_not_merged",
        WRONG,  # each lane normalises by its own columns' sum
        ("    offset = 16\n    while offset > 0:\n", "    offset = 0\n    while offset > 0:\n"),
    ),
    M(
        cb,
        "cesb_every_lane_writes_loss",
        RACE,
        ("    if lane == 0:\n        losses[r]", "    if lane >= 0:\n        losses[r]"),
    ),
    M(
        cb,
        "cesb_separate_max_pass",
        over("global_reads"),  # right, but three reads of every logit
        (
            "    m = NEG_INF\n    d = np.float32(0.0)\n",
            "    m = NEG_INF\n    for j in range(lane, cols, WARP):\n        m = max(m, logits[r, j])\n"
            "    d = np.float32(0.0)\n",
        ),
    ),
]


@cuda.jit
def cesb_logsumexp(dlogits, losses, logits, targets, dloss, rows, cols):
    # p_j = exp(x_j - logsumexp): one subtraction instead of a multiplication by 1 / d
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    mx = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = logits[r, j]
        mn = max(mx, v)
        d = d * math.exp(mx - mn) + math.exp(v - mn)
        mx = mn
    for off in (1, 2, 4, 8, 16):
        m2 = cuda.shfl_xor_sync(FULL_MASK, mx, off)
        d2 = cuda.shfl_xor_sync(FULL_MASK, d, off)
        mn = max(mx, m2)
        if mn > NEG_INF:
            d = d * math.exp(mx - mn) + d2 * math.exp(m2 - mn)
        mx = mn
    lse = mx + math.log(d)
    t = targets[r]
    g = dloss[r]
    for j in range(lane, cols, WARP):
        p = math.exp(logits[r, j] - lse)
        if j == t:
            p -= np.float32(1.0)
        dlogits[r, j] = p * g
    if lane == t % WARP:
        losses[r] = lse - logits[r, t]


@cuda.jit
def cesb_target_fixup(dlogits, losses, logits, targets, dloss, rows, cols):
    # every column written as p * g; then the lane that owns the target column adds -g to it (its own
    # write, so no race) and writes the loss
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    mx = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = logits[r, j]
        if v > mx:
            d = d * math.exp(mx - v) + np.float32(1.0)
            mx = v
        else:
            d += math.exp(v - mx)
    off = 16
    while off > 0:
        m2 = cuda.shfl_xor_sync(FULL_MASK, mx, off)
        d2 = cuda.shfl_xor_sync(FULL_MASK, d, off)
        mn = max(mx, m2)
        if mn > NEG_INF:
            d = d * math.exp(mx - mn) + d2 * math.exp(m2 - mn)
        mx = mn
        off //= 2
    g = dloss[r]
    t = targets[r]
    for j in range(lane, cols, WARP):
        dlogits[r, j] = math.exp(logits[r, j] - mx) / d * g
    if lane == t % WARP:
        xt = logits[r, t]
        dlogits[r, t] = (math.exp(xt - mx) / d - np.float32(1.0)) * g
        losses[r] = math.log(d) + mx - xt


# ---------------------------------------------------------------- GELU, residual

gb = m.gelu_backward
GELU_BACKWARD = [
    M(
        gb,
        "gelu_no_chain_rule",
        WRONG,  # forgets du/dx
        ("* (np.float32(1.0) - th * th) * du\n", "* (np.float32(1.0) - th * th)\n"),
    ),
    M(
        gb,
        "gelu_tanh_derivative_wrong",
        WRONG,  # d tanh = 1 - tanh^2, not 1 - tanh
        ("(np.float32(1.0) - th * th) * du", "(np.float32(1.0) - th) * du"),
    ),
    M(
        gb,
        "gelu_cubic_derivative_wrong",
        WRONG,  # d(c x^3)/dx = 3 c x^2
        ("np.float32(3.0) * GELU_C * v * v", "GELU_C * v * v"),
    ),
    M(gb, "gelu_forgets_dout", WRONG, ("dx[i] = dout[i] * (", "dx[i] = (")),
    M(
        gb,
        "gelu_block_stride",
        RACE,  # steps by one block: the blocks overlap
        ("    step = cuda.gridsize(1)\n", "    step = cuda.blockDim.x\n"),
    ),
    M(
        gb,
        "gelu_if_not_while",
        WRONG,  # the grid may be smaller than the data
        ("    while i < n:\n", "    if i < n:\n"),
    ),
]


@cuda.jit
def gelu_sech(dx, x, dout, n):
    # 1 - tanh^2 u = 1 / cosh^2 u; the loop as a range over the thread's elements
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = x[i]
        u = GELU_K * (v + GELU_C * v * v * v)
        ch = math.cosh(u)
        left = np.float32(0.5) * (np.float32(1.0) + math.tanh(u))
        du = GELU_K * (np.float32(1.0) + np.float32(3.0) * GELU_C * v * v)
        right = np.float32(0.5) * v * du / (ch * ch)
        dx[i] = (left + right) * dout[i]


@cuda.jit
def gelu_expanded(dx, x, dout, n):
    # the same derivative with the products regrouped
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < n:
        v = x[i]
        v2 = v * v
        th = math.tanh(GELU_K * v * (np.float32(1.0) + GELU_C * v2))
        sech2 = (np.float32(1.0) - th) * (np.float32(1.0) + th)
        g = (
            np.float32(0.5)
            + np.float32(0.5) * th
            + np.float32(0.5) * GELU_K * v * sech2 * (np.float32(1.0) + np.float32(3.0) * GELU_C * v2)
        )
        dx[i] = g * dout[i]
        i += cuda.blockDim.x * cuda.gridDim.x


GELU_FORWARD = [
    M(m.gelu_forward, "gelu_fwd_if_not_while", WRONG, ("    while i < n:\n", "    if i < n:\n")),
    M(m.gelu_forward, "gelu_fwd_cubic_sign", WRONG, ("(v + GELU_C * v * v * v)", "(v - GELU_C * v * v * v)")),
]
RESIDUAL = [
    M(m.residual_add, "residual_if_not_while", WRONG, ("    while i < n:\n", "    if i < n:\n")),
    M(m.residual_add, "residual_no_guard", OOB, ("    while i < n:\n", "    while i < n + 1:\n")),
]

# ---------------------------------------------------------------- AdamW

aw = m.adamw
ADAMW = [
    M(
        aw,
        "adam_step_minus_one",
        WRONG,  # counts steps from 0: 1 - beta^0 = 0 at the first step
        ("c1 = np.float32(1.0 - beta1**step)", "c1 = np.float32(1.0 - beta1 ** (step - 1))"),
        ("c2 = np.float32(1.0 - beta2**step)", "c2 = np.float32(1.0 - beta2 ** (step - 1))"),
    ),
    M(
        aw,
        "adam_step_plus_one",
        WRONG,
        ("c1 = np.float32(1.0 - beta1**step)", "c1 = np.float32(1.0 - beta1 ** (step + 1))"),
        ("c2 = np.float32(1.0 - beta2**step)", "c2 = np.float32(1.0 - beta2 ** (step + 1))"),
    ),
    M(
        aw,
        "adam_no_bias_correction",
        WRONG,
        ("p - lr32 * ((mi / c1) / (math.sqrt(vi / c2) + eps32)", "p - lr32 * (mi / (math.sqrt(vi) + eps32)"),
    ),
    M(
        aw,
        "adam_l2_not_decoupled",
        WRONG,  # Adam with L2: the decay goes through the moments
        (
            "        g = grads[i]\n",
            "        g = grads[i] + (np.float32(weight_decay) * params[i]"
            " if i < n_decay else np.float32(0.0))\n",
        ),
        ("+ wd * p)", ")"),
    ),
    M(
        aw,
        "adam_decay_everything",
        WRONG,  # biases and LayerNorm weights decayed too
        ("if i < n_decay else np.float32(0.0)", ""),
    ),
    M(
        aw,
        "adam_eps_inside_sqrt",
        WRONG,  # the tiny-gradient case: v_hat is near eps
        ("(math.sqrt(vi / c2) + eps32)", "math.sqrt(vi / c2 + eps32)"),
    ),
    M(aw, "adam_m_not_saved", WRONG, ("        m_out[i] = mi\n", "")),
]


@cuda.jit
def adam_torch_order(
    p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n
):
    # PyTorch's order: decay the weight first, then a step of size lr / c1 with denominator
    # sqrt(v) / sqrt(c2) + eps
    c1 = 1.0 - beta1**step
    c2 = 1.0 - beta2**step
    step_size = np.float32(lr / c1)
    rc2 = np.float32(1.0 / math.sqrt(c2))
    shrink = np.float32(1.0 - lr * weight_decay)
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        g = grads[i]
        mo = m[i]
        vo = v[i]
        mi = mo + (g - mo) * np.float32(1.0 - beta1)
        vi = vo + (g * g - vo) * np.float32(1.0 - beta2)
        p = params[i] * shrink if i < n_decay else params[i]
        p_out[i] = p - step_size * mi / (math.sqrt(vi) * rc2 + np.float32(eps))
        m_out[i] = mi
        v_out[i] = vi


@cuda.jit
def adam_folded(
    p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n
):
    # the bias corrections folded into the step size and eps (Kingma and Ba, section 2):
    # lr * m_hat / (sqrt(v_hat) + eps) = (lr sqrt(c2) / c1) * m / (sqrt(v) + eps sqrt(c2))
    c1 = 1.0 - beta1**step
    c2 = 1.0 - beta2**step
    step_size = np.float32(lr * math.sqrt(c2) / c1)
    eps_hat = np.float32(eps * math.sqrt(c2))
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < n:
        g = grads[i]
        mi = np.float32(beta1) * m[i] + np.float32(1.0 - beta1) * g
        vi = np.float32(beta2) * v[i] + np.float32(1.0 - beta2) * (g * g)
        p = params[i]
        if i < n_decay:
            p -= np.float32(lr * weight_decay) * p
        p_out[i] = p - step_size * mi / (math.sqrt(vi) + eps_hat)
        m_out[i] = mi
        v_out[i] = vi
        i += cuda.blockDim.x * cuda.gridDim.x


# ---------------------------------------------------------------- embeddings

EMB_FORWARD = [
    M(m.embedding_forward, "emb_position_not_wrapped", OOB, ("wpe[i % T, c]", "wpe[i, c]")),
    M(
        m.embedding_forward,
        "emb_forgets_position",
        WRONG,
        ("wte[tokens[i], c] + wpe[i % T, c]", "wte[tokens[i], c]"),
    ),
]

ea = m.embedding_backward_atomic
EMB_ATOMIC = [
    M(
        ea,
        "emb_no_atomics",
        RACE,  # two positions with the same token collide
        ("cuda.atomic.add(dwte, (tokens[i], c), g)", "dwte[tokens[i], c] += g"),
        ("cuda.atomic.add(dwpe, (i % T, c), g)", "dwpe[i % T, c] += g"),
    ),
    M(
        ea,
        "emb_positions_plain_store",
        RACE,  # every sequence of the batch writes dwpe[t, c]
        ("cuda.atomic.add(dwpe, (i % T, c), g)", "dwpe[i % T, c] = g"),
    ),
    M(
        ea,
        "emb_position_not_wrapped",
        OOB,
        ("cuda.atomic.add(dwpe, (i % T, c), g)", "cuda.atomic.add(dwpe, (i, c), g)"),
    ),
    M(ea, "emb_forgets_positions", WRONG, ("        cuda.atomic.add(dwpe, (i % T, c), g)\n", "")),
    M(ea, "emb_if_not_while", WRONG, ("    while k < n * C:\n", "    if k < n * C:\n")),
    M(
        ea,
        "emb_guard_rows_not_elements",
        WRONG,  # the loop stops at n, not n * C
        ("    while k < n * C:\n", "    while k < n:\n"),
    ),
]


@cuda.jit
def emb_rows(dwte, dwpe, dout, tokens, n, T, C):
    # 2-D walk: rows over blockIdx, channels over threads
    for i in range(cuda.blockIdx.x, n, cuda.gridDim.x):
        tok = tokens[i]
        t = i % T
        for c in range(cuda.threadIdx.x, C, cuda.blockDim.x):
            g = dout[i, c]
            cuda.atomic.add(dwte, (tok, c), g)
            cuda.atomic.add(dwpe, (t, c), g)


@cuda.jit
def emb_positions_without_atomics(dwte, dwpe, dout, tokens, n, T, C):
    # tokens by atomics; positions summed over the batch by the threads of the first sequence
    k = cuda.grid(1)
    step = cuda.gridsize(1)
    while k < n * C:
        i = k // C
        c = k % C
        cuda.atomic.add(dwte, (tokens[i], c), dout[i, c])
        if i < T:
            s = np.float32(0.0)
            for b in range(n // T):
                s += dout[b * T + i, c]
            dwpe[i, c] = s
        k += step


eb = m.embedding_backward_buckets
EMB_BUCKETS = [
    M(
        eb,
        "bk_atomics",
        over("global_atomics_per_block"),
        ("dwte[bucket_token[y], c] = s", "cuda.atomic.add(dwte, (bucket_token[y], c), s)"),
    ),
    M(
        eb,
        "bk_end_inclusive",
        OOB,  # the last bucket reads order[n]
        ("range(bucket_start[y], bucket_start[y + 1])", "range(bucket_start[y], bucket_start[y + 1] + 1)"),
    ),
    M(eb, "bk_rows_not_through_order", WRONG, ("s += dout[order[k], c]", "s += dout[k, c]")),
    M(eb, "bk_bucket_index_as_token", WRONG, ("dwte[bucket_token[y], c] = s", "dwte[y, c] = s")),
    M(eb, "bk_positions_transposed", WRONG, ("s += dout[b * T + t, c]", "s += dout[b + t * B, c]")),
    M(eb, "bk_no_guard", OOB, ("    if c >= C:\n        return\n", "")),
]


@cuda.jit
def bk_reverse(dwte, dwpe, dout, order, bucket_start, bucket_token, n_buckets, B, T, C):
    # the same buckets summed last to first: another fixed order (other bits, just as deterministic)
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y
    if c < C:
        s = np.float32(0.0)
        if y >= n_buckets:
            t = y - n_buckets
            for b in range(B - 1, -1, -1):
                s += dout[b * T + t, c]
            dwpe[t, c] = s
        else:
            k = bucket_start[y + 1] - 1
            while k >= bucket_start[y]:
                s += dout[order[k], c]
                k -= 1
            dwte[bucket_token[y], c] = s


@cuda.jit
def bk_pairs(dwte, dwpe, dout, order, bucket_start, bucket_token, n_buckets, B, T, C):
    # two accumulators (even and odd members), added at the end
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y
    if c >= C:
        return
    even = np.float32(0.0)
    odd = np.float32(0.0)
    if y < n_buckets:
        lo = bucket_start[y]
        for k in range(lo, bucket_start[y + 1]):
            if (k - lo) % 2 == 0:
                even += dout[order[k], c]
            else:
                odd += dout[order[k], c]
        dwte[bucket_token[y], c] = even + odd
    else:
        for b in range(B):
            if b % 2 == 0:
                even += dout[b * T + y - n_buckets, c]
            else:
                odd += dout[b * T + y - n_buckets, c]
        dwpe[y - n_buckets, c] = even + odd


MUTANTS = {
    "llm2_crossentropy_forward": CE_FORWARD,
    "llm2_crossentropy_softmax_backward": CE_BACKWARD,
    "llm2_gelu_forward": GELU_FORWARD,
    "llm2_gelu_backward": GELU_BACKWARD,
    "llm2_residual_add": RESIDUAL,
    "llm2_adamw": ADAMW,
    "llm2_embedding_forward": EMB_FORWARD,
    "llm2_embedding_backward_atomic": EMB_ATOMIC,
    "llm2_embedding_backward_buckets": EMB_BUCKETS,
}

VARIANTS = {
    "llm2_crossentropy_forward": [("shfl_down", ce_shfl_down), ("two_pass", ce_two_pass)],
    "llm2_crossentropy_softmax_backward": [
        ("logsumexp", cesb_logsumexp),
        ("target_fixup", cesb_target_fixup),
    ],
    "llm2_gelu_backward": [("sech", gelu_sech), ("expanded", gelu_expanded)],
    "llm2_adamw": [
        ("torch_order", adam_torch_order),
        ("folded", adam_folded),
        ("unrolled", m.adamw_unrolled),
    ],
    "llm2_gelu_forward": [("unrolled", m.gelu_forward_unrolled)],
    "llm2_embedding_backward_atomic": [
        ("rows", emb_rows),
        ("positions_without_atomics", emb_positions_without_atomics),
    ],
    "llm2_embedding_backward_buckets": [("reverse", bk_reverse), ("pairs", bk_pairs)],
}

SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
