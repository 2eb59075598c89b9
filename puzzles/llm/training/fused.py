"""The training step's fused kernels: two or three of the course's launches done as one, where a
profile of the step showed launches, not arithmetic, set its time (`python -m tools.train --profile`).

    residual_layernorm        res = x + y, then LayerNorm of res (forward: residual_add + layernorm)
    layernorm_backward_add    dx = dres + LayerNorm backward (backward: layernorm_backward + residual_add)
    linear_gelu_save          fc = inp w + b and f = gelu(fc), both kept for the backward
    matmul_nt_gelu_backward   dfc = (dout w^T) * gelu'(fc) (matmul_nt + gelu_backward)
    matmul_tn_split_bias      dW += a^T dout over a strip of rows, and db += the strip's column sums
                              (matmul_tn_split + bias_grad_atomic)

Each computes what its parts compute, in the same float32 order where it can (the reductions of the
bias gradient run in another order): the model's gradient check (gradcheck.py) holds them to the
same float64 tolerance. Only KernelBackend(fused=True) launches them, and only for ops where no
learner's kernel was swapped in (a learner's kernel is always the one that runs).
"""

import math

import numba
import numpy as np
from numba import cuda

from puzzles.llm.small_ops.common import GELU_C, GELU_K
from puzzles.llm.softmax_layernorm.common import EPS, FULL_MASK, WARP

TILE = 4  # the simulator's tile; a GPU recompiles with timing.specialize(TILE=16)
SPLIT_ROWS = 8


@cuda.jit(device=True)
def _warp_sum(s):
    offset = 16
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2
    return s


@cuda.jit
def residual_layernorm(res, out, mean, rstd, x, y, weight, bias, rows, cols):
    # one warp per row; each lane re-reads only the elements of res it wrote itself
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    s = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = x[r, j] + y[r, j]
        res[r, j] = v
        s += v
    mu = _warp_sum(s) / np.float32(cols)
    q = np.float32(0.0)
    for j in range(lane, cols, WARP):
        d = res[r, j] - mu
        q += d * d
    rs = np.float32(1.0) / math.sqrt(_warp_sum(q) / np.float32(cols) + EPS)
    for j in range(lane, cols, WARP):
        out[r, j] = (res[r, j] - mu) * rs * weight[j] + bias[j]
    if lane == 0:
        mean[r] = mu
        rstd[r] = rs


@cuda.jit
def layernorm_backward_add(dx, dweight, dbias, dout, x, mean, rstd, weight, dres, rows, cols):
    # layernorm_backward whose dx also carries the residual's gradient dres (dx must not alias dres)
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    mu = mean[r]
    rs = rstd[r]
    gsum = np.float32(0.0)
    gxsum = np.float32(0.0)
    for j in range(lane, cols, WARP):
        xh = (x[r, j] - mu) * rs
        g = weight[j] * dout[r, j]
        gsum += g
        gxsum += g * xh
        cuda.atomic.add(dweight, j, dout[r, j] * xh)
        cuda.atomic.add(dbias, j, dout[r, j])
    gmean = _warp_sum(gsum) / np.float32(cols)
    gxmean = _warp_sum(gxsum) / np.float32(cols)
    for j in range(lane, cols, WARP):
        xh = (x[r, j] - mu) * rs
        dx[r, j] = dres[r, j] + rs * (weight[j] * dout[r, j] - gmean - xh * gxmean)


@cuda.jit
def linear_gelu_save(fc, f, inp, w, bias):
    # the course's tiled linear; the epilogue keeps the pre-activation (the backward needs it)
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    w_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    n = cuda.blockIdx.y * TILE + ty
    rows, cin = inp.shape
    cout = w.shape[1]
    acc = np.float32(0.0)
    for c0 in range(0, cin, TILE):
        a_t[ty, tx] = inp[n, c0 + tx] if n < rows and c0 + tx < cin else np.float32(0.0)
        w_t[ty, tx] = w[c0 + ty, o] if c0 + ty < cin and o < cout else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[ty, kk] * w_t[kk, tx]
        cuda.syncthreads()
    if n < rows and o < cout:
        v = acc + bias[o]
        fc[n, o] = v
        f[n, o] = np.float32(0.5) * v * (np.float32(1.0) + math.tanh(GELU_K * (v + GELU_C * v * v * v)))


@cuda.jit
def matmul_nt_gelu_backward(dfc, dout, w, fc):
    # the course's matmul_nt (dout w^T); the epilogue multiplies by GELU's derivative at fc
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    b_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    n = cuda.blockIdx.y * TILE + ty
    rows, K = dout.shape
    cols = w.shape[0]
    bc = cuda.blockIdx.x * TILE + ty
    acc = np.float32(0.0)
    for k0 in range(0, K, TILE):
        a_t[ty, tx] = dout[n, k0 + tx] if n < rows and k0 + tx < K else np.float32(0.0)
        b_t[ty, tx] = w[bc, k0 + tx] if bc < cols and k0 + tx < K else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[ty, kk] * b_t[tx, kk]
        cuda.syncthreads()
    if n < rows and c < cols:
        v = fc[n, c]
        th = math.tanh(GELU_K * (v + GELU_C * v * v * v))
        du = GELU_K * (np.float32(1.0) + np.float32(3.0) * GELU_C * v * v)
        dfc[n, c] = acc * (
            np.float32(0.5) * (np.float32(1.0) + th) + np.float32(0.5) * v * (np.float32(1.0) - th * th) * du
        )


@cuda.jit
def matmul_tn_split_bias(out, db, a, b):
    # matmul_tn_split (out += a^T b over rows [z SPLIT_ROWS, (z+1) SPLIT_ROWS)); the blocks of the first
    # column tile (blockIdx.y == 0) already hold every row of b's strip: row ty == 0 sums it into db
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    b_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    c = cuda.blockIdx.y * TILE + ty
    K, cols = a.shape
    outs = b.shape[1]
    ac = cuda.blockIdx.y * TILE + tx
    start = cuda.blockIdx.z * SPLIT_ROWS
    stop = min(K, start + SPLIT_ROWS)
    bias_here = cuda.blockIdx.y == 0 and ty == 0
    acc = np.float32(0.0)
    bsum = np.float32(0.0)
    for k0 in range(start, stop, TILE):
        a_t[ty, tx] = a[k0 + ty, ac] if k0 + ty < stop and ac < cols else np.float32(0.0)
        b_t[ty, tx] = b[k0 + ty, o] if k0 + ty < stop and o < outs else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[kk, ty] * b_t[kk, tx]
        if bias_here:
            for kk in range(TILE):
                bsum += b_t[kk, tx]
        cuda.syncthreads()
    if c < cols and o < outs:
        cuda.atomic.add(out, (c, o), acc)
    if bias_here and o < outs:
        cuda.atomic.add(db, o, bsum)


FUSED = {
    k.py_func.__name__: k
    for k in (
        residual_layernorm, layernorm_backward_add, linear_gelu_save, matmul_nt_gelu_backward,
        matmul_tn_split_bias,
    )
}  # fmt: skip

# which of the course's kernels each fused one replaces: a learner's kernel among them keeps it unfused
REPLACES = {
    "residual_layernorm": ("residual_add", "layernorm_forward"),
    "layernorm_backward_add": ("layernorm_backward", "residual_add"),
    "linear_gelu_save": ("linear", "gelu_forward"),
    "matmul_nt_gelu_backward": ("matmul_nt", "gelu_backward"),
    "matmul_tn_split_bias": ("matmul_tn_split", "bias_grad_atomic"),
}
