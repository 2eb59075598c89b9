"""PMPP chapters 10-12 (reduction, scan, merge) and the run-all benchmark script.

Every variant passes the strict harness; every exercise stub raises NotSolvedYet; each exercise
rejects at least two known-wrong kernels for the right reason; the host-side hierarchical scan
is right on the simulator; the benchmark kernels (the same code recompiled with GPU-sized
constants by helpers.timing.specialize) are right on the simulator at small sizes; and
`python -m puzzles.bench` skips cleanly without a GPU.
"""
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import cuda

import puzzles
from helpers import sim
from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import (
    BarrierDivergence,
    DataRace,
    OutOfBounds,
    Runaway,
    UninitializedRead,
    WarpDivergence,
)
from helpers.timing import specialize
from puzzles.pmpp import ch10_reduction as ch10
from puzzles.pmpp import ch11_scan as ch11
from puzzles.pmpp import ch12_merge as ch12
from puzzles.pmpp.ch12_merge import co_rank, merge_sequential

ROOT = Path(__file__).resolve().parents[1]
MODULES = (ch10, ch11, ch12)
ALL = [p for m in MODULES for p in m.PUZZLES]
EXERCISES = [p for p in ALL if p.stub != p.source]
SEED = 3

TPB = ch10.TPB
SEGMENT = ch10.SEGMENT
FULL_MASK = 0xFFFFFFFF
TILE = ch12.TILE


# ---------------------------------------------------------------- every variant, every stub

def test_each_notebook_has_two_exercises():
    for m in MODULES:
        assert sum(p.stub != p.source for p in m.PUZZLES) >= 2, m.__name__
        assert all(p.chapter == m.CHAPTER and p.name.startswith("ch") for p in m.PUZZLES)


# ---------------------------------------------------------------- known-wrong kernels: ch10

@cuda.jit
def convergent_barrier_in_if(out, a, n):
    part = cuda.shared.array(SEGMENT, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    part[t] = a[t] if t < n else 0.0
    part[t + bd] = a[t + bd] if t + bd < n else 0.0
    stride = bd
    while stride >= 1:
        if t < stride:
            cuda.syncthreads()          # only the active threads get here
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] = part[0]


@cuda.jit
def convergent_no_barrier(out, a, n):
    part = cuda.shared.array(SEGMENT, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    part[t] = a[t] if t < n else 0.0
    part[t + bd] = a[t + bd] if t + bd < n else 0.0
    stride = bd
    while stride >= 1:
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] = part[0]


@cuda.jit
def convergent_no_padding(out, a, n):
    part = cuda.shared.array(SEGMENT, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    part[t] = a[t]                      # n may be smaller than the block
    part[t + bd] = a[t + bd]
    stride = bd
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] = part[0]


@cuda.jit
def segmented_plain_add(out, a, n):
    part = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = 2 * bd * cuda.blockIdx.x + t
    part[t] = (a[i] if i < n else 0.0) + (a[i + bd] if i + bd < n else 0.0)
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] += part[0]               # every block: read-modify-write, no atomic


@cuda.jit
def segmented_local_index(out, a, n):
    part = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = t                               # every block sums the first segment
    part[t] = (a[i] if i < n else 0.0) + (a[i + bd] if i + bd < n else 0.0)
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, part[0])


@cuda.jit
def segmented_atomic_per_thread(out, a, n):
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = 2 * bd * cuda.blockIdx.x + t
    x = (a[i] if i < n else 0.0) + (a[i + bd] if i + bd < n else 0.0)
    cuda.atomic.add(out, 0, x)          # right answer, 16 atomics per block on one address


# (the wrong shuffle kernels keep the given grid-stride loop and change what follows it)

