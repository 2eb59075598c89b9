"""Known-wrong and known-right kernels for puzzles/llm/softmax_layernorm/softmax.py (softmax).

Most mutants are the reference with one learner's mistake edited in (`mutate` in mutants/common.py:
exact text replacements, each required to match once, so a mutant cannot silently become the
reference when the reference changes). Variants are written out in full: correct kernels built differently.
"""

import math

import numba
import numpy as np
from numba import cuda

from mutants.common import BARRIER, OOB, RACE, WARP_DIV, WRONG, M, over
from puzzles.llm.softmax_layernorm import softmax as m
from puzzles.llm.softmax_layernorm.common import FULL_MASK, NEG_INF, TPB, WARP

HALF = TPB // 2


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


sb = m.softmax_block


SOFTMAX_BLOCK = [
    M(
        sb,
        "block_row_fits_block",
        WRONG,  # each thread takes column t only: columns past blockDim.x (rows of 196+) never written
        (
            "    m = NEG_INF\n    for j in range(t, cols, bd):",
            "    m = NEG_INF\n    for j in range(t, min(cols, bd), bd):",
        ),
        (
            "        for j in range(t, cols, bd):\n            s +=",
            "        for j in range(t, min(cols, bd), bd):\n            s +=",
        ),
        (
            "    s = part[0]\n    for j in range(t, cols, bd):",
            "    s = part[0]\n    for j in range(t, min(cols, bd), bd):",
        ),
    ),
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
        ("/ s if m != NEG_INF else np.float32(0.0)", "/ s"),
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
        out[r, j] = math.exp(x[r, j] - mx) / d if mx > NEG_INF else np.float32(0.0)


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


so = m.softmax_online


SOFTMAX_ONLINE = [
    M(
        so,
        "online_row_fits_warp",
        WRONG,  # one element per lane: a row longer than 32 is cut short
        (
            "for j in range(lane, cols, WARP):\n        v = x[r, j]",
            "for j in range(lane, min(cols, WARP), WARP):\n        v = x[r, j]",
        ),
        (
            "for j in range(lane, cols, WARP):\n        out[r, j]",
            "for j in range(lane, min(cols, WARP), WARP):\n        out[r, j]",
        ),
    ),
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
        ("/ d if m != NEG_INF else np.float32(0.0)", "/ d"),
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
        out[r, j] = math.exp(x[r, j] - mx) / d if mx > NEG_INF else np.float32(0.0)


MUTANTS = {
    "llm1_softmax_three_pass": SOFTMAX_THREE_PASS,
    "llm1_softmax_block": SOFTMAX_BLOCK,
    "llm1_softmax_warp": SOFTMAX_WARP,
    "llm1_softmax_online": SOFTMAX_ONLINE,
}

VARIANTS = {
    "llm1_softmax_block": [("warp_shuffles", block_warp_shuffles), ("online_tree", block_online)],
    "llm1_softmax_online": [
        ("branchless", online_branchless),
        ("down_then_broadcast", online_down_then_broadcast),
    ],
    "llm1_softmax_warp": [("online", m.softmax_online), ("cached", m.softmax_warp_cached)],
}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
