"""Mutants of puzzles/pmpp/ch15_graphs/queue.py (BFS, queue step); format: mutants/common.py.

Every case list starts with a 2-D grid whose frontier level `cur` is at least 1 and not the last but
one, so there are vertices of level cur - 1, vertices with two parents in the frontier, and vertices
beyond the next level: the mistakes below show on it whatever the seed.
"""

import numba
from numba import cuda

from mutants.common import NO_BARRIER, OOB, RACE, UNINIT, WRONG, M, over
from puzzles.pmpp.ch15_graphs import LOCAL_CAP, queue


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


# ---------------------------------------------------------------- the queue itself (checked as a multiset)

QUEUE_ONE_SLOT_LATE = M(
    queue.bfs_queue,
    "one_slot_late",
    over("queue_contents"),
    ("next_frontier[slot] = u", "next_frontier[slot + 1] = u"),
)
QUEUE_HOLDS_PARENT = M(
    queue.bfs_queue,
    "holds_parent",
    over("queue_contents"),
    ("next_frontier[slot] = u", "next_frontier[slot] = v"),
)
PRIVATE_HOLDS_PARENT = M(
    queue.bfs_queue_private,
    "private_holds_parent",
    over("queue_contents"),
    ("local[slot] = u", "local[slot] = v"),
)
# every block copies its private queue to the front of the global one: blocks overwrite each other
PRIVATE_NO_BASE = M(
    queue.bfs_queue_private,
    "copy_without_base",
    over("queue_contents"),
    ("next_frontier[base[0] + j] = local[j]", "next_frontier[j] = local[j]"),
)


@cuda.jit
def private_no_shared_queue(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    # right answer, wrong technique: one global atomic per discovery, no private queue at all
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                next_frontier[cuda.atomic.add(count, 0, 1)] = u


MUTANTS = {
    "ch15_bfs_queue": [
        ("append_without_atomic", queue_append_without_atomic, *RACE),
        ("no_claim", queue_no_claim, *RACE),
        ("claim_ignored", queue_claim_ignored, *WRONG),
        ("no_unreached_test", queue_no_unreached_test, *WRONG),
        ("indexed_by_vertex", queue_indexed_by_vertex, *WRONG),
        ("counts_every_edge", queue_counts_every_edge, *WRONG),
        QUEUE_ONE_SLOT_LATE,
        QUEUE_HOLDS_PARENT,
    ],
    "ch15_bfs_queue_private": [
        ("no_barrier_before_copy", private_no_barrier_before_copy, *NO_BARRIER),
        ("no_barrier_after_base", private_no_barrier_after_base, *NO_BARRIER),
        ("unclamped_count", private_unclamped_count, *OOB),
        ("every_thread_copies_all", private_every_thread_copies_all, *RACE),
        ("counter_not_reset", private_counter_not_reset, *UNINIT),
        ("plain_local_append", private_plain_local_append, *RACE),
        ("drops_overflow", private_drops_overflow, *WRONG),
        PRIVATE_HOLDS_PARENT,
        PRIVATE_NO_BASE,
        ("no_shared_queue", private_no_shared_queue, *over("queue_atomics")),
    ],
}

VARIANTS = {
    "ch15_bfs_queue": [("exch_claim", queue_exch_claim), ("grid_stride", queue_grid_stride)],
    "ch15_bfs_queue_private": [("serial_copy", private_serial_copy), ("grid_stride", private_grid_stride)],
}

# every puzzle of the file, references included, on three seeds (as its chapter tests ran them)
SEEDS = {p.name: (0, 1, 2) for p in queue.PUZZLES}
