"""The GPU in numbers (GPU only): a device query (and a T4's numbers for a learner without a GPU),
memory bandwidth measured, host<->device transfers pageable and pinned, kernel launch overhead.
"""

from __future__ import annotations

import time

import numpy as np
from numba import cuda

from helpers import timing

from .host import wall
from .kernels import empty_kernel

# A T4's numbers (Turing, compute capability 7.5), for a learner without a GPU: NVIDIA's T4
# datasheet and the CUDA C++ Programming Guide's table of compute capabilities.
T4 = {
    "name": "Tesla T4 (reference numbers, not measured here)",
    "compute capability": "7.5",
    "SMs": 40,
    "warp size": 32,
    "max threads per SM": 1024,
    "max blocks per SM": 16,
    "registers per SM (32-bit)": 65536,
    "shared memory per SM (KiB)": 64,
    "L2 cache (MiB)": 4,
    "memory (GiB)": 16,
    "peak memory bandwidth (GB/s)": 320,
}


def _sync():
    cuda.synchronize()


def device_query() -> dict:
    """The current GPU's numbers, read from the driver (GPU only)."""
    dev = cuda.get_current_device()

    def attr(name):
        try:
            return getattr(dev, name)
        except Exception:  # noqa: BLE001  (an attribute this driver does not report)
            return None

    free, total = cuda.current_context().get_memory_info()
    mem_khz, bus = attr("MEMORY_CLOCK_RATE"), attr("GLOBAL_MEMORY_BUS_WIDTH")
    q = {
        "name": dev.name.decode() if isinstance(dev.name, bytes) else dev.name,
        "compute capability": ".".join(map(str, dev.compute_capability)),
        "SMs": attr("MULTIPROCESSOR_COUNT"),
        "warp size": attr("WARP_SIZE"),
        "max threads per SM": attr("MAX_THREADS_PER_MULTIPROCESSOR"),
        "max blocks per SM": attr("MAX_BLOCKS_PER_MULTIPROCESSOR"),
        "registers per SM (32-bit)": attr("MAX_REGISTERS_PER_MULTIPROCESSOR"),
        "shared memory per SM (KiB)": (attr("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR") or 0) // 1024,
        "L2 cache (MiB)": round((attr("L2_CACHE_SIZE") or 0) / 2**20, 1),
        "memory (GiB)": round(total / 2**30, 1),
        "SM clock (MHz)": (attr("CLOCK_RATE") or 0) // 1000,
        "copy engines": attr("ASYNC_ENGINE_COUNT"),
    }
    if mem_khz and bus:
        # double data rate: two transfers per clock over a bus of `bus` bits
        q["peak memory bandwidth (GB/s)"] = round(2 * mem_khz * 1e3 * bus / 8 / 1e9)
    q["resident threads, whole GPU"] = (q["SMs"] or 0) * (q["max threads per SM"] or 0)
    return q


def print_table(d: dict) -> None:
    w = max(map(len, d))
    for k, v in d.items():
        print(f"  {k.ljust(w)}  {v}")


def measured_bandwidth() -> float:
    """GB/s of a device-to-device copy of 256 MiB (GPU only)."""
    return timing.copy_ceiling(1 << 28).gbps


def _transfer_times(nbytes: int) -> tuple:
    n = nbytes // 4
    pageable = np.random.default_rng(0).random(n, dtype=np.float32)
    pinned = cuda.pinned_array(n, np.float32)
    pinned[:] = pageable
    dev = cuda.device_array(n, np.float32)
    return (
        wall(lambda: (dev.copy_to_device(pageable), _sync())),
        wall(lambda: (dev.copy_to_device(pinned), _sync())),
        wall(lambda: (dev.copy_to_host(pageable), _sync())),
        wall(lambda: (dev.copy_to_host(pinned), _sync())),
    )


def transfer_table(sizes=(2**12, 2**16, 2**20, 2**24, 2**28)) -> list:
    """[(bytes, pageable H2D s, pinned H2D s, pageable D2H s, pinned D2H s)] (GPU only)."""
    return [(nbytes, *_transfer_times(nbytes)) for nbytes in sizes]


def print_transfers(rows) -> None:
    heads = ("H2D pageable", "H2D pinned", "D2H pageable", "D2H pinned")
    print(f"{'bytes':>12}  " + "  ".join(f"{h:>13}" for h in heads) + "  (GB/s)")
    for nbytes, *secs in rows:
        print(f"{nbytes:>12,}  " + "  ".join(f"{nbytes / s / 1e9:>13.2f}" for s in secs))


def launch_overhead(reps: int = 2000) -> dict:
    """Microseconds per empty-kernel launch: queued back to back, and one launch + synchronize (GPU only)."""
    empty_kernel[1, 1]()
    _sync()
    t0 = time.perf_counter()
    for _ in range(reps):
        empty_kernel[1, 1]()
    _sync()
    queued = (time.perf_counter() - t0) / reps
    one = wall(lambda: (empty_kernel[1, 1](), _sync()), min_time=0.2, max_reps=2000)
    start, end = cuda.event(), cuda.event()
    start.record()
    for _ in range(reps):
        empty_kernel[1, 1]()
    end.record()
    end.synchronize()
    gpu_side = cuda.event_elapsed_time(start, end) / 1e3 / reps
    return {
        "host time per launch, back to back (us)": round(queued * 1e6, 2),
        "GPU time per empty kernel, back to back (us)": round(gpu_side * 1e6, 2),
        "launch + synchronize, one at a time (us)": round(one * 1e6, 2),
    }
