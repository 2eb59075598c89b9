"""Mutants of puzzles/pmpp/ch11_scan/sections.py; format: mutants/common.py."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds
from puzzles.pmpp.ch11_scan import BK_SECTION as BK
from puzzles.pmpp.ch11_scan import TPB as KS


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
def bk_kogge_stone_pairs(out, a, n):
    # the right scan of 2 * TPB elements, but Kogge-Stone with two positions per thread: every step
    # rewrites nearly every position
    xy = cuda.shared.array(BK, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = 2 * cuda.blockIdx.x * bd + t
    xy[t] = a[i] if i < n else 0.0
    xy[t + bd] = a[i + bd] if i + bd < n else 0.0
    stride = 1
    while stride < 2 * bd:
        cuda.syncthreads()
        lo = xy[t - stride] if t >= stride else 0.0
        hi = xy[t + bd - stride] if t + bd >= stride else 0.0
        cuda.syncthreads()
        if t >= stride:
            xy[t] += lo
        if t + bd >= stride:
            xy[t + bd] += hi
        stride *= 2
    cuda.syncthreads()
    if i < n:
        out[i] = xy[t]
    if i + bd < n:
        out[i + bd] = xy[t + bd]


MUTANTS = {
    "ch11_kogge_stone": [
        ("ks_one_barrier", ks_one_barrier, KernelDiagnosed, DataRace),
        ("ks_no_second_barrier", ks_no_second_barrier, KernelDiagnosed, DataRace),
        ("ks_unguarded_load", ks_unguarded_load, KernelDiagnosed, OutOfBounds),
    ],
    "ch11_brent_kung": [
        ("bk_no_downsweep_barrier", bk_no_downsweep_barrier, KernelDiagnosed, DataRace),
        ("bk_upsweep_only", bk_upsweep_only, WrongAnswer, None),
        ("bk_kogge_stone_pairs", bk_kogge_stone_pairs, OverBudget, "shared_writes_per_block"),
    ],
}
VARIANTS: dict = {}
# Brent-Kung on seeds 0-9: its two sweeps enforced on every seed (issue 23, class 5)
SEEDS = {"ch11_kogge_stone": (3,), "ch11_brent_kung": tuple(range(10))}
