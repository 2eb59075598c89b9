"""Mutants of puzzles/pmpp/ch11_scan/hierarchical.py; format: mutants/common.py."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, WrongAnswer
from helpers.sim.errors import OutOfBounds


@cuda.jit
def add_sums_no_first_block_check(out, partial, prefix, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = partial[i] + prefix[cuda.blockIdx.x - 1]  # prefix[-1] in block 0


@cuda.jit
def add_sums_off_by_one(out, partial, prefix, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = partial[i] + prefix[cuda.blockIdx.x]  # includes the block's own total


@cuda.jit
def add_sums_totals_for_seven(out, partial, prefix, n):
    # the section totals cached in shared memory, sized for the 7 sections of n = 100: more sections overflow
    pre = cuda.shared.array(7, numba.float32)
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    if t < cuda.gridDim.x:
        pre[t] = prefix[t]
    cuda.syncthreads()
    i = b * cuda.blockDim.x + t
    if i < n:
        if b > 0:
            out[i] = partial[i] + pre[b - 1]
        else:
            out[i] = partial[i]


MUTANTS = {
    "ch11_add_sums": [
        ("add_sums_no_first_block_check", add_sums_no_first_block_check, KernelDiagnosed, OutOfBounds),
        ("add_sums_off_by_one", add_sums_off_by_one, WrongAnswer, None),
        ("add_sums_totals_for_seven", add_sums_totals_for_seven, KernelDiagnosed, OutOfBounds),
    ],
}
VARIANTS: dict = {}
# seeds 0-9: every seed has more blocks than a kernel sized for seven totals assumes (issue 23, class 19)
SEEDS = {"ch11_add_sums": tuple(range(10))}
