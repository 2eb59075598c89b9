"""Transformer kernels 1: softmax, LayerNorm (forward, Welford, backward) and RMSNorm. (Over 1000
lines: one notebook, one module: the kernels, their derived tolerances, cases and benchmark together.)

Kernel names are stable (the GPT-2 capstone imports them); every row-wise kernel takes a C-contiguous
float32 matrix `x[rows, cols]`:

    softmax_three_pass(out, x, rows, cols)             one thread per row; grid*block >= rows
    softmax_block(out, x, rows, cols)                  one block of TPB threads per row; grid = rows
    softmax_warp(out, x, rows, cols)                   one warp per row, blockDim.x a multiple of 32
    softmax_online(out, x, rows, cols)                 one warp per row, one pass for max and sum
    softmax_warp_cached(out, x, rows, cols)            one warp per row, row in registers, cols <= 32*PER_LANE
    layernorm_forward(out, mean, rstd, x, weight, bias, rows, cols)      one warp per row, two passes
    layernorm_welford(out, mean, rstd, x, weight, bias, rows, cols)      one warp per row, Welford
    layernorm_forward_cached(out, mean, rstd, x, weight, bias, rows, cols)  row in registers
    layernorm_backward(dx, dweight, dbias, dout, x, mean, rstd, weight, rows, cols)
                                                       one warp per row; dweight/dbias by atomics (zeroed)
    layernorm_param_partials(dw_part, db_part, dout, x, mean, rstd, rows, cols, rows_per_chunk)
                                                       deterministic stage 1: block (cols/bd, chunks)
    column_sum(out, part, chunks, cols)                deterministic stage 2: one thread per column
    rmsnorm_forward(out, rstd, x, weight, rows, cols)  one warp per row

Masked rows: a softmax row whose entries are all -inf (every position masked) has no distribution to
normalise; `exp(-inf - (-inf))` is NaN, and a NaN spreads through everything after it (one padded
sequence would poison a whole batch's loss). These kernels define its output as zeros: the row
attends to nothing. (PyTorch's softmax returns NaN there; FlashAttention-style kernels return zeros.)

Tolerances, derived from float32 arithmetic (unit roundoff u = 2**-24; one ulp is at most 2u
relative). The NumPy specs compute in float64, so all the error is the kernel's:

- softmax: each term exp(x - m) carries the rounding of x - m (relative u|x - m|; only terms with
  |x - m| < 104 survive underflow), the GPU's expf (2 ulp, CUDA C++ Programming Guide, accuracy of
  single-precision functions), then a sum of n positive terms in any order (at most (n - 1)u
  relative, first order) and one division (u; 2u where a reciprocal is multiplied). So relative
  error <= (n + 104 + 4 + 2)u; the bound
  at the largest rows of the cases is SOFTMAX_RTOL. Results below FLT_MIN (2**-126) are subnormal
  and keep fewer bits (or are flushed with fast math): SOFTMAX_ATOL = FLT_MIN.
- LayerNorm / RMSNorm: out = (x - mean) * rstd * w + b. The mean and the variance are sums of n
  terms ((n + 8)u relative each, a few more roundings for the division and the square root), and
  x_hat = (x - mean) * rstd is at most sqrt(n) in size, so |error| <= (n + 8)u (sqrt(n) + R) W + u|b|,
  where R bounds |x| / std (the data are drawn with R <= 8) and W = 2 bounds |w|. The case with a
  large offset (mean +-1000, std about 1) is drawn on a grid of 1/64 so that every sum of it is
  exact in float32 in any order; what remains is the rounding of the mean itself, u * 1000 / std
  per rounding, a handful of them (Welford's running mean rounds once per element of a lane).
  NORM_ATOL bounds both; NORM_RTOL = (n + 8)u covers the large values (the saved means).

The simulator computes float32 array arithmetic in float32, but `math.exp`, `math.log`,
`math.sqrt` and `math.tanh` return Python floats (float64, correctly rounded) which are rounded to
float32 at the next operation with a float32 value: 0.5 ulp where the GPU's expf may be 2 ulp. The
tolerances above use the GPU's (larger) error, so they cover both engines.
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

CHAPTER = "llm-1"

WARP = 32
FULL_MASK = 0xFFFFFFFF
TPB = 64  # block-per-row softmax: threads per block (two warps), a power of two
ROWS_PER_BLOCK = 2  # warp-per-row kernels: rows (warps) per block in the puzzles
ROW_THREADS = 32  # one-thread-per-row softmax: threads per block
PER_LANE = 8  # register-cached kernels: floats per lane (rows up to 32 * PER_LANE)
NEG_INF = np.float32(-np.inf)
EPS = np.float32(1e-5)  # LayerNorm / RMSNorm epsilon (PyTorch's and GPT-2's default)

# what `from puzzles.llm.softmax_layernorm import *` gives a notebook: constants only, never a kernel
__all__ = ["WARP", "FULL_MASK", "TPB", "ROWS_PER_BLOCK", "PER_LANE", "NEG_INF", "EPS"]

# --------------------------------------------------------------------- tolerances (see the docstring)
U = 2.0**-24
FLT_MIN = 2.0**-126
SOFTMAX_MAX_COLS = 256
SOFTMAX_RTOL = (SOFTMAX_MAX_COLS + 104 + 4 + 2) * U  # 2.2e-5
SOFTMAX_ATOL = FLT_MIN
NORM_MAX_COLS = 160
W_MAX, B_MAX, R_MAX, OFFSET = 2.0, 1.0, 8.0, 1000.0
NORM_RTOL = (NORM_MAX_COLS + 8) * U  # 1.0e-5
NORM_ATOL = (
    NORM_RTOL * (math.sqrt(NORM_MAX_COLS) + R_MAX) * W_MAX
    + U * B_MAX
    + (NORM_MAX_COLS // WARP + 8) * U * OFFSET / 0.9 * W_MAX
)  # 2.1e-3


# ===================================================================== softmax


@cuda.jit
def softmax_three_pass(out, x, rows, cols):
    r = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if r < rows:
        m = NEG_INF
        for j in range(cols):
            m = max(m, x[r, j])
        if m == NEG_INF:
            # every entry masked: no distribution to normalise (and exp(-inf - -inf) is NaN)
            for j in range(cols):
                out[r, j] = 0.0
            return
        # subtracting the max makes every exponent <= 0: no overflow, and the largest term is 1
        s = np.float32(0.0)
        for j in range(cols):
            s += math.exp(x[r, j] - m)
        for j in range(cols):
            out[r, j] = math.exp(x[r, j] - m) / s


@cuda.jit
def softmax_block(out, x, rows, cols):
    part = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    ### BEGIN SOLUTION
    m = NEG_INF
    for j in range(t, cols, bd):
        m = max(m, x[r, j])
    part[t] = m
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] = max(part[t], part[t + stride])
        stride //= 2
    cuda.syncthreads()
    m = part[0]
    cuda.syncthreads()  # everyone has read the max before part[] is reused for the sum
    s = np.float32(0.0)
    if m != NEG_INF:
        for j in range(t, cols, bd):
            s += math.exp(x[r, j] - m)
    part[t] = s
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    cuda.syncthreads()
    s = part[0]
    for j in range(t, cols, bd):
        out[r, j] = math.exp(x[r, j] - m) / s if m != NEG_INF else 0.0
    ### END SOLUTION


@cuda.jit
def softmax_warp(out, x, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return  # the whole warp leaves together: r is the same for its 32 lanes
    m = NEG_INF
    for j in range(lane, cols, WARP):
        m = max(m, x[r, j])
    # butterfly: after offsets 16, 8, 4, 2, 1 every lane holds the warp's maximum
    offset = 16
    while offset > 0:
        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, offset))
        offset //= 2
    s = np.float32(0.0)
    if m != NEG_INF:
        for j in range(lane, cols, WARP):
            s += math.exp(x[r, j] - m)
    offset = 16
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2
    for j in range(lane, cols, WARP):
        out[r, j] = math.exp(x[r, j] - m) / s if m != NEG_INF else 0.0


@cuda.jit
def softmax_online(out, x, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    # one pass: m is the running maximum, d the sum of exp(x - m) for the current m
    m = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = x[r, j]
        if v > m:
            d = d * math.exp(m - v) + np.float32(1.0)  # rescale the old sum to the new maximum
            m = v
        elif v != NEG_INF:
            d += math.exp(v - m)
    # combine (m, d) pairs across the warp: rescale both sums to the larger maximum
    offset = 16
    while offset > 0:
        m2 = cuda.shfl_xor_sync(FULL_MASK, m, offset)
        d2 = cuda.shfl_xor_sync(FULL_MASK, d, offset)
        mn = max(m, m2)
        if mn != NEG_INF:
            d = d * math.exp(m - mn) + d2 * math.exp(m2 - mn)
        m = mn
        offset //= 2
    for j in range(lane, cols, WARP):
        out[r, j] = math.exp(x[r, j] - m) / d if m != NEG_INF else 0.0
    ### END SOLUTION


@cuda.jit
def softmax_warp_cached(out, x, rows, cols):
    # the row is read from global memory once: each lane keeps its PER_LANE elements in registers
    v = cuda.local.array(PER_LANE, numba.float32)
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    m = NEG_INF
    for k in range(PER_LANE):  # a constant trip count: unrolled, v[k] lives in a register
        j = lane + k * WARP
        v[k] = x[r, j] if j < cols else NEG_INF
        m = max(m, v[k])
    offset = 16
    while offset > 0:
        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, offset))
        offset //= 2
    s = np.float32(0.0)
    if m != NEG_INF:
        for k in range(PER_LANE):
            v[k] = math.exp(v[k] - m)
            s += v[k]
    offset = 16
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2
    # one division per row, then multiplications (a division per element costs more than the load)
    inv = np.float32(1.0) / s if m != NEG_INF else np.float32(0.0)
    for k in range(PER_LANE):
        j = lane + k * WARP
        if j < cols:
            out[r, j] = v[k] * inv if m != NEG_INF else np.float32(0.0)


# ===================================================================== LayerNorm and RMSNorm


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


@cuda.jit
def column_sum(out, part, chunks, cols):
    # stage 2: the partials of each column in a fixed order, so the result is the same every run
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if j < cols:
        s = np.float32(0.0)
        for c in range(chunks):
            s += part[c, j]
        out[j] = s


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


# ===================================================================== specs (float64 NumPy)


def softmax_spec(x, rows, cols):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    masked = np.isneginf(m[:, 0])
    e = np.exp(x - np.where(np.isneginf(m), 0.0, m))
    s = e.sum(axis=1, keepdims=True)
    y = np.where(masked[:, None], 0.0, e / np.where(s == 0, 1.0, s))
    return y.astype(np.float32)


def layernorm_ref(x, weight, bias, eps=float(EPS)):
    """float64 LayerNorm: (out, mean, rstd)."""
    x = x.astype(np.float64)
    mu = x.mean(axis=1)
    var = ((x - mu[:, None]) ** 2).mean(axis=1)
    rs = 1.0 / np.sqrt(var + eps)
    out = (x - mu[:, None]) * rs[:, None] * weight.astype(np.float64) + bias.astype(np.float64)
    return out, mu, rs


def layernorm_spec(x, weight, bias, rows, cols):
    out, mu, rs = layernorm_ref(x, weight, bias)
    return dict(out=out.astype(np.float32), mean=mu.astype(np.float32), rstd=rs.astype(np.float32))


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


def param_partials_spec(dout, x, mean, rstd, rows, cols, rows_per_chunk):
    dout, x = dout.astype(np.float64), x.astype(np.float64)
    xh = (x - mean.astype(np.float64)[:, None]) * rstd.astype(np.float64)[:, None]
    chunks = (rows + rows_per_chunk - 1) // rows_per_chunk
    parts = [slice(c * rows_per_chunk, (c + 1) * rows_per_chunk) for c in range(chunks)]
    dw = np.stack([(dout * xh)[s].sum(axis=0) for s in parts])
    db = np.stack([dout[s].sum(axis=0) for s in parts])
    return dict(dw_part=dw.astype(np.float32), db_part=db.astype(np.float32))


def rmsnorm_ref(x, weight, eps=float(EPS)):
    x = x.astype(np.float64)
    rs = 1.0 / np.sqrt((x * x).mean(axis=1) + eps)
    return x * rs[:, None] * weight.astype(np.float64), rs


def rmsnorm_spec(x, weight, rows, cols):
    out, rs = rmsnorm_ref(x, weight)
    return dict(out=out.astype(np.float32), rstd=rs.astype(np.float32))


# ===================================================================== cases


def thread_per_row(rows):
    return (rows + ROW_THREADS - 1) // ROW_THREADS, ROW_THREADS


def block_per_row(rows):
    return rows, TPB


def warp_per_row(rows):
    return (rows + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK, ROWS_PER_BLOCK * WARP


def softmax_rows(rng, rows, cols, kind):
    """Logits of one kind: 'normal', 'masked' (some -inf, one row all -inf), 'large' (|x| ~ 100: exp
    overflows float32 without the max subtracted, or underflows to a zero sum)."""
    if kind == "large":
        # both signs on every draw: rows alternate between +100 (overflow) and -100 (underflow)
        sign = rng.permutation(np.resize([1.0, -1.0], rows))[:, None]
        x = rng.uniform(-12, 12, (rows, cols)) + sign * rng.uniform(95, 110, (rows, 1))
    else:
        x = rng.normal(0, rng.uniform(1, 4), (rows, cols))
    x = x.astype(np.float32)
    if kind == "masked":
        x[rng.random((rows, cols)) < 0.3] = -np.inf
        x[rng.integers(rows)] = -np.inf
    return x


def softmax_cases_for(launch, max_cols=SOFTMAX_MAX_COLS):
    def cases(rng):
        shapes = [
            (1, int(rng.integers(40, 100)), "normal"),  # one row
            (int(rng.integers(3, 6)), 1, "normal"),  # one feature
            (int(rng.integers(3, 6)), int(rng.choice([31, 33, rng.integers(34, 70)])), "masked"),
            (int(rng.integers(2, 5)), int(rng.integers(20, 60)), "large"),
            (2, int(rng.integers(max_cols - 60, max_cols + 1)), "normal"),  # long rows
        ]
        out = []
        for rows, cols, kind in shapes:
            x = softmax_rows(rng, rows, cols, kind)
            grid, block = launch(rows)
            out.append(
                Case(grid, block, dict(out=np.zeros((rows, cols), np.float32), x=x, rows=rows, cols=cols))
            )
        return out

    return cases


def norm_input(rng, rows, cols, kind):
    if kind == "offset":
        # a grid of 1/64 around +-1000: every partial sum is exact in float32, in any order
        k = rng.integers(-128, 129, (rows, cols))
        return (rng.choice([-1, 1]) * OFFSET + k / 64.0).astype(np.float32)
    if kind == "tiny":
        # RMSNorm: mean square ~1e-7, far below eps
        return rng.uniform(-1e-3, 1e-3, (rows, cols)).astype(np.float32)
    return (rng.uniform(-1, 1, (rows, cols)) * rng.uniform(1, 4) + rng.uniform(-2, 2)).astype(np.float32)


def norm_shapes(rng, last="offset"):
    return [
        (1, int(rng.integers(40, 100)), "normal"),
        (int(rng.integers(3, 6)), 1, "normal"),
        (int(rng.integers(3, 6)), int(rng.choice([31, 33, rng.integers(34, 70)])), "normal"),
        (int(rng.integers(2, 5)), int(rng.integers(33, 80)), last),
        (2, int(rng.integers(NORM_MAX_COLS - 40, NORM_MAX_COLS + 1)), "normal"),
    ]


def params(rng, cols):
    w = rng.uniform(0.5, W_MAX, cols) * rng.choice([-1, 1], cols)
    b = rng.uniform(-B_MAX, B_MAX, cols)
    return w.astype(np.float32), b.astype(np.float32)


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


def saved_stats(x):
    _, mu, rs = layernorm_ref(x, np.ones(x.shape[1], np.float32), np.zeros(x.shape[1], np.float32))
    return mu.astype(np.float32), rs.astype(np.float32)


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


_SOFTMAX_TOL = dict(rtol=SOFTMAX_RTOL, atol=SOFTMAX_ATOL)
_NORM_TOL = dict(rtol=NORM_RTOL, atol=NORM_ATOL)
_SM = dict(outputs=("out",), spec=softmax_spec, chapter=CHAPTER, **_SOFTMAX_TOL)
_LN = dict(
    outputs=("out", "mean", "rstd"), spec=layernorm_spec, cases=layernorm_cases, chapter=CHAPTER, **_NORM_TOL
)

PUZZLES = [
    Puzzle(
        name="llm1_softmax_three_pass",
        title="Softmax: three passes, one thread per row",
        statement="""`out[r, :] = softmax(x[r, :])` for every row of a `rows x cols` float32 matrix. One
