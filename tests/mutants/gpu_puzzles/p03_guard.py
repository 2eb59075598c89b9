"""Mutants and variants of puzzle 3, `guard` (puzzles/gpu_puzzles/p03_guard.py)."""

from numba import cuda

from mutants.common import OOB, RACE, WRONG


@cuda.jit
def guard_missing(out, a, size):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10


@cuda.jit
def guard_off_by_one(out, a, size):
    i = cuda.threadIdx.x
    if i <= size:
        out[i] = a[i] + 10


@cuda.jit
def guard_against_block(out, a, size):
    i = cuda.threadIdx.x
    if i < cuda.blockDim.x:
        out[i] = a[i] + 10


@cuda.jit
def guard_too_strict(out, a, size):
    i = cuda.threadIdx.x
    if i < size - 1:
        out[i] = a[i] + 10


@cuda.jit
def guard_read_only(out, a, size):
    i = cuda.threadIdx.x
    v = 0.0
    if i < size:
        v = a[i]
    out[i] = v + 10


@cuda.jit
def guard_clamped_index(out, a, size):
    k = min(cuda.threadIdx.x, size - 1)  # spare threads all rewrite the last element
    out[k] = a[k] + 10


@cuda.jit
def guard_early_return(out, a, size):
    i = cuda.threadIdx.x
    if i >= size:
        return
    out[i] = a[i] + 10


@cuda.jit
def guard_grid_stride(out, a, size):
    for k in range(cuda.grid(1), size, cuda.gridsize(1)):
        out[k] = a[k] + 10


@cuda.jit
def guard_literal_size(out, a, size):
    i = cuda.threadIdx.x
    if i < 5:  # the size of case 0, hard-coded
        out[i] = a[i] + 10


MUTANTS = {
    "guard": [
        ("literal_size", guard_literal_size, *OOB),
        ("missing", guard_missing, *OOB),
        ("off_by_one", guard_off_by_one, *OOB),
        ("against_block", guard_against_block, *OOB),
        ("too_strict", guard_too_strict, *WRONG),
        ("read_only", guard_read_only, *OOB),
        ("clamped_index", guard_clamped_index, *RACE),
    ],
}

VARIANTS = {
    "guard": [("early_return", guard_early_return), ("grid_stride", guard_grid_stride)],
}
