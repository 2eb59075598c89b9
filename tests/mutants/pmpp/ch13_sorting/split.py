"""Mutants of puzzles/pmpp/ch13_sorting/split.py; format: mutants/common.py."""

import numba
from numba import cuda

from helpers.sim.errors import DataRace, OutOfBounds
from mutants.common import OOB, RACE, WRONG, KernelDiagnosed
from puzzles.pmpp.ch13_sorting import TPB
from puzzles.pmpp.ch13_sorting.split import PUZZLES

OOB_OR_RACE = (KernelDiagnosed, (OutOfBounds, DataRace))


@cuda.jit
def split_inclusive(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    before = ones[t]  # inclusive: counts this key's own 1 as well
    total = ones[bd - 1]
    if i < n:
        dst = t - before if b == 0 else valid - total + before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_unstable(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    before = ones[t] - b
    if i < n:
        # the ones filled in from the back: a valid partition, but their order is reversed
        dst = t - before if b == 0 else valid - 1 - before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_no_final_barrier(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    before = ones[t] - b  # no barrier: the last thread may not have added its last term
    total = ones[bd - 1]
    if i < n:
        dst = t - before if b == 0 else valid - total + before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_one_barrier_scan(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        if t >= stride:
            ones[t] += ones[t - stride]  # reads a neighbour that may already have updated itself
        stride *= 2
    cuda.syncthreads()
    before = ones[t] - b
    total = ones[bd - 1]
    if i < n:
        dst = t - before if b == 0 else valid - total + before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_full_block_count(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    before = ones[t] - b
    total = ones[bd - 1]
    if i < n:
        # assumes every section is full: in the last one the ones land past n
        dst = t - before if b == 0 else bd - total + before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_mask_not_bit(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = keys[i] & (1 << bit)  # 0 or 2**bit, not 0 or 1: the scan counts 2**bit per key
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    before = ones[t] - b
    total = ones[bd - 1]
    if i < n:
        dst = t - before if b == 0 else valid - total + before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_exclusive_shifted(keys_out, vals_out, keys, vals, bit, n):
    # variant: the exclusive scan directly (load shifted right by one), total = last exclusive + last bit
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = (keys[i] >> bit) & 1 if i < n else 0
    ones[t] = (keys[i - 1] >> bit) & 1 if t > 0 and i - 1 < n else 0
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    last = start + bd - 1
    total = ones[bd - 1] + ((keys[last] >> bit) & 1 if last < n else 0)
    if i < n:
        dst = t - ones[t] if b == 0 else valid - total + ones[t]
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_count_zeros(keys_out, vals_out, keys, vals, bit, n):
    # variant: scan the zeros (padding counts as neither), double-buffered
    buf = cuda.shared.array((2, TPB), numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    z = 0
    if i < n:
        z = 1 - ((keys[i] >> bit) & 1)
    src = 0
    buf[0, t] = z
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        buf[1 - src, t] = buf[src, t] + (buf[src, t - stride] if t >= stride else 0)
        src = 1 - src
        stride *= 2
    cuda.syncthreads()
    zeros_before = buf[src, t] - z
    zeros = buf[src, bd - 1]
    if i < n:
        dst = zeros_before if z == 1 else zeros + (t - zeros_before)
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


MUTANTS = {
    "ch13_split": [
        ("inclusive_scan", split_inclusive, *OOB_OR_RACE),
        ("unstable_ones", split_unstable, *WRONG),
        ("no_barrier_before_total", split_no_final_barrier, *RACE),
        ("one_barrier_per_step", split_one_barrier_scan, *RACE),
        ("full_section_assumed", split_full_block_count, *OOB),
        ("mask_not_bit", split_mask_not_bit, *OOB_OR_RACE),
    ],
}

VARIANTS = {
    "ch13_split": [("exclusive_shifted", split_exclusive_shifted), ("count_zeros_double", split_count_zeros)],
}

# exercises on three seeds, the worked kernels on two (as the chapter's tests ran them)
SEEDS = {p.name: (0, 1, 2) if p.name in MUTANTS else (0, 1) for p in PUZZLES}
# ch13_split on ten: mask_not_bit draws bit 31 on seed 6 (an int32 store of 2**31 must wrap, as on a GPU)
SEEDS["ch13_split"] = tuple(range(10))
