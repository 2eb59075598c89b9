"""PMPP chapter 15: graph traversal. Breadth-first search, one level per kernel launch. (Over 500
lines: one chapter, one module, as its notebook; the graph builders and host BFS drivers too.)

BFS labels every vertex with its level: the fewest edges from the source (-1 if unreachable).
The GPU versions advance one level per launch; the host loops until a level discovers nothing.
Each puzzle checks one such **level step**: given the levels found so far (`level`, -1 for not yet
reached) and the level `cur` of the frontier, mark in `found` every vertex the step discovers.
The host then sets `level[found == 1] = cur + 1` (see `bfs`). The last puzzle runs a whole BFS in
one block, levels separated by barriers, and writes `level` itself. Because levels are unique, any
order of discovery gives the same answer.

Graphs (directed; CSR holds out-edges, CSC in-edges, the edge list both ends of each edge) come
from the seed: a 2-D grid, a power-law graph with self loops and repeated edges, a disconnected
graph (isolated vertices and a second component), and a single vertex with a self loop.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

TPB = 32  # threads per block in the puzzles
LOCAL_CAP = 8  # slots of the block-private frontier queue (small, so the overflow path runs too)
MAX_N = 128  # vertices a one-block BFS holds in its shared-memory queues
BLOCK_TPB = 64  # threads of the one-block BFS

# what `from puzzles.pmpp.ch15_graphs import *` gives a notebook: constants only, never a kernel
__all__ = ["TPB", "LOCAL_CAP", "MAX_N", "BLOCK_TPB"]
CHAPTER = "pmpp-15"


# ------------------------------------------------------------------ kernels


@cuda.jit
def bfs_push(found, row_ptr, col, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == cur:
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1:
                # two parents may find u in the same step: a plain store from each would race
                cuda.atomic.exch(found, u, 1)


@cuda.jit
def bfs_pull(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        ### BEGIN SOLUTION
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] == cur:
                found[v] = 1  # only thread v writes found[v]: no atomic needed
                break
        ### END SOLUTION


@cuda.jit
def bfs_edge(found, src, dst, level, cur, n_edges):
    e = cuda.grid(1)
    if e < n_edges:
        ### BEGIN SOLUTION
        d = dst[e]
        if level[src[e]] == cur and level[d] == -1:
            cuda.atomic.exch(found, d, 1)
        ### END SOLUTION


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


# ------------------------------------------------------------------ graphs (host, NumPy)


def _csr(n, src, dst):
    """(row_ptr, col) of the out-edges, edges of a vertex in the given order (stable)."""
    order = np.argsort(src, kind="stable")
    row_ptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))]).astype(np.int32)
    return row_ptr, dst[order].astype(np.int32)


def to_csr(n, src, dst):
    """Out-edges: vertex v's successors are col[row_ptr[v]:row_ptr[v + 1]]."""
    return _csr(n, src, dst)


def to_csc(n, src, dst):
    """In-edges: vertex v's predecessors are row[col_ptr[v]:col_ptr[v + 1]]."""
    return _csr(n, dst, src)


def grid_graph(gx: int, gy: int):
    """A gx x gy grid, each neighbour pair joined both ways."""
    n = gx * gy
    v = np.arange(n)
    i, j = v // gy, v % gy
    src, dst = [], []
    for ok, other in ((j < gy - 1, v + 1), (i < gx - 1, v + gy)):
        src += [v[ok], other[ok]]
        dst += [other[ok], v[ok]]
    return n, np.concatenate(src).astype(np.int32), np.concatenate(dst).astype(np.int32)


