"""CPU against GPU across sizes: the same three computations (a vector op, a reduction, a small
matmul) timed with NumPy, Numba parallel and on the GPU (data resident, and with copies), each
validated before it is timed; where the GPU starts to win, and the plot.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from helpers import timing
from puzzles.machine.m01_saxpy import saxpy_kernel

from .device import _sync
from .host import matmul_cpu, saxpy_cpu, sum_cpu, wall
from .kernels import TILE, matmul_kernel, sum_kernel, zero_kernel

OPS = ("vector op (saxpy)", "reduction (sum)", "matmul (n x n)")


def _inputs(op, size, rng):
    if op == OPS[2]:
        return (
            rng.uniform(-1, 1, (size, size)).astype(np.float32),
            rng.uniform(-1, 1, (size, size)).astype(np.float32),
        )
    return (rng.uniform(-1, 1, size).astype(np.float32), rng.uniform(-1, 1, size).astype(np.float32))


def _cpu_case(op: str, x, y) -> tuple:
    """(NumPy call, Numba parallel call) for one op on inputs x, y, both checked first."""
    alpha = np.float32(2.5)
    if op == OPS[0]:
        res = np.empty_like(x)
        saxpy_cpu(res, x, y, alpha)
        timing.validate("saxpy_cpu", res, alpha * x + y, rtol=1e-5)
        return (
            lambda: np.add(np.multiply(x, alpha, out=res), y, out=res),
            lambda: saxpy_cpu(res, x, y, alpha),
        )
    if op == OPS[1]:
        timing.validate("sum_cpu", np.float64(sum_cpu(x)), x.astype(np.float64).sum(), rtol=1e-3, atol=1e-2)
        return (lambda: x.sum()), (lambda: sum_cpu(x))
    res = np.empty_like(x)
    matmul_cpu(res, x, y)
    timing.validate("matmul_cpu", res, x @ y, rtol=1e-3, atol=1e-3)
    return (lambda: x @ y), (lambda: matmul_cpu(res, x, y))


def cpu_timings(op: str, sizes) -> dict:
    """{"NumPy": [s...], "Numba parallel": [s...]} for each size, each validated before it is timed.
    (The naive Numba matmul stops at n = 1024: past that it takes seconds per call.)"""
    rng = np.random.default_rng(0)
    out = {"NumPy": [], "Numba parallel": []}
    for size in sizes:
        numpy_call, numba_call = _cpu_case(op, *_inputs(op, size, rng))
        out["NumPy"].append(wall(numpy_call))
        out["Numba parallel"].append(wall(numba_call) if op != OPS[2] or size <= 1024 else math.nan)
    return out


def _gpu_case(op: str, x, y, threads: int) -> tuple:
    """(call on resident data, call with copies in and out) for one op, checked first (GPU only)."""
    alpha = np.float32(2.5)
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    if op == OPS[0]:
        dres = cuda.device_array_like(dx)
        grid = max(1, min(sms * 8, -(-x.size // threads)))

        def run(dx=dx, dy=dy):
            saxpy_kernel[grid, threads](dres, dx, dy, alpha, x.size)

        run()
        timing.validate("saxpy_kernel", dres.copy_to_host(), alpha * x + y, rtol=1e-5)
    elif op == OPS[1]:
        dres = cuda.device_array(1, np.float32)
        grid = max(1, min(sms * 8, -(-x.size // threads)))

        def run(dx=dx, dy=dy):
            zero_kernel[1, 32](dres)
            sum_kernel[grid, threads](dres, dx, x.size)

        run()
        timing.validate(
            "sum_kernel", np.float64(dres.copy_to_host()[0]), x.astype(np.float64).sum(), rtol=1e-3, atol=1e-2
        )
    else:
        n = x.shape[0]
        dres = cuda.device_array((n, n), np.float32)
        g = -(-n // TILE)

        def run(dx=dx, dy=dy):
            matmul_kernel[(g, g), (TILE, TILE)](dres, dx, dy, n)

        run()
        timing.validate("matmul_kernel", dres.copy_to_host(), x @ y, rtol=1e-3, atol=1e-3)

    def resident():
        run()
        _sync()

    def with_copies():
        run(cuda.to_device(x), cuda.to_device(y))
        dres.copy_to_host()
        _sync()

    return resident, with_copies


def gpu_timings(op: str, sizes, threads: int = 256) -> dict:
    """{"GPU, data on device": [...], "GPU, with copies": [...]}: host clock, launch and synchronize
    included (GPU only)."""
    rng = np.random.default_rng(0)
    out = {"GPU, data on device": [], "GPU, with copies": []}
    for size in sizes:
        resident, with_copies = _gpu_case(op, *_inputs(op, size, rng), threads)
        out["GPU, data on device"].append(wall(resident))
        out["GPU, with copies"].append(wall(with_copies))
    return out


def crossover(sizes, cpu: dict, gpu: dict, key: str = "GPU, data on device"):
    """(first size where the GPU beats the best CPU time and stays ahead, the CPU time there), or None."""
    best = [min(v for v in vals if not math.isnan(v)) for vals in zip(*cpu.values())]
    g = gpu[key]
    for i in range(len(sizes)):
        if all(g[j] < best[j] for j in range(i, len(sizes))):
            return sizes[i], best[i]
    return None


def plot_sizes(results: dict, title: str):
    """results[op] = (sizes, {label: times}); one log-log panel per op."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4))
    axes = np.atleast_1d(axes)
    for ax, (op, (sizes, series)) in zip(axes, results.items()):
        for label, times in series.items():
            ax.loglog(sizes, times, marker="o", label=label)
        ax.set_title(op)
        ax.set_xlabel("n (matrix side)" if op == OPS[2] else "elements")
        ax.set_ylabel("seconds per call")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    return fig
