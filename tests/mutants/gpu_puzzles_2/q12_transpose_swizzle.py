"""Known-wrong and known-right kernels for Puzzles II.12 (transpose, swizzled tile)."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, UninitializedRead

TILE = 32
ROWS = 8
PADDED = TILE + 1
FLAT = TILE * TILE


def _make(store, load, shape=(TILE, TILE), barrier=True):
    """A transpose kernel whose tile column for logical [y, x] is store(y, x) / load(y, x)."""

    @cuda.jit
    def kernel(out, a, rows, cols):
        tile = cuda.shared.array(shape, numba.float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        c = cuda.blockIdx.x * TILE + tx
        for k in range(0, TILE, ROWS):
            r = cuda.blockIdx.y * TILE + ty + k
            if r < rows and c < cols:
                tile[ty + k, store(ty + k, tx)] = a[r, c]
        if barrier:
            cuda.syncthreads()
        c2 = cuda.blockIdx.y * TILE + tx
        for k in range(0, TILE, ROWS):
            r2 = cuda.blockIdx.x * TILE + ty + k
            if r2 < cols and c2 < rows:
                out[r2, c2] = tile[tx, load(tx, ty + k)]

    return kernel


@cuda.jit(device=True)
def plain(y, x):
    return x


@cuda.jit(device=True)
def xor(y, x):
    return x ^ y


@cuda.jit(device=True)
def xor_half(y, x):
    return x ^ (y // 2)  # rows 2j and 2j+1 share a pattern: 2 passes


@cuda.jit(device=True)
def rotate(y, x):
    return (x + y) % TILE  # another permutation per row, also one bank per lane


@cuda.jit(device=True)
def xor_low(y, x):
    return x ^ (y % 16)  # only 16 patterns: 2 passes


@cuda.jit
def padded(out, a, rows, cols):
    tile = cuda.shared.array((TILE, PADDED), numba.float32)  # conflict-free, 128 bytes over
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


swizzle_on_write_only = _make(xor, plain)
no_swizzle = _make(plain, plain)
swizzle_by_half_row = _make(xor_half, xor_half)
swizzle_low_bits = _make(xor_low, xor_low)
no_barrier = _make(xor, xor, barrier=False)
rotation = _make(rotate, rotate)


@cuda.jit
def flat_xor(out, a, rows, cols):
    tile = cuda.shared.array(FLAT, numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    for k in range(ty, TILE, ROWS):
        if by + k < rows and bx + tx < cols:
            tile[k * TILE + (tx ^ k)] = a[by + k, bx + tx]
    cuda.syncthreads()
    for k in range(ty, TILE, ROWS):
        if bx + k < cols and by + tx < rows:
            out[bx + k, by + tx] = tile[tx * TILE + (k ^ tx)]


MUTANTS = {
    "transpose_swizzle": [
        ("swizzle_on_write_only", swizzle_on_write_only, WrongAnswer, None),
        ("no_swizzle", no_swizzle, OverBudget, "bank_conflicts"),
        ("swizzle_by_half_row", swizzle_by_half_row, OverBudget, "bank_conflicts"),
        ("swizzle_low_bits", swizzle_low_bits, OverBudget, "bank_conflicts"),
        ("no_barrier", no_barrier, KernelDiagnosed, (DataRace, UninitializedRead)),
        ("padded", padded, OverBudget, "shared_bytes"),
    ]
}
VARIANTS = {"transpose_swizzle": [("rotation", rotation), ("flat_xor", flat_xor)]}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
