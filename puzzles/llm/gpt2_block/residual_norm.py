"""The residual add fused with the LayerNorm that follows it, one rung:

llm4_residual_layernorm   res = x + y (kept for the next residual add) and out = LayerNorm(res),
                          one warp per row: one pass over memory fewer than the two kernels
"""

import math

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from puzzles.llm.gpt2_block.common import (
    CHAPTER,
    EPS,
    FULL_MASK,
    ROWS_PER_BLOCK,
    WARP,
    _blocks,
    layernorm_ref,
)


def _res_ln_spec(x, y, weight, bias, rows, cols):
    h = x.astype(np.float64) + y
    out, mu, rs = layernorm_ref(h, weight.astype(np.float64), bias.astype(np.float64))
    return {
        "res": (x + y).astype(np.float32),
        "out": out.astype(np.float32),
        "mean": mu.astype(np.float32),
        "rstd": rs.astype(np.float32),
    }


def _res_ln_cases(rng):
    cases = []
    for rows, cols, kind in [
        (int(rng.integers(3, 6)), int(rng.integers(40, 70)), "plain"),
        (1, 1, "plain"),
        (int(rng.integers(2, 5)), int(rng.integers(33, 47)), "offset"),
        (int(rng.integers(2, 4)), int(rng.integers(20, 31)), "flat"),
        (ROWS_PER_BLOCK + 1, WARP, "plain"),
    ]:
        x = rng.uniform(-2, 2, (rows, cols)).astype(np.float32)
        y = rng.uniform(-2, 2, (rows, cols)).astype(np.float32)
        if kind == "offset":  # large mean, unit spread: E[h^2] - E[h]^2 cancels catastrophically
            x += np.float32(300.0)
        elif kind == "flat":  # variance ~1e-8, below eps = 1e-5: the epsilon matters
            x = (np.float32(1.5) + rng.uniform(-1e-4, 1e-4, (rows, cols))).astype(np.float32)
            y = rng.uniform(-1e-4, 1e-4, (rows, cols)).astype(np.float32)
        weight = rng.uniform(0.5, 1.5, cols).astype(np.float32)
        bias = rng.uniform(-0.5, 0.5, cols).astype(np.float32)
        cases.append(
            Case(
                _blocks(rows, ROWS_PER_BLOCK),
                ROWS_PER_BLOCK * WARP,
                dict(
                    res=np.zeros((rows, cols), np.float32),
                    out=np.zeros((rows, cols), np.float32),
                    mean=np.zeros(rows, np.float32),
                    rstd=np.zeros(rows, np.float32),
                    x=x,
                    y=y,
                    weight=weight,
                    bias=bias,
                    rows=rows,
                    cols=cols,
                ),
            )
        )
    return cases


_LN_TOL = dict(rtol=1e-4, atol=2e-3)


@cuda.jit
def residual_layernorm(res, out, mean, rstd, x, y, weight, bias, rows, cols):
    # res = x + y (the residual stream, kept for the next residual add), out = LayerNorm(res): one
    # read of x and y instead of the residual kernel's write of res and LayerNorm's read of it
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    s = np.float32(0.0)
    for j in range(lane, cols, WARP):
        h = x[r, j] + y[r, j]
        res[r, j] = h
        s += h
    for off in (16, 8, 4, 2, 1):
        s += cuda.shfl_xor_sync(FULL_MASK, s, off)
    mu = s / np.float32(cols)
    sq = np.float32(0.0)
    for j in range(lane, cols, WARP):
        dev = res[r, j] - mu  # this lane's own writes: no barrier needed
        sq += dev * dev
    for off in (16, 8, 4, 2, 1):
        sq += cuda.shfl_xor_sync(FULL_MASK, sq, off)
    rs = np.float32(1.0) / math.sqrt(sq / np.float32(cols) + EPS)
    for j in range(lane, cols, WARP):
        out[r, j] = (res[r, j] - mu) * rs * weight[j] + bias[j]
    if lane == 0:
        mean[r] = mu
        rstd[r] = rs
    ### END SOLUTION


RESIDUAL_LAYERNORM = Puzzle(
    name="llm4_residual_layernorm",
    title="Fused: residual add and LayerNorm",
    statement=f"""The residual stream `res = x + y` and its LayerNorm
`out = (res - mean) * rstd * weight + bias`, with `mean` and `rstd = 1 / sqrt(var + eps)` saved per
row (`eps = 1e-5`), in one kernel: one warp per row (`{ROWS_PER_BLOCK}` rows per block), lanes striding
over the columns, sums combined with `shfl_xor_sync` so that every lane has them. Two passes for the
variance (the mean first, then the mean of squared deviations): rows with a mean of 300 are among the
cases. `res` is written too, since the block's last residual add needs it.""",
    outputs=("res", "out", "mean", "rstd"),
    spec=_res_ln_spec,
    cases=_res_ln_cases,
    reference=residual_layernorm,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    hints=(
        "Each lane may read back the res elements it wrote itself: no barrier between the passes.",
        "shfl_xor_sync with offsets 16, 8, 4, 2, 1 leaves the full sum in every lane.",
        "E[h^2] - E[h]^2 loses every digit when the mean is 300 and the spread 1: sum (h - mean)^2.",
    ),
    chapter=CHAPTER,
    **_LN_TOL,
)


PUZZLES = [RESIDUAL_LAYERNORM]
