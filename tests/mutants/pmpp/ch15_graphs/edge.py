"""Mutants of puzzles/pmpp/ch15_graphs/edge.py (BFS, edge step); format: mutants/common.py.

Every case list starts with a 2-D grid whose frontier level `cur` is at least 1 and not the last but
one, so there are vertices of level cur - 1, vertices with two parents in the frontier, and vertices
beyond the next level: the mistakes below show on it whatever the seed.
"""

from numba import cuda

from mutants.common import OOB, RACE, WRONG
from puzzles.pmpp.ch15_graphs import edge


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


MUTANTS = {
    "ch15_bfs_edge": [
        ("plain_store", edge_plain_store, *RACE),
        ("no_unreached_test", edge_no_unreached_test, *WRONG),
        ("guard_le", edge_guard_le, *OOB),
        ("marks_source", edge_marks_source, *WRONG),
        ("stores_level", edge_stores_level, *WRONG),
    ],
}

VARIANTS = {
    "ch15_bfs_edge": [("atomic_max", edge_atomic_max), ("grid_stride", edge_grid_stride)],
}

# every puzzle of the file, references included, on three seeds (as its chapter tests ran them)
SEEDS = {p.name: (0, 1, 2) for p in edge.PUZZLES}
