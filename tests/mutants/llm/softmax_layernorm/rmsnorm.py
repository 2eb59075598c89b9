"""Known-wrong and known-right kernels for puzzles/llm/softmax_layernorm/rmsnorm.py (RMSNorm).

Most mutants are the reference with one learner's mistake edited in (`mutate` in mutants/common.py:
exact text replacements, each required to match once, so a mutant cannot silently become the
reference when the reference changes). Variants are written out in full: correct kernels built differently.
"""

import math

import numba
import numpy as np
from numba import cuda

from mutants.common import RACE, WRONG, M, over
from puzzles.llm.softmax_layernorm import rmsnorm as m
from puzzles.llm.softmax_layernorm.common import EPS, FULL_MASK, PER_LANE, WARP

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


# a Python float makes the arithmetic float64: this exercise (float64="reject") fails it
RMS_FLOAT64 = M(
    m.rmsnorm_forward, "rms_float64_accumulator", over("float64"), ("q = np.float32(0.0)", "q = 0.0")
)

MUTANTS = {"llm1_rmsnorm": [*RMSNORM, RMS_FLOAT64]}

VARIANTS = {"llm1_rmsnorm": [("divide", rms_divide), ("registers", rms_registers)]}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