def power_law_graph(rng, n: int, mean_degree: float = 3.0):
    """Out-degrees from a heavy tail; targets favour low vertex ids (hubs); self loops and repeats kept."""
    deg = np.minimum(np.floor(rng.pareto(1.5, n) * mean_degree / 2).astype(int), 4 * n)
    src = np.repeat(np.arange(n), deg)
    dst = np.floor(n * rng.random(src.size) ** 2).astype(int)  # skewed towards 0
    loops = rng.choice(n, size=max(1, n // 10), replace=False)  # some self loops
    again = rng.choice(src.size, size=max(1, src.size // 10)) if src.size else np.zeros(0, int)
    src = np.concatenate([src, loops, src[again]])  # and some repeated edges
    dst = np.concatenate([dst, loops, dst[again]])
    return n, src.astype(np.int32), dst.astype(np.int32)


def disconnected_graph(rng, n: int):
    """Two random undirected components and a few isolated vertices, ids shuffled."""
    cut = n // 2
    isolated = max(1, n // 8)
    src, dst = [], []
    for lo, hi in ((0, cut), (cut, n - isolated)):
        m = 2 * (hi - lo)
        a = rng.integers(lo, hi, m)
        b = rng.integers(lo, hi, m)
        chain = np.arange(lo, hi - 1)  # keep each component connected
        src += [a, b, chain, chain + 1]
        dst += [b, a, chain + 1, chain]
    relabel = rng.permutation(n)
    return n, relabel[np.concatenate(src)].astype(np.int32), relabel[np.concatenate(dst)].astype(np.int32)


def star_graph(rng, n: int):
    """A hub with an edge to every other vertex (in no order), and a few edges between the others.
    Vertex 0 is the hub (cases start BFS there: one step discovers everything)."""
    leaves = rng.permutation(np.arange(1, n))
    a = rng.integers(1, n, n // 3)
    b = rng.integers(1, n, n // 3)
    src = np.concatenate([np.zeros(n - 1, int), a])
    dst = np.concatenate([leaves, b])
    return n, src.astype(np.int32), dst.astype(np.int32)


def graphs(rng) -> list:
    """(label, n, src, dst) for one seed; the grid first."""
    return [
        ("grid", *grid_graph(int(rng.integers(4, 9)), int(rng.integers(4, 9)))),
        ("star", *star_graph(rng, int(rng.integers(LOCAL_CAP + 10, 50)))),
        ("power-law", *power_law_graph(rng, int(rng.integers(40, 80)))),
        ("dense power-law", *power_law_graph(rng, int(rng.integers(30, 60)), 8.0)),
        ("disconnected", *disconnected_graph(rng, int(rng.integers(30, 60)))),
        ("single vertex", 1, np.zeros(1, np.int32), np.zeros(1, np.int32)),
    ]


def _gather(row_ptr, col, vertices):
    """All out-neighbours of `vertices` (with repeats), without a Python loop."""
    starts = row_ptr[vertices].astype(np.int64)
    lengths = row_ptr[vertices + 1] - starts
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return col[offsets + np.arange(int(lengths.sum()))]


def bfs_levels(row_ptr, col, source: int) -> np.ndarray:
    """Level of every vertex from `source` (-1: unreachable): level-synchronous BFS in NumPy."""
    n = row_ptr.size - 1
    level = np.full(n, -1, np.int32)
    level[source] = 0
    frontier = np.array([source])
    cur = 0
    while frontier.size:
        nbrs = _gather(row_ptr, col, frontier)
        frontier = np.unique(nbrs[level[nbrs] == -1])
        level[frontier] = cur + 1
        cur += 1
    return level


def discovered(level, src, dst, cur):
    """found[v] = 1 where v is unreached and has an in-edge from a vertex of level cur."""
    found = np.zeros(level.size, np.int32)
    hit = (level[src] == cur) & (level[dst] == -1)
    found[dst[hit]] = 1
    return found


def _state(rng, n, src, dst, first, source=None):
    """(level after some steps, cur, source). The first case always discovers something."""
    row_ptr, col = to_csr(n, src, dst)
    if source is not None:  # the star: its first step, from the hub
        level = np.full(n, -1, np.int32)
        level[source] = 0
        return level, 0, source
    reach = [s for s in range(n) if (bfs_levels(row_ptr, col, s) >= 1).any()] or [0]
    source = int(rng.choice(reach))
    full = bfs_levels(row_ptr, col, source)
    top = int(full.max())
    # the first case (a grid: top >= 3) takes a level with a level before it and unreached vertices
    # beyond the next; the others any level, the last (nothing left to discover) included
    cur = int(rng.integers(1, top - 1)) if first else int(rng.integers(0, top + 1))
    level = np.where(full <= cur, full, -1).astype(np.int32)
    return level, cur, source


def _blocks(n, rng):
    """Always at least one thread past the end (the guard is part of every exercise)."""
    return -(-(n + 1) // TPB) + int(rng.integers(0, 2))


def _cases(rng, make):
    cases = []
    for k, (label, n, src, dst) in enumerate(graphs(rng)):
        level, cur, _ = _state(rng, n, src, dst, k == 0, 0 if label == "star" else None)
        cases.append(make(n, src, dst, level, cur))
    return cases


def push_cases(rng):
    def make(n, src, dst, level, cur):
        row_ptr, col = to_csr(n, src, dst)
        return Case(
            _blocks(n, rng),
            TPB,
            dict(found=np.zeros(n, np.int32), row_ptr=row_ptr, col=col, level=level, cur=cur, n=n),
        )

    return _cases(rng, make)


def pull_cases(rng):
    def make(n, src, dst, level, cur):
        col_ptr, row = to_csc(n, src, dst)
        return Case(
            _blocks(n, rng),
            TPB,
            dict(found=np.zeros(n, np.int32), col_ptr=col_ptr, row=row, level=level, cur=cur, n=n),
        )

    return _cases(rng, make)


def edge_cases(rng):
    def make(n, src, dst, level, cur):
        perm = rng.permutation(src.size)  # an edge list has no order
        return Case(
            _blocks(src.size, rng),
            TPB,
            dict(
                found=np.zeros(n, np.int32),
                src=src[perm],
                dst=dst[perm],
                level=level,
                cur=cur,
                n_edges=int(src.size),
            ),
        )

    return _cases(rng, make)


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

    return _cases(rng, make)


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
    return cases


def block_spec(row_ptr, col, n, source):
    return bfs_levels(row_ptr, col, source)


def push_spec(row_ptr, col, level, cur, n):
    src = np.repeat(np.arange(n), np.diff(row_ptr))
    return discovered(level, src, col, cur)


def pull_spec(col_ptr, row, level, cur, n):
    dst = np.repeat(np.arange(n), np.diff(col_ptr))
    return discovered(level, row, dst, cur)


def edge_spec(src, dst, level, cur, n_edges):
    return discovered(level, src, dst, cur)


def queue_spec(row_ptr, col, level, frontier, n_frontier, cur):
    found = push_spec(row_ptr, col, level, cur, row_ptr.size - 1)
    return {"found": found, "count": np.array([found.sum()], np.int32)}


_FOUND = """Mark in `found` (zero to begin with) every vertex this step discovers: `found[u] = 1` for
each `u` with `level[u] == -1` that has an edge from a vertex of level `cur`. `level` is read-only."""

_QUEUE = """The frontier is given as a queue: `frontier[0 : n_frontier]`, the vertices of level `cur` in
no order; one thread per entry. Mark `found` as in the push step **and** append each discovered vertex
exactly once to `next_frontier`, counting them in `count[0]` (zero to begin with). Claim a vertex with
`cuda.atomic.cas(found, u, 0, 1)`: it returns 0 to exactly one thread."""

PUZZLES = [
    Puzzle(
        name="ch15_bfs_push",
        title="BFS step, vertex-centric push",
        statement=_FOUND
        + """ Thread `v` of the grid (for `v < n`): if `v` is in the frontier
(`level[v] == cur`), visit its out-edges `col[row_ptr[v] : row_ptr[v + 1]]` (CSR).""",
        outputs=("found",),
        spec=push_spec,
        cases=push_cases,
        reference=bfs_push,
        zeroed=("found",),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch15_bfs_pull",
        title="BFS step, vertex-centric pull",
        statement=_FOUND
        + """ Thread `v` of the grid (for `v < n`): if `v` is not reached yet, look
through its **in**-edges `row[col_ptr[v] : col_ptr[v + 1]]` (CSC) for a parent in the frontier, and
stop at the first.""",
        outputs=("found",),
        spec=pull_spec,
        cases=pull_cases,
        reference=bfs_pull,
        zeroed=("found",),
        hints=(
            "Only thread v ever writes found[v], so a plain store is enough here.",
            "Once one parent in the frontier is found, the rest of the in-edges cannot change the answer.",
        ),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch15_bfs_edge",
        title="BFS step, edge-centric",
        statement=_FOUND
        + """ One thread per edge: edge `e` goes from `src[e]` to `dst[e]`, in no
particular order; self loops and repeated edges occur.""",
        outputs=("found",),
        spec=edge_spec,
        cases=edge_cases,
        reference=bfs_edge,
        zeroed=("found",),
        hints=(
            "The edge matters only if its source is in the frontier and its destination is unreached.",
            "Several edges may lead to the same new vertex in one step: their stores must not race.",
        ),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch15_bfs_queue",
        title="BFS step, frontier queue (global atomics)",
        statement=_QUEUE,
        outputs=("found", "count"),
        spec=queue_spec,
        cases=queue_cases,
        reference=bfs_queue,
        zeroed=("found", "count"),
        scratch=("next_frontier",),
        hints=(
            "cuda.atomic.add(count, 0, 1) returns the old count: the slot this thread may fill.",
            "Test level[u] == -1 first (cheap, read-only), then claim u with the compare-and-swap.",
        ),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch15_bfs_queue_private",
        title="BFS step, privatised frontier queue",
        statement=_QUEUE
        + f""" Collect the block's discoveries in a shared-memory queue of
`LOCAL_CAP = {LOCAL_CAP}` slots first (counter `local_n[0]`, shared atomics); a discovery that finds
it full goes straight to the global queue. Then one thread reserves room for the whole block in the
global queue with one atomic on `count`, and the block copies its queue there.""",
        outputs=("found", "count"),
        spec=queue_spec,
        cases=queue_cases,
        reference=bfs_queue_private,
        zeroed=("found", "count"),
        scratch=("next_frontier",),
        hints=(
            "The shared counter can pass LOCAL_CAP: the slots actually held are min(local_n[0], LOCAL_CAP).",
            "Barrier after the appends, then thread 0 takes base = atomic.add(count, 0, n_local); barrier "
            "again before anyone uses base.",
            "The copy-out is a block-stride loop: thread t copies entries t, t + blockDim, ...",
        ),
        chapter=CHAPTER,
    ),
]


PUZZLES.append(
    Puzzle(
        name="ch15_bfs_block",
        title="Whole BFS in one block",
        statement=f"""Write `level[v]`, the BFS level of every vertex from `source` (-1 if unreachable),
in **one launch of one block** of {BLOCK_TPB} threads (`n <= MAX_N = {MAX_N}`). The given part labels the
source 0 and every other vertex -1 and puts the source in frontier queue 0. Then, level after level: the
threads share out the current queue `queue[p, 0 : counts[p]]`; each claims the unreached successors of
its vertices with `cuda.atomic.cas(level, u, -1, cur + 1)` and appends the ones it claimed to the other
queue; barriers keep the levels apart. Stop when a level discovers nothing.""",
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
)


# ------------------------------------------------------------------ whole BFS from level steps


def bfs(step: str, kernel, n: int, src, dst, source: int, tpb: int = TPB) -> np.ndarray:
    """Whole BFS on the engine in use (simulator or GPU): one `kernel` launch per level, the host
    loop in between. `step` is "push", "pull", "edge" or "queue" (the argument layout)."""
    level = np.full(n, -1, np.int32)
    level[source] = 0
    row_ptr, col = to_csr(n, src, dst)
    col_ptr, row = to_csc(n, src, dst)
    frontier = np.array([source], np.int32)
    cur = 0
    while True:
        found = np.zeros(n, np.int32)
        if step == "push":
            kernel[max(1, -(-n // tpb)), tpb](found, row_ptr, col, level, cur, n)
        elif step == "pull":
            kernel[max(1, -(-n // tpb)), tpb](found, col_ptr, row, level, cur, n)
        elif step == "edge":
            kernel[max(1, -(-src.size // tpb)), tpb](found, src, dst, level, cur, src.size)
        else:
            count = np.zeros(1, np.int32)
            queue = np.zeros(n, np.int32)
            kernel[max(1, -(-frontier.size // tpb)), tpb](
                found, count, queue, row_ptr, col, level, frontier, frontier.size, cur
            )
            frontier = queue[: count[0]].copy()
            if not np.array_equal(np.sort(frontier), np.flatnonzero(found)):
                raise AssertionError(
                    f"level {cur + 1}: the queue holds {np.sort(frontier)}, but `found` "
                    f"marks {np.flatnonzero(found)}"
                )
        if not found.any():
            return level
        level[found == 1] = cur + 1
        cur += 1


# ------------------------------------------------------------------ GPU benchmark

GOAL = None  # BFS: edges per second and the speed-up over a host BFS are reported, no goal set


@cuda.jit
def _reset(level, source):
    v = cuda.grid(1)
    if v < level.size:
        level[v] = 0 if v == source else -1


@cuda.jit
def _apply_found(level, found, new, cur):
    """level = cur + 1 where found; found cleared for the next step; new[0] counts them."""
    v = cuda.grid(1)
    if v < level.size and found[v] != 0:
        level[v] = cur + 1
        found[v] = 0
        cuda.atomic.add(new, 0, 1)


@cuda.jit
def _apply_queue(level, queue, n_queue, cur):
    i = cuda.grid(1)
    if i < n_queue:
        level[queue[i]] = cur + 1


@cuda.jit
def _clear(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = 0


def _gpu_bfs_flags(step, kernel, graph, level, found, new, source, tpb=256):
    """Whole BFS on the GPU with a found-flags step kernel; one int read back per level."""
    n = level.size
    nb = -(-n // tpb)
    _reset[nb, tpb](level, source)
    cur = 0
    while True:
        if step == "edge":
            kernel[-(-graph[0].size // tpb), tpb](found, *graph, level, cur, graph[0].size)
        else:
            kernel[nb, tpb](found, *graph, level, cur, n)
        new.copy_to_device(np.zeros(1, np.int32))
        _apply_found[nb, tpb](level, found, new, cur)
        if new.copy_to_host()[0] == 0:
            return
        cur += 1


def _gpu_bfs_queue(kernel, row_ptr, col, level, found, queues, count, source, tpb=256):
    """Whole BFS on the GPU with a queue step kernel; `found` stays set (visited) across levels."""
    n = level.size
    _reset[-(-n // tpb), tpb](level, source)
    _clear[-(-n // tpb), tpb](found)
    found[source : source + 1].copy_to_device(np.ones(1, np.int32))
    queues[0][0:1].copy_to_device(np.array([source], np.int32))
    n_frontier, cur, k = 1, 0, 0
    while n_frontier:
        count.copy_to_device(np.zeros(1, np.int32))
        kernel[-(-n_frontier // tpb), tpb](
            found, count, queues[1 - k], row_ptr, col, level, queues[k], n_frontier, cur
        )
        n_frontier = int(count.copy_to_host()[0])
        if n_frontier:
            _apply_queue[-(-n_frontier // tpb), tpb](level, queues[1 - k], n_frontier, cur)
        cur += 1
        k = 1 - k


def _host_bfs(row_ptr, col, source):
    """(name, seconds, levels or None): SciPy's csgraph BFS where SciPy is installed, else NumPy's."""
    import time

    try:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import breadth_first_order
    except ImportError:
        csr_matrix = None
    times = []
    for _ in range(3):
        t = time.perf_counter()
        if csr_matrix is not None:
            n = row_ptr.size - 1
            a = csr_matrix((np.ones(col.size, np.int8), col, row_ptr), shape=(n, n))
            breadth_first_order(a, source, directed=True, return_predecessors=False)
        else:
            bfs_levels(row_ptr, col, source)
        times.append(time.perf_counter() - t)
    name = "host: scipy.sparse.csgraph BFS" if csr_matrix is not None else "host: NumPy level-synchronous BFS"
    return name, sorted(times)[1]


def benchmark(scale: float = 1.0):
    """Whole BFS on a power-law graph of 2^20 vertices (scale 1; about 17 edges per vertex) with every
    step kernel, each validated against the NumPy BFS first, then timed; the device copy and a host BFS
    in the same run. Bytes credited: each reached vertex's edges (4 B) and row pointers (8 B), once."""
    from helpers import timing
    from helpers.timing import specialize

    copy = timing.copy_ceiling(max(1 << 16, int((256 << 20) * scale)))  # raises without a GPU
    rng = np.random.default_rng(15)
    n, src, dst = power_law_graph(rng, max(1 << 10, int((1 << 20) * scale)), 16.0)
    row_ptr, col = to_csr(n, src, dst)
    col_ptr, row = to_csc(n, src, dst)
    source = int(np.argmax(np.diff(row_ptr)))  # the biggest hub: a large reached set
    want = bfs_levels(row_ptr, col, source)
    reached = want >= 0
    edges = int(np.diff(row_ptr)[reached].sum())
    nbytes = 4 * edges + 8 * int(reached.sum())
    print(
        f"power-law graph: {n} vertices, {src.size} edges; from vertex {source}: {int(reached.sum())} "
        f"reached in {int(want.max()) + 1} levels, {edges} edges traversed"
    )
    d = {
        k: cuda.to_device(v)
        for k, v in dict(row_ptr=row_ptr, col=col, col_ptr=col_ptr, row=row, src=src, dst=dst).items()
    }
    level = cuda.device_array(n, np.int32)
    found = cuda.to_device(np.zeros(n, np.int32))
    new = cuda.device_array(1, np.int32)
    queues = (cuda.device_array(n, np.int32), cuda.device_array(n, np.int32))
    private = specialize(bfs_queue_private, (), LOCAL_CAP=2048)
    runs = [
        (
            "ch15_bfs_push",
            lambda: _gpu_bfs_flags("push", bfs_push, (d["row_ptr"], d["col"]), level, found, new, source),
        ),
        (
            "ch15_bfs_pull",
            lambda: _gpu_bfs_flags("pull", bfs_pull, (d["col_ptr"], d["row"]), level, found, new, source),
        ),
        (
            "ch15_bfs_edge",
            lambda: _gpu_bfs_flags("edge", bfs_edge, (d["src"], d["dst"]), level, found, new, source),
        ),
        (
            "ch15_bfs_queue",
            lambda: _gpu_bfs_queue(bfs_queue, d["row_ptr"], d["col"], level, found, queues, new, source),
        ),
        (
            "ch15_bfs_queue_private",
            lambda: _gpu_bfs_queue(private, d["row_ptr"], d["col"], level, found, queues, new, source),
        ),
    ]
    rows = [copy]
    for name, run in runs:
        run()
        timing.validate(name, level.copy_to_host(), want, rtol=0, atol=0)
        rows.append(timing.Measurement(name, timing.time_gpu(run, warmup=1, reps=5, batch=1), bytes=nbytes))
    host_name, host_seconds = _host_bfs(row_ptr, col, source)
    rows.append(timing.Measurement(host_name, host_seconds, bytes=nbytes))
    for r in rows[1:-1]:
        print(
            f"{r.name}: {edges / r.seconds / 1e9:.2f} G edges/s, {host_seconds / r.seconds:.1f}x the host BFS"
        )
    print(f"{host_name}: {edges / host_seconds / 1e9:.3f} G edges/s")
    return rows
