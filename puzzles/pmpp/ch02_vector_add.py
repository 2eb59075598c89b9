"""PMPP chapter 2, data-parallel computing: vector addition, and when the GPU is worth the trip.

Ladder: one element per thread (worked) -> grid-stride loop (exercise) -> grid-stride loop with four
loads of each operand in flight (worked; the one that should reach 80% of copy bandwidth).
"""

import math
import time

import numpy as np
from numba import cuda

from helpers import timing, tuning
from helpers.puzzle import Budget, Case, Puzzle, edge_sizes

CHAPTER = "pmpp-02"


@cuda.jit
def vecadd_kernel(out, a, b, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + b[i]


@cuda.jit
def vecadd_grid_stride_kernel(out, a, b, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    ### BEGIN SOLUTION
    stride = cuda.blockDim.x * cuda.gridDim.x
    while i < n:
        out[i] = a[i] + b[i]
        i += stride
    ### END SOLUTION


@cuda.jit
def vecadd_x4_kernel(out, a, b, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    stride = cuda.blockDim.x * cuda.gridDim.x
    # All eight loads are issued before the first store: four times the bytes in flight per thread,
    # which is what a memory system with ~1 us latency needs to stay busy.
    while i + 3 * stride < n:
        a0 = a[i]
        a1 = a[i + stride]
        a2 = a[i + 2 * stride]
        a3 = a[i + 3 * stride]
        b0 = b[i]
        b1 = b[i + stride]
        b2 = b[i + 2 * stride]
        b3 = b[i + 3 * stride]
        out[i] = a0 + b0
        out[i + stride] = a1 + b1
        out[i + 2 * stride] = a2 + b2
        out[i + 3 * stride] = a3 + b3
        i += 4 * stride
    while i < n:
        out[i] = a[i] + b[i]
        i += stride


def spec(a, b, n):
    return a + b


def _vectors(rng, n):
    a = rng.uniform(-50, 50, n).astype(np.float32)
    b = rng.normal(0, 10, n).astype(np.float32)
    return a, b


def _case(rng, n, grid, block):
    a, b = _vectors(rng, n)
    return Case(grid=grid, block=block, args={"out": np.empty(n, np.float32), "a": a, "b": b, "n": n})


def cases_one_per_thread(rng):
    # enough blocks to cover n, n never a multiple of the block
    # sizes per seed around the block (1, tpb-1, tpb, tpb+1), several blocks, up to ~16 blocks
    tpb = int(rng.choice((32, 64)))
    sizes = [(100, 32)] + [(n, tpb) for n in edge_sizes(rng, 100, tpb, (8 * tpb + 1, 16 * tpb))[1:]]
    return [_case(rng, n, math.ceil(n / b), b) for n, b in sizes]


def cases_grid_stride(rng):
    # deliberately too few threads: every thread must handle several elements
    # sizes per seed: fewer elements than threads (1, threads-1), exactly the grid, one more, and
    # several trips round the loop, up to ~12 per thread
    grid, tpb = int(rng.integers(1, 4)), int(rng.choice((16, 32, 64)))
    threads = grid * tpb
    sizes = edge_sizes(rng, 300, threads, (6 * threads + 1, 12 * threads))[1:]
    return [_case(rng, 300, 2, 32)] + [_case(rng, n, grid, tpb) for n in sizes]


COALESCED = 0.5  # a grid-stride loop is ~100%; a contiguous chunk per thread 20% or less


def _per_thread(case, per_element):
    threads = case.grid * case.block
    return per_element * math.ceil(case.args["n"] / threads)


PUZZLES = [
    Puzzle(
        name="ch02_vecadd",
        title="PMPP 2: Vector addition, one element per thread",
        statement="""\
`out[i] = a[i] + b[i]` for `i < n`. Each thread computes its global index from the block index, the
block size and its index inside the block, and handles that one element; the grid is rounded up to
whole blocks, so the last block has threads with nothing to do, and they must not touch memory.
Budget per thread: 2 global reads, 1 global write.""",
        outputs=("out",),
        spec=spec,
        cases=cases_one_per_thread,
        reference=vecadd_kernel,
        budget=Budget(global_reads=2, global_writes=1),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch02_vecadd_grid_stride",
        title="PMPP 2: Vector addition with a grid-stride loop",
        statement=f"""\
Same sum, but the launch has **fewer threads than elements**: the grid is sized to the machine, not
to the data. Thread `i` handles `i`, then `i + stride`, `i + 2*stride`, ... while the index is below
`n`, where `stride` is the total number of threads in the grid (`blockDim.x * gridDim.x`).
Consecutive threads still touch consecutive elements on every trip round the loop, so each warp's
accesses stay coalesced. Giving each thread a contiguous chunk of its own (elements `i*k` to
`i*k + k - 1`) is rejected: neighbouring lanes of a warp would then touch addresses `k` elements
apart, and every line's global accesses must be at least {COALESCED:.0%} coalesced.
Budget per thread: 2 reads and 1 write per element it owns.""",
        outputs=("out",),
        spec=spec,
        cases=cases_grid_stride,
        reference=vecadd_grid_stride_kernel,
        hints=(
            "How many threads are there in the whole grid? That is the distance between two elements "
            "one thread handles.",
            "`stride = cuda.blockDim.x * cuda.gridDim.x`; loop while `i < n`.",
        ),
        budget=Budget(
            global_reads=lambda c: _per_thread(c, 2),
            global_writes=lambda c: _per_thread(c, 1),
            min_coalescing=COALESCED,
        ),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch02_vecadd_x4",
        title="PMPP 2: Grid-stride vector addition, four elements in flight",
        statement="""\
The grid-stride loop unrolled by four, with all eight loads written before the first store. A GPU
hides memory latency by having many loads outstanding; a thread that issues one load and waits for
it before issuing the next keeps only a few bytes in flight. A remainder loop handles the last
elements. Budget per thread: 2 reads and 1 write per element it owns.""",
        outputs=("out",),
        spec=spec,
        cases=cases_grid_stride,
        reference=vecadd_x4_kernel,
        budget=Budget(global_reads=lambda c: _per_thread(c, 2), global_writes=lambda c: _per_thread(c, 1)),
        chapter=CHAPTER,
    ),
]


@cuda.jit
def copy_kernel(dst, src):
    # GPU only: a grid-stride copy, one element per trip, to show what a plain Numba kernel reaches
    # against cudaMemcpy (float32: 4-byte loads; the same arrays viewed as complex64: 8-byte loads)
    i = cuda.grid(1)
    while i < src.shape[0]:
        dst[i] = src[i]
        i += cuda.gridsize(1)


def numba_copy_rows(nbytes: int) -> list:
    """A copy of `nbytes` by `copy_kernel` moving 4 and 8 bytes per load, validated, then timed."""
    n = nbytes // 8 * 2  # float32 elements, an even count so that a complex64 view exists
    host = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    src, dst = cuda.to_device(host), cuda.device_array(n, np.float32)
    blocks = _sm_count() * 32
    rows = []
    for name, dtype in (
        ("copy in Numba, 4-byte loads", np.float32),
        ("copy in Numba, 8-byte loads", np.complex64),
    ):
        s, d = src.view(dtype), dst.view(dtype)
        dst.copy_to_device(np.zeros(n, np.float32))
        copy_kernel[blocks, 256](d, s)
        timing.validate(name, dst.copy_to_host(), host, rtol=0, atol=0)
        seconds = timing.time_gpu(lambda s=s, d=d: copy_kernel[blocks, 256](d, s))
        rows.append(timing.Measurement(name, seconds, bytes=2 * 4 * n))
    return rows


BEST = "vecadd grid-stride x4"
GOAL = {"ceiling": "copy", "fraction": 0.9, "best": BEST}


# ---------------------------------------------------------------------------- GPU only


def _sm_count():
    return cuda.get_current_device().MULTIPROCESSOR_COUNT


def _variants():
    """(name, kernel, launch config for n elements and block size tpb)."""
    sms = _sm_count()
    return [
        ("vecadd 1 elem/thread", vecadd_kernel, lambda n, tpb: (math.ceil(n / tpb), tpb)),
        # one full wave of resident threads (2048 per SM), never more blocks than the data needs
        (
            "vecadd grid-stride",
            vecadd_grid_stride_kernel,
            lambda n, tpb: (max(1, min(math.ceil(n / tpb), sms * 2048 // tpb)), tpb),
        ),
        (BEST, vecadd_x4_kernel, lambda n, tpb: (max(1, min(math.ceil(n / tpb), sms * 2048 // tpb)), tpb)),
    ]


def benchmark(scale: float = 1.0) -> list:
    """Validate every variant at several block sizes, then time it on 256 MiB arrays (at scale 1)."""
    rng = np.random.default_rng(2)
    variants = _variants()
    # validation: fresh random data, a size that is no multiple of anything, several block sizes
    nv = (1 << 20) + 37
    a, b = _vectors(rng, nv)
    da, db, dout = cuda.to_device(a), cuda.to_device(b), cuda.device_array(nv, np.float32)
    for name, kernel, config in variants:
        for tpb in (64, 128, 256, 512, 1024):
            dout.copy_to_device(np.full(nv, np.nan, np.float32))
            kernel[config(nv, tpb)](dout, da, db, nv)
            timing.validate(f"{name} (block {tpb})", dout.copy_to_host(), a + b)

    n = max(1 << 16, int((64 << 20) * scale)) + 3  # 256 MiB per float32 array at scale 1
    a, b = _vectors(rng, n)
    da, db, dout = cuda.to_device(a), cuda.to_device(b), cuda.device_array(n, np.float32)
    rows = []
    for name, kernel, config in variants:
        # block size tuned on this GPU (cached per device), validated above at every candidate
        choice, seconds = tuning.tuned_time(
            name,
            {f"{tpb} threads": tpb for tpb in (128, 256, 512, 1024)},
            lambda tpb, k=kernel, c=config: timing.time_gpu(lambda: k[c(n, tpb)](dout, da, db, n)),
        )
        kernel[config(n, choice.config)](dout, da, db, n)
        timing.validate(name, dout.copy_to_host(), a + b)
        rows.append(timing.Measurement(name, seconds, bytes=3 * 4 * n, config=choice.label))
    rows.append(timing.copy_ceiling(4 * n))
    rows += numba_copy_rows(4 * n)  # what "the copy" is for a Numba kernel on this GPU
    peer = timing.library_peer(
        "vector add",
        [
            timing.via("cupy", "cupy.add", _peer_add, da, db, dout),
            timing.via("torch", "torch.add", _peer_add, da, db, dout),
        ],
        bytes=3 * 4 * n,
        check=lambda got: timing.validate("vector add peer", got, a + b),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_add(xp, a, b, out):
    """What a user would call instead: the library's add (CuPy, PyTorch and NumPy spell it alike)."""
    return xp.add(a, b, out=out)


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
