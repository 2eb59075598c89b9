"""Known-wrong and known-right kernels for puzzles/llm/small_ops/crossentropy.py.

Mutants are the reference with one learner's mistake edited in (`mutate`: exact replacements, each
required to match once); variants are correct kernels written differently.
"""

import math

import numpy as np
from numba import cuda

from mutants.common import RACE, WRONG, M, over
from puzzles.llm.small_ops import crossentropy as m
from puzzles.llm.small_ops.common import FULL_MASK, NEG_INF, WARP

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
    M(
        cf,
        "ce_row_fits_warp",
        WRONG,  # one logit per lane: the vocabulary past 32 never enters the sum
        ("for j in range(lane, cols, WARP):", "for j in range(lane, min(cols, WARP), WARP):"),
    ),
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
        "ce_log_of_probability",
        WRONG,  # p_t = exp(x_t - m) / d underflows to 0 when x_t is 104 below the max: log(0), inf
        (
            "losses[r] = math.log(d) + m - logits[r, targets[r]]",
            "losses[r] = -math.log(math.exp(logits[r, targets[r]] - m) / d)",
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


cb = m.crossentropy_softmax_backward


CE_BACKWARD = [
    M(
        cb,
        "cesb_log_of_probability",
        WRONG,  # the loss from the probability: log(0) = -inf where the target is far below the max
        (
            "losses[r] = math.log(d) + m - logits[r, t]",
            "losses[r] = -math.log(math.exp(logits[r, t] - m) * inv)",
        ),
    ),
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


MUTANTS = {
    "llm2_crossentropy_forward": CE_FORWARD,
    "llm2_crossentropy_softmax_backward": CE_BACKWARD,
}

VARIANTS = {
    "llm2_crossentropy_forward": [("shfl_down", ce_shfl_down), ("two_pass", ce_two_pass)],
    "llm2_crossentropy_softmax_backward": [
        ("logsumexp", cesb_logsumexp),
        ("target_fixup", cesb_target_fixup),
    ],
}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
