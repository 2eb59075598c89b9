"""Mutants and variants of puzzle 4, `map_2d` (puzzles/gpu_puzzles/p04_map_2d.py)."""

from numba import cuda

from mutants.common import OOB, WRONG


@cuda.jit
def map_2d_missing_guard(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    out[i, j] = a[i, j] + 10


@cuda.jit
def map_2d_guard_rows_only(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def map_2d_guard_typo(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and i < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def map_2d_transposed_read(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[j, i] + 10


@cuda.jit
def map_2d_arange_hardcode(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = i * size + j + 10


@cuda.jit
def map_2d_guard_against_block(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < cuda.blockDim.y and j < cuda.blockDim.x:
        out[i, j] = a[i, j] + 10


@cuda.jit
def map_2d_x_is_row(out, a, size):
    i = cuda.threadIdx.x  # the other convention: x picks the row
    j = cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def map_2d_grid_early_return(out, a, size):
    j, i = cuda.grid(2)
    if i >= size or j >= size:
        return
    out[i, j] = a[i, j] + 10


MUTANTS = {
    "map_2d": [
        ("missing_guard", map_2d_missing_guard, *OOB),
        ("guard_rows_only", map_2d_guard_rows_only, *OOB),
        ("guard_typo", map_2d_guard_typo, *OOB),
        ("transposed_read", map_2d_transposed_read, *WRONG),
        ("arange_hardcode", map_2d_arange_hardcode, *WRONG),
        ("guard_against_block", map_2d_guard_against_block, *OOB),
    ],
}

VARIANTS = {
    "map_2d": [("x_is_row", map_2d_x_is_row), ("grid_early_return", map_2d_grid_early_return)],
}
