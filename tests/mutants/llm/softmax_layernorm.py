"""Known-wrong and known-right kernels for puzzles/llm/softmax_layernorm.py.

Most mutants are the reference with one learner's mistake edited in (`mutate` in mutants/common.py:
exact text replacements, each required to match once, so a mutant cannot silently become the
reference when the reference changes). Variants are written out in full: correct kernels built differently.
"""

import math

import numba
import numpy as np
from numba import cuda

from mutants.common import BARRIER, OOB, RACE, UNINIT, WARP_DIV, WRONG, M, over
from puzzles.llm import softmax_layernorm as m

WARP, FULL_MASK, TPB, PER_LANE, NEG_INF, EPS = m.WARP, m.FULL_MASK, m.TPB, m.PER_LANE, m.NEG_INF, m.EPS
HALF = TPB // 2


# ---------------------------------------------------------------- softmax_block

sb = m.softmax_block
SOFTMAX_BLOCK = [
    M(
        sb,
        "block_no_max_subtraction",
        WRONG,  # exp(100) overflows float32: inf / inf = NaN
        ("s += math.exp(x[r, j] - m)", "s += math.exp(x[r, j])"),
        ("out[r, j] = math.exp(x[r, j] - m) / s", "out[r, j] = math.exp(x[r, j]) / s"),
    ),
    M(
        sb,
        "block_masked_row_nan",
        WRONG,  # exp(-inf - -inf) = NaN on the all -inf row
        (
            "    if m != NEG_INF:\n        for j in range(t, cols, bd):\n            s +=",
            "    if True:\n        for j in range(t, cols, bd):\n            s +=",
        ),
        ("/ s if m != NEG_INF else 0.0", "/ s"),
    ),
    M(
        sb,
        "block_thread_own_max",
        WRONG,  # each thread subtracts its own max: sums disagree
        ("    cuda.syncthreads()\n    m = part[0]\n", "    cuda.syncthreads()\n    m = max(m, m)\n"),
    ),
    M(
        sb,
        "block_no_barrier_before_reuse",
        RACE,  # the sum overwrites part[0] while others read the max
        ("    m = part[0]\n    cuda.syncthreads()  # everyone", "    m = part[0]\n    # everyone"),
    ),
    M(
        sb,
        "block_barrier_in_if",
        BARRIER,
        (
            "    while stride >= 1:\n        cuda.syncthreads()\n        if t < stride:\n"
            "            part[t] += ",
            "    while stride >= 1:\n        if t < stride:\n            cuda.syncthreads()\n"
            "            part[t] += ",
        ),
    ),
    M(
        sb,
        "block_sum_tree_takes_max",
        WRONG,
        ("part[t] += part[t + stride]", "part[t] = max(part[t], part[t + stride])"),
    ),
    M(
        sb,
        "block_stride_one",
        RACE,  # every thread walks the row from t: overlapping writes
        ("    for j in range(t, cols, bd):\n        out", "    for j in range(t, cols):\n        out"),
    ),
]


