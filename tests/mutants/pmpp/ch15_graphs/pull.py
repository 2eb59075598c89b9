"""Mutants of puzzles/pmpp/ch15_graphs/pull.py (BFS, pull step); format: mutants/common.py.

Every case list starts with a 2-D grid whose frontier level `cur` is at least 1 and not the last but
one, so there are vertices of level cur - 1, vertices with two parents in the frontier, and vertices
beyond the next level: the mistakes below show on it whatever the seed.
"""

from numba import cuda

from mutants.common import OOB, WRONG, over
from puzzles.pmpp.ch15_graphs import pull


@cuda.jit
def pull_any_parent(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        if col_ptr[v] < col_ptr[v + 1]:  # any in-edge, from anywhere
            found[v] = 1


@cuda.jit
def pull_stores_level(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] == cur:
                found[v] = cur + 1
                break


@cuda.jit
def pull_no_unreached_test(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n:  # level cur - 1 has parents in the frontier too
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] == cur:
                found[v] = 1
                break


@cuda.jit
def pull_guard_le(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v <= n and level[v] == -1:
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] == cur:
                found[v] = 1
                break


@cuda.jit
def pull_frontier_test_inverted(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] != cur:  # first in-edge not from the frontier
                found[v] = 1
                break


@cuda.jit
def pull_no_break(found, col_ptr, row, level, cur, n):
    # right flags, but it reads every in-edge: the pull step's saving is stopping at the first parent
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        for k in range(col_ptr[v], col_ptr[v + 1]):
            if level[row[k]] == cur:
                found[v] = 1


@cuda.jit
def pull_while(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        k = col_ptr[v]
        end = col_ptr[v + 1]
        while k < end and level[row[k]] != cur:
            k += 1
        if k < end:
            found[v] = 1


@cuda.jit
def pull_from_the_end(found, col_ptr, row, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == -1:
        for k in range(col_ptr[v + 1] - 1, col_ptr[v] - 1, -1):  # the last in-edge first
            if level[row[k]] == cur:
                found[v] = 1
                break


MUTANTS = {
    "ch15_bfs_pull": [
        ("any_parent", pull_any_parent, *WRONG),
        ("stores_level", pull_stores_level, *WRONG),
        ("no_unreached_test", pull_no_unreached_test, *WRONG),
        ("guard_le", pull_guard_le, *OOB),
        ("frontier_test_inverted", pull_frontier_test_inverted, *WRONG),
        ("no_break", pull_no_break, *over("reads_of_row")),
    ],
}

VARIANTS = {
    "ch15_bfs_pull": [("while", pull_while), ("from_the_end", pull_from_the_end)],
}

# every puzzle of the file, references included, on three seeds (as its chapter tests ran them)
SEEDS = {p.name: (0, 1, 2) for p in pull.PUZZLES}
