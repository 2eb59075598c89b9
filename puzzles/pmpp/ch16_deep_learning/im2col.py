"""The forward pass as a matrix multiplication.

Rungs:
    ch16_im2col       the unrolled input matrix of one image per z-block (exercise)
    ch16_conv_gemm    the filters as a matrix times the unrolled input: the chapter 5 tiled SGEMM (worked)
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import _RTOL, CHAPTER, FWD_ATOL, TILE, TPB, _bias, _shapes, _tiles, _w, _x, im2col_ref


def spec_im2col(x, fs):
    return im2col_ref(x, fs)


def spec_gemm(wm, xu, b):
    return (np.einsum("kr,nrj->nkj", wm.astype(np.float64), xu.astype(np.float64)) + b[None, :, None]).astype(
        np.float32
    )


def cases_im2col(rng):
    out = []
    for n, c, _k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        args = dict(xu=np.empty((n, c * fs * fs, ho * wo), np.float32), x=_x(rng, n, c, h, wd), fs=fs)
        out.append(Case((math.ceil(ho * wo / TPB), c, n), TPB, args))
    return out


def cases_gemm(rng):
    out = []
    for n, c, k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        x = _x(rng, n, c, h, wd)
        wm = _w(rng, k, c, fs).reshape(k, c * fs * fs)
        args = dict(y=np.empty((n, k, ho * wo), np.float32), wm=wm, xu=im2col_ref(x, fs), b=_bias(rng, k))
        out.append(Case((_tiles(ho * wo), _tiles(k), n), (TILE, TILE), args))
    return out


@cuda.jit
def im2col(xu, x, fs):
    # thread (column j = h * WO + w of image n, channel c) writes the FS * FS entries it owns
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    ### BEGIN SOLUTION
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[n, c * fs * fs + p * fs + q, j] = x[n, c, h + p, w + q]
    ### END SOLUTION


IM2COL = Puzzle(
    name="ch16_im2col",
    title="Unrolling the input (im2col)",
    statement=f"""Unroll each image into the matrix that turns convolution into a matrix product:
`xu[n, c * FS * FS + p * FS + q, h * WO + w] = x[n, c, h + p, w + q]`. Row `c * FS^2 + p * FS + q` is
the input pixel that filter tap `(c, p, q)` sees, column `h * WO + w` the output pixel. Thread `j` of
the grid's x dimension (blocks of `TPB = {TPB}`) owns column `j`; `blockIdx.y` is the channel
`c` and `blockIdx.z` the image `n`; the thread writes its `FS * FS` entries of channel `c`.""",
    outputs=("xu",),
    spec=spec_im2col,
    cases=cases_im2col,
    reference=im2col,
    hints=(
        "Column j is output pixel (h, w) = (j // WO, j % WO).",
        "The row is c * fs * fs + p * fs + q: w[k] flattened, so that w.reshape(K, -1) @ xu[n] works.",
    ),
    chapter=CHAPTER,
)


@cuda.jit
def conv_gemm(y, wm, xu, b):
    # y[n] = wm @ xu[n] + b: (K x CFF) times (CFF x HO*WO), the chapter 5 tiled matmul, one image per z
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = cuda.blockIdx.z
    row = cuda.blockIdx.y * TILE + ty  # filter k
    col = cuda.blockIdx.x * TILE + tx  # output pixel
    rows, inner, cols = wm.shape[0], wm.shape[1], xu.shape[2]
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = float32(0.0)
    for t in range((inner + TILE - 1) // TILE):
        kk = t * TILE + tx
        m_tile[ty, tx] = wm[row, kk] if row < rows and kk < inner else float32(0.0)
        kk = t * TILE + ty
        n_tile[ty, tx] = xu[n, kk, col] if kk < inner and col < cols else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE):
            acc += m_tile[ty, i] * n_tile[i, tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        y[n, row, col] = acc + b[row]


CONV_GEMM = Puzzle(
    name="ch16_conv_gemm",
    title="Convolution as matrix multiplication",
    statement=f"""`y[n] = wm @ xu[n] + b[:, None]`: the filters flattened
(`wm = w.reshape(K, C * FS * FS)`) times the unrolled image, plus the bias of each row. The chapter 5
tiled matmul with `TILE = {TILE}`, one image per `blockIdx.z`; `y[n, k, h * WO + w]` is the output
plane flattened.""",
    outputs=("y",),
    spec=spec_gemm,
    cases=cases_gemm,
    reference=conv_gemm,
    budget=Budget(shared_bytes=2 * TILE * TILE * 4),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=FWD_ATOL,
)


PUZZLES = [IM2COL, CONV_GEMM]
