"""Known-wrong and known-right kernels for puzzles/llm/softmax_layernorm/layernorm.py (LayerNorm forward).

Most mutants are the reference with one learner's mistake edited in (`mutate` in mutants/common.py:
exact text replacements, each required to match once, so a mutant cannot silently become the
reference when the reference changes). Variants are written out in full: correct kernels built differently.
"""

import math

import numpy as np
from numba import cuda

from mutants.common import RACE, WRONG, M
from puzzles.llm.softmax_layernorm import layernorm as m
from puzzles.llm.softmax_layernorm.common import EPS, FULL_MASK, WARP

lf = m.layernorm_forward


LAYERNORM_FORWARD = [
    M(
        lf,
        "ln_row_fits_warp",
        WRONG,  # one element per lane: the statistics of the first 32 columns only
        (
            "for j in range(lane, cols, WARP):\n        s += x[r, j]",
            "for j in range(lane, min(cols, WARP), WARP):\n        s += x[r, j]",
        ),
        (
            "for j in range(lane, cols, WARP):\n        dev",
            "for j in range(lane, min(cols, WARP), WARP):\n        dev",
        ),
        (
            "for j in range(lane, cols, WARP):\n        out[r, j]",
            "for j in range(lane, min(cols, WARP), WARP):\n        out[r, j]",
        ),
    ),
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


MUTANTS = {
    "llm1_layernorm_forward": LAYERNORM_FORWARD,
    "llm1_layernorm_welford": WELFORD,
}

VARIANTS = {
    "llm1_layernorm_forward": LAYERNORM_VARIANTS + [("shifted_one_pass", ln_shifted_one_pass)],
    "llm1_layernorm_welford": [("two_pass", m.layernorm_forward)],
}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
