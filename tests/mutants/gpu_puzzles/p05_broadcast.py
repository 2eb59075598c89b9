"""Mutants and variants of puzzle 5, `broadcast` (puzzles/gpu_puzzles/p05_broadcast.py)."""

from numba import cuda

from mutants.common import OOB, WRONG


@cuda.jit
def broadcast_swapped_axes(out, a, b, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[j, 0] + b[0, i]


@cuda.jit
def broadcast_column_as_row(out, a, b, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[0, i] + b[0, j]


@cuda.jit
def broadcast_missing_guard(out, a, b, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    out[i, j] = a[i, 0] + b[0, j]


@cuda.jit
def broadcast_a_twice(out, a, b, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[i, 0] + a[j, 0]


@cuda.jit
def broadcast_outer_product(out, a, b, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[i, 0] * b[0, j]


@cuda.jit
def broadcast_x_is_row(out, a, b, size):
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = b[0, j] + a[i, 0]


@cuda.jit
def broadcast_grid_early_return(out, a, b, size):
    j, i = cuda.grid(2)
    if i >= size or j >= size:
        return
    out[i, j] = a[i, 0] + b[0, j]


MUTANTS = {
    "broadcast": [
        ("swapped_axes", broadcast_swapped_axes, *WRONG),
        ("column_as_row", broadcast_column_as_row, *OOB),
        ("missing_guard", broadcast_missing_guard, *OOB),
        ("a_twice", broadcast_a_twice, *WRONG),
        ("outer_product", broadcast_outer_product, *WRONG),
    ],
}

VARIANTS = {
    "broadcast": [("x_is_row", broadcast_x_is_row), ("grid_early_return", broadcast_grid_early_return)],
}
