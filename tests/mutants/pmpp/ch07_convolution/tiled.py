"""Mutants of puzzles/pmpp/ch07_convolution/tiled.py."""

from numba import cuda, float32

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, UninitializedRead
from puzzles.pmpp import ch07_convolution as ch07
from puzzles.pmpp.ch07_convolution import FILTER, FW, IN_TILE, OUT_TILE, R
from puzzles.pmpp.ch07_convolution import TILE as TILE7


@cuda.jit
def conv_in_no_ghost(out, a, h, w):
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * OUT_TILE + tx - R
    row = cuda.blockIdx.y * OUT_TILE + ty - R
    if 0 <= row < h and 0 <= col < w:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    if R <= tx < IN_TILE - R and R <= ty < IN_TILE - R and row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                acc += f[i, j] * tile[ty - R + i, tx - R + j]
        out[row, col] = acc


@cuda.jit
def conv_in_no_halo(out, a, h, w):
    # steps blocks by IN_TILE instead of OUT_TILE: outputs between the tiles are never written
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * IN_TILE + tx - R
    row = cuda.blockIdx.y * IN_TILE + ty - R
    if 0 <= row < h and 0 <= col < w:
        tile[ty, tx] = a[row, col]
    else:
        tile[ty, tx] = 0.0
    cuda.syncthreads()
    if R <= tx < IN_TILE - R and R <= ty < IN_TILE - R and row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                acc += f[i, j] * tile[ty - R + i, tx - R + j]
        out[row, col] = acc


@cuda.jit
def conv_in_no_barrier(out, a, h, w):
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * OUT_TILE + tx - R
    row = cuda.blockIdx.y * OUT_TILE + ty - R
    if 0 <= row < h and 0 <= col < w:
        tile[ty, tx] = a[row, col]
    else:
        tile[ty, tx] = 0.0
    if R <= tx < IN_TILE - R and R <= ty < IN_TILE - R and row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                acc += f[i, j] * tile[ty - R + i, tx - R + j]
        out[row, col] = acc


@cuda.jit
def conv_cached_halo_zero(out, a, h, w):
    # treats every tap outside the tile as a ghost cell
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((TILE7, TILE7), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE7 + tx
    row = cuda.blockIdx.y * TILE7 + ty
    if row < h and col < w:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    if row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                ti, tj = ty - R + i, tx - R + j
                if 0 <= ti < TILE7 and 0 <= tj < TILE7 and row - R + i < h and col - R + j < w:
                    acc += f[i, j] * tile[ti, tj]
        out[row, col] = acc


@cuda.jit
def conv_in_widest_example(out, a, h, w):
    # outputs bounded by the widest example image (31 columns) as well as by w: a wider image loses columns
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * OUT_TILE + tx - R
    row = cuda.blockIdx.y * OUT_TILE + ty - R
    if 0 <= row < h and 0 <= col < w:
        tile[ty, tx] = a[row, col]
    else:
        tile[ty, tx] = 0.0
    cuda.syncthreads()
    if R <= tx < IN_TILE - R and R <= ty < IN_TILE - R and row < h and col < min(w, 31):
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                acc += f[i, j] * tile[ty - R + i, tx - R + j]
        out[row, col] = acc


MUTANTS = {
    "ch07_conv2d_tiled_in": [
        ("conv_in_no_ghost", conv_in_no_ghost, KernelDiagnosed, UninitializedRead),
        ("conv_in_no_halo", conv_in_no_halo, WrongAnswer, None),
        ("conv_in_no_barrier", conv_in_no_barrier, KernelDiagnosed, DataRace),
        ("conv_in_widest_example", conv_in_widest_example, WrongAnswer, None),
        ("conv2d_const", ch07.conv2d_const, OverBudget, "global_reads"),
    ],
    "ch07_conv2d_tiled_cached": [
        ("conv_cached_halo_zero", conv_cached_halo_zero, WrongAnswer, None),
        ("conv2d_const", ch07.conv2d_const, OverBudget, "global_reads"),
    ],
}
VARIANTS: dict = {}
SEEDS = {
    "ch07_conv2d_tiled_in": (5,),
    "ch07_conv2d_tiled_cached": (5,),
}