@cuda.jit
def shuffle_shared_tree(out, a, n):
    part = cuda.shared.array(128, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    acc = np.float32(0.0)
    start = cuda.blockIdx.x * ch10.COARSE * bd
    while start < n:
        for k in range(ch10.COARSE):
            i = start + k * bd + t
            if i < n:
                acc += a[i]
        start += cuda.gridDim.x * ch10.COARSE * bd
    part[t] = acc
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        if t % (2 * stride) == 0 and t + stride < bd:
            part[t] += part[t + stride]
        stride *= 2
    if t == 0:
        cuda.atomic.add(out, 0, part[0])


@cuda.jit
def shuffle_divergent(out, a, n):
    warp_sums = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    lane = t % 32
    warp = t // 32
    acc = np.float32(0.0)
    start = cuda.blockIdx.x * ch10.COARSE * bd
    while start < n:
        for k in range(ch10.COARSE):
            i = start + k * bd + t
            if i < n:
                acc += a[i]
        start += cuda.gridDim.x * ch10.COARSE * bd
    offset = 16
    while offset > 0:
        if lane < offset:               # the upper lanes skip the shuffle the lower ones wait on
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
        offset //= 2
    if lane == 0:
        warp_sums[warp] = acc
    cuda.syncthreads()
    if warp == 0:
        acc = warp_sums[lane] if lane < bd // 32 else np.float32(0.0)
        offset = 16
        while offset > 0:
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
            offset //= 2
        if lane == 0:
            cuda.atomic.add(out, 0, acc)


@cuda.jit
def shuffle_no_barrier(out, a, n):
    warp_sums = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    lane = t % 32
    warp = t // 32
    acc = np.float32(0.0)
    start = cuda.blockIdx.x * ch10.COARSE * bd
    while start < n:
        for k in range(ch10.COARSE):
            i = start + k * bd + t
            if i < n:
                acc += a[i]
        start += cuda.gridDim.x * ch10.COARSE * bd
    offset = 16
    while offset > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
        offset //= 2
    if lane == 0:
        warp_sums[warp] = acc
    if warp == 0:                       # no barrier: the other warps may not have stored yet
        acc = warp_sums[lane] if lane < bd // 32 else np.float32(0.0)
        offset = 16
        while offset > 0:
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
            offset //= 2
        if lane == 0:
            cuda.atomic.add(out, 0, acc)


# ---------------------------------------------------------------- known-wrong kernels: ch11

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
            xy[t] += xy[t - stride]     # no temporary, no second buffer: t - stride may already be updated
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
    xy[t] = a[i]                        # past n in the last block
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
    cuda.syncthreads()                  # forgot the down-sweep: only some positions are complete
    if i < n:
        out[i] = xy[t]
    if i + bd < n:
        out[i + bd] = xy[t + bd]


@cuda.jit
def add_sums_no_first_block_check(out, partial, prefix, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = partial[i] + prefix[cuda.blockIdx.x - 1]   # prefix[-1] in block 0


@cuda.jit
def add_sums_off_by_one(out, partial, prefix, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = partial[i] + prefix[cuda.blockIdx.x]       # includes the block's own total


@cuda.jit
def domino_static(out, flags, carries, counter, a, n):
    xy = cuda.shared.array(KS, numba.float32)
    carry_in = cuda.shared.array(1, numba.float32)
    t = cuda.threadIdx.x
    sec = cuda.blockIdx.x             # not a ticket: the predecessor may not have started
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


def test_domino_with_block_index_never_finishes(monkeypatch):
    """Waiting on blockIdx.x - 1 when blocks start in another order: on a GPU a hang once blocks
    outnumber the slots; in the simulator (blocks in shuffled order) a Runaway."""
    monkeypatch.setattr(sim.config, "timeout", 3)
    with pytest.raises(KernelDiagnosed) as info:
        puzzles.check("ch11_domino", domino_static, seed=SEED)
    assert isinstance(info.value.diagnostic, Runaway)


# ---------------------------------------------------------------- known-wrong kernels: ch12

@cuda.jit
def co_rank_ties_to_b(out, a, b, m, n):
    k = cuda.grid(1)
    if k <= m + n:
        i = min(k, m)
        j = k - i
        i_low = max(0, k - n)
        j_low = max(0, k - m)
        while True:
            if i > 0 and j < n and a[i - 1] >= b[j]:       # on a tie B goes first: not stable
                delta = (i - i_low + 1) // 2
                j_low = j
                i -= delta
                j += delta
            elif j > 0 and i < m and b[j - 1] > a[i]:
                delta = (j - j_low + 1) // 2
                i_low = i
                i += delta
                j -= delta
            else:
                break
        out[k] = i


@cuda.jit
def co_rank_no_bounds(out, a, b, m, n):
    k = cuda.grid(1)
    if k <= m + n:
        i = min(k, m)
        j = k - i
        i_low = max(0, k - n)
        j_low = max(0, k - m)
        while True:
            if i > 0 and a[i - 1] > b[j]:                   # j may be n
                delta = (i - i_low + 1) // 2
                j_low = j
                i -= delta
                j += delta
            elif j > 0 and b[j - 1] >= a[i]:                # i may be m
                delta = (j - j_low + 1) // 2
                i_low = i
                i += delta
                j -= delta
            else:
                break
        out[k] = i


@cuda.jit
def tiled_no_end_barrier(c, a, b, m, n):
    a_s = cuda.shared.array(TILE, numba.float32)
    b_s = cuda.shared.array(TILE, numba.float32)
    bounds = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    tpb = cuda.blockDim.x
    per_block = (m + n + cuda.gridDim.x - 1) // cuda.gridDim.x
    c_start = min(cuda.blockIdx.x * per_block, m + n)
    c_end = min(c_start + per_block, m + n)
    if t == 0:
        bounds[0] = co_rank(c_start, a, m, b, n)
        bounds[1] = co_rank(c_end, a, m, b, n)
    cuda.syncthreads()
    a_start = bounds[0]
    a_len = bounds[1] - a_start
    b_start = c_start - a_start
    b_len = (c_end - c_start) - a_len
    c_len = c_end - c_start
    c_done = 0
    a_done = 0
    b_done = 0
    while c_done < c_len:
        a_cnt = min(TILE, a_len - a_done)
        b_cnt = min(TILE, b_len - b_done)
        for x in range(t, a_cnt, tpb):
            a_s[x] = a[a_start + a_done + x]
        for x in range(t, b_cnt, tpb):
            b_s[x] = b[b_start + b_done + x]
        cuda.syncthreads()
        c_cnt = min(TILE, c_len - c_done)
        per_thread = (TILE + tpb - 1) // tpb
        k_curr = min(t * per_thread, c_cnt)
        k_next = min(k_curr + per_thread, c_cnt)
        i_curr = co_rank(k_curr, a_s, a_cnt, b_s, b_cnt)
        i_next = co_rank(k_next, a_s, a_cnt, b_s, b_cnt)
        merge_sequential(c, c_start + c_done + k_curr, a_s, i_curr, i_next - i_curr,
                         b_s, k_curr - i_curr, (k_next - i_next) - (k_curr - i_curr))
        used_a = co_rank(c_cnt, a_s, a_cnt, b_s, b_cnt)
        c_done += c_cnt
        a_done += used_a
        b_done += c_cnt - used_a
        # no barrier: the next round's loads overwrite tiles that slower threads still read


@cuda.jit
def tiled_unguarded_load(c, a, b, m, n):
    a_s = cuda.shared.array(TILE, numba.float32)
    b_s = cuda.shared.array(TILE, numba.float32)
    bounds = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    tpb = cuda.blockDim.x
    per_block = (m + n + cuda.gridDim.x - 1) // cuda.gridDim.x
    c_start = min(cuda.blockIdx.x * per_block, m + n)
    c_end = min(c_start + per_block, m + n)
    if t == 0:
        bounds[0] = co_rank(c_start, a, m, b, n)
        bounds[1] = co_rank(c_end, a, m, b, n)
    cuda.syncthreads()
    a_start = bounds[0]
    a_len = bounds[1] - a_start
    b_start = c_start - a_start
    b_len = (c_end - c_start) - a_len
    c_len = c_end - c_start
    c_done = 0
    a_done = 0
    b_done = 0
    while c_done < c_len:
        a_cnt = min(TILE, a_len - a_done)
        b_cnt = min(TILE, b_len - b_done)
        for x in range(t, TILE, tpb):   # always a full tile: runs off the end of a and b
            a_s[x] = a[a_start + a_done + x]
            b_s[x] = b[b_start + b_done + x]
        cuda.syncthreads()
        c_cnt = min(TILE, c_len - c_done)
        per_thread = (TILE + tpb - 1) // tpb
        k_curr = min(t * per_thread, c_cnt)
        k_next = min(k_curr + per_thread, c_cnt)
        i_curr = co_rank(k_curr, a_s, a_cnt, b_s, b_cnt)
        i_next = co_rank(k_next, a_s, a_cnt, b_s, b_cnt)
        merge_sequential(c, c_start + c_done + k_curr, a_s, i_curr, i_next - i_curr,
                         b_s, k_curr - i_curr, (k_next - i_next) - (k_curr - i_curr))
        used_a = co_rank(c_cnt, a_s, a_cnt, b_s, b_cnt)
        c_done += c_cnt
        a_done += used_a
        b_done += c_cnt - used_a
        cuda.syncthreads()


MUTANTS = [
    ("ch10_reduce_convergent", convergent_barrier_in_if, KernelDiagnosed, BarrierDivergence),
    # the simulator runs a block's threads in order up to a barrier: here a reader runs before the
    # writer it should have waited for, and the message asks whether a barrier is missing
    ("ch10_reduce_convergent", convergent_no_barrier, KernelDiagnosed, UninitializedRead),
    ("ch10_reduce_convergent", convergent_no_padding, KernelDiagnosed, OutOfBounds),
    ("ch10_reduce_segmented", segmented_plain_add, KernelDiagnosed, DataRace),
    ("ch10_reduce_segmented", segmented_local_index, WrongAnswer, None),
    ("ch10_reduce_segmented", segmented_atomic_per_thread, OverBudget, "global_atomics_per_block"),
    ("ch10_reduce_shuffle", shuffle_shared_tree, OverBudget, "shared_reads"),
    ("ch10_reduce_shuffle", shuffle_divergent, KernelDiagnosed, WarpDivergence),
    ("ch10_reduce_shuffle", shuffle_no_barrier, KernelDiagnosed, UninitializedRead),
    ("ch11_kogge_stone", ks_one_barrier, KernelDiagnosed, DataRace),
    ("ch11_kogge_stone", ks_no_second_barrier, KernelDiagnosed, DataRace),
    ("ch11_kogge_stone", ks_unguarded_load, KernelDiagnosed, OutOfBounds),
    ("ch11_brent_kung", bk_no_downsweep_barrier, KernelDiagnosed, DataRace),
    ("ch11_brent_kung", bk_upsweep_only, WrongAnswer, None),
    ("ch11_add_sums", add_sums_no_first_block_check, KernelDiagnosed, OutOfBounds),
    ("ch11_add_sums", add_sums_off_by_one, WrongAnswer, None),
    ("ch12_co_rank", co_rank_ties_to_b, WrongAnswer, None),
    ("ch12_co_rank", co_rank_no_bounds, KernelDiagnosed, OutOfBounds),
    ("ch12_merge_tiled", tiled_no_end_barrier, KernelDiagnosed, DataRace),
    ("ch12_merge_tiled", tiled_unguarded_load, KernelDiagnosed, OutOfBounds),
]


@pytest.mark.parametrize("name,kernel,exc,detail", MUTANTS,
                         ids=[f"{m[0]}-{m[1].py_func.__name__}" for m in MUTANTS])
def test_known_wrong_rejected(name, kernel, exc, detail):
    with pytest.raises(exc) as info:
        puzzles.check(name, kernel, seed=SEED)
    if exc is KernelDiagnosed:
        assert isinstance(info.value.diagnostic, detail), repr(info.value.diagnostic)
    elif exc is OverBudget:
        assert info.value.field == detail


def test_every_exercise_has_two_mutants():
    counts = {}
    for name, *_ in MUTANTS:
        counts[name] = counts.get(name, 0) + 1
    for p in EXERCISES:
        assert counts.get(p.name, 0) >= 2, p.name


# ---------------------------------------------------------------- composed and GPU-sized kernels, simulated

def test_hierarchical_scan_on_simulator(sim_engine):
    from helpers import timing
    rng = np.random.default_rng(5)
    for n in (7, 300, 16 * 16 * 2 + 5):          # one level, two levels, three levels
        a = rng.uniform(-2, 2, n).astype(np.float32)
        got = ch11.hierarchical_scan(a).copy_to_host()
        timing.validate(f"hierarchical_scan n={n}", got, np.cumsum(a.astype(np.float64)), rtol=1e-5, atol=1e-4)


def _run(kernel, grid, block, args, **kw):
    sim.launch(kernel, grid, block, args, trace=False, block_order="shuffle", seed=1, **kw)


def test_specialized_reductions_on_simulator():
    rng = np.random.default_rng(6)
    a = rng.integers(-8, 9, 777).astype(np.float32)
    want = a.sum(dtype=np.float64)
    for kern, per_block, tpb in [(specialize(ch10.reduce_segmented, TPB=32), 64, 32),
                                 (specialize(ch10.reduce_coarsened, TPB=32, COARSE=3), 192, 32)]:
        out = np.zeros(1, np.float32)
        _run(kern, (len(a) + per_block - 1) // per_block, tpb, [out, a, len(a)])
        assert out[0] == want
    out = np.zeros(1, np.float32)
    _run(specialize(ch10.reduce_shuffle, COARSE=4), 3, 64, [out, a, len(a)])
    assert out[0] == want


def test_specialized_scans_on_simulator(sim_engine):
    rng = np.random.default_rng(7)
    n = 1000
    a = rng.integers(-8, 9, n).astype(np.float32)
    want = np.cumsum(a, dtype=np.float64)
    scan, add = specialize(ch11.scan_blocks, TPB=32), specialize(ch11.add_block_sums, TPB=32)
    got = ch11.hierarchical_scan(a, scan, add, 32).copy_to_host()
    assert np.array_equal(got, want)
    tpb, items = 64, 4
    kern = specialize(ch11.lookback_scan, ITEMS=items, LB_TPB=tpb, LB_TILE=tpb * items)
    nb = (n + tpb * items - 1) // (tpb * items)
    out = np.full(n, np.nan, np.float32)
    scratch = [np.zeros(nb, np.int32), np.zeros((nb, 2), np.float32), np.zeros(1, np.int32)]
    _run(kern, nb, tpb, [out, *scratch, a, n], cross_block_races=False)
    assert np.array_equal(out, want)


def test_specialized_merges_on_simulator():
    rng = np.random.default_rng(8)
    a, b = ch12._merge_inputs(rng, 150, 201)
    want = ch12.merge_spec(a, b, 150, 201)
    for kern in (specialize(ch12.merge_tiled, [ch12.co_rank, ch12.merge_sequential], TILE=40),
                 specialize(ch12.merge_circular, [ch12.co_rank, ch12.co_rank_circular,
                                                  ch12.merge_sequential_circular], TILE=40)):
        c = np.full(351, np.nan, np.float32)
        _run(kern, 3, 16, [c, a, b, 150, 201])
        assert np.array_equal(c, want)


# ---------------------------------------------------------------- puzzles.bench

def test_goals_declared():
    assert ch10.GOAL == {"ceiling": "copy", "fraction": 0.8, "best": "ch10_reduce_shuffle"}
    assert ch11.GOAL["fraction"] == 0.6 and ch11.GOAL["best"] in {p.name for p in ch11.PUZZLES}
    assert ch12.GOAL is None


def test_goal_row_arithmetic():
    from helpers.timing import Measurement
    from puzzles.bench import goal_row
    rows = [Measurement("copy", 1.0, bytes=1000, ceiling=True),
            Measurement("ch10_reduce_shuffle", 1.0, bytes=850)]
    row = goal_row("ch10", ch10, rows)
    assert row[1] == "ch10_reduce_shuffle" and row[4] == "85.0%" and row[-1] == "yes"
    rows[1] = Measurement("ch10_reduce_shuffle", 1.0, bytes=500)
    assert goal_row("ch10", ch10, rows)[-1] == "NO"
    assert goal_row("ch12", ch12, rows)[-2] == "no goal"
    assert goal_row("ch10", ch10, rows[1:])[-1] == "?"      # no ceiling measured: reported, not fatal


def test_chapter_modules_found():
    from puzzles.bench import chapter_modules
    tags = [t for t, _ in chapter_modules({"ch10", "ch11", "ch12"})]
    assert tags == ["ch10", "ch11", "ch12"]


def test_bench_script_skips_without_gpu():
    env = dict(os.environ, MP_ENGINE="sim", PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "puzzles.bench", "--only", "ch10"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and "skipped" in lines[0], r.stdout


@pytest.mark.skipif(not os.environ.get("MP_SIM_BENCH"), reason="slow (about a minute): set MP_SIM_BENCH=1")
@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_benchmark_code_path_on_simulator(module, sim_engine, monkeypatch):
    """Each benchmark() end to end, tiny scale, timing faked: the validation of the GPU-sized kernels
    runs for real on the simulator, so a GPU run does not find a slip in the benchmark code."""
    import types

    from helpers import timing
    monkeypatch.setattr(timing, "time_gpu", lambda fn, **kw: (fn(), 1e-3)[1])
    monkeypatch.setattr(timing, "copy_ceiling", lambda nbytes=1 << 30: timing.Measurement(
        "copy", 1e-3, bytes=2 * nbytes, ceiling=True))
    monkeypatch.setattr(cuda, "get_current_device", lambda: types.SimpleNamespace(MULTIPROCESSOR_COUNT=1))
    # direct launches cannot say cross_block_races=False; the single-pass scans need it
    launch = sim.launch
    monkeypatch.setattr(sim, "launch", lambda *a, **k: launch(*a, **{**k, "cross_block_races": False}))
    rows = module.benchmark(scale=1e-4)
    names = {r.name for r in rows if not r.ceiling}
    assert sum(r.ceiling for r in rows) == 1 and len(names) >= 3
    assert all(r.bytes > 0 and r.name.startswith(("ch1", "copy")) for r in rows)
    if module.GOAL:
        assert module.GOAL["best"] in names
