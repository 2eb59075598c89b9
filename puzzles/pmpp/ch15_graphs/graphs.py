"""The graphs every case builds from the seed (host, NumPy), their CSR and CSC forms, the NumPy BFS
that is every puzzle's truth, and the level state a step's cases start from.
"""

from __future__ import annotations

import numpy as np

from .common import LOCAL_CAP, TPB


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