thread per row makes three passes: the maximum `m`, the sum `s` of `exp(x - m)`, then
`exp(x - m) / s`. A row whose entries are all `-inf` (fully masked) gets zeros.""",
        cases=softmax_cases_for(thread_per_row),
        reference=softmax_three_pass,
        **_SM,
    ),
    Puzzle(
        name="llm1_softmax_block",
        title="Softmax: one block per row, block reductions",
        statement=f"""The same softmax with one block of `TPB = {TPB}` threads per row (`grid = rows`). Each
thread covers columns `t, t + blockDim, ...`; the block's maximum and then its sum are tree
reductions in the shared array `part` (the maximum first, the same array reused for the sum). A row
of all `-inf` gets zeros. Budget: `TPB` floats of shared memory.""",
        cases=softmax_cases_for(block_per_row),
        reference=softmax_block,
        budget=Budget(shared_bytes=TPB * 4),
        hints=(
            "Two reductions, the same shape: a max tree, then a sum tree over the same shared array.",
            "After the max tree, every thread reads part[0]; a barrier must separate those reads from the "
            "writes of the sum that reuse part[].",
            "If the maximum is -inf the whole row is masked: skip the exponentials and write 0.",
        ),
        **_SM,
    ),
    Puzzle(
        name="llm1_softmax_warp",
        title="Softmax: one warp per row, shuffles",
        statement=f"""One warp per row (`{ROWS_PER_BLOCK}` rows per block): lane `l` covers columns
