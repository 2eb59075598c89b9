"""LayerNorm backward, from the saved mean and rstd:

    llm1_layernorm_backward        one warp per row: dx by two row reductions; dweight and dbias by
                                   atomics (every row adds to the same column totals)
    llm1_layernorm_param_partials  dweight and dbias without atomics: stage 1 of a deterministic
                                   reduction (per-chunk partial sums, one thread per column)

and `column_sum`, the stage 2 that adds the chunks in a fixed order (not an exercise).
Tolerances: common.py's docstring.
"""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.softmax_layernorm.common import (
    _NORM_TOL,
    CHAPTER,
    FULL_MASK,
    WARP,
    norm_input,
    norm_shapes,
    params,
    saved_stats,
    warp_per_row,
)


def layernorm_backward_ref(dout, x, mean, rstd, weight):
    """float64 LayerNorm backward from the saved mean and rstd: (dx, dweight, dbias)."""
    dout, x = dout.astype(np.float64), x.astype(np.float64)
    rs = rstd.astype(np.float64)[:, None]
    xh = (x - mean.astype(np.float64)[:, None]) * rs
    g = dout * weight.astype(np.float64)
    dx = rs * (g - g.mean(axis=1, keepdims=True) - xh * (g * xh).mean(axis=1, keepdims=True))
    return dx, (dout * xh).sum(axis=0), dout.sum(axis=0)


def layernorm_backward_spec(dout, x, mean, rstd, weight, rows, cols):
    dx, dw, db = layernorm_backward_ref(dout, x, mean, rstd, weight)
    return dict(dx=dx.astype(np.float32), dweight=dw.astype(np.float32), dbias=db.astype(np.float32))


def layernorm_backward_cases(rng):
    out = []
    shapes = norm_shapes(rng, last="normal")
    shapes[3] = (int(rng.integers(5, 9)), int(rng.integers(40, 100)), "normal")  # many rows collide
    for rows, cols, kind in shapes:
        x = norm_input(rng, rows, cols, kind)
        mu, rs = saved_stats(x)
        w, _ = params(rng, cols)
        dout = rng.normal(0, 1, (rows, cols)).astype(np.float32)
        grid, block = warp_per_row(rows)
        out.append(
            Case(
                grid,
                block,
                dict(
                    dx=np.zeros((rows, cols), np.float32),
                    dweight=np.zeros(cols, np.float32),
                    dbias=np.zeros(cols, np.float32),
                    dout=dout,
                    x=x,
                    mean=mu,
                    rstd=rs,
                    weight=w,
                    rows=rows,
                    cols=cols,
                ),
            )
        )
    return out


def param_partials_spec(dout, x, mean, rstd, rows, cols, rows_per_chunk):
    dout, x = dout.astype(np.float64), x.astype(np.float64)
    xh = (x - mean.astype(np.float64)[:, None]) * rstd.astype(np.float64)[:, None]
    chunks = (rows + rows_per_chunk - 1) // rows_per_chunk
    parts = [slice(c * rows_per_chunk, (c + 1) * rows_per_chunk) for c in range(chunks)]
    dw = np.stack([(dout * xh)[s].sum(axis=0) for s in parts])
    db = np.stack([dout[s].sum(axis=0) for s in parts])
    return dict(dw_part=dw.astype(np.float32), db_part=db.astype(np.float32))


