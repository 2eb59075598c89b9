"""Mutants and variants of puzzle 11, `conv` (puzzles/gpu_puzzles/p11_conv.py)."""

import numba
from numba import cuda

from mutants.common import NO_BARRIER, UNINIT, WRONG, over

TPB = 8
MAX_CONV = 4
A_TILE = TPB + MAX_CONV


@cuda.jit
def conv_first_tap_skipped(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(1, b_size):  # passes when b[0] == 0
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_no_halo(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_block_end_boundary(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size and local_i + j < TPB:  # treats the block's end as the array's end
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_missing_syncthreads(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_no_shared(out, a, b, a_size, b_size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size:
                total += a[i + j] * b[j]
        out[i] = total


@cuda.jit
def conv_true_convolution(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[b_size - 1 - j]  # flipped weights
        out[i] = total


@cuda.jit
def conv_missing_tail_check(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):  # near the end of a, reads tile slots nobody loaded
            total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_b_by_global_index(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if i < b_size:  # only block 0 loads b; every block needs its own copy
        b_tile[local_i] = b[i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_strided_tile_load(out, a, b, a_size, b_size):
    # Fill the tile (block plus halo) with a strided loop; taps past the end are zero slots.
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    start = cuda.blockIdx.x * cuda.blockDim.x
    t = cuda.threadIdx.x
    for s in range(t, TPB + b_size - 1, TPB):
        a_tile[s] = a[start + s] if start + s < a_size else 0.0
    if t < b_size:
        b_tile[t] = b[t]
    cuda.syncthreads()
    i = start + t
    if i < a_size:
        total = numba.float32(0.0)
        for j in range(b_size):
            total += a_tile[t + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_reversed_taps(out, a, b, a_size, b_size):
    # The last threads load b; the taps are summed from the far end.
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if i < a_size:
        a_tile[t] = a[i]
    if t < b_size - 1 and i + TPB < a_size:
        a_tile[t + TPB] = a[i + TPB]
    w = TPB - 1 - t
    if w < b_size:
        b_tile[w] = b[w]
    cuda.syncthreads()
    if i < a_size:
        total = numba.float32(0.0)
        for j in range(b_size - 1, -1, -1):
            if i + j < a_size:
                total += a_tile[t + j] * b_tile[j]
        out[i] = total


MUTANTS = {
    "conv": [
        ("first_tap_skipped", conv_first_tap_skipped, *WRONG),
        ("no_halo", conv_no_halo, *UNINIT),
        ("block_end_boundary", conv_block_end_boundary, *WRONG),
        ("missing_syncthreads", conv_missing_syncthreads, *NO_BARRIER),
        ("no_shared", conv_no_shared, *over("global_reads")),
        ("true_convolution", conv_true_convolution, *WRONG),
        ("missing_tail_check", conv_missing_tail_check, *UNINIT),
        ("b_by_global_index", conv_b_by_global_index, *UNINIT),
    ],
}

VARIANTS = {
    "conv": [("strided_tile_load", conv_strided_tile_load), ("reversed_taps", conv_reversed_taps)],
}

SEEDS = {"conv": (0, 1, 2)}