@cuda.jit
def block_warp_shuffles(out, x, rows, cols):
    # shuffles inside each warp, shared memory only for the per-warp results
    part = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    nw = cuda.blockDim.x // WARP
    m = NEG_INF
    for j in range(t, cols, cuda.blockDim.x):
        m = max(m, x[r, j])
    for off in (16, 8, 4, 2, 1):
        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, off))
    if t % WARP == 0:
        part[t // WARP] = m
    cuda.syncthreads()
    m = part[0]
    for w in range(1, nw):
        m = max(m, part[w])
    s = np.float32(0.0)
    if m > NEG_INF:
        for j in range(t, cols, cuda.blockDim.x):
            s += math.exp(x[r, j] - m)
    for off in (16, 8, 4, 2, 1):
        s += cuda.shfl_xor_sync(FULL_MASK, s, off)
    if t % WARP == 0:
        part[nw + t // WARP] = s
    cuda.syncthreads()
    total = np.float32(0.0)
    for w in range(nw):
        total += part[nw + w]
    inv = np.float32(1.0) / total if m > NEG_INF else np.float32(0.0)
    for j in range(t, cols, cuda.blockDim.x):
        out[r, j] = math.exp(x[r, j] - m) * inv if m > NEG_INF else np.float32(0.0)


@cuda.jit
def block_online(out, x, rows, cols):
    # one pass for (max, sum) per thread, then one tree merging (max, sum) pairs in two arrays
    pm = cuda.shared.array(HALF, numba.float32)
    pd = cuda.shared.array(HALF, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    mx = NEG_INF
    d = np.float32(0.0)
    for j in range(t, cols, bd):
        v = x[r, j]
        mn = max(mx, v)
        if mn > NEG_INF:
            d = d * math.exp(mx - mn) + math.exp(v - mn)
        mx = mn
    # fold the upper half into the lower half first
    if t >= bd // 2:
        pm[t - bd // 2] = mx
        pd[t - bd // 2] = d
    cuda.syncthreads()
    if t < bd // 2:
        m2 = pm[t]
        d2 = pd[t]
        mn = max(mx, m2)
        if mn > NEG_INF:
            d = d * math.exp(mx - mn) + d2 * math.exp(m2 - mn)
        mx = mn
    cuda.syncthreads()
    if t < bd // 2:
        pm[t] = mx
        pd[t] = d
    stride = bd // 4
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            a, b = pm[t], pm[t + stride]
            mn = max(a, b)
            if mn > NEG_INF:
                pd[t] = pd[t] * math.exp(a - mn) + pd[t + stride] * math.exp(b - mn)
            pm[t] = mn
        stride //= 2
    cuda.syncthreads()
    mx = pm[0]
    d = pd[0]
    for j in range(t, cols, bd):
        out[r, j] = math.exp(x[r, j] - mx) / d if mx > NEG_INF else 0.0


# ---------------------------------------------------------------- softmax_online

so = m.softmax_online
SOFTMAX_ONLINE = [
    M(
        so,
        "online_rescale_forgotten",
        WRONG,  # the old sum stays scaled to the old maximum
        ("d = d * math.exp(m - v) + np.float32(1.0)", "d = d + np.float32(1.0)"),
    ),
    M(
        so,
        "online_merge_no_rescale",
        WRONG,
        ("d = d * math.exp(m - mn) + d2 * math.exp(m2 - mn)", "d = d + d2"),
    ),
    M(
        so,
        "online_merge_shfl_down",
        WRONG,  # only lane 0 ends with the row's pair
        ("m2 = cuda.shfl_xor_sync(FULL_MASK, m, offset)", "m2 = cuda.shfl_down_sync(FULL_MASK, m, offset)"),
        ("d2 = cuda.shfl_xor_sync(FULL_MASK, d, offset)", "d2 = cuda.shfl_down_sync(FULL_MASK, d, offset)"),
    ),
    M(
        so,
        "online_masked_nan",
        WRONG,  # -inf values exponentiated: NaN on the masked row
        ("elif v != NEG_INF:", "else:"),
        ("if mn != NEG_INF:\n", "if True:\n"),
        ("/ d if m != NEG_INF else 0.0", "/ d"),
    ),
    M(
        so,
        "online_rescale_sign",
        WRONG,  # exp(v - m) > 1: the sum blows up instead of shrinking
        ("d = d * math.exp(m - v) + np.float32(1.0)", "d = d * math.exp(v - m) + np.float32(1.0)"),
    ),
    M(
        so,
        "online_three_reads",
        over("global_reads"),  # a separate max pass: correct, but three reads
        (
            "    m = NEG_INF\n    d = np.float32(0.0)\n",
            "    m = NEG_INF\n    for j in range(lane, cols, WARP):\n        m = max(m, x[r, j])\n"
            "    d = np.float32(0.0)\n",
        ),
    ),
    M(
        so,
        "online_shuffle_in_branch",
        WARP_DIV,  # lanes with no value skip the merge
        (
            "    offset = 16\n    while offset > 0:\n        m2",
            "    offset = 16\n    while offset > 0 and d > 0:\n        m2",
        ),
    ),
]


@cuda.jit
def online_branchless(out, x, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    mx = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = x[r, j]
        mn = max(mx, v)
        if mn > NEG_INF:  # while everything so far is -inf the sum stays 0
            d = d * math.exp(mx - mn) + math.exp(v - mn)
        mx = mn
    for off in (1, 2, 4, 8, 16):
        m2 = cuda.shfl_xor_sync(FULL_MASK, mx, off)
        d2 = cuda.shfl_xor_sync(FULL_MASK, d, off)
        mn = max(mx, m2)
        if mn > NEG_INF:
            d = d * math.exp(mx - mn) + d2 * math.exp(m2 - mn)
        mx = mn
    inv = np.float32(1.0) / d if mx > NEG_INF else np.float32(0.0)
    for j in range(lane, cols, WARP):
        out[r, j] = math.exp(x[r, j] - mx) * inv if mx > NEG_INF else np.float32(0.0)


@cuda.jit
def online_down_then_broadcast(out, x, rows, cols):
    # merge down to lane 0, then broadcast lane 0's pair with shfl_sync
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    mx = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = x[r, j]
        if v > mx:
            d = d * math.exp(mx - v) + np.float32(1.0)
            mx = v
        elif v > NEG_INF:
            d += math.exp(v - mx)
    offset = 16
    while offset > 0:
        m2 = cuda.shfl_down_sync(FULL_MASK, mx, offset)
        d2 = cuda.shfl_down_sync(FULL_MASK, d, offset)
        if m2 > mx:
            d = d * math.exp(mx - m2) + d2
            mx = m2
        elif m2 > NEG_INF:
            d += d2 * math.exp(m2 - mx)
        offset //= 2
    mx = cuda.shfl_sync(FULL_MASK, mx, 0)
    d = cuda.shfl_sync(FULL_MASK, d, 0)
    for j in range(lane, cols, WARP):
        out[r, j] = math.exp(x[r, j] - mx) / d if mx > NEG_INF else 0.0


# ---------------------------------------------------------------- layernorm_forward

lf = m.layernorm_forward
LAYERNORM_FORWARD = [
    M(
        lf,
        "ln_unbiased_variance",
        WRONG,  # divides by cols - 1 (NumPy's ddof=1); inf at cols = 1
        ("math.sqrt(q / np.float32(cols) + EPS)", "math.sqrt(q / np.float32(max(cols - 1, 1)) + EPS)"),
    ),
    M(
        lf,
        "ln_one_pass_variance",
        WRONG,  # E[x^2] - mean^2 cancels when the mean is 1000
        ("        dev = x[r, j] - mu\n        q += dev * dev\n", "        q += x[r, j] * x[r, j]\n"),
        (
            "math.sqrt(q / np.float32(cols) + EPS)",
            "math.sqrt(max(q / np.float32(cols) - mu * mu, 0.0) + EPS)",
        ),
    ),
    M(
        lf,
        "ln_saves_std",
        WRONG,  # rstd[r] holds the standard deviation
        ("        rstd[r] = rs\n", "        rstd[r] = np.float32(1.0) / rs\n"),
    ),
    M(
        lf,
        "ln_saves_sum",
        WRONG,  # the row sum saved as the mean
        ("        mean[r] = mu\n", "        mean[r] = s\n"),
    ),
    M(
        lf,
        "ln_every_lane_saves",
        RACE,  # 32 lanes write mean[r] and rstd[r]
        ("    if lane == 0:\n        mean[r] = mu", "    if lane >= 0:\n        mean[r] = mu"),
    ),
    M(
        lf,
        "ln_shfl_down",
        WRONG,  # only lane 0 gets the row's sum
        ("s += cuda.shfl_xor_sync(FULL_MASK, s, offset)", "s += cuda.shfl_down_sync(FULL_MASK, s, offset)"),
    ),
    M(lf, "ln_bias_forgotten", WRONG, ("* rs * weight[j] + bias[j]", "* rs * weight[j]")),
]
LAYERNORM_VARIANTS = [("welford", m.layernorm_welford), ("registers", m.layernorm_forward_cached)]


@cuda.jit
def ln_shifted_one_pass(out, mean, rstd, x, weight, bias, rows, cols):
    # one pass with the data shifted by the row's first element: E[(x-k)^2] - E[x-k]^2 is safe when
    # k is close to the mean
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    k = x[r, 0]
    s = np.float32(0.0)
    q = np.float32(0.0)
    for j in range(lane, cols, WARP):
        dv = x[r, j] - k
        s += dv
        q += dv * dv
    for off in (16, 8, 4, 2, 1):
        s += cuda.shfl_xor_sync(FULL_MASK, s, off)
        q += cuda.shfl_xor_sync(FULL_MASK, q, off)
    n = np.float32(cols)
    ms = s / n
    var = max(q / n - ms * ms, np.float32(0.0))
    mu = k + ms
    rs = np.float32(1.0) / math.sqrt(var + EPS)
    for j in range(lane, cols, WARP):
        out[r, j] = (x[r, j] - mu) * rs * weight[j] + bias[j]
    if lane == 0:
        mean[r] = mu
        rstd[r] = rs


# ---------------------------------------------------------------- layernorm_backward

lb = m.layernorm_backward
LAYERNORM_BACKWARD = [
    M(
        lb,
        "lnb_no_atomics",
        RACE,  # rows in other warps add to the same column
        ("cuda.atomic.add(dweight, j, dout[r, j] * xh)", "dweight[j] += dout[r, j] * xh"),
        ("cuda.atomic.add(dbias, j, dout[r, j])", "dbias[j] += dout[r, j]"),
    ),
    M(
        lb,
        "lnb_no_mean_term",
        WRONG,  # forgets the gradient through the mean
        ("weight[j] * dout[r, j] - gmean - xh * gxmean", "weight[j] * dout[r, j] - xh * gxmean"),
    ),
    M(
        lb,
        "lnb_no_variance_term",
        WRONG,  # forgets the gradient through the variance
        ("weight[j] * dout[r, j] - gmean - xh * gxmean", "weight[j] * dout[r, j] - gmean"),
    ),
    M(
        lb,
        "lnb_dweight_without_xhat",
        WRONG,
        ("cuda.atomic.add(dweight, j, dout[r, j] * xh)", "cuda.atomic.add(dweight, j, dout[r, j])"),
    ),
    M(
        lb,
        "lnb_g_without_weight",
        WRONG,  # the means use dout instead of weight * dout
        ("g = weight[j] * dout[r, j]", "g = dout[r, j]"),
    ),
    M(lb, "lnb_no_rstd_factor", WRONG, ("dx[r, j] = rs * (", "dx[r, j] = (")),
]


@cuda.jit
def lnb_block_partials(dx, dweight, dbias, dout, x, mean, rstd, weight, rows, cols):
    # dx as before; the block's rows are first added in shared memory, then one atomic per column
    # and block instead of one per row
    sdw = cuda.shared.array(256, numba.float32)
    sdb = cuda.shared.array(256, numba.float32)
    t = cuda.threadIdx.x
    for j in range(t, cols, cuda.blockDim.x):
        sdw[j] = 0.0
        sdb[j] = 0.0
    cuda.syncthreads()
    lane = t % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + t // WARP
    if r < rows:
        mu = mean[r]
        rs = rstd[r]
        a = np.float32(0.0)
        b = np.float32(0.0)
        for j in range(lane, cols, WARP):
            xh = (x[r, j] - mu) * rs
            g = weight[j] * dout[r, j]
            a += g
            b += g * xh
            cuda.atomic.add(sdw, j, dout[r, j] * xh)
            cuda.atomic.add(sdb, j, dout[r, j])
        for off in (16, 8, 4, 2, 1):
            a += cuda.shfl_xor_sync(FULL_MASK, a, off)
            b += cuda.shfl_xor_sync(FULL_MASK, b, off)
        a /= np.float32(cols)
        b /= np.float32(cols)
        for j in range(lane, cols, WARP):
            xh = (x[r, j] - mu) * rs
            dx[r, j] = (weight[j] * dout[r, j] - a - xh * b) * rs
    cuda.syncthreads()
    for j in range(t, cols, cuda.blockDim.x):
        cuda.atomic.add(dweight, j, sdw[j])
        cuda.atomic.add(dbias, j, sdb[j])


@cuda.jit
def lnb_recompute_from_weight_grad(dx, dweight, dbias, dout, x, mean, rstd, weight, rows, cols):
    # the same formula grouped differently: dx = rstd * g - rstd/cols * (sum g + x_hat * sum g x_hat)
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    rs = rstd[r]
    a = np.float32(0.0)
    b = np.float32(0.0)
    for j in range(lane, cols, WARP):
        xh = (x[r, j] - mean[r]) * rs
        g = weight[j] * dout[r, j]
        a += g
        b += g * xh
    for off in (16, 8, 4, 2, 1):
        a += cuda.shfl_xor_sync(FULL_MASK, a, off)
        b += cuda.shfl_xor_sync(FULL_MASK, b, off)
    c = rs / np.float32(cols)
    for j in range(lane, cols, WARP):
        xh = (x[r, j] - mean[r]) * rs
        d = dout[r, j]
        dx[r, j] = rs * weight[j] * d - c * (a + xh * b)
        cuda.atomic.add(dbias, j, d)
        cuda.atomic.add(dweight, j, d * xh)


# ---------------------------------------------------------------- rmsnorm

rn = m.rmsnorm_forward
RMSNORM = [
    M(
        rn,
        "rms_no_eps",
        WRONG,  # the tiny row's mean square is far below eps
        ("math.sqrt(q / np.float32(cols) + EPS)", "math.sqrt(q / np.float32(cols))"),
    ),
    M(
        rn,
        "rms_subtracts_nothing_divides_sum",
        WRONG,  # sum of squares, not the mean
        ("math.sqrt(q / np.float32(cols) + EPS)", "math.sqrt(q + EPS)"),
    ),
    M(
        rn,
        "rms_shfl_down",
        WRONG,
        ("q += cuda.shfl_xor_sync(FULL_MASK, q, offset)", "q += cuda.shfl_down_sync(FULL_MASK, q, offset)"),
    ),
    M(
        rn,
        "rms_weight_forgotten",
        WRONG,
        ("out[r, j] = x[r, j] * rs * weight[j]", "out[r, j] = x[r, j] * rs"),
    ),
    M(rn, "rms_every_lane_saves", RACE, ("    if lane == 0:\n        rstd[r] = rs", "    rstd[r] = rs")),
    M(rn, "rms_sqrt_not_reciprocal", WRONG, ("rs = np.float32(1.0) / math.sqrt(", "rs = math.sqrt(")),
]


@cuda.jit
def rms_divide(out, rstd, x, weight, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    q = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = x[r, j]
        q += v * v
    for off in (1, 2, 4, 8, 16):
        q += cuda.shfl_xor_sync(FULL_MASK, q, off)
    rms = math.sqrt(q / np.float32(cols) + EPS)
    for j in range(lane, cols, WARP):
        out[r, j] = weight[j] * (x[r, j] / rms)
    if lane == WARP - 1:
        rstd[r] = np.float32(1.0) / rms


@cuda.jit
def rms_registers(out, rstd, x, weight, rows, cols):
    v = cuda.local.array(PER_LANE, numba.float32)
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    q = np.float32(0.0)
    for k in range(PER_LANE):
        j = lane + k * WARP
        v[k] = x[r, j] if j < cols else np.float32(0.0)
        q += v[k] * v[k]
    offset = 16
    while offset > 0:
        q += cuda.shfl_xor_sync(FULL_MASK, q, offset)
        offset //= 2
    rs = np.float32(1.0) / math.sqrt(q / np.float32(cols) + EPS)
    for k in range(PER_LANE):
        j = lane + k * WARP
        if j < cols:
            out[r, j] = v[k] * rs * weight[j]
    if lane == 0:
        rstd[r] = rs


# ---------------------------------------------------------------- worked kernels (a few controls each)

SOFTMAX_THREE_PASS = [
    M(
        m.softmax_three_pass,
        "three_pass_no_max",
        WRONG,
        ("s += math.exp(x[r, j] - m)", "s += math.exp(x[r, j])"),
        ("out[r, j] = math.exp(x[r, j] - m) / s", "out[r, j] = math.exp(x[r, j]) / s"),
    ),
    M(m.softmax_three_pass, "three_pass_no_guard", OOB, ("    if r < rows:\n", "    if r < 1 << 20:\n")),
]
SOFTMAX_WARP = [
    M(
        m.softmax_warp,
        "warp_sum_not_reduced",
        WRONG,
        ("        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)\n", "        s += np.float32(0.0)\n"),
    ),
    M(
        m.softmax_warp,
        "warp_shuffle_under_if",
        WARP_DIV,
        (
            "        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, offset))",
            "        if lane < cols:\n            m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, offset))",
        ),
    ),
]
WELFORD = [
    M(
        m.layernorm_welford,
        "welford_merge_no_cross_term",
        WRONG,
        ("m2 += m22 + delta * delta * (n * n2 / nn)", "m2 += m22"),
    ),
    M(
        m.layernorm_welford,
        "welford_update_old_mean",
        WRONG,  # (v - old)^2, not (v - old)(v - new)
        ("m2 += delta * (v - mu)", "m2 += delta * delta"),
    ),
]
PARTIALS = [
    # atomics into the partials: they add to memory nobody initialised (and the budget forbids them)
    M(
        m.layernorm_param_partials,
        "partials_atomics",
        UNINIT,
        ("        dw_part[c, j] = dw\n", "        cuda.atomic.add(dw_part, (c, j), dw)\n"),
    ),
    M(
        m.layernorm_param_partials,
        "partials_chunk_overlap",
        WRONG,
        ("min(rows, (c + 1) * rows_per_chunk)", "min(rows, (c + 2) * rows_per_chunk)"),
    ),
]

MUTANTS = {
    "llm1_softmax_three_pass": SOFTMAX_THREE_PASS,
    "llm1_softmax_block": SOFTMAX_BLOCK,
    "llm1_softmax_warp": SOFTMAX_WARP,
    "llm1_softmax_online": SOFTMAX_ONLINE,
    "llm1_layernorm_forward": LAYERNORM_FORWARD,
    "llm1_layernorm_welford": WELFORD,
    "llm1_layernorm_backward": LAYERNORM_BACKWARD,
    "llm1_layernorm_param_partials": PARTIALS,
    "llm1_rmsnorm": RMSNORM,
}

VARIANTS = {
    "llm1_softmax_block": [("warp_shuffles", block_warp_shuffles), ("online_tree", block_online)],
    "llm1_softmax_online": [
        ("branchless", online_branchless),
        ("down_then_broadcast", online_down_then_broadcast),
    ],
    "llm1_softmax_warp": [("online", m.softmax_online), ("cached", m.softmax_warp_cached)],
    "llm1_layernorm_forward": LAYERNORM_VARIANTS + [("shifted_one_pass", ln_shifted_one_pass)],
    "llm1_layernorm_welford": [("two_pass", m.layernorm_forward)],
    "llm1_layernorm_backward": [
        ("block_partials", lnb_block_partials),
        ("regrouped", lnb_recompute_from_weight_grad),
    ],
    "llm1_rmsnorm": [("divide", rms_divide), ("registers", rms_registers)],
}

SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
