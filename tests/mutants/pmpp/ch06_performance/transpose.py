"""Mutants of puzzles/pmpp/ch06_performance/transpose.py."""

from numba import cuda, float32

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, UninitializedRead
from puzzles.pmpp import ch06_performance as ch06
from puzzles.pmpp.ch06_performance import ROWS, TILE, TILE_P


@cuda.jit
def transpose_no_barrier(out, a, h, w):
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    if row0 + ty < h and col0 + tx < w:
        tile[ty, tx] = a[row0 + ty, col0 + tx]
    if col0 + ty < w and row0 + tx < h:
        out[col0 + ty, row0 + tx] = tile[tx, ty]


@cuda.jit
def transpose_one_guard(out, a, h, w):
    # guards the store with the load's bounds: reads tile cells nobody loaded at the edges
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    if row0 + ty < h and col0 + tx < w:
        tile[ty, tx] = a[row0 + ty, col0 + tx]
    cuda.syncthreads()
    if row0 + ty < h and col0 + tx < w:
        out[col0 + tx, row0 + ty] = tile[tx, ty]


@cuda.jit
def transpose_coarse_wrong_step(out, a, h, w):
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    for j in range(TILE // ROWS):  # j should step by ROWS
        if row0 + ty + j < h and col0 + tx < w:
            tile[ty + j, tx] = a[row0 + ty + j, col0 + tx]
    cuda.syncthreads()
    for j in range(TILE // ROWS):
        if col0 + ty + j < w and row0 + tx < h:
            out[col0 + ty + j, row0 + tx] = tile[tx, ty + j]


@cuda.jit
def transpose_unpadded(out, a, h, w):
    # a TILE x TILE tile: the column read tile[tx, ty] puts all 32 lanes of a warp in one bank
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    if row0 + ty < h and col0 + tx < w:
        tile[ty, tx] = a[row0 + ty, col0 + tx]
    cuda.syncthreads()
    if col0 + ty < w and row0 + tx < h:
        out[col0 + ty, row0 + tx] = tile[tx, ty]


@cuda.jit
def transpose_coarse_unpadded(out, a, h, w):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    for j in range(0, TILE, ROWS):
        if row0 + ty + j < h and col0 + tx < w:
            tile[ty + j, tx] = a[row0 + ty + j, col0 + tx]
    cuda.syncthreads()
    for j in range(0, TILE, ROWS):
        if col0 + ty + j < w and row0 + tx < h:
            out[col0 + ty + j, row0 + tx] = tile[tx, ty + j]


@cuda.jit
def transpose_widest_example(out, a, h, w):
    # the store bounded by the widest example (70 columns of a) as well as by w
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    if row0 + ty < h and col0 + tx < w:
        tile[ty, tx] = a[row0 + ty, col0 + tx]
    cuda.syncthreads()
    if col0 + ty < min(w, 70) and row0 + tx < h:
        out[col0 + ty, row0 + tx] = tile[tx, ty]


MUTANTS = {
    "ch06_transpose_tiled": [
        ("transpose_no_barrier", transpose_no_barrier, KernelDiagnosed, (DataRace, UninitializedRead)),
        ("transpose_one_guard", transpose_one_guard, KernelDiagnosed, UninitializedRead),
        ("transpose_unpadded", transpose_unpadded, OverBudget, "bank_conflicts"),
        ("transpose_widest_example", transpose_widest_example, WrongAnswer, None),
    ],
    "ch06_transpose_coarse": [
        ("transpose_tiled", ch06.transpose_tiled, KernelDiagnosed, UninitializedRead),
        ("transpose_coarse_wrong_step", transpose_coarse_wrong_step, KernelDiagnosed, DataRace),
        ("transpose_coarse_unpadded", transpose_coarse_unpadded, OverBudget, "bank_conflicts"),
    ],
}
VARIANTS: dict = {}
SEEDS = {
    "ch06_transpose_tiled": (5,),
    "ch06_transpose_coarse": (5,),
}
