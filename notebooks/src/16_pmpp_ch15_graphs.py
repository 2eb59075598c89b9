# %% [markdown]
# # PMPP chapter 15: graph traversal
#
# Breadth-first search (BFS) labels every vertex of a graph with its **level**: the fewest edges on
# a path from the source. The source has level 0, its successors level 1, theirs level 2, and a vertex
# that no path reaches keeps -1. BFS is the skeleton of shortest paths in unweighted graphs,
# connected components, web crawls and the "degrees of separation" in social networks.
#
# Sequentially, BFS keeps a queue. In parallel, it goes **level by level**: all vertices of level
# `cur` (the **frontier**) are expanded at once, and whatever they discover gets level `cur + 1`.
# Every level is one kernel launch; the host loops until a level discovers nothing.
#
# The chapter's ladder, in the book's order:
#
# 1. **vertex-centric push** (top-down): a thread per vertex; frontier vertices visit their out-edges;
# 2. **vertex-centric pull** (bottom-up): a thread per vertex; unreached vertices look for a parent in
#    the frontier among their in-edges;
# 3. **edge-centric**: a thread per edge;
# 4. **frontier queues**: only frontier vertices get threads; they append what they discover to a
#    global queue with atomics;
# 5. **privatisation**: each block collects its discoveries in shared memory and makes one global
#    atomic for all of them;
# 6. **fewer launches**: while the frontier is small, run many levels inside one block, with barriers
#    between levels instead of kernel launches.
#
# **What a check runs.** Each puzzle is one level step. Its case gives the levels found so far
# (`level`, read-only, -1 for unreached) and the frontier's level `cur`; the kernel marks
# `found[u] = 1` for every vertex the step discovers. (On a GPU the book's kernels write the level
# array in place; the checker keeps inputs read-only so that every cell can be rerun, hence the
# separate `found`.) `ch15.bfs` then runs whole searches, one launch per level, and sets
# `level[found == 1] = cur + 1` between launches. Levels are unique, so the order in which threads
# discover vertices never changes the answer. The graphs come from the seed: a 2-D grid, a star
# (a hub with an edge to everyone), power-law graphs with self loops and repeated edges, a
# disconnected graph, and a single vertex.

# %% setup

# %%
import numba  # noqa: F401 (the kernel cells use numba.int32)
import numpy as np
from numba import cuda

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, expect_failure
from puzzles.pmpp import ch15_graphs as ch15
from puzzles.pmpp.ch15_graphs import *  # its constants: TPB, LOCAL_CAP, MAX_N, BLOCK_TPB

# TPB: 32 threads per block in the puzzles; LOCAL_CAP: 8 slots in the privatised frontier queue (the
# GPU benchmark uses 2048); MAX_N: 128, the most vertices the one-block BFS holds in its queues;
# BLOCK_TPB: 64 threads of the one-block BFS

# %% [markdown]
# ## Three views of one graph
#
# A directed graph of 6 vertices, as an edge list, as CSR (out-edges: `col[row_ptr[v]:row_ptr[v+1]]`
# are the vertices `v` points to) and as CSC (in-edges: `row[col_ptr[v]:col_ptr[v+1]]` are the
# vertices that point to `v`). Vertex 5 has no edges in or out: BFS from 0 leaves it at -1.

# %%
n = 6
src = np.array([0, 0, 1, 2, 2, 3, 4, 4], np.int32)
dst = np.array([1, 2, 3, 3, 4, 0, 4, 1], np.int32)  # 4 -> 4 is a self loop
row_ptr, col = ch15.to_csr(n, src, dst)
col_ptr, row = ch15.to_csc(n, src, dst)
print("CSR  row_ptr", row_ptr, " col", col)
print("CSC  col_ptr", col_ptr, " row", row)
print("levels from 0:", ch15.bfs_levels(row_ptr, col, 0))

