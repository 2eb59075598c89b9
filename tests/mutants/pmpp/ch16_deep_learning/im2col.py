"""Mutants and variants of puzzles/pmpp/ch16_deep_learning/im2col.py; format: mutants/common.py."""

from numba import cuda, float32

from mutants.common import OOB, WRONG
from puzzles.pmpp.ch16_deep_learning import TILE


@cuda.jit
def im2col_tap_transposed(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[n, c * fs * fs + q * fs + p, j] = x[n, c, h + p, w + q]  # row of tap (q, p)


@cuda.jit
def im2col_channel_minor(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    c_in = x.shape[1]
    wo = x.shape[3] - fs + 1
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                # channel-minor rows: a valid layout, but not the one w.reshape(K, -1) multiplies
                xu[n, (p * fs + q) * c_in + c, j] = x[n, c, h + p, w + q]


@cuda.jit
def im2col_column_transposed(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    ho = x.shape[2] - fs + 1
    wo = x.shape[3] - fs + 1
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[n, c * fs * fs + p * fs + q, w * ho + h] = x[n, c, h + p, w + q]  # column-major pixels


@cuda.jit
def im2col_no_guard(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    h = j // wo
    w = j % wo
    for p in range(fs):
        for q in range(fs):
            xu[n, c * fs * fs + p * fs + q, j] = x[n, c, h + p, w + q]


@cuda.jit
def im2col_first_image(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[n, c * fs * fs + p * fs + q, j] = x[0, c, h + p, w + q]  # every image reads image 0


@cuda.jit
def im2col_wrong_width(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3]  # the input's width, not the output's: columns decode to the wrong pixels
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[n, c * fs * fs + p * fs + q, j] = x[n, c, h + p, w + q]


@cuda.jit
def im2col_per_element(xu, x, fs):
    # one thread per (row, column) entry of channel c's rows: more threads, one load and store each
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    if j < xu.shape[2]:
        for tap in range(fs * fs):
            p = tap // fs
            q = tap - p * fs
            xu[n, c * fs * fs + tap, j] = x[n, c, j // wo + p, j % wo + q]


@cuda.jit
def im2col_grid_stride(xu, x, fs):
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    base = c * fs * fs
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while j < xu.shape[2]:  # a grid-stride loop: correct for any number of blocks
        h = j // wo
        w = j - h * wo
        for q in range(fs):
            for p in range(fs):
                xu[n, base + p * fs + q, j] = x[n, c, h + p, w + q]
        j += cuda.gridDim.x * cuda.blockDim.x


@cuda.jit
def gemm_no_bias(y, wm, xu, b):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = cuda.blockIdx.z
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
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
        y[n, row, col] = acc  # the bias is forgotten


MUTANTS = {
    "ch16_im2col": [
        ("im2col_tap_transposed", im2col_tap_transposed, *WRONG),
        ("im2col_channel_minor", im2col_channel_minor, *WRONG),
        ("im2col_column_transposed", im2col_column_transposed, *WRONG),
        ("im2col_no_guard", im2col_no_guard, *OOB),
        ("im2col_first_image", im2col_first_image, *WRONG),
        ("im2col_wrong_width", im2col_wrong_width, *OOB),
    ],
    "ch16_conv_gemm": [
        ("gemm_no_bias", gemm_no_bias, *WRONG),
    ],
}

VARIANTS = {
    "ch16_im2col": [
        ("im2col_per_element", im2col_per_element),
        ("im2col_grid_stride", im2col_grid_stride),
    ],
}

SEEDS = {name: (0, 1, 2) for name in MUTANTS}