`l, l + 32, ...`, and the two reductions are butterflies of `cuda.shfl_xor_sync`, which leave the
result in every lane: no shared memory, no barrier.""",
        cases=softmax_cases_for(warp_per_row),
        reference=softmax_warp,
        budget=Budget(shared_bytes=0),
        **_SM,
    ),
    Puzzle(
        name="llm1_softmax_online",
        title="Online softmax: max and sum in one pass",
        statement="""One warp per row, as before, but the maximum and the sum come from **one** pass over
the row: each lane keeps a running maximum `m` and `d`, the sum of `exp(x - m)` for the current `m`;
when a larger value arrives, `d` is rescaled by `exp(m_old - m_new)`. The lanes' `(m, d)` pairs are
combined with `shfl_xor_sync` the same way; a second pass writes `exp(x - m) / d`. Two reads of each
element instead of three (enforced). A row of all `-inf` gets zeros.""",
        cases=softmax_cases_for(warp_per_row),
        reference=softmax_online,
        budget=Budget(global_reads=lambda case: 2 * ((case.args["cols"] + WARP - 1) // WARP), shared_bytes=0),
        hints=(
            "Start from m = -inf, d = 0. For a value v > m: d = d * exp(m - v) + 1, then m = v; otherwise "
            "d += exp(v - m).",
            "exp(-inf - (-inf)) is NaN: a -inf value adds nothing, so skip it rather than exponentiate it.",
            "Merging (m1, d1) and (m2, d2): m = max(m1, m2), d = d1 * exp(m1 - m) + d2 * exp(m2 - m). Use "
            "shfl_xor_sync so that every lane ends with the row's pair.",
        ),
        **_SM,
    ),
    Puzzle(
        name="llm1_softmax_warp_cached",
        title="Softmax with the row in registers",
        statement=f"""One warp per row, each lane holding its `PER_LANE = {PER_LANE}` elements in a local
