"""BFS level step with a frontier queue: the step reads the frontier as a list and appends what it
discovers to the next one.

Rungs:
    ch15_bfs_queue            a thread per frontier entry; claim a child with compare-and-swap, append it
                              through one global atomic per discovery
    ch15_bfs_queue_private    the same, appends into a block-private shared-memory queue first, then one
                              global atomic per block reserves room and the block copies its queue out
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from helpers.rules import holds_flagged, private_queue_atomics

from .common import CHAPTER, LOCAL_CAP, TPB
from .graphs import _blocks, _cases, to_csr
from .push import push_spec


def queue_spec(row_ptr, col, level, frontier, n_frontier, cur):
    found = push_spec(row_ptr, col, level, cur, row_ptr.size - 1)
    return {"found": found, "count": np.array([found.sum()], np.int32)}


def wide_frontier(rng):
    """(n, src, dst, level, cur): a frontier over three blocks of TPB threads, every frontier vertex
    with a child of its own (so every block discovers more than LOCAL_CAP vertices: each block's
    private queue overflows and lands at its own offset) and children shared by two or three frontier
    vertices (claims race), plus edges back to vertices reached earlier."""
    cur = 2
    n_front = 2 * TPB + int(rng.integers(LOCAL_CAP + 1, TPB))  # the third block's share overflows too
    n_shared = int(rng.integers(10, 20))
    n_old = int(rng.integers(4, 9))
    n = n_front + n_front + n_shared + n_old
    ids = rng.permutation(n).astype(np.int32)  # vertex numbers in no pattern
    front, own = ids[:n_front], ids[n_front : 2 * n_front]
    shared, old = ids[2 * n_front : 2 * n_front + n_shared], ids[2 * n_front + n_shared :]
    src, dst = [front], [own]
    for s in shared:
        parents = rng.choice(front, size=int(rng.integers(2, 4)), replace=False)
        src.append(parents)
        dst.append(np.full(parents.size, s))
    back = rng.choice(front, size=n_old)
    src.append(back)
    dst.append(old)
    level = np.full(n, -1, np.int32)
    level[front] = cur
    level[old] = rng.integers(0, cur, n_old)
    return n, np.concatenate(src).astype(np.int32), np.concatenate(dst).astype(np.int32), level, cur


def queue_cases(rng):
    def make(n, src, dst, level, cur):
        row_ptr, col = to_csr(n, src, dst)
        frontier = rng.permutation(np.flatnonzero(level == cur)).astype(np.int32)
        return Case(
            _blocks(frontier.size, rng),
            TPB,
            dict(
                found=np.zeros(n, np.int32),
                count=np.zeros(1, np.int32),
                next_frontier=np.zeros(n, np.int32),
                row_ptr=row_ptr,
                col=col,
                level=level,
                frontier=frontier,
                n_frontier=int(frontier.size),
                cur=cur,
            ),
        )

    # the graphs' level steps, then a frontier wide enough for several blocks to append at once
    return [*_cases(rng, make), make(*wide_frontier(rng))]


_QUEUE = """The frontier is given as a queue: `frontier[0 : n_frontier]`, the vertices of level `cur` in
no order; one thread per entry. Mark `found` as in the push step **and** append each discovered vertex
exactly once to `next_frontier`, counting them in `count[0]` (zero to begin with). Claim a vertex with
`cuda.atomic.cas(found, u, 0, 1)`: it returns 0 to exactly one thread. `next_frontier[0 : count[0]]` is
checked too, in any order: each discovered vertex once."""


@cuda.jit
def bfs_queue(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            ### BEGIN SOLUTION
            # the compare-and-swap lets exactly one thread claim u, so u is queued once
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = cuda.atomic.add(count, 0, 1)
                next_frontier[slot] = u
            ### END SOLUTION


BFS_QUEUE = Puzzle(
    name="ch15_bfs_queue",
    title="BFS step, frontier queue (global atomics)",
    statement=_QUEUE,
    outputs=("found", "count"),
    spec=queue_spec,
    cases=queue_cases,
    reference=bfs_queue,
    zeroed=("found", "count"),
    scratch=("next_frontier",),
    rules=(holds_flagged("next_frontier", "count", "found"),),
    hints=(
        "cuda.atomic.add(count, 0, 1) returns the old count: the slot this thread may fill.",
        "Test level[u] == -1 first (cheap, read-only), then claim u with the compare-and-swap.",
    ),
    chapter=CHAPTER,
)


@cuda.jit
def bfs_queue_private(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    local = cuda.shared.array(LOCAL_CAP, numba.int32)
    local_n = cuda.shared.array(1, numba.int32)
    base = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    if t == 0:
        local_n[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    ### BEGIN SOLUTION
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = cuda.atomic.add(local_n, 0, 1)  # shared-memory atomic: cheap
                if slot < LOCAL_CAP:
                    local[slot] = u
                else:  # the private queue is full
                    next_frontier[cuda.atomic.add(count, 0, 1)] = u
    cuda.syncthreads()
    n_local = min(local_n[0], LOCAL_CAP)
    if t == 0:
        base[0] = cuda.atomic.add(count, 0, n_local)  # one global atomic for the whole block
    cuda.syncthreads()
    for j in range(t, n_local, cuda.blockDim.x):  # coalesced copy-out
        next_frontier[base[0] + j] = local[j]
    ### END SOLUTION


BFS_QUEUE_PRIVATE = Puzzle(
    name="ch15_bfs_queue_private",
    title="BFS step, privatised frontier queue",
    statement=_QUEUE
    + f""" Collect the block's discoveries in a shared-memory queue of
`LOCAL_CAP = {LOCAL_CAP}` slots first (counter `local_n[0]`, shared atomics); a discovery that finds
it full goes straight to the global queue. Then one thread reserves room for the whole block in the
global queue with one atomic on `count`, and the block copies its queue there. Enforced: at most one
atomic on `count` per block, plus one per discovery that overflowed the private queue.""",
    outputs=("found", "count"),
    spec=queue_spec,
    cases=queue_cases,
    reference=bfs_queue_private,
    zeroed=("found", "count"),
    scratch=("next_frontier",),
    rules=(
        holds_flagged("next_frontier", "count", "found"),
        private_queue_atomics("count", "next_frontier", LOCAL_CAP),
    ),
    hints=(
        "The shared counter can pass LOCAL_CAP: the slots actually held are min(local_n[0], LOCAL_CAP).",
        "Barrier after the appends, then thread 0 takes base = atomic.add(count, 0, n_local); barrier "
        "again before anyone uses base.",
        "The copy-out is a block-stride loop: thread t copies entries t, t + blockDim, ...",
    ),
    chapter=CHAPTER,
)


PUZZLES = [BFS_QUEUE, BFS_QUEUE_PRIVATE]
