"""Known-wrong and known-right kernels for puzzles/llm/softmax_layernorm/layernorm_grad.py.

Most mutants are the reference with one learner's mistake edited in (`mutate` in mutants/common.py:
exact text replacements, each required to match once, so a mutant cannot silently become the
reference when the reference changes). Variants are written out in full: correct kernels built differently.
"""

import numba
import numpy as np
from numba import cuda

from mutants.common import RACE, UNINIT, WRONG, M
from puzzles.llm.softmax_layernorm import layernorm_grad as m
from puzzles.llm.softmax_layernorm.common import FULL_MASK, WARP

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
    "llm1_layernorm_backward": LAYERNORM_BACKWARD,
    "llm1_layernorm_param_partials": PARTIALS,
}

VARIANTS = {
    "llm1_layernorm_backward": [
        ("block_partials", lnb_block_partials),
        ("regrouped", lnb_recompute_from_weight_grad),
    ],
}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
