"""The convolutional layer's forward pass, direct.

Rungs:
    ch16_conv_forward    one thread per output element y[n, k, h, w] (exercise)
    ch16_conv_tiled      shared-memory input tiles, the filter bank in constant memory (worked)
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import (
    _RTOL,
    _SHAPE_TEXT,
    BANK,
    BANK_BIAS,
    BANK_C,
    BANK_FS,
    BANK_K,
    CHAPTER,
    FWD_ATOL,
    IN_TILE,
    TILE,
    W_MAX,
    X_MAX,
    _bias,
    _shapes,
    _tiles,
    _w,
    _x,
    conv_ref,
    sum_tolerance,
)


def spec_forward(x, w, b):
    return conv_ref(x, w, b).astype(np.float32)


def spec_tiled(x):
    return conv_ref(x, BANK, BANK_BIAS).astype(np.float32)


def cases_forward(rng):
    out = []
    for n, c, k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        args = dict(
            y=np.empty((n, k, ho, wo), np.float32),
            x=_x(rng, n, c, h, wd),
            w=_w(rng, k, c, fs),
            b=_bias(rng, k),
        )
        out.append(Case((_tiles(wo), _tiles(ho), n * k), (TILE, TILE), args))
    return out


def cases_tiled(rng):
    out = []
    for n, h, wd in [(2, 11, 6), (1, 9, 12), (1, 20, 9), (2, 3, 5)]:  # HO = 9, 7, 18, 1
        ho, wo = h - BANK_FS + 1, wd - BANK_FS + 1
        args = dict(y=np.empty((n, BANK_K, ho, wo), np.float32), x=_x(rng, n, BANK_C, h, wd))
        out.append(Case((_tiles(wo), _tiles(ho), n), (TILE, TILE), args))
    return out


@cuda.jit
def conv_forward(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out  # one z-block per (image, filter)
    k = cuda.blockIdx.z % k_out
    ### BEGIN SOLUTION
    if row < y.shape[2] and col < y.shape[3]:
        acc = b[k]
        for c in range(x.shape[1]):
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += x[n, c, row + p, col + q] * w[k, c, p, q]
        y[n, k, row, col] = acc
    ### END SOLUTION


CONV_FORWARD = Puzzle(
    name="ch16_conv_forward",
    title="Convolutional layer, direct",
    statement=f"""{_SHAPE_TEXT}

One thread per output element: blocks of `TILE x TILE = {TILE} x {TILE}` threads cover an output
plane (`cuda.grid(2)` gives `(column, row)`), and `blockIdx.z` numbers the (image, filter) pairs,
`n * K + k`. Shapes are drawn per case: 1x1 filters, one channel, odd and non-square sizes.""",
    outputs=("y",),
    spec=spec_forward,
    cases=cases_forward,
    reference=conv_forward,
    hints=(
        "Start the sum at the bias b[k], then loop over every channel c and every filter tap p, q.",
        "Output (row, col) reads the window with top-left corner (row, col): x[n, c, row + p, col + q].",
        "The grid rounds up to whole tiles: threads past HO or WO must do nothing.",
    ),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=FWD_ATOL,
)


@cuda.jit
def conv_tiled(y, x):
    bank = cuda.const.array_like(BANK)
    bias = cuda.const.array_like(BANK_BIAS)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    acc = cuda.local.array(BANK_K, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TILE + tx
    n = cuda.blockIdx.z
    row0 = cuda.blockIdx.y * TILE
    col0 = cuda.blockIdx.x * TILE
    row = row0 + ty
    col = col0 + tx
    h, wd = x.shape[2], x.shape[3]
    inside = row < y.shape[2] and col < y.shape[3]
    for k in range(BANK_K):
        acc[k] = bias[k]
    for c in range(BANK_C):
        # the block loads the input tile of channel c once, halo included, and every one of the
        # BANK_K filters uses it: IN_TILE^2 loads serve BANK_K * TILE^2 * FS^2 multiply-adds
        for i in range(t, IN_TILE * IN_TILE, TILE * TILE):
            r = row0 + i // IN_TILE
            s = col0 + i % IN_TILE
            tile[i // IN_TILE, i % IN_TILE] = x[n, c, r, s] if r < h and s < wd else float32(0.0)
        cuda.syncthreads()
        if inside:
            for p in range(BANK_FS):
                for q in range(BANK_FS):
                    v = tile[ty + p, tx + q]  # one shared load, BANK_K multiply-adds from a register
                    for k in range(BANK_K):
                        acc[k] += v * bank[k, c, p, q]
        cuda.syncthreads()  # the next channel's tile overwrites this one
    if inside:
        for k in range(BANK_K):
            y[n, k, row, col] = acc[k]


CONV_TILED = Puzzle(
    name="ch16_conv_tiled",
    title="Shared input tiles, the filter bank in constant memory",
    statement=f"""The layer's `BANK_K = {BANK_K}` filters of `BANK_C = {BANK_C}` channels,
`{BANK_FS} x {BANK_FS}`, and their biases sit in constant memory (`BANK`, `BANK_BIAS`). One block
of `TILE x TILE` threads per output tile and image (`blockIdx.z = n`): for each channel, the block
loads the `IN_TILE x IN_TILE` input tile (`IN_TILE = TILE + FS - 1 = {IN_TILE}`) into shared memory
once, and each thread uses it for all `BANK_K` filters, keeping `BANK_K` sums in registers.""",
    outputs=("y",),
    spec=spec_tiled,
    cases=cases_tiled,
    reference=conv_tiled,
    budget=Budget(shared_bytes=IN_TILE * IN_TILE * 4),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=sum_tolerance(BANK_C * BANK_FS**2 + 1, X_MAX * W_MAX),
)


PUZZLES = [CONV_FORWARD, CONV_TILED]
