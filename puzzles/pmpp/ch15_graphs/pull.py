"""BFS level step, vertex-centric pull.

Rungs:
    ch15_bfs_pull    a thread per unreached vertex looks through its in-edges for a frontier parent and stops
                     at the first; only it writes its flag, so no atomic
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from helpers.rules import reads_of

from .common import _FOUND, CHAPTER, TPB, discovered
from .graphs import _blocks, _cases, to_csc


def pull_spec(col_ptr, row, level, cur, n):
    dst = np.repeat(np.arange(n), np.diff(col_ptr))
    return discovered(level, row, dst, cur)


def pull_cases(rng):
    def make(n, src, dst, level, cur):
        col_ptr, row = to_csc(n, src, dst)
        return Case(
            _blocks(n, rng),
            TPB,
            dict(found=np.zeros(n, np.int32), col_ptr=col_ptr, row=row, level=level, cur=cur, n=n),
        )

    return _cases(rng, make)


def pull_reads(case) -> int:
    """Reads of `row` a pull step needs when each unreached vertex stops at its first frontier parent:
    per vertex the in-edges up to that parent, scanning from either end (all of them if none)."""
    a = case.args
    col_ptr, row, level, cur = a["col_ptr"], a["row"], a["level"], a["cur"]
    total = 0
    for v in np.flatnonzero(level[: a["n"]] == -1):
        hits = np.flatnonzero(level[row[col_ptr[v] : col_ptr[v + 1]]] == cur)
        deg = int(col_ptr[v + 1] - col_ptr[v])
        total += max(int(hits[0]) + 1, deg - int(hits[-1])) if hits.size else deg
    return total


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


BFS_PULL = Puzzle(
    name="ch15_bfs_pull",
    title="BFS step, vertex-centric pull",
    statement=_FOUND
    + """ Thread `v` of the grid (for `v < n`): if `v` is not reached yet, look
through its **in**-edges `row[col_ptr[v] : col_ptr[v + 1]]` (CSC) for a parent in the frontier, and
stop at the first (enforced: the step may read `row` only as far as each vertex's first parent).""",
    outputs=("found",),
    spec=pull_spec,
    cases=pull_cases,
    reference=bfs_pull,
    zeroed=("found",),
    rules=(
        reads_of(
            "row",
            pull_reads,
            "Stop looking at the first parent in the frontier (`break`): the in-edges after it cannot "
            "change found[v], and skipping them is the point of pulling.",
        ),
    ),
    hints=(
        "Only thread v ever writes found[v], so a plain store is enough here.",
        "Once one parent in the frontier is found, the rest of the in-edges cannot change the answer.",
    ),
    chapter=CHAPTER,
)


PUZZLES = [BFS_PULL]