array (registers, since every index is a constant after unrolling): one read and one write of each element,
which is all a softmax must move. Rows of up to `32 * PER_LANE` columns.""",
        cases=softmax_cases_for(warp_per_row, 32 * PER_LANE),
        reference=softmax_warp_cached,
        budget=Budget(global_reads=PER_LANE, shared_bytes=0),
        **_SM,
    ),
    Puzzle(
        name="llm1_layernorm_forward",
        title="LayerNorm forward (two passes), saving mean and rstd",
        statement=f"""`out = (x - mean) * rstd * weight + bias` per row, with `mean` the row's mean,
`rstd = 1 / sqrt(var + eps)`, `var` the **biased** variance (divide by `cols`), `eps = {float(EPS)}`.
Save `mean[r]` and `rstd[r]` for the backward pass (written once, by one lane). One warp per row:
sum the row for the mean, then sum `(x - mean)^2` in a second pass.""",
        reference=layernorm_forward,
        budget=Budget(shared_bytes=0),
        hints=(
            "Reduce with shfl_xor_sync so every lane gets the row's sum; convert cols with np.float32(cols).",
            "The variance divides by cols (the biased estimate), as PyTorch's layer_norm does.",
            "Compute E[(x - mean)^2] in a second pass: E[x^2] - mean^2 cancels catastrophically when the "
            "mean is large.",
            "Only lane 0 writes mean[r] and rstd[r].",
        ),
        **_LN,
    ),
    Puzzle(
        name="llm1_layernorm_welford",
        title="LayerNorm forward with Welford's algorithm",
        statement="""The same LayerNorm with the mean and variance from one pass: each lane runs Welford's
