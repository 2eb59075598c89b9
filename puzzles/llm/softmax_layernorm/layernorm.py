"""LayerNorm forward, one warp per row (`(out, mean, rstd, x, weight, bias, rows, cols)`):

    llm1_layernorm_forward   two passes: the mean, then the sum of (x - mean)^2; saves mean and rstd
    llm1_layernorm_welford   one pass: Welford's update per lane, Chan's merge across lanes

and `layernorm_forward_cached` (GPU only, the benchmark's best: the row in registers). Tolerances:
common.py's docstring.
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.softmax_layernorm.common import (
    _NORM_TOL,
    CHAPTER,
    EPS,
    FULL_MASK,
    PER_LANE,
    WARP,
    layernorm_ref,
    norm_input,
    norm_shapes,
    params,
    warp_per_row,
)


def layernorm_spec(x, weight, bias, rows, cols):
    out, mu, rs = layernorm_ref(x, weight, bias)
    return dict(out=out.astype(np.float32), mean=mu.astype(np.float32), rstd=rs.astype(np.float32))


def layernorm_cases(rng):
    out = []
    for rows, cols, kind in norm_shapes(rng):
        x = norm_input(rng, rows, cols, kind)
        w, b = params(rng, cols)
        grid, block = warp_per_row(rows)
        out.append(
            Case(
                grid,
                block,
                dict(
                    out=np.zeros((rows, cols), np.float32),
                    mean=np.zeros(rows, np.float32),
                    rstd=np.zeros(rows, np.float32),
                    x=x,
                    weight=w,
                    bias=b,
                    rows=rows,
                    cols=cols,
                ),
            )
        )
    return out


_LN = dict(
    outputs=("out", "mean", "rstd"), spec=layernorm_spec, cases=layernorm_cases, chapter=CHAPTER, **_NORM_TOL
)


@cuda.jit
def layernorm_forward(out, mean, rstd, x, weight, bias, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    s = np.float32(0.0)
    for j in range(lane, cols, WARP):
        s += x[r, j]
    offset = 16
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2
    mu = s / np.float32(cols)
    # second pass over (x - mean)^2: no cancellation between two large sums
    q = np.float32(0.0)
    for j in range(lane, cols, WARP):
        dev = x[r, j] - mu
        q += dev * dev
    offset = 16
    while offset > 0:
        q += cuda.shfl_xor_sync(FULL_MASK, q, offset)
        offset //= 2
    rs = np.float32(1.0) / math.sqrt(q / np.float32(cols) + EPS)
    for j in range(lane, cols, WARP):
        out[r, j] = (x[r, j] - mu) * rs * weight[j] + bias[j]
    if lane == 0:
        mean[r] = mu
        rstd[r] = rs
    ### END SOLUTION


LAYERNORM_FORWARD = Puzzle(
    name="llm1_layernorm_forward",
    title="LayerNorm forward (two passes), saving mean and rstd",
    statement=f"""`out = (x - mean) * rstd * weight + bias` per row, with `mean` the row's mean,
`rstd = 1 / sqrt(var + eps)`, `var` the **biased** variance (divide by `cols`), `eps = {float(EPS)}`.
Save `mean[r]` and `rstd[r]` for the backward pass (written once, by one lane). One warp per row:
sum the row for the mean, then sum `(x - mean)^2` in a second pass.""",
    reference=layernorm_forward,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(shared_bytes=0),
    hints=(
        "Reduce with shfl_xor_sync so every lane gets the row's sum; convert cols with np.float32(cols).",
        "The variance divides by cols (the biased estimate), as PyTorch's layer_norm does.",
        "Compute E[(x - mean)^2] in a second pass: E[x^2] - mean^2 cancels catastrophically when the "
        "mean is large.",
        "Only lane 0 writes mean[r] and rstd[r].",
    ),
    **_LN,
)


@cuda.jit
def layernorm_welford(out, mean, rstd, x, weight, bias, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    # Welford: count n, running mean mu, m2 = sum of squared deviations from the running mean
    n = np.float32(0.0)
    mu = np.float32(0.0)
    m2 = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = x[r, j]
        n += np.float32(1.0)
        delta = v - mu
        mu += delta / n
        m2 += delta * (v - mu)
    # Chan et al.: merge two (n, mean, m2) summaries
    offset = 16
    while offset > 0:
        n2 = cuda.shfl_xor_sync(FULL_MASK, n, offset)
        mu2 = cuda.shfl_xor_sync(FULL_MASK, mu, offset)
        m22 = cuda.shfl_xor_sync(FULL_MASK, m2, offset)
        nn = n + n2
        if nn > 0:
            delta = mu2 - mu
            mu += delta * (n2 / nn)
            m2 += m22 + delta * delta * (n * n2 / nn)
        n = nn
        offset //= 2
    rs = np.float32(1.0) / math.sqrt(m2 / n + EPS)
    for j in range(lane, cols, WARP):
        out[r, j] = (x[r, j] - mu) * rs * weight[j] + bias[j]
    if lane == 0:
        mean[r] = mu
        rstd[r] = rs


LAYERNORM_WELFORD = Puzzle(
    name="llm1_layernorm_welford",
    title="LayerNorm forward with Welford's algorithm",
    statement="""The same LayerNorm with the mean and variance from one pass: each lane runs Welford's
update over its elements, and the lanes' `(count, mean, m2)` summaries are merged with Chan's formula
through shuffles.""",
    reference=layernorm_welford,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(shared_bytes=0),
    **_LN,
)


@cuda.jit
def layernorm_forward_cached(out, mean, rstd, x, weight, bias, rows, cols):
    # two passes over registers, one over global memory
    v = cuda.local.array(PER_LANE, numba.float32)
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    s = np.float32(0.0)
    for k in range(PER_LANE):
        j = lane + k * WARP
        v[k] = x[r, j] if j < cols else np.float32(0.0)
        s += v[k]
    offset = 16
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2
    mu = s / np.float32(cols)
    q = np.float32(0.0)
    for k in range(PER_LANE):
        if lane + k * WARP < cols:
            dev = v[k] - mu
            q += dev * dev
    offset = 16
    while offset > 0:
        q += cuda.shfl_xor_sync(FULL_MASK, q, offset)
        offset //= 2
    rs = np.float32(1.0) / math.sqrt(q / np.float32(cols) + EPS)
    for k in range(PER_LANE):
        j = lane + k * WARP
        if j < cols:
            out[r, j] = (v[k] - mu) * rs * weight[j] + bias[j]
    if lane == 0:
        mean[r] = mu
        rstd[r] = rs


PUZZLES = [LAYERNORM_FORWARD, LAYERNORM_WELFORD]
