"""When the GPU is worth the trip: host-to-device copies, the kernel and the copy back, timed by
wall clock against NumPy on the CPU (GPU only), and the table the notebook prints."""

import math
import time

import numpy as np
from numba import cuda

from helpers import timing

from .vecadd import _vectors, vecadd_kernel


def _median_wall(fn, reps):
    fn()
    cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _transfer_row(a, b, reps):
    n = a.size
    out = np.empty(n, np.float32)
    da, db, dout = cuda.to_device(a), cuda.to_device(b), cuda.device_array(n, np.float32)
    cfg = (math.ceil(n / 256), 256)
    h2d = _median_wall(lambda: (cuda.to_device(a), cuda.to_device(b)), reps)
    kernel = _median_wall(lambda: vecadd_kernel[cfg](dout, da, db, n), reps)
    d2h = _median_wall(lambda: dout.copy_to_host(out), reps)
    timing.validate(f"vecadd n={n}", out, a + b)
    cpu = _median_wall(lambda: np.add(a, b, out=out), reps)
    return {
        "n": n,
        "MiB": 3 * 4 * n / 2**20,
        "h2d": h2d,
        "kernel": kernel,
        "d2h": d2h,
        "gpu_total": h2d + kernel + d2h,
        "cpu": cpu,
    }


def transfer_study(sizes=(1 << 10, 1 << 14, 1 << 18, 1 << 21, 1 << 24), reps=15) -> list:
    """Host-to-device copies, kernel and copy back, against NumPy on the CPU, for several sizes.

    Wall-clock medians in seconds: what a program waits for, launch and driver overheads included.
    """
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    rng = np.random.default_rng(3)
    return [_transfer_row(*_vectors(rng, n), reps) for n in sizes]


def transfer_table(rows) -> str:
    def us(seconds):
        return f"{seconds * 1e6:10.1f}"

    lines = [
        f"{'n':>10} {'MiB':>8} {'H2D us':>10} {'kernel us':>10} {'D2H us':>10} {'GPU total':>10} "
        f"{'NumPy us':>10}  faster"
    ]
    for r in rows:
        lines.append(
            f"{r['n']:>10} {r['MiB']:8.2f} {us(r['h2d'])} {us(r['kernel'])} {us(r['d2h'])} "
            f"{us(r['gpu_total'])} {us(r['cpu'])}  {'GPU' if r['gpu_total'] < r['cpu'] else 'CPU'}"
        )
    return "\n".join(lines)
