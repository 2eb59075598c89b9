"""Mutants of puzzles/pmpp/ch02_vector_add.py (moved from tests/test_pmpp_a.py)."""

from numba import cuda

from helpers.check import KernelDiagnosed, WrongAnswer
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


MUTANTS = {
    "ch02_vecadd_grid_stride": [
        ("vecadd_no_loop", vecadd_no_loop, WrongAnswer, None),
        ("vecadd_block_stride", vecadd_block_stride, KernelDiagnosed, DataRace),
    ],
}
VARIANTS: dict = {}
SEEDS = {"ch02_vecadd_grid_stride": (11,)}
