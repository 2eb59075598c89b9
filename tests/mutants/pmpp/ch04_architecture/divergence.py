"""Mutants of puzzles/pmpp/ch04_architecture/divergence.py."""

from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace
from puzzles.pmpp import ch04_architecture as ch04

WARP = ch04.WARP


@cuda.jit
def uniform_no_pair_offset(out, a, n):
    t = cuda.threadIdx.x
    w = t // 32
    i = cuda.blockIdx.x * cuda.blockDim.x + 2 * (t % 32) + w % 2
    if i < n:
        x = a[i]
        if w % 2 == 0:
            out[i] = x * x
        else:
            out[i] = 1 - x


@cuda.jit
def uniform_largest_example(out, a, n):
    # bounded by the largest example (1000 elements) as well as by n
    t = cuda.threadIdx.x
    w = t // WARP
    i = cuda.blockIdx.x * cuda.blockDim.x + (w // 2) * 2 * WARP + 2 * (t % WARP) + w % 2
    if i < min(n, 1000):
        x = a[i]
        if w % 2 == 0:
            out[i] = x * x
        else:
            out[i] = 1 - x


MUTANTS = {
    "ch04_warp_uniform": [
        ("uniform_largest_example", uniform_largest_example, WrongAnswer, None),
        ("parity_branch_kernel", ch04.parity_branch_kernel, OverBudget, "paths_per_warp"),
        ("uniform_no_pair_offset", uniform_no_pair_offset, KernelDiagnosed, DataRace),
    ],
}
VARIANTS: dict = {}
SEEDS = {
    "ch04_warp_uniform": (11,),
}
