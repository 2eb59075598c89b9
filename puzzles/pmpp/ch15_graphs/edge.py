"""BFS level step, edge-centric.

Rungs:
    ch15_bfs_edge    a thread per edge: frontier source, unreached destination -> mark it (atomically)
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import _FOUND, CHAPTER, TPB, discovered
from .graphs import _blocks, _cases


def edge_spec(src, dst, level, cur, n_edges):
    return discovered(level, src, dst, cur)


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


@cuda.jit
def bfs_edge(found, src, dst, level, cur, n_edges):
    e = cuda.grid(1)
    if e < n_edges:
        ### BEGIN SOLUTION
        d = dst[e]
        if level[src[e]] == cur and level[d] == -1:
            cuda.atomic.exch(found, d, 1)
        ### END SOLUTION


BFS_EDGE = Puzzle(
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
)


PUZZLES = [BFS_EDGE]
