"""PMPP chapter 15: graph traversal. Breadth-first search, one level per kernel launch.

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

The ladder, one op per file:
    common.py      launch constants, the truth of a level step, the shared statement
    graphs.py      the seeded graphs, CSR/CSC, the NumPy BFS (truth), the level state of a case
    push.py        ch15_bfs_push: a thread per frontier vertex, atomic marks
    pull.py        ch15_bfs_pull: a thread per unreached vertex, stop at the first parent
    edge.py        ch15_bfs_edge: a thread per edge
    queue.py       ch15_bfs_queue (global atomics), ch15_bfs_queue_private (a shared queue per block)
    block.py       ch15_bfs_block: a whole BFS in one block
    pipelines.py   bfs(): whole BFS from level steps on any engine; the GPU-only level drivers
    bench.py       benchmark() and GOAL
"""

# ruff: noqa: F401  (re-exports: notebooks and tests read these as `ch15.<name>`; `import *` gives __all__)
from .bench import GOAL, benchmark
from .block import bfs_block, block_cases, block_spec
from .common import BLOCK_TPB, CHAPTER, LOCAL_CAP, MAX_N, TPB, discovered
from .edge import bfs_edge, edge_cases, edge_spec
from .graphs import (
    bfs_levels,
    disconnected_graph,
    graphs,
    grid_graph,
    power_law_graph,
    star_graph,
    to_csc,
    to_csr,
)
from .pipelines import bfs
from .pull import bfs_pull, pull_cases, pull_spec
from .push import bfs_push, push_cases, push_spec
from .queue import bfs_queue, bfs_queue_private, queue_cases, queue_spec

# what `from puzzles.pmpp.ch15_graphs import *` gives a notebook: constants only, never a kernel
__all__ = ["TPB", "LOCAL_CAP", "MAX_N", "BLOCK_TPB"]
