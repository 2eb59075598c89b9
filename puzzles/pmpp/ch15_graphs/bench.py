"""Chapter 15's GPU benchmark: whole BFS with each level step on a power-law graph, beside a host BFS."""

from __future__ import annotations

import numpy as np
from numba import cuda

from .edge import bfs_edge
from .graphs import bfs_levels, power_law_graph, to_csc, to_csr
from .pipelines import _gpu_bfs_flags, _gpu_bfs_queue
from .pull import bfs_pull
from .push import bfs_push
from .queue import bfs_queue, bfs_queue_private

GOAL = None  # BFS: edges per second and the speed-up over a host BFS are reported, no goal set


def _host_bfs(row_ptr, col, source):
    """(name, seconds, levels or None): SciPy's csgraph BFS where SciPy is installed, else NumPy's."""
    import time

    try:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import breadth_first_order
    except ImportError:
        csr_matrix = None
    times = []
    for _ in range(3):
        t = time.perf_counter()
        if csr_matrix is not None:
            n = row_ptr.size - 1
            a = csr_matrix((np.ones(col.size, np.int8), col, row_ptr), shape=(n, n))
            breadth_first_order(a, source, directed=True, return_predecessors=False)
        else:
            bfs_levels(row_ptr, col, source)
        times.append(time.perf_counter() - t)
    name = "host: scipy.sparse.csgraph BFS" if csr_matrix is not None else "host: NumPy level-synchronous BFS"
    return name, sorted(times)[1]


def benchmark(scale: float = 1.0):
    """Whole BFS on a power-law graph of 2^20 vertices (scale 1; about 17 edges per vertex) with every
    step kernel, each validated against the NumPy BFS first, then timed; the device copy and a host BFS
    in the same run. Bytes credited: each reached vertex's edges (4 B) and row pointers (8 B), once."""
    from helpers import timing
    from helpers.timing import specialize

    copy = timing.copy_ceiling(max(1 << 16, int((256 << 20) * scale)))  # raises without a GPU
    rng = np.random.default_rng(15)
    n, src, dst = power_law_graph(rng, max(1 << 10, int((1 << 20) * scale)), 16.0)
    row_ptr, col = to_csr(n, src, dst)
    col_ptr, row = to_csc(n, src, dst)
    source = int(np.argmax(np.diff(row_ptr)))  # the biggest hub: a large reached set
    want = bfs_levels(row_ptr, col, source)
    reached = want >= 0
    edges = int(np.diff(row_ptr)[reached].sum())
    nbytes = 4 * edges + 8 * int(reached.sum())
    print(
        f"power-law graph: {n} vertices, {src.size} edges; from vertex {source}: {int(reached.sum())} "
        f"reached in {int(want.max()) + 1} levels, {edges} edges traversed"
    )
    d = {
        k: cuda.to_device(v)
        for k, v in dict(row_ptr=row_ptr, col=col, col_ptr=col_ptr, row=row, src=src, dst=dst).items()
    }
    level = cuda.device_array(n, np.int32)
    found = cuda.to_device(np.zeros(n, np.int32))
    new = cuda.device_array(1, np.int32)
    queues = (cuda.device_array(n, np.int32), cuda.device_array(n, np.int32))
    private = specialize(bfs_queue_private, (), LOCAL_CAP=2048)
    runs = [
        (
            "ch15_bfs_push",
            lambda: _gpu_bfs_flags("push", bfs_push, (d["row_ptr"], d["col"]), level, found, new, source),
        ),
        (
            "ch15_bfs_pull",
            lambda: _gpu_bfs_flags("pull", bfs_pull, (d["col_ptr"], d["row"]), level, found, new, source),
        ),
        (
            "ch15_bfs_edge",
            lambda: _gpu_bfs_flags("edge", bfs_edge, (d["src"], d["dst"]), level, found, new, source),
        ),
        (
            "ch15_bfs_queue",
            lambda: _gpu_bfs_queue(bfs_queue, d["row_ptr"], d["col"], level, found, queues, new, source),
        ),
        (
            "ch15_bfs_queue_private",
            lambda: _gpu_bfs_queue(private, d["row_ptr"], d["col"], level, found, queues, new, source),
        ),
    ]
    rows = [copy]
    for name, run in runs:
        run()
        timing.validate(name, level.copy_to_host(), want, rtol=0, atol=0)
        rows.append(timing.Measurement(name, timing.time_gpu(run, warmup=1, reps=5, batch=1), bytes=nbytes))
    host_name, host_seconds = _host_bfs(row_ptr, col, source)
    rows.append(timing.Measurement(host_name, host_seconds, bytes=nbytes))
    for r in rows[1:-1]:
        print(
            f"{r.name}: {edges / r.seconds / 1e9:.2f} G edges/s, {host_seconds / r.seconds:.1f}x the host BFS"
        )
    print(f"{host_name}: {edges / host_seconds / 1e9:.3f} G edges/s")
    return rows
