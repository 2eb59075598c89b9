"""Mutants of puzzles/pmpp/ch15_graphs/push.py (BFS, push step); format: mutants/common.py.

Every case list starts with a 2-D grid whose frontier level `cur` is at least 1 and not the last but
one, so there are vertices of level cur - 1, vertices with two parents in the frontier, and vertices
beyond the next level: the mistakes below show on it whatever the seed.
"""

from numba import cuda

from mutants.common import OOB, RACE, WRONG
from puzzles.pmpp.ch15_graphs import push


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


MUTANTS = {
    "ch15_bfs_push": [
        ("plain_store", push_plain_store, *RACE),
        ("marks_visited", push_marks_visited, *WRONG),
        ("stores_level", push_stores_level, *WRONG),
        ("guard_le", push_guard_le, *OOB),
    ],
}

VARIANTS = {
    "ch15_bfs_push": [("cas_claim", push_cas_claim)],
}

# every puzzle of the file, references included, on three seeds (as its chapter tests ran them)
SEEDS = {p.name: (0, 1, 2) for p in push.PUZZLES}
