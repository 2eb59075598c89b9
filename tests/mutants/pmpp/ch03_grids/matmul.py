"""Mutants of puzzles/pmpp/ch03_grids/matmul.py."""

from numba import cuda, float32

from helpers.check import KernelDiagnosed
from helpers.sim.errors import OutOfBounds
from mutants.common import M, over
from puzzles.pmpp.ch03_grids import matmul as ch03


@cuda.jit
def matmul_swapped(p, m, n, rows, inner, cols):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < rows and col < cols:
        acc = float32(0)
        for k in range(inner):
            acc += m[k, row] * n[col, k]
        p[row, col] = acc


@cuda.jit
def matmul_no_guard(p, m, n, rows, inner, cols):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    acc = float32(0)
    for k in range(inner):
        acc += m[row, k] * n[k, col]
    p[row, col] = acc


MUTANTS = {
    "ch03_matmul": [
        ("matmul_swapped", matmul_swapped, KernelDiagnosed, OutOfBounds),
        ("matmul_no_guard", matmul_no_guard, KernelDiagnosed, OutOfBounds),
        # `acc = 0.0` makes the product float64, which the statement forbids (float64="reject")
        M(ch03.matmul_kernel, "matmul_float64_acc", over("float64"), ("acc = float32(0)", "acc = 0.0")),
    ],
}
VARIANTS: dict = {}
SEEDS = {
    "ch03_matmul": (11,),
}
