"""The CPU side: the three computations in Numba `@njit(parallel=True)`, what the CPU is, the
wall-clock timer every study uses, and the CPU's copy bandwidth.

cache=True: compiling the three parallel functions takes ~3.5 s; Numba's on-disk cache (next to this
file, or its user cache folder where that is read-only) makes a second process load them instead.
"""

from __future__ import annotations

import os
import statistics
import time

import numba
import numpy as np


@numba.njit(parallel=True, cache=True)
def saxpy_cpu(out, x, y, alpha):
    for i in numba.prange(x.size):
        out[i] = alpha * x[i] + y[i]


@numba.njit(parallel=True, cache=True)
def sum_cpu(x):
    acc = 0.0
    for i in numba.prange(x.size):
        acc += x[i]
    return acc


@numba.njit(parallel=True, cache=True)
def matmul_cpu(c, a, b):
    n = a.shape[0]
    for i in numba.prange(n):
        for j in range(n):
            c[i, j] = 0.0
        for k in range(n):
            aik = a[i, k]
            for j in range(n):  # the inner loop runs along rows of b and c: SIMD-friendly
                c[i, j] += aik * b[k, j]


def cpu_info() -> dict:
    """What the CPU side runs on: cores Numba uses, and its SIMD-capable target."""
    info = {
        "logical CPUs": os.cpu_count(),
        "Numba threads": numba.config.NUMBA_NUM_THREADS,
        "Numba threading layer": numba.config.THREADING_LAYER,
    }
    try:
        import llvmlite.binding as ll

        info["CPU"] = ll.get_host_cpu_name()
    except Exception:  # noqa: BLE001  (informative only)
        pass
    return info


def wall(fn, *, min_time: float = 0.05, max_reps: int = 50) -> float:
    """Median seconds of `fn()` by the host clock (fn synchronises itself if it uses the GPU)."""
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < min_time and len(times) < max_reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if times[-1] > 1.0:
            break
    return statistics.median(times)


def cpu_copy_bandwidth(nbytes: int = 1 << 28) -> float:
    """GB/s of a NumPy copy of `nbytes` (read + write counted)."""
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    return 2 * nbytes / wall(lambda: np.copyto(dst, src)) / 1e9
