"""Mutants of puzzles/pmpp/ch02_vector_add/vecadd.py."""

from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace


@cuda.jit
def vecadd_no_loop(out, a, b, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + b[i]


@cuda.jit
def vecadd_block_stride(out, a, b, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < n:  # stride of one block: neighbouring blocks redo each other's elements
        out[i] = a[i] + b[i]
        i += cuda.blockDim.x


@cuda.jit
def vecadd_contiguous_chunks(out, a, b, n):
    threads = cuda.blockDim.x * cuda.gridDim.x
    chunk = (n + threads - 1) // threads
    start = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * chunk
    for i in range(start, min(start + chunk, n)):  # each thread its own run: lanes chunk apart
        out[i] = a[i] + b[i]


@cuda.jit
def vecadd_grid_stride_for(out, a, b, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = a[i] + b[i]


@cuda.jit
def vecadd_grid_stride_by_block(out, a, b, n):
    # block-major trips: block k starts at k*blockDim and jumps the whole grid; same addresses
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    step = cuda.gridDim.x * cuda.blockDim.x
    while True:
        if i >= n:
            return
        out[i] = b[i] + a[i]
        i += step


MUTANTS = {
    "ch02_vecadd_grid_stride": [
        ("vecadd_no_loop", vecadd_no_loop, WrongAnswer, None),
        ("vecadd_block_stride", vecadd_block_stride, KernelDiagnosed, DataRace),
        ("vecadd_contiguous_chunks", vecadd_contiguous_chunks, OverBudget, "min_coalescing"),
    ],
}
VARIANTS = {
    "ch02_vecadd_grid_stride": [
        ("grid_stride_for", vecadd_grid_stride_for),
        ("grid_stride_by_block", vecadd_grid_stride_by_block),
    ],
}
SEEDS = {"ch02_vecadd_grid_stride": (11,)}
