"""Mutants and variants of puzzle 2, `zip` (puzzles/gpu_puzzles/p02_zip.py)."""

from numba import cuda

from mutants.common import OOB, RACE, READONLY, WRONG


@cuda.jit
def zip_a_twice(out, a, b):
    i = cuda.threadIdx.x
    out[i] = a[i] + a[i]


@cuda.jit
def zip_b_twice(out, a, b):
    i = cuda.threadIdx.x
    out[i] = b[i] + b[i]


@cuda.jit
def zip_subtract(out, a, b):
    i = cuda.threadIdx.x
    out[i] = a[i] - b[i]


@cuda.jit
def zip_thread_y(out, a, b):
    i = cuda.threadIdx.y  # the block is 1-D: always 0
    out[i] = a[i] + b[i]


@cuda.jit
def zip_b_shifted(out, a, b):
    i = cuda.threadIdx.x
    out[i] = a[i] + b[i + 1]


@cuda.jit
def zip_writes_b(out, a, b):
    i = cuda.threadIdx.x
    b[i] = a[i] + b[i]
    out[i] = b[i]


@cuda.jit
def zip_grid_index(out, a, b):
    i = cuda.grid(1)
    out[i] = b[i] + a[i]


@cuda.jit
def zip_grid_stride(out, a, b):
    for k in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[k] = a[k] + b[k]


MUTANTS = {
    "zip": [
        ("a_twice", zip_a_twice, *WRONG),
        ("b_twice", zip_b_twice, *WRONG),
        ("subtract", zip_subtract, *WRONG),
        ("thread_y", zip_thread_y, *RACE),
        ("b_shifted", zip_b_shifted, *OOB),
        ("writes_b", zip_writes_b, *READONLY),
    ],
}

VARIANTS = {
    "zip": [("grid_index", zip_grid_index), ("grid_stride", zip_grid_stride)],
}
