"""Mutants and variants of puzzles/pmpp/ch16_deep_learning/forward.py; format: mutants/common.py."""

from numba import cuda, float32

from mutants.common import OOB, RACE, WRONG
from puzzles.pmpp.ch16_deep_learning import BANK, BANK_BIAS, BANK_C, BANK_FS, BANK_K, IN_TILE, TILE


@cuda.jit
def forward_no_bias(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < y.shape[2] and col < y.shape[3]:
        acc = float32(0.0)  # the bias is forgotten
        for c in range(x.shape[1]):
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += x[n, c, row + p, col + q] * w[k, c, p, q]
        y[n, k, row, col] = acc


@cuda.jit
def forward_no_guard(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    acc = b[k]  # every thread of the rounded-up grid computes and writes
    for c in range(x.shape[1]):
        for p in range(w.shape[2]):
            for q in range(w.shape[3]):
                acc += x[n, c, row + p, col + q] * w[k, c, p, q]
    y[n, k, row, col] = acc


@cuda.jit
def forward_window_transposed(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < y.shape[2] and col < y.shape[3]:
        acc = b[k]
        for c in range(x.shape[1]):
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += x[n, c, row + q, col + p] * w[k, c, p, q]  # tap (p, q) reads pixel (q, p)
        y[n, k, row, col] = acc


@cuda.jit
def forward_bias_per_channel(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < y.shape[2] and col < y.shape[3]:
        acc = float32(0.0)
        for c in range(x.shape[1]):
            acc = b[k]  # restarts the sum for every channel: only the last one survives
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += x[n, c, row + p, col + q] * w[k, c, p, q]
        y[n, k, row, col] = acc


@cuda.jit
def forward_flipped_filter(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    fs = w.shape[2]
    if row < y.shape[2] and col < y.shape[3]:
        acc = b[k]
        for c in range(x.shape[1]):
            for p in range(fs):
                for q in range(fs):
                    # textbook convolution flips the filter; the layer (like cuDNN) does not
                    acc += x[n, c, row + p, col + q] * w[k, c, fs - 1 - p, fs - 1 - q]
        y[n, k, row, col] = acc


@cuda.jit
def forward_z_filter_major(y, x, w, b):
    col, row = cuda.grid(2)
    n_img = x.shape[0]
    k = cuda.blockIdx.z // n_img  # the other numbering of (image, filter) pairs: still one each
    n = cuda.blockIdx.z % n_img
    if row >= y.shape[2] or col >= y.shape[3]:
        return
    acc = float32(0.0)
    for p in range(w.shape[2]):
        for q in range(w.shape[3]):
            for c in range(x.shape[1]):
                acc += w[k, c, p, q] * x[n, c, row + p, col + q]
    y[n, k, row, col] = acc + b[k]


@cuda.jit
def forward_flat_weights(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    c_in, fs = w.shape[1], w.shape[2]
    if row < y.shape[2] and col < y.shape[3]:
        acc = b[k]
        for r in range(c_in * fs * fs):  # one loop over the flattened filter, as im2col's rows
            c = r // (fs * fs)
            p = (r // fs) % fs
            q = r % fs
            acc += x[n, c, row + p, col + q] * w[k, c, p, q]
        y[n, k, row, col] = acc


@cuda.jit
def tiled_no_second_barrier(y, x):
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
        for i in range(t, IN_TILE * IN_TILE, TILE * TILE):
            r = row0 + i // IN_TILE
            s = col0 + i % IN_TILE
            tile[i // IN_TILE, i % IN_TILE] = x[n, c, r, s] if r < h and s < wd else float32(0.0)
        cuda.syncthreads()
        if inside:
            for k in range(BANK_K):
                for p in range(BANK_FS):
                    for q in range(BANK_FS):
                        acc[k] += tile[ty + p, tx + q] * bank[k, c, p, q]
        # no barrier: a fast thread loads channel c + 1 over the tile a neighbour still reads
    if inside:
        for k in range(BANK_K):
            y[n, k, row, col] = acc[k]


MUTANTS = {
    "ch16_conv_forward": [
        ("forward_no_bias", forward_no_bias, *WRONG),
        ("forward_no_guard", forward_no_guard, *OOB),
        ("forward_window_transposed", forward_window_transposed, *WRONG),
        ("forward_bias_per_channel", forward_bias_per_channel, *WRONG),
        ("forward_flipped_filter", forward_flipped_filter, *WRONG),
    ],
    "ch16_conv_tiled": [
        ("tiled_no_second_barrier", tiled_no_second_barrier, *RACE),
    ],
}

VARIANTS = {
    "ch16_conv_forward": [
        ("forward_z_filter_major", forward_z_filter_major),
        ("forward_flat_weights", forward_flat_weights),
    ],
}

SEEDS = {name: (0, 1, 2) for name in MUTANTS}
