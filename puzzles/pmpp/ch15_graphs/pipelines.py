"""Whole BFS from level steps: the host loop the notebook runs on any engine (`bfs`), and the GPU-only
drivers the benchmark times (level bookkeeping kernels, one launch per level).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .common import TPB
from .graphs import to_csc, to_csr


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
