"""Mutants and variants of puzzle 14, `matmul` (puzzles/gpu_puzzles/p14_matmul.py)."""

import numba
from numba import cuda

from mutants.common import BARRIER, NO_BARRIER, RACE, UNINIT, WRONG, over

TPB = 8


@cuda.jit
def matmul_naive(out, a, b, size):
    i = cuda.blockIdx.y * TPB + cuda.threadIdx.y
    j = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size and j < size:
        total = 0.0
        for k in range(size):  # 2 * size global reads per thread
            total += a[i, k] * b[k, j]
        out[i, j] = total


@cuda.jit
def matmul_never_reads_b(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        k = t * TPB + ty
        b_tile[ty, tx] = a[j, k] if k < size and j < size else 0.0  # copy-paste: loads a.T
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_missing_second_sync(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        k = t * TPB + ty
        b_tile[ty, tx] = b[k, j] if k < size and j < size else 0.0
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        # no barrier: fast threads overwrite the tiles while slow ones still read them
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_missing_first_sync(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        k = t * TPB + ty
        b_tile[ty, tx] = b[k, j] if k < size and j < size else 0.0
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_no_zero_padding(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        if i < size and k < size:
            a_tile[ty, tx] = a[i, k]
        k = t * TPB + ty
        if k < size and j < size:
            b_tile[ty, tx] = b[k, j]
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_barrier_in_branch(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    if i < size and j < size:  # threads outside the matrix skip the barriers
        total = 0.0
        for t in range((size + TPB - 1) // TPB):
            k = t * TPB + tx
            a_tile[ty, tx] = a[i, k] if k < size else 0.0
            k = t * TPB + ty
            b_tile[ty, tx] = b[k, j] if k < size else 0.0
            cuda.syncthreads()
            for kk in range(TPB):
                total += a_tile[ty, kk] * b_tile[kk, tx]
            cuda.syncthreads()
        out[i, j] = total


@cuda.jit
def matmul_wrong_axis_load(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + ty  # ty for both tiles: a's tile should walk along x
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        b_tile[ty, tx] = b[k, j] if k < size and j < size else 0.0
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_transposed_b_tile(out, a, b, size):
    # b's tile is stored transposed, so both dot-product operands walk along a row of a tile.
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    bt_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = numba.float32(0.0)
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        k = t * TPB + ty
        bt_tile[tx, ty] = b[k, j] if k < size and j < size else 0.0
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * bt_tile[tx, kk]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_grid_index(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    j, i = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    inside = i < size and j < size
    total = numba.float32(0.0)
    ntiles = (size + TPB - 1) // TPB
    t = 0
    while t < ntiles:
        base = t * TPB
        a_tile[ty, tx] = 0.0
        b_tile[ty, tx] = 0.0
        if i < size and base + tx < size:
            a_tile[ty, tx] = a[i, base + tx]
        if j < size and base + ty < size:
            b_tile[ty, tx] = b[base + ty, j]
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
        t += 1
    if inside:
        out[i, j] = total


@cuda.jit
def matmul_three_tiles(out, a, b, size):
    # the tile count of the largest size the original puzzle tested (18): fine up to 24
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range(3):
        k = t * TPB + tx
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        k = t * TPB + ty
        b_tile[ty, tx] = b[k, j] if k < size and j < size else 0.0
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_while_tiles(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = numba.float32(0.0)
    start = 0
    while start < size:  # tiles counted by their first column, not by their number
        a_tile[ty, tx] = a[i, start + tx] if i < size and start + tx < size else 0.0
        b_tile[ty, tx] = b[start + ty, j] if start + ty < size and j < size else 0.0
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
        start += TPB
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_public_no_second_sync(out, a, b, size):
    # as 6 of 8 public tiled matmuls: no second barrier, and threads outside the matrix read tile
    # slots nobody wrote (their totals are never stored): the race must lead
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        if i < size and t * TPB + tx < size:
            a_tile[ty, tx] = a[i, t * TPB + tx]
        if t * TPB + ty < size and j < size:
            b_tile[ty, tx] = b[t * TPB + ty, j]
        cuda.syncthreads()
        for kk in range(TPB):
            if t * TPB + kk < size:
                total += a_tile[ty, kk] * b_tile[kk, tx]
    if i < size and j < size:
        out[i, j] = total


MUTANTS = {
    "matmul": [
        ("public_no_second_sync", matmul_public_no_second_sync, *RACE),
        ("three_tiles", matmul_three_tiles, *WRONG),
        ("naive", matmul_naive, *over("global_reads")),
        ("never_reads_b", matmul_never_reads_b, *WRONG),
        ("missing_second_sync", matmul_missing_second_sync, *RACE),
        ("missing_first_sync", matmul_missing_first_sync, *NO_BARRIER),
        ("no_zero_padding", matmul_no_zero_padding, *UNINIT),
        ("barrier_in_branch", matmul_barrier_in_branch, *BARRIER),
        ("wrong_axis_load", matmul_wrong_axis_load, *WRONG),
    ],
}

VARIANTS = {
    "matmul": [
        ("while_tiles", matmul_while_tiles),
        ("transposed_b_tile", matmul_transposed_b_tile),
        ("grid_index", matmul_grid_index),
    ],
}

SEEDS = {"matmul": (0, 1)}
