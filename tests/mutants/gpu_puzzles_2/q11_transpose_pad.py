"""Known-wrong and known-right kernels for Puzzles II.11 (transpose, padded tile)."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds, UninitializedRead

TILE = 32
ROWS = 8
PADDED = TILE + 1
PAD2 = TILE + 2
WIDE = 2 * TILE + 1
FLAT = TILE * PADDED


@cuda.jit
def unpadded(out, a, rows, cols):
    tile = cuda.shared.array((TILE, TILE), numba.float32)  # a tile column: one bank, 32 passes
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    for k in range(0, TILE, ROWS):
        r = cuda.blockIdx.y * TILE + ty + k
        if r < rows and c < cols:
            tile[ty + k, tx] = a[r, c]
    cuda.syncthreads()
    c2 = cuda.blockIdx.y * TILE + tx
    for k in range(0, TILE, ROWS):
        r2 = cuda.blockIdx.x * TILE + ty + k
        if r2 < cols and c2 < rows:
            out[r2, c2] = tile[tx, ty + k]


@cuda.jit
def padded_by_two(out, a, rows, cols):
    tile = cuda.shared.array((TILE, PAD2), numba.float32)  # stride 34: even words, 2 passes
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    for k in range(0, TILE, ROWS):
        r = cuda.blockIdx.y * TILE + ty + k
        if r < rows and c < cols:
            tile[ty + k, tx] = a[r, c]
    cuda.syncthreads()
    c2 = cuda.blockIdx.y * TILE + tx
    for k in range(0, TILE, ROWS):
        r2 = cuda.blockIdx.x * TILE + ty + k
        if r2 < cols and c2 < rows:
            out[r2, c2] = tile[tx, ty + k]


@cuda.jit
def no_barrier(out, a, rows, cols):
    tile = cuda.shared.array((TILE, PADDED), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    for k in range(0, TILE, ROWS):
        r = cuda.blockIdx.y * TILE + ty + k
        if r < rows and c < cols:
            tile[ty + k, tx] = a[r, c]
    c2 = cuda.blockIdx.y * TILE + tx
    for k in range(0, TILE, ROWS):
        r2 = cuda.blockIdx.x * TILE + ty + k
        if r2 < cols and c2 < rows:
            out[r2, c2] = tile[tx, ty + k]


@cuda.jit
def same_block_place(out, a, rows, cols):
    tile = cuda.shared.array((TILE, PADDED), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    for k in range(0, TILE, ROWS):
        r = cuda.blockIdx.y * TILE + ty + k
        if r < rows and c < cols:
            tile[ty + k, tx] = a[r, c]
    cuda.syncthreads()
    c2 = cuda.blockIdx.x * TILE + tx  # the tile's own place, not the mirror
    for k in range(0, TILE, ROWS):
        r2 = cuda.blockIdx.y * TILE + ty + k
        if r2 < cols and c2 < rows:
            out[r2, c2] = tile[tx, ty + k]


@cuda.jit
def no_load_guard(out, a, rows, cols):
    tile = cuda.shared.array((TILE, PADDED), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    for k in range(0, TILE, ROWS):
        r = cuda.blockIdx.y * TILE + ty + k
        tile[ty + k, tx] = a[r, c]
    cuda.syncthreads()
    c2 = cuda.blockIdx.y * TILE + tx
    for k in range(0, TILE, ROWS):
        r2 = cuda.blockIdx.x * TILE + ty + k
        if r2 < cols and c2 < rows:
            out[r2, c2] = tile[tx, ty + k]


@cuda.jit
def no_shared(out, a, rows, cols):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    for k in range(0, TILE, ROWS):
        r = cuda.blockIdx.y * TILE + ty + k
        if r < rows and c < cols:
            out[c, r] = a[r, c]  # writes down a column of out


@cuda.jit
def padded_wide_rows(out, a, rows, cols):
    tile = cuda.shared.array((TILE, WIDE), numba.float32)  # any odd row stride works
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    for k in range(0, TILE, ROWS):
        r = cuda.blockIdx.y * TILE + ty + k
        if r < rows and c < cols:
            tile[ty + k, tx] = a[r, c]
    cuda.syncthreads()
    c2 = cuda.blockIdx.y * TILE + tx
    for k in range(0, TILE, ROWS):
        r2 = cuda.blockIdx.x * TILE + ty + k
        if r2 < cols and c2 < rows:
            out[r2, c2] = tile[tx, ty + k]


@cuda.jit
def flat_padded(out, a, rows, cols):
    tile = cuda.shared.array(FLAT, numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    k = ty
    while k < TILE:
        if by + k < rows and bx + tx < cols:
            tile[k * PADDED + tx] = a[by + k, bx + tx]
        k += ROWS
    cuda.syncthreads()
    k = ty
    while k < TILE:
        if bx + k < cols and by + tx < rows:
            out[bx + k, by + tx] = tile[tx * PADDED + k]
        k += ROWS


NO_BARRIER = (DataRace, UninitializedRead)
MUTANTS = {
    "transpose_pad": [
        ("unpadded", unpadded, OverBudget, "bank_conflicts"),
        ("padded_by_two", padded_by_two, OverBudget, "bank_conflicts"),
        ("no_barrier", no_barrier, KernelDiagnosed, NO_BARRIER),
        ("same_block_place", same_block_place, WrongAnswer, None),
        ("no_load_guard", no_load_guard, KernelDiagnosed, OutOfBounds),
        ("no_shared", no_shared, OverBudget, "min_coalescing"),
    ]
}
VARIANTS = {"transpose_pad": [("padded_wide_rows", padded_wide_rows), ("flat_padded", flat_padded)]}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
