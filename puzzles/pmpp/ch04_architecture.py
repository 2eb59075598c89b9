"""PMPP chapter 4, compute architecture and scheduling: warps, control divergence, occupancy.

The simulator records which access instructions each thread executed; lanes of one warp that
executed different sets of instructions took different paths through the kernel, and a real SM runs
those paths one after the other. `paths_per_warp` counts them from the trace.
"""

import math

import numpy as np
from numba import cuda

from helpers import timing
from helpers.metrics import lane_paths, paths_per_warp  # noqa: F401  (the chapter's measures)
from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.rules import max_paths_per_warp

# what `from puzzles.pmpp.ch04_architecture import *` gives a notebook: constants only, never a kernel
__all__ = ["WARP"]
CHAPTER = "pmpp-04"
WARP = 32


# ---------------------------------------------------------------------------- warps of a 2-D block


@cuda.jit
def warp_lane_kernel(warp, lane, height, width, block_w, block_h):
    row = cuda.blockIdx.y * block_h + cuda.threadIdx.y
    col = cuda.blockIdx.x * block_w + cuda.threadIdx.x
    ### BEGIN SOLUTION
    # a block's threads are numbered x fastest, then y; warps are runs of 32 in that order
    t = cuda.threadIdx.y * block_w + cuda.threadIdx.x
    warps_per_block = (block_w * block_h + WARP - 1) // WARP
    block = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
    if row < height and col < width:
        warp[row, col] = block * warps_per_block + t // WARP
        lane[row, col] = t % WARP
    ### END SOLUTION


