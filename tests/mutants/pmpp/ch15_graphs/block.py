"""Mutants of puzzles/pmpp/ch15_graphs/block.py (a whole BFS in one block); format: mutants/common.py."""

import numba
from numba import cuda

from helpers.sim.errors import BarrierDivergence, DataRace
from mutants.common import RACE, WRONG, KernelDiagnosed, M
from puzzles.pmpp.ch15_graphs import MAX_N, block


@cuda.jit
def block_check_then_store(level, row_ptr, col, n, source):
    queue = cuda.shared.array((2, MAX_N), numba.int32)
    counts = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for v in range(t, n, bd):
        level[v] = 0 if v == source else -1
    if t == 0:
        queue[0, 0] = source
        counts[0] = 1
        counts[1] = 0
    cuda.syncthreads()
    cur = 0
    p = 0
    while counts[p] > 0:
        for i in range(t, counts[p], bd):
            v = queue[p, i]
            for k in range(row_ptr[v], row_ptr[v + 1]):
                u = col[k]
                if level[u] == -1:  # two parents both see -1 ...
                    level[u] = cur + 1  # ... and both store: u is queued twice
                    queue[1 - p, cuda.atomic.add(counts, 1 - p, 1)] = u
        cuda.syncthreads()
        if t == 0:
            counts[p] = 0
        cuda.syncthreads()
        p = 1 - p
        cur += 1


@cuda.jit
def block_no_barrier_after_level(level, row_ptr, col, n, source):
    queue = cuda.shared.array((2, MAX_N), numba.int32)
    counts = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for v in range(t, n, bd):
        level[v] = 0 if v == source else -1
    if t == 0:
        queue[0, 0] = source
        counts[0] = 1
        counts[1] = 0
    cuda.syncthreads()
    cur = 0
    p = 0
    while counts[p] > 0:
        for i in range(t, counts[p], bd):
            v = queue[p, i]
            for k in range(row_ptr[v], row_ptr[v + 1]):
                u = col[k]
                if cuda.atomic.cas(level, u, -1, cur + 1) == -1:
                    queue[1 - p, cuda.atomic.add(counts, 1 - p, 1)] = u
        # a fast thread starts level cur + 1 while slow ones still add to it at level cur
        if t == 0:
            counts[p] = 0
        cuda.syncthreads()
        p = 1 - p
        cur += 1


@cuda.jit
def block_no_barrier_after_reset(level, row_ptr, col, n, source):
    queue = cuda.shared.array((2, MAX_N), numba.int32)
    counts = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for v in range(t, n, bd):
        level[v] = 0 if v == source else -1
    if t == 0:
        queue[0, 0] = source
        counts[0] = 1
        counts[1] = 0
    cuda.syncthreads()
    cur = 0
    p = 0
    while counts[p] > 0:
        for i in range(t, counts[p], bd):
            v = queue[p, i]
            for k in range(row_ptr[v], row_ptr[v + 1]):
                u = col[k]
                if cuda.atomic.cas(level, u, -1, cur + 1) == -1:
                    queue[1 - p, cuda.atomic.add(counts, 1 - p, 1)] = u
        cuda.syncthreads()
        if t == 0:
            counts[p] = 0  # others may already be testing counts[p]
        p = 1 - p
        cur += 1


@cuda.jit
def block_append_without_atomic(level, row_ptr, col, n, source):
    queue = cuda.shared.array((2, MAX_N), numba.int32)
    counts = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for v in range(t, n, bd):
        level[v] = 0 if v == source else -1
    if t == 0:
        queue[0, 0] = source
        counts[0] = 1
        counts[1] = 0
    cuda.syncthreads()
    cur = 0
    p = 0
    while counts[p] > 0:
        for i in range(t, counts[p], bd):
            v = queue[p, i]
            for k in range(row_ptr[v], row_ptr[v + 1]):
                u = col[k]
                if cuda.atomic.cas(level, u, -1, cur + 1) == -1:
                    slot = counts[1 - p]  # the frontier append without an atomic
                    counts[1 - p] = slot + 1
                    queue[1 - p, slot] = u
        cuda.syncthreads()
        if t == 0:
            counts[p] = 0
        cuda.syncthreads()
        p = 1 - p
        cur += 1


@cuda.jit
def block_cur_not_advanced(level, row_ptr, col, n, source):
    queue = cuda.shared.array((2, MAX_N), numba.int32)
    counts = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for v in range(t, n, bd):
        level[v] = 0 if v == source else -1
    if t == 0:
        queue[0, 0] = source
        counts[0] = 1
        counts[1] = 0
    cuda.syncthreads()
    p = 0
    while counts[p] > 0:
        for i in range(t, counts[p], bd):
            v = queue[p, i]
            for k in range(row_ptr[v], row_ptr[v + 1]):
                u = col[k]
                if cuda.atomic.cas(level, u, -1, 1) == -1:  # every level labelled 1
                    queue[1 - p, cuda.atomic.add(counts, 1 - p, 1)] = u
        cuda.syncthreads()
        if t == 0:
            counts[p] = 0
        cuda.syncthreads()
        p = 1 - p