update over its elements, and the lanes' `(count, mean, m2)` summaries are merged with Chan's formula
through shuffles.""",
        reference=layernorm_welford,
        budget=Budget(shared_bytes=0),
        **_LN,
    ),
    Puzzle(
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
        hints=(
            "Two row sums are needed before any dx: sum(g) and sum(g * x_hat). Reduce both with shuffles.",
            "Rows run in different warps and blocks at the same time: dweight[j] += ... is a race; "
            "cuda.atomic.add(dweight, j, value) is not.",
            "mean(...) divides by cols, as a float32: np.float32(cols).",
        ),
        chapter=CHAPTER,
        **_NORM_TOL,
    ),
    Puzzle(
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
        # a row of `cols` floats starts anywhere in a 32-byte sector: 50% allows that, and rejects a
        # thread walking along a row (1 float of 8 per sector)
        budget=Budget(global_atomics_per_block=0, min_coalescing=0.5),
        chapter=CHAPTER,
        **_NORM_TOL,
    ),
    Puzzle(
        name="llm1_rmsnorm",
        title="RMSNorm forward",
        statement=f"""`out = x * rstd * weight` with `rstd = 1 / sqrt(mean(x^2) + eps)`
(`eps = {float(EPS)}`): LayerNorm without the mean and the bias (LLaMA and most recent models).
Save `rstd[r]` (one lane). One warp per row.""",
        outputs=("out", "rstd"),
        spec=rmsnorm_spec,
        cases=rmsnorm_cases,
        reference=rmsnorm_forward,
        budget=Budget(shared_bytes=0),
        hints=(
            "One shuffle reduction: the sum of x * x over the row.",
            "eps goes inside the square root, added to the mean square.",
            "Only lane 0 writes rstd[r].",
        ),
        chapter=CHAPTER,
        **_NORM_TOL,
    ),
]


# ===================================================================== GPU benchmark

GOAL = {"ceiling": "copy", "fraction": 0.8, "best": "llm1_softmax_warp_cached"}
# the other goals, judged by the notebook's "Measure it" and checked by `goals(rows)`
GOALS = [
    ("llm1_softmax_warp_cached", "copy", 0.8),
    ("llm1_softmax_warp_cached", "torch.softmax", 1.0),
    ("llm1_layernorm_forward (registers)", "copy", 0.8),
    ("llm1_layernorm_forward (registers)", "torch layer_norm", 1.0),
]


def softmax_rtol(cols: int) -> float:
    """The derived bound of the module docstring at any row length."""
    return (cols + 104 + 4 + 2) * U


def norm_tol(cols: int) -> dict:
    rtol = (cols + 8) * U
    atol = rtol * (math.sqrt(cols) + R_MAX) * W_MAX + U * B_MAX
    return dict(rtol=rtol, atol=atol)


def torch_or_reason():
    """(torch, None) where PyTorch with CUDA is importable, else (None, why not). TF32 is turned off."""
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed: its row is skipped."
    if not torch.cuda.is_available():
        return None, "PyTorch sees no CUDA GPU: its row is skipped."
    # FP32 means FP32: no TensorFloat-32 in matmuls or cuDNN (these ops do not use them, but say so)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch, None


def goals(rows, targets=None) -> list:
    """[(variant, against, ratio, goal, met)] for `targets` (default GOALS), from the rows of one run."""
    by = {r.name: r for r in rows}
    copy = next((r for r in rows if r.ceiling), None)
    out = []
    for name, against, need in GOALS if targets is None else targets:
        ref = copy if against == "copy" else by.get(against)
        if name not in by or ref is None:
            out.append((name, against, None, need, "?"))
            continue
        ratio = by[name].gbps / ref.gbps
        out.append((name, against, ratio, need, "yes" if ratio >= need else "NO"))
    return out


def benchmark(scale: float = 1.0):
    """Validate, then time: softmax over rows of 1024 and LayerNorm over rows of 768 (GPT-2 small's
    width), 32768 rows each at scale 1, every variant of the chapter and PyTorch's kernels, against a
    device copy of the same bytes. Bytes counted: the input read once and the output written once."""
    from helpers import timing
    from helpers.timing import specialize

    rng = np.random.default_rng(20)
    torch, why = torch_or_reason()
    rpb = 4  # rows (warps) per block on the GPU

    def warp_launch(k, rpb=rpb):
        return lambda out, x: k[(x.shape[0] + rpb - 1) // rpb, rpb * WARP](out, x, x.shape[0], x.shape[1])

    sm_cols = 1024
    softmax = {
        "llm1_softmax_three_pass": lambda out, x: softmax_three_pass[(x.shape[0] + 127) // 128, 128](
            out, x, x.shape[0], x.shape[1]
        ),
        "llm1_softmax_block": (lambda k: lambda out, x: k[x.shape[0], 256](out, x, x.shape[0], x.shape[1]))(
            specialize(softmax_block, TPB=256)
        ),
        "llm1_softmax_warp": warp_launch(softmax_warp),
        "llm1_softmax_online": warp_launch(softmax_online),
        "llm1_softmax_warp_cached": warp_launch(specialize(softmax_warp_cached, PER_LANE=sm_cols // WARP)),
    }
    # the register-cached kernel with other block sizes (rows per block): its row is its best
    cached = specialize(softmax_warp_cached, PER_LANE=sm_cols // WARP)
    other_blocks = {f"llm1_softmax_warp_cached ({r} rows/block)": warp_launch(cached, r) for r in (1, 2, 8)}
    # validation: masked rows, large logits, odd shapes; a vocabulary-long row for the uncached kernels
    for rows, cols, kind in [(777, 1000, "masked"), (301, sm_cols, "large"), (64, 50257, "normal")]:
        x = softmax_rows(rng, rows, cols, kind)
        want = softmax_spec(x, rows, cols)
        d_x = cuda.to_device(x)
        for name, launch in softmax.items():
            if cols > sm_cols and name == "llm1_softmax_warp_cached":
                continue
            out = cuda.device_array_like(x)
            launch(out, d_x)
            timing.validate(
                f"{name} ({rows}x{cols}, {kind})",
                out.copy_to_host(),
                want,
                rtol=softmax_rtol(cols),
                atol=SOFTMAX_ATOL,
            )
        if torch is not None:
            got = torch.softmax(torch.as_tensor(x, device="cuda"), dim=1).cpu().numpy()
            masked = np.isneginf(x).all(axis=1)
            got[masked] = 0.0  # torch gives NaN on a fully masked row
            timing.validate(
                f"torch.softmax ({rows}x{cols})", got, want, rtol=softmax_rtol(cols), atol=SOFTMAX_ATOL
            )

    rows_n = max(64, int(32768 * scale))
    x = softmax_rows(rng, rows_n, sm_cols, "normal")
    d_x, d_out = cuda.to_device(x), cuda.device_array_like(x)
    nbytes = x.nbytes
    results = [timing.copy_ceiling(nbytes)]
    for name, launch in softmax.items():
        seconds = timing.time_gpu(lambda launch=launch: launch(d_out, d_x))
        if name == "llm1_softmax_warp_cached":
            for label, other in other_blocks.items():
                other(d_out, d_x)
                timing.validate(
                    label,
                    d_out.copy_to_host()[:64],
                    softmax_spec(x[:64], 64, sm_cols),
                    rtol=softmax_rtol(sm_cols),
                    atol=SOFTMAX_ATOL,
                )
                t = timing.time_gpu(lambda other=other: other(d_out, d_x))
                print(f"{label}: {2 * nbytes / t / 1e9:.0f} GB/s")
                seconds = min(seconds, t)
        results.append(timing.Measurement(name, seconds, bytes=2 * nbytes))
    if torch is not None:
        tx = torch.as_tensor(x, device="cuda")
        results.append(
            timing.Measurement(
                "torch.softmax", timing.time_gpu(lambda: torch.softmax(tx, dim=1)), bytes=2 * nbytes
            )
        )
    else:
        print(why)

    # LayerNorm at GPT-2 small's width
    ln_cols = 768

    def ln_launch(k, rpb=rpb):
        return lambda out, mean, rstd, x, w, b: k[(x.shape[0] + rpb - 1) // rpb, rpb * WARP](
            out, mean, rstd, x, w, b, x.shape[0], x.shape[1]
        )

    norms = {
        "llm1_layernorm_forward": ln_launch(layernorm_forward),
        "llm1_layernorm_welford": ln_launch(layernorm_welford),
        "llm1_layernorm_forward (registers)": ln_launch(
            specialize(layernorm_forward_cached, PER_LANE=ln_cols // WARP)
        ),
    }
    for rows, kind in [(777, "normal"), (333, "offset")]:
        x = norm_input(rng, rows, ln_cols, kind)
        w, b = params(rng, ln_cols)
        want, mu, rs = layernorm_ref(x, w, b)
        d = [cuda.to_device(a) for a in (x, w, b)]
        tol = norm_tol(ln_cols)
        if kind == "offset":  # the mean's own rounding, u * 1000 / std per rounding (docstring)
            tol["atol"] += (ln_cols // WARP + 8) * U * OFFSET / 0.9 * W_MAX
        for name, launch in norms.items():
            out = cuda.device_array_like(x)
            mean, rstd = cuda.device_array(rows, np.float32), cuda.device_array(rows, np.float32)
            launch(out, mean, rstd, *d)
            timing.validate(f"{name} ({rows}x{ln_cols}, {kind})", out.copy_to_host(), want, **tol)
            timing.validate(f"{name} rstd", rstd.copy_to_host(), rs, **tol)
        if torch is not None:
            tx, tw, tb = (torch.as_tensor(a, device="cuda") for a in (x, w, b))
            got = torch.nn.functional.layer_norm(tx, (ln_cols,), tw, tb, eps=float(EPS)).cpu().numpy()
            timing.validate(f"torch layer_norm ({kind})", got, want, **tol)
    x = norm_input(rng, rows_n, ln_cols, "normal")
    w, b = params(rng, ln_cols)
    d = [cuda.to_device(a) for a in (x, w, b)]
    out, mean, rstd = (
        cuda.device_array_like(x),
        cuda.device_array(rows_n, np.float32),
        cuda.device_array(rows_n, np.float32),
    )
    ln_bytes = 2 * x.nbytes
    ln_cached = specialize(layernorm_forward_cached, PER_LANE=ln_cols // WARP)
    for name, launch in norms.items():
        seconds = timing.time_gpu(lambda launch=launch: launch(out, mean, rstd, *d))
        if name.endswith("(registers)"):
            for r in (1, 2, 8):
                other = ln_launch(ln_cached, r)
                other(out, mean, rstd, *d)
                timing.validate(
                    f"{name} ({r} rows/block)",
                    out.copy_to_host()[:64],
                    layernorm_ref(x[:64], w, b)[0],
                    **norm_tol(ln_cols),
                )
                t = timing.time_gpu(lambda other=other: other(out, mean, rstd, *d))
                print(f"{name} ({r} rows/block): {ln_bytes / t / 1e9:.0f} GB/s")
                seconds = min(seconds, t)
        results.append(timing.Measurement(name, seconds, bytes=ln_bytes))
    if torch is not None:
        tx, tw, tb = (torch.as_tensor(a, device="cuda") for a in (x, w, b))
        F = torch.nn.functional
        seconds = timing.time_gpu(lambda: F.layer_norm(tx, (ln_cols,), tw, tb, eps=float(EPS)))
        results.append(timing.Measurement("torch layer_norm", seconds, bytes=ln_bytes))
    return results
