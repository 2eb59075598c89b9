"""Mutants of puzzles/pmpp/ch04_architecture/warp_lane.py."""

from numba import cuda

from helpers.check import WrongAnswer


@cuda.jit
def warp_lane_column_major(warp, lane, height, width, block_w, block_h):
    row = cuda.blockIdx.y * block_h + cuda.threadIdx.y
    col = cuda.blockIdx.x * block_w + cuda.threadIdx.x
    t = cuda.threadIdx.x * block_h + cuda.threadIdx.y
    per_block = (block_w * block_h + 31) // 32
    if row < height and col < width:
        warp[row, col] = (cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x) * per_block + t // 32
        lane[row, col] = t % 32


@cuda.jit
def warp_lane_floor(warp, lane, height, width, block_w, block_h):
    row = cuda.blockIdx.y * block_h + cuda.threadIdx.y
    col = cuda.blockIdx.x * block_w + cuda.threadIdx.x
    t = cuda.threadIdx.y * block_w + cuda.threadIdx.x
    per_block = block_w * block_h // 32  # forgets the partly filled last warp
    if row < height and col < width:
        warp[row, col] = (cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x) * per_block + t // 32
        lane[row, col] = t % 32


MUTANTS = {
    "ch04_warp_lane": [
        ("warp_lane_column_major", warp_lane_column_major, WrongAnswer, None),
        ("warp_lane_floor", warp_lane_floor, WrongAnswer, None),
    ],
}
VARIANTS: dict = {}
SEEDS = {
    "ch04_warp_lane": (11,),
}