@cuda.jit
def block_one_queue(level, row_ptr, col, n, source):
    queue = cuda.shared.array((2, MAX_N), numba.int32)
    counts = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for v in range(t, n, bd):
        level[v] = 0 if v == source else -1
    if t == 0:
        queue[0, 0] = source
        counts[0] = 1
        counts[1] = 0
    cuda.syncthreads()
    cur = 0
    done = 0
    while counts[0] > done:
        start = done
        end = counts[0]
        cuda.syncthreads()
        for i in range(start + t, end, bd):
            v = queue[0, i]
            for k in range(row_ptr[v], row_ptr[v + 1]):
                u = col[k]
                if cuda.atomic.cas(level, u, -1, cur + 1) == -1:
                    # appended behind the level being read: a thread that reaches it in this
                    # same pass would expand u at the wrong level
                    queue[0, cuda.atomic.add(counts, 0, 1)] = u
        done = end
        cur += 1


@cuda.jit
def block_two_arrays(level, row_ptr, col, n, source):
    # the two queues as two arrays; the roles swap by a branch, and counts are reset in advance
    qa = cuda.shared.array(MAX_N, numba.int32)
    qb = cuda.shared.array(MAX_N, numba.int32)
    counts = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for v in range(t, n, bd):
        level[v] = 0 if v == source else -1
    if t == 0:
        qa[0] = source
        counts[0] = 1
        counts[1] = 0
    cuda.syncthreads()
    cur = 0
    while counts[cur % 2] > 0:
        src_is_a = cur % 2 == 0
        for i in range(t, counts[cur % 2], bd):
            v = qa[i] if src_is_a else qb[i]
            for k in range(row_ptr[v], row_ptr[v + 1]):
                u = col[k]
                if cuda.atomic.cas(level, u, -1, cur + 1) == -1:
                    slot = cuda.atomic.add(counts, (cur + 1) % 2, 1)
                    if src_is_a:
                        qb[slot] = u
                    else:
                        qa[slot] = u
        cuda.syncthreads()
        if t == 0:
            counts[cur % 2] = 0
        cuda.syncthreads()
        cur += 1


@cuda.jit
def block_flag_loop(level, row_ptr, col, n, source):
    # no queues: each level, every thread scans its share of all vertices for the frontier, and
    # syncthreads_or says whether anything was found
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    for v in range(t, n, bd):
        level[v] = 0 if v == source else -1
    cuda.syncthreads()
    cur = 0
    more = 1
    while more:
        found = 0
        for v in range(t, n, bd):
            lv = cuda.atomic.add(level, v, 0)  # atomic read: others may be claiming v
            if lv == cur:
                for k in range(row_ptr[v], row_ptr[v + 1]):
                    if cuda.atomic.cas(level, col[k], -1, cur + 1) == -1:
                        found = 1
        more = cuda.syncthreads_or(found)
        cur += 1


# Without the barrier after a level, thread 0 empties counts[p] before the other threads have read it
# in their `while`: they leave the loop and never reach the barrier thread 0 waits at. The simulator
# reports that BarrierDivergence first and the race on counts as its cause; either is the right reason.
RACE_THEN_DIVERGENCE = (KernelDiagnosed, (DataRace, BarrierDivergence))


# a level handed out one entry per thread: right while a level fits in the block's BLOCK_TPB threads,
# wrong on the star of MAX_N vertices (its second level holds MAX_N - 1)
BLOCK_ONE_ENTRY_PER_THREAD = M(
    block.bfs_block,
    "one_entry_per_thread",
    WRONG,
    ("for i in range(t, counts[p], bd):", "for i in range(t, min(t + 1, counts[p])):"),
)


MUTANTS = {
    "ch15_bfs_block": [
        ("check_then_store", block_check_then_store, *RACE),
        ("no_barrier_after_level", block_no_barrier_after_level, *RACE_THEN_DIVERGENCE),
        ("no_barrier_after_reset", block_no_barrier_after_reset, *RACE),
        ("append_without_atomic", block_append_without_atomic, *RACE),
        ("cur_not_advanced", block_cur_not_advanced, *WRONG),
        ("one_queue", block_one_queue, *RACE),
        BLOCK_ONE_ENTRY_PER_THREAD,
    ],
}

VARIANTS = {
    "ch15_bfs_block": [("two_arrays", block_two_arrays), ("flag_loop", block_flag_loop)],
}

# every puzzle of the file, references included, on three seeds (as its chapter tests ran them)
SEEDS = {p.name: (0, 1, 2) for p in block.PUZZLES}
