"""RMSNorm forward (LayerNorm without the mean and the bias), one rung:

    llm1_rmsnorm   one warp per row, one shuffle reduction of x * x; saves rstd

Tolerances: common.py's docstring (the same bound as LayerNorm's).
"""

import math

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.softmax_layernorm.common import (
    _NORM_TOL,
    CHAPTER,
    EPS,
    FULL_MASK,
    WARP,
    norm_input,
    norm_shapes,
    params,
    warp_per_row,
)


def rmsnorm_ref(x, weight, eps=float(EPS)):
    x = x.astype(np.float64)
    rs = 1.0 / np.sqrt((x * x).mean(axis=1) + eps)
    return x * rs[:, None] * weight.astype(np.float64), rs


def rmsnorm_spec(x, weight, rows, cols):
    out, rs = rmsnorm_ref(x, weight)
    return dict(out=out.astype(np.float32), rstd=rs.astype(np.float32))


def rmsnorm_cases(rng):
    out = []
    for rows, cols, kind in norm_shapes(rng, last="tiny"):
        x = norm_input(rng, rows, cols, kind)
        w, _ = params(rng, cols)
        grid, block = warp_per_row(rows)
        out.append(
            Case(
                grid,
                block,
                dict(
                    out=np.zeros((rows, cols), np.float32),
                    rstd=np.zeros(rows, np.float32),
                    x=x,
                    weight=w,
                    rows=rows,
                    cols=cols,
                ),
            )
        )
    return out


@cuda.jit
def rmsnorm_forward(out, rstd, x, weight, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    q = np.float32(0.0)
    for j in range(lane, cols, WARP):
        q += x[r, j] * x[r, j]
    offset = 16
    while offset > 0:
        q += cuda.shfl_xor_sync(FULL_MASK, q, offset)
        offset //= 2
    rs = np.float32(1.0) / math.sqrt(q / np.float32(cols) + EPS)
    for j in range(lane, cols, WARP):
        out[r, j] = x[r, j] * rs * weight[j]
    if lane == 0:
        rstd[r] = rs
    ### END SOLUTION


RMSNORM = Puzzle(
    name="llm1_rmsnorm",
    title="RMSNorm forward",
    statement=f"""`out = x * rstd * weight` with `rstd = 1 / sqrt(mean(x^2) + eps)`
(`eps = {float(EPS)}`): LayerNorm without the mean and the bias (LLaMA and most recent models).
Save `rstd[r]` (one lane). One warp per row.""",
    outputs=("out", "rstd"),
    spec=rmsnorm_spec,
    cases=rmsnorm_cases,
    reference=rmsnorm_forward,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(shared_bytes=0),
    hints=(
        "One shuffle reduction: the sum of x * x over the row.",
        "eps goes inside the square root, added to the mean square.",
        "Only lane 0 writes rstd[r].",
    ),
    chapter=CHAPTER,
    **_NORM_TOL,
)


PUZZLES = [RMSNORM]
