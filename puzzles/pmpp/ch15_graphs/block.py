"""A whole BFS in one launch of one block.

Rungs:
    ch15_bfs_block    two shared-memory frontier queues, levels separated by barriers, claims by
                      compare-and-swap on `level` itself
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import BLOCK_TPB, CHAPTER, MAX_N
from .graphs import bfs_levels, graphs, to_csr


def block_spec(row_ptr, col, n, source):
    return bfs_levels(row_ptr, col, source)


def broom_graph(rng, arms: int):
    """Vertex 0 (the hub) -> `arms` vertices -> one child each, numbered in no order: its second level
    is wider than a warp, and every vertex of it is the only parent of its child."""
    ids = 1 + rng.permutation(2 * arms).astype(np.int32)
    mid, tips = ids[:arms], ids[arms:]
    src = np.concatenate([np.zeros(arms, np.int32), mid])
    dst = np.concatenate([rng.permutation(mid), tips])
    return 2 * arms + 1, src, dst


def block_cases(rng):
    cases = []
    for label, n, src, dst in graphs(rng):
        row_ptr, col = to_csr(n, src, dst)
        # the grid, star and single vertex from a random vertex; the others from a vertex that
        # reaches something (a source without out-edges is dull, and the one-vertex graph covers it)
        reach = [v for v in range(n) if row_ptr[v + 1] > row_ptr[v]] if label != "grid" else range(n)
        source = 0 if label == "star" else int(rng.choice(list(reach) or [0]))
        cases.append(
            Case(
                1, BLOCK_TPB, dict(level=np.zeros(n, np.int32), row_ptr=row_ptr, col=col, n=n, source=source)
            )
        )
    # a broom from its hub: a level of 63 vertices, each with a child of its own, run by one warp (32
    # threads): a kernel that gives each thread at most one entry of a level misses children (every seed)
    n, src, dst = broom_graph(rng, 63)
    row_ptr, col = to_csr(n, src, dst)
    cases.append(Case(1, 32, dict(level=np.zeros(n, np.int32), row_ptr=row_ptr, col=col, n=n, source=0)))
    return cases


@cuda.jit
def bfs_block(level, row_ptr, col, n, source):
    # two frontier queues in shared memory: level cur is read from queue[p], level cur + 1 written to
    # queue[1 - p]; counts[p] and counts[1 - p] are their lengths
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
    ### BEGIN SOLUTION
    while counts[p] > 0:
        for i in range(t, counts[p], bd):
            v = queue[p, i]
            for k in range(row_ptr[v], row_ptr[v + 1]):
                u = col[k]
                # claim and label in one step: exactly one parent wins, and no plain store races it
                if cuda.atomic.cas(level, u, -1, cur + 1) == -1:
                    queue[1 - p, cuda.atomic.add(counts, 1 - p, 1)] = u
        cuda.syncthreads()  # level cur + 1 complete before anyone reads its queue
        if t == 0:
            counts[p] = 0  # the old queue becomes the one after next
        cuda.syncthreads()
        p = 1 - p
        cur += 1
    ### END SOLUTION


BFS_BLOCK = Puzzle(
    name="ch15_bfs_block",
    title="Whole BFS in one block",
    statement=f"""Write `level[v]`, the BFS level of every vertex from `source` (-1 if unreachable),
in **one launch of one block** of {BLOCK_TPB} threads (one case runs 32: the given part reads
`cuda.blockDim.x`), `n <= MAX_N = {MAX_N}`. The given part labels the source 0 and every other vertex -1
and puts the source in frontier queue 0. Then, level after level: the threads share out the current
queue `queue[p, 0 : counts[p]]` (a level may hold more vertices than the block has threads); each
claims the unreached successors of its vertices with `cuda.atomic.cas(level, u, -1, cur + 1)` and
appends the ones it claimed to the other queue; barriers keep the levels apart. Stop when a level
discovers nothing.""",
    outputs=("level",),
    spec=block_spec,
    cases=block_cases,
    reference=bfs_block,
    hints=(
        "Reading level[u] while another thread may be writing it is a race; the compare-and-swap "
        "reads, tests and writes in one indivisible step.",
        "Before the next level starts, every append to the next queue must be done (barrier), and its "
        "count must be read by every thread before anyone resets the old one (another barrier).",
        "Every thread runs the same while loop: the loop test reads counts[p], which all threads see "
        "the same between barriers.",
    ),
    chapter=CHAPTER,
)


PUZZLES = [BFS_BLOCK]