# %% [markdown]
# ## Vertex-centric push
#
# One thread per vertex. A thread whose vertex is in the frontier walks its out-edges and marks every
# unreached successor. Two frontier vertices often share a successor (in a grid, most vertices have two
# parents one level up), so two threads may mark the same vertex in the same step. Both write the same
# 1, which on a GPU happens to work; but two unordered plain stores to one location are a data race
# under CUDA's memory model, and the simulator reports it. An atomic store (`cuda.atomic.exch`) is
# what the hardware does anyway, and it is legal.
#
# Push does work only for frontier vertices, but every vertex gets a thread at every level: early and
# late levels, with tiny frontiers, waste almost the whole grid.

# %% [markdown] statement:ch15_bfs_push

# %% kernel:ch15_bfs_push

# %%
puzzles.check("ch15_bfs_push", bfs_push)


# %% [markdown]
# The race the atomic avoids:


# %%
@cuda.jit
def bfs_push_plain_store(found, row_ptr, col, level, cur, n):
    v = cuda.grid(1)
    if v < n and level[v] == cur:
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1:
                found[u] = 1


expect_failure(KernelDiagnosed, puzzles.check, "ch15_bfs_push", bfs_push_plain_store)

# %% [markdown]
# A whole search is a host loop around the step: launch, read `found`, assign the next level, stop
# when nothing was found. On the small graph above, and on a 6 x 7 grid from its corner:

# %%
print(ch15.bfs("push", bfs_push, n, src, dst, 0))
gn, gsrc, gdst = ch15.grid_graph(6, 7)
print(ch15.bfs("push", bfs_push, gn, gsrc, gdst, 0).reshape(6, 7))

# %% [markdown]
# ## Vertex-centric pull
#
# Turn the direction around: a thread per **unreached** vertex searches its in-edges (CSC) for a parent
# in the frontier. Only thread `v` writes `found[v]`, so no atomic is needed, and the thread can stop
# at the first parent it finds. Pull wins when the frontier is large and few vertices are left
# unreached (the middle levels of a power-law graph); push wins when the frontier is small.
# Direction-optimising BFS switches between the two from level to level.

# %% [markdown] statement:ch15_bfs_pull

# %% kernel:ch15_bfs_pull

# %%
puzzles.check("ch15_bfs_pull", bfs_pull)
print(ch15.bfs("pull", bfs_pull, gn, gsrc, gdst, 0).reshape(6, 7))

# %% [markdown]
# ## Edge-centric
#
# A thread per edge: edge `e` matters if its source is in the frontier and its destination is
# unreached. Every thread does the same tiny amount of work, whatever the degrees: no thread loops over
# a hub's thousand edges while its warp waits. The price: every edge gets a thread at every level, and
# several edges can reach one vertex in one step (repeated edges certainly do).

# %% [markdown] statement:ch15_bfs_edge

# %% kernel:ch15_bfs_edge

# %%
puzzles.check("ch15_bfs_edge", bfs_edge)
print(ch15.bfs("edge", bfs_edge, gn, gsrc, gdst, 0).reshape(6, 7))

# %% [markdown]
# ## A frontier queue
#
# The three kernels above launch a thread for every vertex or edge at every level. A **frontier** keeps
# the vertices of the current level in a queue, so that the next step launches exactly one thread per
# frontier vertex. Discovered vertices are appended to the next queue: `cuda.atomic.add` on a counter
# hands out distinct slots. A vertex with two parents in the frontier must be queued once, so the
# appending thread first **claims** it with a compare-and-swap on `found`: `cuda.atomic.cas(found, u,
# 0, 1)` returns 0 to the one thread that changed it.
#
# The check compares `found` and `count`; `ch15.bfs` also checks that the queue holds exactly the
# vertices marked in `found`, level after level.

# %% [markdown] statement:ch15_bfs_queue

# %% kernel:ch15_bfs_queue

# %%
puzzles.check("ch15_bfs_queue", bfs_queue)
print(ch15.bfs("queue", bfs_queue, gn, gsrc, gdst, 0).reshape(6, 7))

