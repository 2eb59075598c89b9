"""Mutants and variants of puzzle 7, `blocks_2d` (puzzles/gpu_puzzles/p07_blocks_2d.py)."""

from numba import cuda

from mutants.common import OOB, RACE, WRONG


@cuda.jit
def blocks_2d_missing_guard(out, a, size):
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_local_index(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_mixed_axes(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y  # block x picks the row
    j = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_block_width_for_rows(out, a, size):
    i = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.y  # blockDim.x: right only for square blocks
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_transposed_read(out, a, size):
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[j, i] + 10


@cuda.jit
def blocks_2d_guard_one_axis(out, a, size):
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_x_is_row(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_grid(out, a, size):
    j, i = cuda.grid(2)
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


MUTANTS = {
    "blocks_2d": [
        ("missing_guard", blocks_2d_missing_guard, *OOB),
        ("local_index", blocks_2d_local_index, *RACE),
        ("mixed_axes", blocks_2d_mixed_axes, *WRONG),
        ("block_width_for_rows", blocks_2d_block_width_for_rows, *WRONG),
        ("transposed_read", blocks_2d_transposed_read, *WRONG),
        ("guard_one_axis", blocks_2d_guard_one_axis, *OOB),
    ],
}

VARIANTS = {
    "blocks_2d": [("x_is_row", blocks_2d_x_is_row), ("grid", blocks_2d_grid)],
}
