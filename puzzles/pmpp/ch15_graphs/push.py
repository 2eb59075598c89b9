"""BFS level step, vertex-centric push.

Rungs:
    ch15_bfs_push    a thread per vertex; a frontier vertex marks its unreached out-neighbours (atomically:
                     two parents may find one child)
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import _FOUND, CHAPTER, TPB, discovered
from .graphs import _blocks, _cases, to_csr


def push_spec(row_ptr, col, level, cur, n):
    src = np.repeat(np.arange(n), np.diff(row_ptr))
    return discovered(level, src, col, cur)


def push_cases(rng):
    def make(n, src, dst, level, cur):
        row_ptr, col = to_csr(n, src, dst)
        return Case(
            _blocks(n, rng),
            TPB,
            dict(found=np.zeros(n, np.int32), row_ptr=row_ptr, col=col, level=level, cur=cur, n=n),
        )

    return _cases(rng, make)


@cuda.jit
def bfs_push(found, row_ptr, col, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == cur:
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1:
                # two parents may find u in the same step: a plain store from each would race
                cuda.atomic.exch(found, u, 1)


BFS_PUSH = Puzzle(
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
)


PUZZLES = [BFS_PUSH]
