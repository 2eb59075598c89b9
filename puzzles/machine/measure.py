"""The machine: what a GPU is in the learner's own numbers, and when it pays.

One module, just over 500 lines, on purpose: every study shares one timing and skip path.

A device query, memory bandwidth measured, host<->device transfers (pageable and pinned), streams
and the overlap of copies with kernels drawn as a timeline of events, kernel launch overhead, and
the same three computations (a vector op, a reduction, a small matmul) timed on the CPU (NumPy,
Numba `@njit(parallel=True)`) and on the GPU across sizes. The notebook's exercise, the vector op
as a grid-stride kernel, is `m01_saxpy`; its reference is the kernel timed here.

Everything that needs a GPU is behind `helpers.timing.skip_reason()`; the CPU side always runs, and
the stream timeline runs on the simulator too (synchronously, so without overlap).
"""

from __future__ import annotations

import math
import os
import statistics
import time

import numba
import numpy as np
from numba import cuda

from helpers import timing
from puzzles.machine.m01_saxpy import saxpy_kernel

FULL_MASK = 0xFFFFFFFF
TILE = 16  # matmul tile

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


# ---------------------------------------------------------------- the other GPU kernels


@cuda.jit
def sum_kernel(out, x, size):
    """out[0] += sum(x): grid-stride sums, warp shuffles, one shared slot per warp, one atomic per block."""
    warp_sums = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    acc = numba.float32(0)
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        acc += x[i]
    for d in (16, 8, 4, 2, 1):
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
    if t % 32 == 0:
        warp_sums[t // 32] = acc
    cuda.syncthreads()
    if t < 32:
        v = warp_sums[t] if t < cuda.blockDim.x // 32 else numba.float32(0)
        for d in (16, 8, 4, 2, 1):
            v += cuda.shfl_down_sync(FULL_MASK, v, d)
        if t == 0:
            cuda.atomic.add(out, 0, v)


@cuda.jit
def zero_kernel(out):
    if cuda.grid(1) < out.size:
        out[cuda.grid(1)] = 0


@cuda.jit
def matmul_kernel(c, a, b, n):
    """c = a @ b for n x n float32 matrices, TILE x TILE tiles in shared memory."""
    sa = cuda.shared.array((TILE, TILE), numba.float32)
    sb = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = numba.float32(0)
    for t0 in range(0, n, TILE):
        sa[ty, tx] = a[row, t0 + tx] if row < n and t0 + tx < n else 0
        sb[ty, tx] = b[t0 + ty, col] if t0 + ty < n and col < n else 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        c[row, col] = acc


@cuda.jit
def busy_kernel(out, x, reps):
    """out = x after `reps` rounds of a cheap recurrence: a kernel whose length we can dial."""
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        v = x[i]
        for _ in range(reps):
            v = v * numba.float32(0.999) + numba.float32(0.001)
        out[i] = v


@cuda.jit
def empty_kernel():
    pass


# ---------------------------------------------------------------- the CPU side


@numba.njit(parallel=True, cache=False)
def saxpy_cpu(out, x, y, alpha):
    for i in numba.prange(x.size):
        out[i] = alpha * x[i] + y[i]


@numba.njit(parallel=True, cache=False)
def sum_cpu(x):
    acc = 0.0
    for i in numba.prange(x.size):
        acc += x[i]
    return acc


@numba.njit(parallel=True, cache=False)
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


# ---------------------------------------------------------------- sizes


def size_caps() -> tuple:
    """(largest vector length, largest matmul n) to measure here: small under CI, larger with a GPU."""
    if os.environ.get("CI"):
        return 10**5, 128
    if timing.skip_reason():
        return 10**7, 256
    return 10**8, 2048


def vector_sizes() -> list:
    top, _ = size_caps()
    return [int(10 ** (k / 2)) for k in range(6, 17) if 10 ** (k / 2) <= top]


def matmul_sizes() -> list:
    _, top = size_caps()
    return [n for n in (16, 32, 64, 128, 256, 512, 1024, 2048) if n <= top]


# ---------------------------------------------------------------- GPU measurements


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


# ---------------------------------------------------------------- streams: a timeline of events


def overlap_timeline(n: int, chunks: int, streams: int, reps: int, threads: int = 256) -> list:
    """Run chunks of `busy_kernel` with their copies on `streams` streams; return the events.

    Each chunk: copy in (host -> device), kernel, copy out, in its stream, events recorded between
    the stages. Returns [(chunk, stream, stage, start ms, end ms)] relative to the first event.
    On a GPU, copies of one stream overlap kernels of another; on the simulator every call runs
    at once, in order, so the same code draws a staircase with no overlap.
    """
    size = n // chunks
    host_in = [cuda.pinned_array(size, np.float32) for _ in range(chunks)]
    host_out = [cuda.pinned_array(size, np.float32) for _ in range(chunks)]
    rng = np.random.default_rng(0)
    for h in host_in:
        h[:] = rng.uniform(-1, 1, size)
    dev_in = [cuda.device_array(size, np.float32) for _ in range(chunks)]
    dev_out = [cuda.device_array(size, np.float32) for _ in range(chunks)]
    ss = [cuda.stream() for _ in range(streams)]
    grid = max(1, min(64, -(-size // threads)))
    busy_kernel[grid, threads, ss[0]](dev_out[0], dev_in[0], 1)  # compile outside the timeline
    cuda.synchronize()
    t0 = cuda.event()
    t0.record(ss[0])
    marks = []
    for c in range(chunks):
        s = ss[c % streams]
        ev = [cuda.event() for _ in range(4)]
        ev[0].record(s)
        dev_in[c].copy_to_device(host_in[c], stream=s)
        ev[1].record(s)
        busy_kernel[grid, threads, s](dev_out[c], dev_in[c], reps)
        ev[2].record(s)
        dev_out[c].copy_to_host(host_out[c], stream=s)
        ev[3].record(s)
        marks.append((c, c % streams, ev))
    cuda.synchronize()
    want = host_in[0].copy()
    for _ in range(reps):
        want = want * np.float32(0.999) + np.float32(0.001)
    if not np.allclose(host_out[0], want, rtol=1e-4, atol=1e-5):
        raise AssertionError("overlap_timeline: chunk 0 came back wrong")
    rows = []
    for c, s, ev in marks:
        for stage, (a, b) in zip(("copy in", "kernel", "copy out"), zip(ev, ev[1:])):
            rows.append((c, s, stage, cuda.event_elapsed_time(t0, a), cuda.event_elapsed_time(t0, b)))
    return rows


def plot_timeline(rows, title: str):
    import matplotlib.pyplot as plt

    colors = {"copy in": "tab:blue", "kernel": "tab:orange", "copy out": "tab:green"}
    nstreams = max(r[1] for r in rows) + 1
    fig, ax = plt.subplots(figsize=(8, 0.6 * nstreams + 1.5))
    for c, s, stage, a, b in rows:
        ax.barh(s, max(b - a, 1e-4), left=a, color=colors[stage], edgecolor="black", linewidth=0.3)
        ax.text((a + b) / 2, s, str(c), ha="center", va="center", fontsize=7)
    ax.set_yticks(range(nstreams), [f"stream {s}" for s in range(nstreams)])
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds since the first event")
    ax.set_title(title)
    ax.legend(
        handles=[plt.Rectangle((0, 0), 1, 1, color=v) for v in colors.values()],
        labels=list(colors),
        loc="lower right",
        fontsize="small",
    )
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- CPU vs GPU across sizes

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
