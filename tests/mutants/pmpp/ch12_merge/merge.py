"""Mutants of puzzles/pmpp/ch12_merge/merge.py; format: mutants/common.py."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds
from puzzles.pmpp.ch12_merge import TILE, co_rank, merge_basic, merge_sequential


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
        merge_sequential(
            c,
            c_start + c_done + k_curr,
            a_s,
            i_curr,
            i_next - i_curr,
            b_s,
            k_curr - i_curr,
            (k_next - i_next) - (k_curr - i_curr),
        )
        used_a = co_rank(c_cnt, a_s, a_cnt, b_s, b_cnt)
        c_done += c_cnt
        a_done += used_a
        b_done += c_cnt - used_a


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
        for x in range(t, TILE, tpb):  # always a full tile: runs off the end of a and b
            a_s[x] = a[a_start + a_done + x]
            b_s[x] = b[b_start + b_done + x]
        cuda.syncthreads()
        c_cnt = min(TILE, c_len - c_done)
        per_thread = (TILE + tpb - 1) // tpb
        k_curr = min(t * per_thread, c_cnt)
        k_next = min(k_curr + per_thread, c_cnt)
        i_curr = co_rank(k_curr, a_s, a_cnt, b_s, b_cnt)
        i_next = co_rank(k_next, a_s, a_cnt, b_s, b_cnt)
        merge_sequential(
            c,
            c_start + c_done + k_curr,
            a_s,
            i_curr,
            i_next - i_curr,
            b_s,
            k_curr - i_curr,
            (k_next - i_next) - (k_curr - i_curr),
        )
        used_a = co_rank(c_cnt, a_s, a_cnt, b_s, b_cnt)
        c_done += c_cnt
        a_done += used_a
        b_done += c_cnt - used_a
        cuda.syncthreads()


@cuda.jit
def tiled_six_rounds(c, a, b, m, n):
    a_s = cuda.shared.array(TILE, numba.float32)
    b_s = cuda.shared.array(TILE, numba.float32)
    bounds = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    tpb = cuda.blockDim.x
    # this block's slice of the output, and the slices of A and B it needs
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
    # six rounds: enough for the largest block slice in the statement's examples (95 outputs)
    for _round in range(6):
        a_cnt = min(TILE, a_len - a_done)
        b_cnt = min(TILE, b_len - b_done)
        # neighbouring threads load neighbouring elements: coalesced
        for x in range(t, a_cnt, tpb):
            a_s[x] = a[a_start + a_done + x]
        for x in range(t, b_cnt, tpb):
            b_s[x] = b[b_start + b_done + x]
        cuda.syncthreads()
        # this tile yields at most TILE outputs; each thread merges a share of them
        c_cnt = min(TILE, c_len - c_done)
        per_thread = (TILE + tpb - 1) // tpb
        k_curr = min(t * per_thread, c_cnt)
        k_next = min(k_curr + per_thread, c_cnt)
        i_curr = co_rank(k_curr, a_s, a_cnt, b_s, b_cnt)
        i_next = co_rank(k_next, a_s, a_cnt, b_s, b_cnt)
        merge_sequential(
            c,
            c_start + c_done + k_curr,
            a_s,
            i_curr,
            i_next - i_curr,
            b_s,
            k_curr - i_curr,
            (k_next - i_next) - (k_curr - i_curr),
        )
        used_a = co_rank(c_cnt, a_s, a_cnt, b_s, b_cnt)
        c_done += c_cnt
        a_done += used_a
        b_done += c_cnt - used_a
        # everyone must be done reading the tiles before they are overwritten
        cuda.syncthreads()


MUTANTS = {
    "ch12_merge_tiled": [
        ("tiled_no_end_barrier", tiled_no_end_barrier, KernelDiagnosed, DataRace),
        ("tiled_unguarded_load", tiled_unguarded_load, KernelDiagnosed, OutOfBounds),
        ("tiled_six_rounds", tiled_six_rounds, WrongAnswer, None),
        ("merge_basic", merge_basic, OverBudget, "outputs_via_shared"),
    ],
}
VARIANTS: dict = {}
# seeds 0-9: the tiles in shared memory enforced on every seed (issue 23, class 5)
SEEDS = {"ch12_merge_tiled": tuple(range(10))}
