"""Known-wrong and known-right kernels for puzzles/llm/gpt2_block/residual_norm.py.

MUTANTS[puzzle] = [(name, kernel, expected exception, detail)]; VARIANTS[puzzle] = [(name, kernel)].
Format: mutants/common.py.
"""

import math

import numpy as np
from numba import cuda

from mutants.common import OOB, WRONG
from puzzles.llm.gpt2_block import residual_norm as gb
from puzzles.llm.gpt2_block.common import EPS, FULL_MASK, WARP


def _res_ln(use_y=True, one_pass=False, eps=True, xor=True, guard=True, reciprocal=True):
    @cuda.jit
    def kernel(res, out, mean, rstd, x, y, weight, bias, rows, cols):
        lane = cuda.threadIdx.x % WARP
        r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
        if guard and r >= rows:
            return
        s = np.float32(0.0)
        s2 = np.float32(0.0)
        for j in range(lane, cols, WARP):
            h = x[r, j] + y[r, j]
            res[r, j] = h
            hv = h if use_y else x[r, j]
            s += hv
            s2 += hv * hv
        for off in (16, 8, 4, 2, 1):
            if xor:
                s += cuda.shfl_xor_sync(FULL_MASK, s, off)
                s2 += cuda.shfl_xor_sync(FULL_MASK, s2, off)
            else:
                s += cuda.shfl_down_sync(FULL_MASK, s, off)
                s2 += cuda.shfl_down_sync(FULL_MASK, s2, off)
        mu = s / np.float32(cols)
        if one_pass:
            var = s2 / np.float32(cols) - mu * mu
        else:
            sq = np.float32(0.0)
            for j in range(lane, cols, WARP):
                dev = (res[r, j] if use_y else x[r, j]) - mu
                sq += dev * dev
            for off in (16, 8, 4, 2, 1):
                if xor:
                    sq += cuda.shfl_xor_sync(FULL_MASK, sq, off)
                else:
                    sq += cuda.shfl_down_sync(FULL_MASK, sq, off)
            var = sq / np.float32(cols)
        sd = math.sqrt(var + EPS) if eps else math.sqrt(var)
        rs = np.float32(1.0) / sd
        for j in range(lane, cols, WARP):
            out[r, j] = ((res[r, j] if use_y else x[r, j]) - mu) * rs * weight[j] + bias[j]
        if lane == 0:
            mean[r] = mu
            rstd[r] = rs if reciprocal else sd

    return kernel


rl_ignores_y = _res_ln(use_y=False)


rl_one_pass_variance = _res_ln(one_pass=True)


rl_no_eps = _res_ln(eps=False)


rl_shfl_down = _res_ln(xor=False)


rl_no_guard = _res_ln(guard=False)


rl_saves_std = _res_ln(reciprocal=False)


for _name in (
    "rl_ignores_y",
    "rl_one_pass_variance",
    "rl_no_eps",
    "rl_shfl_down",
    "rl_no_guard",
    "rl_saves_std",
):
    globals()[_name].__name__ = _name


@cuda.jit
def rl_recompute(res, out, mean, rstd, x, y, weight, bias, rows, cols):
    # never reads res back: x + y again in every pass
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r < rows:
        s = np.float32(0.0)
        for j in range(lane, cols, WARP):
            s += x[r, j] + y[r, j]
        off = 16
        while off >= 1:
            s += cuda.shfl_xor_sync(FULL_MASK, s, off)
            off //= 2
        mu = s / np.float32(cols)
        sq = np.float32(0.0)
        for j in range(lane, cols, WARP):
            dev = x[r, j] + y[r, j] - mu
            sq += dev * dev
        off = 16
        while off >= 1:
            sq += cuda.shfl_xor_sync(FULL_MASK, sq, off)
            off //= 2
        rs = np.float32(1.0) / math.sqrt(sq / np.float32(cols) + EPS)
        for j in range(lane, cols, WARP):
            h = x[r, j] + y[r, j]
            res[r, j] = h
            out[r, j] = (h - mu) * rs * weight[j] + bias[j]
        if lane == 0:
            mean[r] = mu
            rstd[r] = rs


@cuda.jit
def rl_chunked(res, out, mean, rstd, x, y, weight, bias, rows, cols):
    # each lane takes a contiguous chunk of the row instead of every 32nd element
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    per = (cols + WARP - 1) // WARP
    lo = min(cols, lane * per)
    hi = min(cols, lo + per)
    s = np.float32(0.0)
    for j in range(lo, hi):
        res[r, j] = x[r, j] + y[r, j]
        s += res[r, j]
    for off in (1, 2, 4, 8, 16):
        s += cuda.shfl_xor_sync(FULL_MASK, s, off)
    mu = s / np.float32(cols)
    sq = np.float32(0.0)
    for j in range(lo, hi):
        sq += (res[r, j] - mu) * (res[r, j] - mu)
    for off in (1, 2, 4, 8, 16):
        sq += cuda.shfl_xor_sync(FULL_MASK, sq, off)
    rs = np.float32(1.0) / math.sqrt(sq / np.float32(cols) + EPS)
    for j in range(lo, hi):
        out[r, j] = (res[r, j] - mu) * rs * weight[j] + bias[j]
    if lane == 0:
        mean[r] = mu
        rstd[r] = rs


MUTANTS = {
    "llm4_residual_layernorm": [
        ("statistics of x instead of x + y", rl_ignores_y, *WRONG),
        ("one-pass variance E[h^2] - E[h]^2", rl_one_pass_variance, *WRONG),
        ("epsilon forgotten", rl_no_eps, *WRONG),
        ("shfl_down: only lane 0 has the sum", rl_shfl_down, *WRONG),
        ("no row guard", rl_no_guard, *OOB),
        ("saves the standard deviation, not its reciprocal", rl_saves_std, *WRONG),
    ],
}

VARIANTS = {
    "llm4_residual_layernorm": [
        ("x + y recomputed in each pass", rl_recompute),
        ("contiguous chunk per lane", rl_chunked),
    ],
}

SEEDS = {p.name: (0, 1, 2) for p in gb.PUZZLES}  # references and worked kernels too
