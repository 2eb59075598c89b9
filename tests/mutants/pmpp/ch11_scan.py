"""Mutants of puzzles/pmpp/ch11_scan.py (moved from tests/test_pmpp_c.py); format: mutants/common.py."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, WrongAnswer
from helpers.sim.errors import (
    DataRace,
    OutOfBounds,
)
from puzzles.pmpp import ch10_reduction as ch10
from puzzles.pmpp import ch11_scan as ch11
from puzzles.pmpp import ch12_merge as ch12

TPB = ch10.TPB
SEGMENT = ch10.SEGMENT
FULL_MASK = 0xFFFFFFFF
TILE = ch12.TILE


KS = ch11.TPB


BK = ch11.BK_SECTION


@cuda.jit
def ks_one_barrier(out, a, n):
    xy = cuda.shared.array(KS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    xy[t] = a[i] if i < n else 0.0
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            xy[t] += xy[t - stride]  # no temporary, no second buffer: t - stride may already be updated
        stride *= 2
    if i < n:
        out[i] = xy[t]


@cuda.jit
def ks_no_second_barrier(out, a, n):
    xy = cuda.shared.array(KS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    xy[t] = a[i] if i < n else 0.0
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            tmp = xy[t] + xy[t - stride]
        if t >= stride:
            xy[t] = tmp
        stride *= 2
    if i < n:
        out[i] = xy[t]


@cuda.jit
def ks_unguarded_load(out, a, n):
    xy = cuda.shared.array(KS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    xy[t] = a[i]  # past n in the last block
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            tmp = xy[t] + xy[t - stride]
        cuda.syncthreads()
        if t >= stride:
            xy[t] = tmp
        stride *= 2
    if i < n:
        out[i] = xy[t]


@cuda.jit
def bk_no_downsweep_barrier(out, a, n):
    xy = cuda.shared.array(BK, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = 2 * cuda.blockIdx.x * bd + t
    xy[t] = a[i] if i < n else 0.0
    xy[t + bd] = a[i + bd] if i + bd < n else 0.0
    stride = 1
    while stride <= bd:
        cuda.syncthreads()
        idx = (t + 1) * 2 * stride - 1
        if idx < 2 * bd:
            xy[idx] += xy[idx - stride]
        stride *= 2
    stride = bd // 2
    while stride > 0:
        idx = (t + 1) * 2 * stride - 1  # no barrier: reads what the previous step is still writing
        if idx + stride < 2 * bd:
            xy[idx + stride] += xy[idx]
        stride //= 2
    cuda.syncthreads()
    if i < n:
        out[i] = xy[t]
    if i + bd < n:
        out[i + bd] = xy[t + bd]


@cuda.jit
def bk_upsweep_only(out, a, n):
    xy = cuda.shared.array(BK, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = 2 * cuda.blockIdx.x * bd + t
    xy[t] = a[i] if i < n else 0.0
    xy[t + bd] = a[i + bd] if i + bd < n else 0.0
    stride = 1
    while stride <= bd:
        cuda.syncthreads()
        idx = (t + 1) * 2 * stride - 1
        if idx < 2 * bd:
            xy[idx] += xy[idx - stride]
        stride *= 2
    cuda.syncthreads()  # forgot the down-sweep: only some positions are complete
    if i < n:
        out[i] = xy[t]
    if i + bd < n:
        out[i + bd] = xy[t + bd]


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
def domino_static(out, flags, carries, counter, a, n):
    xy = cuda.shared.array(KS, numba.float32)
    carry_in = cuda.shared.array(1, numba.float32)
    t = cuda.threadIdx.x
    sec = cuda.blockIdx.x  # not a ticket: the predecessor may not have started
    i = sec * cuda.blockDim.x + t
    xy[t] = a[i] if i < n else 0.0
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            tmp = xy[t] + xy[t - stride]
        cuda.syncthreads()
        if t >= stride:
            xy[t] = tmp
        stride *= 2
    if t == cuda.blockDim.x - 1:
        prev = 0.0
        if sec > 0:
            while cuda.atomic.add(flags, sec - 1, 0) == 0:
                pass
            cuda.threadfence()
            prev = cuda.atomic.add(carries, sec - 1, 0.0)
        carries[sec] = prev + xy[t]
        cuda.threadfence()
        cuda.atomic.exch(flags, sec, 1)
        carry_in[0] = prev
    cuda.syncthreads()
    if i < n:
        out[i] = xy[t] + carry_in[0]


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
    "ch11_kogge_stone": [
        ("ks_one_barrier", ks_one_barrier, KernelDiagnosed, DataRace),
        ("ks_no_second_barrier", ks_no_second_barrier, KernelDiagnosed, DataRace),
        ("ks_unguarded_load", ks_unguarded_load, KernelDiagnosed, OutOfBounds),
    ],
    "ch11_brent_kung": [
        ("bk_no_downsweep_barrier", bk_no_downsweep_barrier, KernelDiagnosed, DataRace),
        ("bk_upsweep_only", bk_upsweep_only, WrongAnswer, None),
    ],
    "ch11_add_sums": [
        ("add_sums_no_first_block_check", add_sums_no_first_block_check, KernelDiagnosed, OutOfBounds),
        ("add_sums_off_by_one", add_sums_off_by_one, WrongAnswer, None),
        ("add_sums_totals_for_seven", add_sums_totals_for_seven, KernelDiagnosed, OutOfBounds),
    ],
}
VARIANTS: dict = {}
SEEDS = {"ch11_kogge_stone": (3,), "ch11_brent_kung": (3,), "ch11_add_sums": (3,)}