def param_partials_cases(rng):
    out = []
    for rows, cols, chunk in [
        (int(rng.integers(5, 12)), int(rng.integers(33, 70)), 3),
        (1, int(rng.integers(2, 20)), 2),
        (int(rng.integers(3, 8)), 1, 2),
        (int(rng.integers(9, 16)), int(rng.integers(70, 130)), 4),
        (6, 32, 6),
    ]:
        x = norm_input(rng, rows, cols, "normal")
        mu, rs = saved_stats(x)
        dout = rng.normal(0, 1, (rows, cols)).astype(np.float32)
        chunks = (rows + chunk - 1) // chunk
        grid = ((cols + WARP - 1) // WARP, chunks)
        out.append(
            Case(
                grid,
                WARP,
                dict(
                    dw_part=np.zeros((chunks, cols), np.float32),
                    db_part=np.zeros((chunks, cols), np.float32),
                    dout=dout,
                    x=x,
                    mean=mu,
                    rstd=rs,
                    rows=rows,
                    cols=cols,
                    rows_per_chunk=chunk,
                ),
            )
        )
    return out


@cuda.jit
def layernorm_backward(dx, dweight, dbias, dout, x, mean, rstd, weight, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    mu = mean[r]
    rs = rstd[r]
    # g = w * dout; dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat))
    gsum = np.float32(0.0)
    gxsum = np.float32(0.0)
    for j in range(lane, cols, WARP):
        xh = (x[r, j] - mu) * rs
        g = weight[j] * dout[r, j]
        gsum += g
        gxsum += g * xh
        # every row adds into the same dweight[j], dbias[j]: other warps do too
        cuda.atomic.add(dweight, j, dout[r, j] * xh)
        cuda.atomic.add(dbias, j, dout[r, j])
    offset = 16
    while offset > 0:
        gsum += cuda.shfl_xor_sync(FULL_MASK, gsum, offset)
        gxsum += cuda.shfl_xor_sync(FULL_MASK, gxsum, offset)
        offset //= 2
    gmean = gsum / np.float32(cols)
    gxmean = gxsum / np.float32(cols)
    for j in range(lane, cols, WARP):
        xh = (x[r, j] - mu) * rs
        dx[r, j] = rs * (weight[j] * dout[r, j] - gmean - xh * gxmean)
    ### END SOLUTION


LAYERNORM_BACKWARD = Puzzle(
    name="llm1_layernorm_backward",
    title="LayerNorm backward: dx, and dweight/dbias by atomics",
    statement="""From the upstream gradient `dout` and the saved `mean`, `rstd`: with
`x_hat = (x - mean) * rstd` and `g = weight * dout`,
`dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat))` (means over the row).
`dweight[j] = sum over rows of dout * x_hat`, `dbias[j] = sum over rows of dout`: every row adds to
the same column totals, so use `cuda.atomic.add` (`dweight` and `dbias` start at zero). One warp per
row.""",
    outputs=("dx", "dweight", "dbias"),
    zeroed=("dweight", "dbias"),
    spec=layernorm_backward_spec,
    cases=layernorm_backward_cases,
    reference=layernorm_backward,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    hints=(
        "Two row sums are needed before any dx: sum(g) and sum(g * x_hat). Reduce both with shuffles.",
        "Rows run in different warps and blocks at the same time: dweight[j] += ... is a race; "
        "cuda.atomic.add(dweight, j, value) is not.",
        "mean(...) divides by cols, as a float32: np.float32(cols).",
    ),
    chapter=CHAPTER,
    **_NORM_TOL,
)


@cuda.jit
def layernorm_param_partials(dw_part, db_part, dout, x, mean, rstd, rows, cols, rows_per_chunk):
    # thread j of block (bx, c) sums column j over chunk c of the rows: neighbours read neighbours
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    if j < cols:
        dw = np.float32(0.0)
        db = np.float32(0.0)
        for r in range(c * rows_per_chunk, min(rows, (c + 1) * rows_per_chunk)):
            d = dout[r, j]
            dw += d * ((x[r, j] - mean[r]) * rstd[r])
            db += d
        dw_part[c, j] = dw
        db_part[c, j] = db


LAYERNORM_PARAM_PARTIALS = Puzzle(
    name="llm1_layernorm_param_partials",
    title="dweight and dbias without atomics: per-chunk partial sums",
    statement="""Stage 1 of a deterministic reduction over rows: block `(bx, c)` has one thread per
column; thread `j` sums `dout * x_hat` and `dout` over the rows of chunk `c` (`rows_per_chunk`
rows) and writes `dw_part[c, j]`, `db_part[c, j]`. Stage 2 (`column_sum`) adds the chunks in a
fixed order.""",
    outputs=("dw_part", "db_part"),
    spec=param_partials_spec,
    cases=param_partials_cases,
    reference=layernorm_param_partials,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    # a row of `cols` floats starts anywhere in a 32-byte sector: 50% allows that, and rejects a
    # thread walking along a row (1 float of 8 per sector)
    budget=Budget(global_atomics_per_block=0, min_coalescing=0.5),
    chapter=CHAPTER,
    **_NORM_TOL,
)


@cuda.jit
def column_sum(out, part, chunks, cols):
    # stage 2: the partials of each column in a fixed order, so the result is the same every run
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if j < cols:
        s = np.float32(0.0)
        for c in range(chunks):
            s += part[c, j]
        out[j] = s


PUZZLES = [LAYERNORM_BACKWARD, LAYERNORM_PARAM_PARTIALS]