def spec_warp_lane(height, width, block_w, block_h):
    row, col = np.mgrid[0:height, 0:width]
    t = (row % block_h) * block_w + col % block_w
    blocks_x = math.ceil(width / block_w)
    block = (row // block_h) * blocks_x + col // block_w
    warps_per_block = math.ceil(block_w * block_h / WARP)
    return {
        "warp": (block * warps_per_block + t // WARP).astype(np.int32),
        "lane": (t % WARP).astype(np.int32),
    }


def cases_warp_lane(rng):
    out = []
    # 12 x 6 = 72 threads: three warps, the last one only 8 lanes full
    # case 0 that; then per seed one block shape of the list and, per axis, the edges around it (1,
    # block-1, block, block+1, a few blocks) and a side longer than before (w 71-80 or h 34-40), the
    # widest paired with the shortest
    shapes = (
        ((10, 20), (16, 4)),
        ((13, 30), (12, 6)),
        ((7, 5), (8, 8)),
        ((33, 9), (4, 16)),
        ((6, 70), (32, 2)),
    )
    pair = rng.spawn(1)[0]
    bw, bh = shapes[int(pair.integers(0, len(shapes)))][1]
    ws = edge_sizes(rng, 20, bw, (71, 80))[1:]
    hs = edge_sizes(rng, 10, bh, (34, 40))[1:]
    k = max(len(ws), len(hs))
    ws = sorted(ws + [int(pair.integers(1, 3 * bw))] * (k - len(ws)))
    hs = sorted(hs + [int(pair.integers(1, 3 * bh))] * (k - len(hs)), reverse=True)
    # and always a 12 x 6 block (a partly filled last warp) over several blocks, at a drawn size
    partial = ((int(pair.integers(7, 19)), int(pair.integers(13, 37))), (12, 6))
    for (h, w), (bw, bh) in [shapes[0], *(((h, w), (bw, bh)) for h, w in zip(hs, ws)), partial]:
        # extra scalars describe the launch to the spec; the kernel may read them or blockDim
        out.append(
            Case(
                grid=(math.ceil(w / bw), math.ceil(h / bh)),
                block=(bw, bh),
                args={
                    "warp": np.empty((h, w), np.int32),
                    "lane": np.empty((h, w), np.int32),
                    "height": h,
                    "width": w,
                    "block_w": bw,
                    "block_h": bh,
                },
            )
        )
    return out


# ---------------------------------------------------------------------------- control divergence


@cuda.jit
def parity_branch_kernel(out, a, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        x = a[i]
        # even and odd lanes of every warp disagree here: the warp runs both sides in turn
        if i % 2 == 0:
            out[i] = x * x
        else:
            out[i] = 1 - x


@cuda.jit
def warp_uniform_kernel(out, a, n):
    ### BEGIN SOLUTION
    t = cuda.threadIdx.x
    w = t // WARP
    # warp pair p covers 64 elements: the even warp takes the even ones, the odd warp the odd ones
    i = cuda.blockIdx.x * cuda.blockDim.x + (w // 2) * 2 * WARP + 2 * (t % WARP) + w % 2
    if i < n:
        x = a[i]
        if w % 2 == 0:
            out[i] = x * x
        else:
            out[i] = 1 - x
    ### END SOLUTION


def spec_parity(a, n):
    out = np.where(np.arange(n) % 2 == 0, a * a, 1 - a)
    return out.astype(np.float32)


def cases_parity(rng):
    # blocks are whole numbers of warp pairs (64 threads); case 0 n = 200 in blocks of 64, then per
    # seed a block of 128 or 256 and n at its edges (1, block-1, block, block+1), a few blocks and
    # more than before (1001-1300)
    first = (200, 64)
    tpb = 128 * 2 ** int(rng.spawn(1)[0].integers(0, 2))  # at least two warp pairs
    sizes = [first, *((n, tpb) for n in edge_sizes(rng, first[0], tpb, (1001, 1300))[1:])]
    return [
        Case(
            grid=math.ceil(n / tpb),
            block=tpb,
            args={"out": np.empty(n, np.float32), "a": rng.uniform(-3, 3, n).astype(np.float32), "n": n},
        )
        for n, tpb in sizes
    ]


PUZZLES = [
    Puzzle(
        name="ch04_warp_lane",
        title="PMPP 4: Which warp is this thread in?",
        statement="""\
An SM schedules warps of 32 threads, not single threads. In a 2-D block the threads are numbered
`x` first: thread `(tx, ty)` is number `ty * blockDim.x + tx`, and warp `k` of the block holds
numbers `32k .. 32k + 31`. A block whose size is not a multiple of 32 still gets whole warps: the
last one runs with some lanes empty. Write, for the thread that owns pixel `(row, col)`, its global
warp number (blocks numbered `x` first; every block holds the same number of warps) into
`warp[row, col]`, and its lane (position inside the warp) into `lane[row, col]`.
`block_w` and `block_h` repeat the block shape; you may use them or `cuda.blockDim`.""",
        outputs=("warp", "lane"),
        spec=spec_warp_lane,
        cases=cases_warp_lane,
        reference=warp_lane_kernel,
        hints=(
            "First the thread's number inside its block, x fastest.",
            "Warps per block is the thread count divided by 32, rounded up.",
        ),
        budget=Budget(global_reads=0, global_writes=2),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch04_parity_branch",
        title="PMPP 4: A branch on thread parity (divergent)",
        statement="""\
`out[i] = a[i]**2` for even `i` and `1 - a[i]` for odd `i`, one element per thread. Correct, but in
every warp half the lanes want one side of the `if` and half the other: the warp executes both
sides in turn with half its lanes switched off each time. The picture below colours each lane by
the path it took.""",
        outputs=("out",),
        spec=spec_parity,
        cases=cases_parity,
        reference=parity_branch_kernel,
        budget=Budget(global_reads=1, global_writes=1),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch04_warp_uniform",
        title="PMPP 4: Same result, one path per warp",
        statement="""\
The same `out` as the parity kernel, but **no warp may take more than one path**: the check
counts, from the trace, the different paths the lanes of each warp took. The data decides which side
of the branch an element needs, but you decide which thread handles which element. Give each block
`blockDim.x` consecutive elements (a multiple of 64) and hand all the even ones to some warps and
all the odd ones to others. Lanes past the end of the data that do nothing at all do not count as a
path. Budget per thread: 1 global read, 1 global write.""",
        outputs=("out",),
        spec=spec_parity,
        cases=cases_parity,
        reference=warp_uniform_kernel,
        hints=(
            "Think of the block's warps in pairs: a pair covers 64 consecutive elements.",
            "In a pair, the first warp takes elements 0, 2, 4, ... 62 and the second 1, 3, ... 63.",
            "Branch on something every lane of a warp agrees on, such as the warp number's parity.",
        ),
        budget=Budget(global_reads=1, global_writes=1),
        chapter=CHAPTER,
        rules=(max_paths_per_warp(1),),
    ),
]

# The issue sets no performance goal for chapter 4.
GOAL = None


# ---------------------------------------------------------------------------- occupancy arithmetic

# Per-SM limits (CUDA programming guide, compute capability tables).
GPUS = {
    "T4 (sm_75)": {"threads": 1024, "blocks": 16, "warps": 32, "regs": 65536, "smem": 64 * 1024},
    "A100 (sm_80)": {"threads": 2048, "blocks": 32, "warps": 64, "regs": 65536, "smem": 164 * 1024},
    "H100 (sm_90)": {"threads": 2048, "blocks": 32, "warps": 64, "regs": 65536, "smem": 228 * 1024},
}


def occupancy(threads_per_block, regs_per_thread=32, smem_per_block=0, gpu="H100 (sm_90)") -> dict:
    """Resident blocks per SM and the fraction of the SM's warp slots they fill.

    Simplified: registers are allocated per warp in units of 256, shared memory is taken as is
    (real GPUs round it up and reserve 1 KiB per block), and `limit` names the resource that ran out.
    """
    lim = GPUS[gpu]
    warps = math.ceil(threads_per_block / WARP)
    regs_per_warp = math.ceil(regs_per_thread * WARP / 256) * 256
    by = {
        "blocks": lim["blocks"],
        "threads": lim["threads"] // (warps * WARP),
        "registers": lim["regs"] // (regs_per_warp * warps) if regs_per_thread else lim["blocks"],
        "shared memory": lim["smem"] // smem_per_block if smem_per_block else lim["blocks"],
    }
    blocks = min(by.values())
    limit = min(by, key=lambda k: (by[k], k != "threads"))
    return {
        "gpu": gpu,
        "threads/block": threads_per_block,
        "regs/thread": regs_per_thread,
        "smem/block": smem_per_block,
        "blocks/SM": blocks,
        "warps/SM": blocks * warps,
        "occupancy": blocks * warps / lim["warps"],
        "limit": limit,
    }


def occupancy_table(configs, gpu="H100 (sm_90)") -> str:
    lines = [
        f"{gpu}: {'threads/blk':>11} {'regs/thr':>8} {'smem/blk':>9} {'blocks/SM':>9} "
        f"{'warps/SM':>8} {'occupancy':>9}  limited by"
    ]
    for cfg in configs:
        o = occupancy(*cfg, gpu=gpu)
        lines.append(
            f"{'':{len(gpu) + 1}} {o['threads/block']:>11} {o['regs/thread']:>8} "
            f"{o['smem/block']:>9} {o['blocks/SM']:>9} {o['warps/SM']:>8} "
            f"{o['occupancy']:>9.0%}  {o['limit']}"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- GPU only

DEVICE_ATTRIBUTES = (
    "MULTIPROCESSOR_COUNT",
    "WARP_SIZE",
    "MAX_THREADS_PER_BLOCK",
    "MAX_BLOCK_DIM_X",
    "MAX_GRID_DIM_X",
    "MAX_THREADS_PER_MULTIPROCESSOR",
    "MAX_REGISTERS_PER_BLOCK",
    "MAX_REGISTERS_PER_MULTIPROCESSOR",
    "MAX_SHARED_MEMORY_PER_BLOCK",
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "L2_CACHE_SIZE",
    "CLOCK_RATE",
    "MEMORY_CLOCK_RATE",
    "GLOBAL_MEMORY_BUS_WIDTH",
)


def device_query() -> dict:
    """The current GPU's name, compute capability and the attributes above (GPU only)."""
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
    info = {"name": name, "compute capability": "%d.%d" % dev.compute_capability}
    for attr in DEVICE_ATTRIBUTES:
        try:
            info[attr] = getattr(dev, attr)
        except AttributeError:  # older drivers lack some attributes
            continue
    return info


ROUNDS = 256  # arithmetic per element in the benchmark kernels, so the branch cost shows


@cuda.jit
def _divergent_heavy(out, a, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        x = a[i]
        y = x
        if i % 2 == 0:
            for _ in range(ROUNDS):
                y = y * np.float32(0.999) + np.float32(0.001)
        else:
            for _ in range(ROUNDS):
                y = y * np.float32(0.998) - np.float32(0.002)
        out[i] = y


@cuda.jit
def _uniform_heavy(out, a, n):
    t = cuda.threadIdx.x
    w = t // WARP
    i = cuda.blockIdx.x * cuda.blockDim.x + (w // 2) * 2 * WARP + 2 * (t % WARP) + w % 2
    if i < n:
        x = a[i]
        y = x
        if w % 2 == 0:
            for _ in range(ROUNDS):
                y = y * np.float32(0.999) + np.float32(0.001)
        else:
            for _ in range(ROUNDS):
                y = y * np.float32(0.998) - np.float32(0.002)
        out[i] = y


def _spec_heavy(a):
    even = a.astype(np.float32).copy()
    odd = even.copy()
    for _ in range(ROUNDS):
        even = even * np.float32(0.999) + np.float32(0.001)
        odd = odd * np.float32(0.998) - np.float32(0.002)
    return np.where(np.arange(a.size) % 2 == 0, even, odd)


def benchmark(scale: float = 1.0) -> list:
    """The divergent and the warp-uniform kernel, each with ROUNDS multiply-adds per element."""
    rng = np.random.default_rng(5)
    variants = [
        ("divergent (branch on i % 2)", _divergent_heavy),
        ("warp-uniform (branch on warp % 2)", _uniform_heavy),
    ]
    nv = 100_003
    a = rng.uniform(-3, 3, nv).astype(np.float32)
    da, dout = cuda.to_device(a), cuda.device_array(nv, np.float32)
    expected = _spec_heavy(a)
    for name, kernel in variants:
        for tpb in (64, 128, 256, 1024):
            kernel[math.ceil(nv / tpb), tpb](dout, da, nv)
            timing.validate(f"{name} (block {tpb})", dout.copy_to_host(), expected, rtol=1e-4, atol=1e-5)
    n = max(1 << 16, int((64 << 20) * scale))
    da, dout = cuda.to_device(rng.uniform(-3, 3, n).astype(np.float32)), cuda.device_array(n, np.float32)
    rows = []
    for name, kernel in variants:
        grid = math.ceil(n / 256)
        seconds = timing.time_gpu(lambda k=kernel, g=grid: k[g, 256](dout, da, n))
        rows.append(timing.Measurement(name, seconds, bytes=8 * n, flops=2 * ROUNDS * n))
    return rows
