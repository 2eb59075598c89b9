"""Mutants and variants of puzzle 6, `blocks` (puzzles/gpu_puzzles/p06_blocks.py)."""

from numba import cuda

from mutants.common import OOB, RACE, WRONG


@cuda.jit
def blocks_local_index(out, a, size):
    i = cuda.threadIdx.x  # every block redoes the first few elements
    if i < size:
        out[i] = a[i] + 10


@cuda.jit
def blocks_forgot_thread(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x
    if i < size:
        out[i] = a[i] + 10


@cuda.jit
def blocks_missing_guard(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[i] = a[i] + 10


@cuda.jit
def blocks_hardcoded_block_size(out, a, size):
    i = cuda.blockIdx.x * 8 + cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10


@cuda.jit
def blocks_guard_local(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if cuda.threadIdx.x < size:
        out[i] = a[i] + 10


@cuda.jit
def blocks_block_plus_thread(out, a, size):
    i = cuda.blockIdx.x + cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10


@cuda.jit
def blocks_grid_early_return(out, a, size):
    i = cuda.grid(1)
    if i >= size:
        return
    out[i] = a[i] + 10


@cuda.jit
def blocks_grid_stride(out, a, size):
    for k in range(cuda.grid(1), size, cuda.gridsize(1)):
        out[k] = a[k] + 10


MUTANTS = {
    "blocks": [
        ("local_index", blocks_local_index, *RACE),
        ("forgot_thread", blocks_forgot_thread, *RACE),
        ("missing_guard", blocks_missing_guard, *OOB),
        ("hardcoded_block_size", blocks_hardcoded_block_size, *WRONG),
        ("guard_local", blocks_guard_local, *OOB),
        ("block_plus_thread", blocks_block_plus_thread, *RACE),
    ],
}

VARIANTS = {
    "blocks": [("grid_early_return", blocks_grid_early_return), ("grid_stride", blocks_grid_stride)],
}
