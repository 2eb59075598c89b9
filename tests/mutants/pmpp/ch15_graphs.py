"""Mutants of puzzles/pmpp/ch15_graphs.py (BFS level steps); format: mutants/common.py.

Every case list starts with a 2-D grid whose frontier level `cur` is at least 1 and not the last but
one, so there are vertices of level cur - 1, vertices with two parents in the frontier, and vertices
beyond the next level: the mistakes below show on it whatever the seed.
"""

import numba
from numba import cuda

from helpers.sim.errors import BarrierDivergence, DataRace
from mutants.common import NO_BARRIER, OOB, RACE, UNINIT, WRONG, KernelDiagnosed
from puzzles.pmpp import ch15_graphs as ch15
from puzzles.pmpp.ch15_graphs import LOCAL_CAP, MAX_N

# ---------------------------------------------------------------- push (worked example)


@cuda.jit
def push_plain_store(found, row_ptr, col, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == cur:
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1:
                found[u] = 1  # two parents of u store at once


@cuda.jit
def push_marks_visited(found, row_ptr, col, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == cur:
        for k in range(row_ptr[v], row_ptr[v + 1]):
            cuda.atomic.exch(found, col[k], 1)  # the parent (level cur - 1) is a neighbour too


@cuda.jit
def push_stores_level(found, row_ptr, col, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == cur:
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1:
                cuda.atomic.exch(found, u, cur + 1)


@cuda.jit
def push_guard_le(found, row_ptr, col, level, cur, n):
    v = cuda.grid(1)
    if v <= n and level[v] == cur:
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1:
                cuda.atomic.exch(found, u, 1)


@cuda.jit
def push_cas_claim(found, row_ptr, col, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == cur:
        for k in range(row_ptr[v], row_ptr[v + 1]):
            if level[col[k]] == -1:
                cuda.atomic.cas(found, col[k], 0, 1)


# ---------------------------------------------------------------- pull


@cuda.jit
def pull_any_parent(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        if col_ptr[v] < col_ptr[v + 1]:  # any in-edge, from anywhere
            found[v] = 1


@cuda.jit
def pull_stores_level(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] == cur:
                found[v] = cur + 1
                break


@cuda.jit
def pull_no_unreached_test(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n:  # level cur - 1 has parents in the frontier too
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] == cur:
                found[v] = 1
                break


@cuda.jit
def pull_guard_le(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v <= n and level[v] == -1:
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] == cur:
                found[v] = 1
                break


@cuda.jit
def pull_frontier_test_inverted(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] != cur:  # first in-edge not from the frontier
                found[v] = 1
                break


@cuda.jit
def pull_no_break(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] == cur:
                found[v] = 1


@cuda.jit
def pull_while(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        k = col_ptr[v]
        end = col_ptr[v + 1]
        while k < end and level[row[k]] != cur:
            k += 1
        if k < end:
            found[v] = 1


# ---------------------------------------------------------------- edge-centric


@cuda.jit
def edge_plain_store(found, src, dst, level, cur, n_edges):
    e = cuda.grid(1)
    if e < n_edges:
        d = dst[e]
        if level[src[e]] == cur and level[d] == -1:
            found[d] = 1


@cuda.jit
def edge_no_unreached_test(found, src, dst, level, cur, n_edges):
    e = cuda.grid(1)
    if e < n_edges:
        if level[src[e]] == cur:
            cuda.atomic.exch(found, dst[e], 1)


@cuda.jit
def edge_guard_le(found, src, dst, level, cur, n_edges):
    e = cuda.grid(1)
    if e <= n_edges:
        d = dst[e]
        if level[src[e]] == cur and level[d] == -1:
            cuda.atomic.exch(found, d, 1)


@cuda.jit
def edge_marks_source(found, src, dst, level, cur, n_edges):
    e = cuda.grid(1)
    if e < n_edges:
        if level[src[e]] == cur and level[dst[e]] == -1:
            cuda.atomic.exch(found, src[e], 1)


@cuda.jit
def edge_stores_level(found, src, dst, level, cur, n_edges):
    e = cuda.grid(1)
    if e < n_edges:
        d = dst[e]
        if level[src[e]] == cur and level[d] == -1:
            cuda.atomic.exch(found, d, cur + 1)


@cuda.jit
def edge_atomic_max(found, src, dst, level, cur, n_edges):
    e = cuda.grid(1)
    if e < n_edges and level[src[e]] == cur:
        d = dst[e]
        if level[d] == -1:
            cuda.atomic.max(found, d, 1)


@cuda.jit
def edge_grid_stride(found, src, dst, level, cur, n_edges):
    for e in range(cuda.grid(1), n_edges, cuda.gridsize(1)):
        if level[dst[e]] == -1 and level[src[e]] == cur:
            cuda.atomic.exch(found, dst[e], 1)


# ---------------------------------------------------------------- frontier queue, global atomics


@cuda.jit
def queue_append_without_atomic(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = count[0]  # two threads read the same count
                count[0] = slot + 1
                next_frontier[slot] = u


@cuda.jit
def queue_no_claim(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1:
                found[u] = 1  # two parents: a race, and u queued twice
                next_frontier[cuda.atomic.add(count, 0, 1)] = u


@cuda.jit
def queue_claim_ignored(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1:
                cuda.atomic.cas(found, u, 0, 1)  # its answer is not looked at: duplicates
                next_frontier[cuda.atomic.add(count, 0, 1)] = u


@cuda.jit
def queue_no_unreached_test(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if cuda.atomic.cas(found, u, 0, 1) == 0:
                next_frontier[cuda.atomic.add(count, 0, 1)] = u


@cuda.jit
def queue_indexed_by_vertex(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                next_frontier[u] = u  # a bitmap, not a queue: count stays 0


@cuda.jit
def queue_counts_every_edge(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            slot = cuda.atomic.add(count, 0, 1)  # a slot for every neighbour, found or not
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                next_frontier[slot] = u


@cuda.jit
def queue_exch_claim(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1:
                if cuda.atomic.exch(found, u, 1) == 0:  # the old value: 0 for the first only
                    next_frontier[cuda.atomic.add(count, 0, 1)] = u


@cuda.jit
def queue_grid_stride(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    for i in range(cuda.grid(1), n_frontier, cuda.gridsize(1)):
        v = frontier[i]
        k = row_ptr[v]
        while k < row_ptr[v + 1]:
            u = col[k]
            if level[u] < 0 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = cuda.atomic.add(count, 0, 1)
                next_frontier[slot] = u
            k += 1


# ---------------------------------------------------------------- privatised frontier queue


@cuda.jit
def private_no_barrier_before_copy(
    found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur
):
    local = cuda.shared.array(LOCAL_CAP, numba.int32)
    local_n = cuda.shared.array(1, numba.int32)
    base = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        local_n[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = cuda.atomic.add(local_n, 0, 1)
                if slot < LOCAL_CAP:
                    local[slot] = u
                else:
                    next_frontier[cuda.atomic.add(count, 0, 1)] = u
    n_local = min(local_n[0], LOCAL_CAP)  # others may still be appending
    if t == 0:
        base[0] = cuda.atomic.add(count, 0, n_local)
    cuda.syncthreads()
    for j in range(t, n_local, cuda.blockDim.x):
        next_frontier[base[0] + j] = local[j]


@cuda.jit
def private_no_barrier_after_base(
    found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur
):
    local = cuda.shared.array(LOCAL_CAP, numba.int32)
    local_n = cuda.shared.array(1, numba.int32)
    base = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        local_n[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = cuda.atomic.add(local_n, 0, 1)
                if slot < LOCAL_CAP:
                    local[slot] = u
                else:
                    next_frontier[cuda.atomic.add(count, 0, 1)] = u
    cuda.syncthreads()
    n_local = min(local_n[0], LOCAL_CAP)
    if t == 0:
        base[0] = cuda.atomic.add(count, 0, n_local)
    for j in range(t, n_local, cuda.blockDim.x):  # base[0] may not be written yet
        next_frontier[base[0] + j] = local[j]


@cuda.jit
def private_unclamped_count(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    local = cuda.shared.array(LOCAL_CAP, numba.int32)
    local_n = cuda.shared.array(1, numba.int32)
    base = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        local_n[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = cuda.atomic.add(local_n, 0, 1)
                if slot < LOCAL_CAP:
                    local[slot] = u
                else:
                    next_frontier[cuda.atomic.add(count, 0, 1)] = u
    cuda.syncthreads()
    n_local = local_n[0]  # counts the overflow too
    if t == 0:
        base[0] = cuda.atomic.add(count, 0, n_local)
    cuda.syncthreads()
    for j in range(t, n_local, cuda.blockDim.x):
        next_frontier[base[0] + j] = local[j]


@cuda.jit
def private_every_thread_copies_all(
    found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur
):
    local = cuda.shared.array(LOCAL_CAP, numba.int32)
    local_n = cuda.shared.array(1, numba.int32)
    base = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        local_n[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = cuda.atomic.add(local_n, 0, 1)
                if slot < LOCAL_CAP:
                    local[slot] = u
                else:
                    next_frontier[cuda.atomic.add(count, 0, 1)] = u
    cuda.syncthreads()
    n_local = min(local_n[0], LOCAL_CAP)
    if t == 0:
        base[0] = cuda.atomic.add(count, 0, n_local)
    cuda.syncthreads()
    for j in range(n_local):  # every thread copies the whole queue
        next_frontier[base[0] + j] = local[j]


@cuda.jit
def private_counter_not_reset(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    local = cuda.shared.array(LOCAL_CAP, numba.int32)
    local_n = cuda.shared.array(1, numba.int32)  # shared memory starts as garbage
    base = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = cuda.atomic.add(local_n, 0, 1)
                if slot < LOCAL_CAP:
                    local[slot] = u
                else:
                    next_frontier[cuda.atomic.add(count, 0, 1)] = u
    cuda.syncthreads()
    n_local = min(local_n[0], LOCAL_CAP)
    if t == 0:
        base[0] = cuda.atomic.add(count, 0, n_local)
    cuda.syncthreads()
    for j in range(t, n_local, cuda.blockDim.x):
        next_frontier[base[0] + j] = local[j]


@cuda.jit
def private_plain_local_append(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    local = cuda.shared.array(LOCAL_CAP, numba.int32)
    local_n = cuda.shared.array(1, numba.int32)
    base = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        local_n[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = local_n[0]  # the frontier append without an atomic
                local_n[0] = slot + 1
                if slot < LOCAL_CAP:
                    local[slot] = u
                else:
                    next_frontier[cuda.atomic.add(count, 0, 1)] = u
    cuda.syncthreads()
    n_local = min(local_n[0], LOCAL_CAP)
    if t == 0:
        base[0] = cuda.atomic.add(count, 0, n_local)
    cuda.syncthreads()
    for j in range(t, n_local, cuda.blockDim.x):
        next_frontier[base[0] + j] = local[j]


@cuda.jit
def private_drops_overflow(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    local = cuda.shared.array(LOCAL_CAP, numba.int32)
    local_n = cuda.shared.array(1, numba.int32)
    base = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        local_n[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = cuda.atomic.add(local_n, 0, 1)
                if slot < LOCAL_CAP:  # a full queue loses the vertex
                    local[slot] = u
    cuda.syncthreads()
    n_local = min(local_n[0], LOCAL_CAP)
    if t == 0:
        base[0] = cuda.atomic.add(count, 0, n_local)
    cuda.syncthreads()
    for j in range(t, n_local, cuda.blockDim.x):
        next_frontier[base[0] + j] = local[j]


@cuda.jit
def private_serial_copy(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    # thread 0 does the block's whole reservation and copy-out: correct, one global atomic, uncoalesced
    local = cuda.shared.array(LOCAL_CAP, numba.int32)
    local_n = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        local_n[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = cuda.atomic.add(local_n, 0, 1)
                if slot >= LOCAL_CAP:
                    next_frontier[cuda.atomic.add(count, 0, 1)] = u
                else:
                    local[slot] = u
    cuda.syncthreads()
    if t == 0:
        n_local = min(local_n[0], LOCAL_CAP)
        start = cuda.atomic.add(count, 0, n_local)
        for j in range(n_local):
            next_frontier[start + j] = local[j]


@cuda.jit
def private_grid_stride(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    # several frontier entries per thread; each round of the block has its own private queue
    local = cuda.shared.array(LOCAL_CAP, numba.int32)
    local_n = cuda.shared.array(1, numba.int32)
    base = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * cuda.blockDim.x
    while start < n_frontier:
        if t == 0:
            local_n[0] = 0
        cuda.syncthreads()
        i = start + t
        if i < n_frontier:
            v = frontier[i]
            for k in range(row_ptr[v], row_ptr[v + 1]):
                u = col[k]
                if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                    slot = cuda.atomic.add(local_n, 0, 1)
                    if slot < LOCAL_CAP:
                        local[slot] = u
                    else:
                        next_frontier[cuda.atomic.add(count, 0, 1)] = u
        cuda.syncthreads()
        n_local = min(local_n[0], LOCAL_CAP)
        if t == 0:
            base[0] = cuda.atomic.add(count, 0, n_local)
        cuda.syncthreads()
        if t < n_local:
            next_frontier[base[0] + t] = local[t]
        cuda.syncthreads()
        start += cuda.gridDim.x * cuda.blockDim.x


MUTANTS = {
    "ch15_bfs_push": [
        ("plain_store", push_plain_store, *RACE),
        ("marks_visited", push_marks_visited, *WRONG),
        ("stores_level", push_stores_level, *WRONG),
        ("guard_le", push_guard_le, *OOB),
    ],
    "ch15_bfs_pull": [
        ("any_parent", pull_any_parent, *WRONG),
        ("stores_level", pull_stores_level, *WRONG),
        ("no_unreached_test", pull_no_unreached_test, *WRONG),
        ("guard_le", pull_guard_le, *OOB),
        ("frontier_test_inverted", pull_frontier_test_inverted, *WRONG),
    ],
    "ch15_bfs_edge": [
        ("plain_store", edge_plain_store, *RACE),
        ("no_unreached_test", edge_no_unreached_test, *WRONG),
        ("guard_le", edge_guard_le, *OOB),
        ("marks_source", edge_marks_source, *WRONG),
        ("stores_level", edge_stores_level, *WRONG),
    ],
    "ch15_bfs_queue": [
        ("append_without_atomic", queue_append_without_atomic, *RACE),
        ("no_claim", queue_no_claim, *RACE),
        ("claim_ignored", queue_claim_ignored, *WRONG),
        ("no_unreached_test", queue_no_unreached_test, *WRONG),
        ("indexed_by_vertex", queue_indexed_by_vertex, *WRONG),
        ("counts_every_edge", queue_counts_every_edge, *WRONG),
    ],
    "ch15_bfs_queue_private": [
        ("no_barrier_before_copy", private_no_barrier_before_copy, *NO_BARRIER),
        ("no_barrier_after_base", private_no_barrier_after_base, *NO_BARRIER),
        ("unclamped_count", private_unclamped_count, *OOB),
        ("every_thread_copies_all", private_every_thread_copies_all, *RACE),
        ("counter_not_reset", private_counter_not_reset, *UNINIT),
        ("plain_local_append", private_plain_local_append, *RACE),
        ("drops_overflow", private_drops_overflow, *WRONG),
    ],
}

VARIANTS = {
    "ch15_bfs_push": [("cas_claim", push_cas_claim)],
    "ch15_bfs_pull": [("no_break", pull_no_break), ("while", pull_while)],
    "ch15_bfs_edge": [("atomic_max", edge_atomic_max), ("grid_stride", edge_grid_stride)],
    "ch15_bfs_queue": [("exch_claim", queue_exch_claim), ("grid_stride", queue_grid_stride)],
    "ch15_bfs_queue_private": [("serial_copy", private_serial_copy), ("grid_stride", private_grid_stride)],
}


# ---------------------------------------------------------------- whole BFS in one block


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

MUTANTS["ch15_bfs_block"] = [
    ("check_then_store", block_check_then_store, *RACE),
    ("no_barrier_after_level", block_no_barrier_after_level, *RACE_THEN_DIVERGENCE),
    ("no_barrier_after_reset", block_no_barrier_after_reset, *RACE),
    ("append_without_atomic", block_append_without_atomic, *RACE),
    ("cur_not_advanced", block_cur_not_advanced, *WRONG),
    ("one_queue", block_one_queue, *RACE),
]
VARIANTS["ch15_bfs_block"] = [("two_arrays", block_two_arrays), ("flag_loop", block_flag_loop)]

# every puzzle of the chapter, references included, on three seeds (as its chapter tests ran them)
SEEDS = {p.name: (0, 1, 2) for p in ch15.PUZZLES}