# %% [markdown]
# ## Privatised queues
#
# Every discovery above is an atomic on the same global counter: on a GPU, thousands of threads
# contending for one address, serialised. As with the histogram of chapter 9, privatise: each block
# appends to its own queue in **shared memory** (shared atomics are cheap and contended only within
# the block), then one thread reserves room for the whole block's queue with a single global atomic,
# and the block copies its entries out, neighbouring threads writing neighbouring slots. A private
# queue has a fixed capacity; a discovery that finds it full goes to the global queue directly.
#
# The star graph's case (one frontier vertex with an edge to every other) overflows the 8-slot
# private queue on every seed.

# %% [markdown] statement:ch15_bfs_queue_private

# %% kernel:ch15_bfs_queue_private

# %%
puzzles.check("ch15_bfs_queue_private", bfs_queue_private)
print(ch15.bfs("queue", bfs_queue_private, gn, gsrc, gdst, 0).reshape(6, 7))

# %% [markdown]
# ## Many levels in one block
#
# Early levels of a BFS have tiny frontiers: a launch per level then costs more than the work. While
# the frontier fits in one block, the levels can run **inside one block**, with `syncthreads` between
# levels where the host loop had kernel boundaries. This puzzle does a whole BFS that way (every graph
# here is small enough), so its answer is directly the level of every vertex.
#
# The level array is now written while it is being searched, so every access to it during a level goes
# through one atomic: `cuda.atomic.cas(level, u, -1, cur + 1)` reads, tests and labels `u` at once. Test
# `level[u] == -1` with a plain read first and then store, and two parents can both see -1: both store,
# and `u` is queued twice. Leave out the barrier at the end of a level, and a fast thread starts
# expanding level `cur + 1` while slow ones still label at level `cur`: the same vertex can be written
# twice by parents of different levels.

# %% [markdown] statement:ch15_bfs_block

# %% kernel:ch15_bfs_block

# %%
puzzles.check("ch15_bfs_block", bfs_block)
glevel = np.zeros(gn, np.int32)
grow_ptr, gcol = ch15.to_csr(gn, gsrc, gdst)
bfs_block[1, BLOCK_TPB](glevel, grow_ptr, gcol, gn, 0)
print(glevel.reshape(6, 7))

# %% [markdown]
# Run your kernels on a graph of your own: a power-law graph with self loops and repeated edges, from
# its biggest hub. (An exercise not yet solved reports `False`.)

# %%
rng = np.random.default_rng(5)
pn, psrc, pdst = ch15.power_law_graph(rng, 120)
prow_ptr, pcol = ch15.to_csr(pn, psrc, pdst)
hub = int(np.argmax(np.diff(prow_ptr)))
want = ch15.bfs_levels(prow_ptr, pcol, hub)
print(f"{int((want >= 0).sum())} of {pn} vertices reached, deepest level {int(want.max())}")
for step, kernel in [
    ("push", bfs_push),
    ("pull", bfs_pull),
    ("edge", bfs_edge),
    ("queue", bfs_queue),
    ("queue", bfs_queue_private),
]:
    got = ch15.bfs(step, kernel, pn, psrc, pdst, hub)
    print(f"{kernel.__name__:18s} same levels as NumPy: {bool(np.array_equal(got, want))}")
plevel = np.zeros(pn, np.int32)
bfs_block[1, BLOCK_TPB](plevel, prow_ptr, pcol, pn, hub)
print(f"{'bfs_block':18s} same levels as NumPy: {bool(np.array_equal(plevel, want))}")

# %% [markdown]
# ## Measure it
#
# On a GPU: a power-law graph of 2^20 vertices and about 17 million edges (self loops and repeated
# edges included), searched from its biggest hub with every step kernel in a host loop (one small
# read-back per level), each result checked against the NumPy BFS before timing. Reported: edges
# traversed per second, the speed-up over a BFS on the host in the same run (SciPy's
# `scipy.sparse.csgraph.breadth_first_order` where SciPy is installed, else the NumPy level-synchronous
# BFS), and GB/s against the device copy (credited bytes: each reached vertex's edges and row pointers
# once). BFS reads its edges in a data-dependent order, so the copy line is far away. On a CPU machine
# this cell says so and does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch15.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="BFS on a 2^20-vertex power-law graph")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-15")
