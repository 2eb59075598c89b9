"""PMPP chapter 7, convolution: a 2-D filter over an image, four ways.

    ch07_conv2d_basic         one thread per output pixel, filter passed in global memory
    ch07_conv2d_const         the filter in constant memory (`cuda.const.array_like`)
    ch07_conv2d_tiled_in      blocks sized to the input tile: each thread loads one pixel
                              (halo included) into shared memory, the inner threads compute
    ch07_conv2d_tiled_cached  blocks sized to the output tile: the tile comes from shared
                              memory, the halo from global memory (the caches catch it)
    ch07_conv2d_register      each thread slides a 3x3 window of registers down ROWS rows;
                              clamped, branch-free loads (written for the GPU)

Pixels outside the image count as 0 ("ghost cells"). Like the book, "convolution"
here means out[r, c] = sum_ij f[i, j] * a[r - R + i, c - R + j] (no flip).
"""

import math

import numpy as np
from numba import cuda, float32

from helpers import timing, tuning
from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.timing import specialize

__all__ = ["R", "FW", "FILTER", "IN_TILE", "OUT_TILE", "TILE", "ROWS"]

R = 1  # filter radius
FW = 2 * R + 1  # filter width
# The constant-memory filter: fixed at compile time, every tap distinct and non-zero, not symmetric.
FILTER = np.array([[0.25, -0.5, 0.75], [1.5, -1.25, 0.625], [-0.875, 1.0, 0.125]], np.float32)
IN_TILE = 8  # tiled_in: blocks of IN_TILE x IN_TILE threads (32 on the GPU)
OUT_TILE = IN_TILE - 2 * R
TILE = 8  # tiled_cached: blocks of TILE x TILE threads, one output each (32 on the GPU)
ROWS = 3  # register: output rows per thread (16 on the GPU)
assert R == 1, "conv2d_register is written out for a 3 x 3 filter"


@cuda.jit
def conv2d_basic(out, a, f, h, w):
    col, row = cuda.grid(2)
    if row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            r = row - R + i
            if 0 <= r < h:
                for j in range(FW):
                    c = col - R + j
                    if 0 <= c < w:
                        acc += f[i, j] * a[r, c]
        out[row, col] = acc


@cuda.jit
def conv2d_const(out, a, h, w):
    # The filter is baked into the kernel: every thread of a warp reads the same tap at the
    # same time, which the constant cache serves as one broadcast.
    f = cuda.const.array_like(FILTER)
    col, row = cuda.grid(2)
    if row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            r = row - R + i
            if 0 <= r < h:
                for j in range(FW):
                    c = col - R + j
                    if 0 <= c < w:
                        acc += f[i, j] * a[r, c]
        out[row, col] = acc


@cuda.jit
def conv2d_tiled_in(out, a, h, w):
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    # Blocks step by OUT_TILE but hold IN_TILE threads: the edge threads load the halo.
    col = cuda.blockIdx.x * OUT_TILE + tx - R
    row = cuda.blockIdx.y * OUT_TILE + ty - R
    ### BEGIN SOLUTION
    if 0 <= row < h and 0 <= col < w:
        tile[ty, tx] = a[row, col]
    else:
        tile[ty, tx] = 0.0  # ghost cell
    cuda.syncthreads()
    if R <= tx < IN_TILE - R and R <= ty < IN_TILE - R and row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                acc += f[i, j] * tile[ty - R + i, tx - R + j]
        out[row, col] = acc
    ### END SOLUTION


@cuda.jit
def conv2d_tiled_cached(out, a, h, w):
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    ### BEGIN SOLUTION
    if row < h and col < w:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    if row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            r = row - R + i
            for j in range(FW):
                c = col - R + j
                if 0 <= r < h and 0 <= c < w:
                    ti = ty - R + i
                    tj = tx - R + j
                    if 0 <= ti < TILE and 0 <= tj < TILE:
                        acc += f[i, j] * tile[ti, tj]
                    else:
                        acc += f[i, j] * a[r, c]  # halo: another block's pixel, likely in cache
        out[row, col] = acc
    ### END SOLUTION


@cuda.jit
def conv2d_register(out, a, h, w):
    f = cuda.const.array_like(FILTER)
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * ROWS
    if col >= w or row0 >= h:
        return
    # Clamped neighbour indices are always safe to load, so no branch stands between a row's
    # loads; the taps of a ghost column are zeroed once, up front, instead.
    cl = max(col - 1, 0)
    cr = min(col + 1, w - 1)
    ml = float32(1.0) if col >= 1 else float32(0.0)
    mr = float32(1.0) if col + 1 < w else float32(0.0)
    k00, k01, k02 = f[0, 0] * ml, f[0, 1], f[0, 2] * mr
    k10, k11, k12 = f[1, 0] * ml, f[1, 1], f[1, 2] * mr
    k20, k21, k22 = f[2, 0] * ml, f[2, 1], f[2, 2] * mr
    t = max(row0 - 1, 0)
    mt = float32(1.0) if row0 >= 1 else float32(0.0)
    # The window: rows r-1 (a), r (b), r+1 (c), three columns each, all in registers.
    a0, a1, a2 = a[t, cl] * mt, a[t, col] * mt, a[t, cr] * mt
    b0, b1, b2 = a[row0, cl], a[row0, col], a[row0, cr]
    for r in range(row0, min(row0 + ROWS, h)):
        nxt = min(r + 1, h - 1)
        mb = float32(1.0) if r + 1 < h else float32(0.0)
        c0, c1, c2 = a[nxt, cl] * mb, a[nxt, col] * mb, a[nxt, cr] * mb
        out[r, col] = (
            k00 * a0 + k01 * a1 + k02 * a2 + k10 * b0 + k11 * b1 + k12 * b2 + k20 * c0 + k21 * c1 + k22 * c2
        )
        a0, a1, a2 = b0, b1, b2
        b0, b1, b2 = c0, c1, c2


BATCH = 4  # register_batched: rows whose loads a thread issues together before computing any


@cuda.jit
def conv2d_register_batched(out, a, h, w):
    # conv2d_register with BATCH rows' loads issued back to back: one row's loads per step leave a
    # thread waiting a full memory latency per output; a batch keeps BATCH rows in flight.
    f = cuda.const.array_like(FILTER)
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * ROWS
    if col >= w or row0 >= h:
        return
    cl = max(col - 1, 0)
    cr = min(col + 1, w - 1)
    ml = float32(1.0) if col >= 1 else float32(0.0)
    mr = float32(1.0) if col + 1 < w else float32(0.0)
    k00, k01, k02 = f[0, 0] * ml, f[0, 1], f[0, 2] * mr
    k10, k11, k12 = f[1, 0] * ml, f[1, 1], f[1, 2] * mr
    k20, k21, k22 = f[2, 0] * ml, f[2, 1], f[2, 2] * mr
    t = max(row0 - 1, 0)
    mt = float32(1.0) if row0 >= 1 else float32(0.0)
    a0, a1, a2 = a[t, cl] * mt, a[t, col] * mt, a[t, cr] * mt
    b0, b1, b2 = a[row0, cl], a[row0, col], a[row0, cr]
    left = cuda.local.array(BATCH, float32)  # the row below each of the batch's rows
    mid = cuda.local.array(BATCH, float32)
    right = cuda.local.array(BATCH, float32)
    end = min(row0 + ROWS, h)
    for rb in range(row0, end, BATCH):
        for k in range(BATCH):
            nxt = min(rb + k + 1, h - 1)
            mb = float32(1.0) if rb + k + 1 < h else float32(0.0)
            left[k], mid[k], right[k] = a[nxt, cl] * mb, a[nxt, col] * mb, a[nxt, cr] * mb
        for k in range(BATCH):
            c0, c1, c2 = left[k], mid[k], right[k]
            if rb + k < end:
                top = k00 * a0 + k01 * a1 + k02 * a2
                out[rb + k, col] = top + k10 * b0 + k11 * b1 + k12 * b2 + k20 * c0 + k21 * c1 + k22 * c2
            a0, a1, a2 = b0, b1, b2
            b0, b1, b2 = c0, c1, c2


def conv2d(a, f):
    """NumPy truth: zero-padded correlation of `a` with the (2R+1) x (2R+1) filter `f`."""
    h, w = a.shape
    r = f.shape[0] // 2
    p = np.zeros((h + 2 * r, w + 2 * r), np.float64)
    p[r : r + h, r : r + w] = a
    out = np.zeros((h, w), np.float64)
    for i in range(f.shape[0]):
        for j in range(f.shape[1]):
            out += float(f[i, j]) * p[i : i + h, j : j + w]
    return out.astype(np.float32)


def spec_basic(a, f, h, w):
    return conv2d(a, f)


def spec_const(a, h, w):
    return conv2d(a, FILTER)


SHAPES = ((13, 22), (5, 4), (20, 9), (17, 31), (9, 14))  # (h, w): never square, sizes off the tile


def _shapes(rng, bw, bh):
    """Case 0 the notebook's 13 x 22; then per seed, per axis, the edges around one block of `bw` x
    `bh` outputs (1, block-1, block, block+1, a few blocks) and a side wider (32-36) or taller (21-24)
    than the old fixed shapes, the two axes paired at random."""
    pair = rng.spawn(1)[0]  # its own stream: case 0's data stay what they were
    ws = edge_sizes(rng, SHAPES[0][1], bw, (32, 36))[1:]
    hs = edge_sizes(rng, SHAPES[0][0], bh, (21, 24))[1:]
    k = max(len(ws), len(hs))
    ws += [int(pair.integers(1, 3 * bw)) for _ in range(k - len(ws))]
    hs += [int(pair.integers(1, 3 * bh)) for _ in range(k - len(hs))]
    return [SHAPES[0], *zip(pair.permutation(hs).tolist(), ws)]


def _image(rng, h, w):
    return rng.uniform(-10, 10, (h, w)).astype(np.float32)


def cases_basic(rng):
    out = []
    for h, w in _shapes(rng, 8, 4):
        f = rng.uniform(-2, 2, (FW, FW)).astype(np.float32)
        out.append(
            Case(
                grid=(math.ceil(w / 8), math.ceil(h / 4)),
                block=(8, 4),
                args={"out": np.empty((h, w), np.float32), "a": _image(rng, h, w), "f": f, "h": h, "w": w},
            )
        )
    return out


def cases_const(rng):
    return [
        Case(
            grid=(math.ceil(w / 8), math.ceil(h / 4)),
            block=(8, 4),
            args={"out": np.empty((h, w), np.float32), "a": _image(rng, h, w), "h": h, "w": w},
        )
        for h, w in _shapes(rng, 8, 4)
    ]


def cases_tiled_in(rng):
    return [
        Case(
            grid=(math.ceil(w / OUT_TILE), math.ceil(h / OUT_TILE)),
            block=(IN_TILE, IN_TILE),
            args={"out": np.empty((h, w), np.float32), "a": _image(rng, h, w), "h": h, "w": w},
        )
        for h, w in _shapes(rng, OUT_TILE, OUT_TILE)
    ]


def cases_register(rng):
    # 8 x 4 threads, ROWS rows each: blocks cover 8 x 4*ROWS pixels.
    return [
        Case(
            grid=(math.ceil(w / 8), math.ceil(h / (4 * ROWS))),
            block=(8, 4),
            args={"out": np.empty((h, w), np.float32), "a": _image(rng, h, w), "h": h, "w": w},
        )
        for h, w in _shapes(rng, 8, 4 * ROWS)
    ]


def cases_tiled_cached(rng):
    return [
        Case(
            grid=(math.ceil(w / TILE), math.ceil(h / TILE)),
            block=(TILE, TILE),
            args={"out": np.empty((h, w), np.float32), "a": _image(rng, h, w), "h": h, "w": w},
        )
        for h, w in _shapes(rng, TILE, TILE)
    ]


_COMMON = f"""

`a` and `out` are `h x w` float32 images; `R = {R}`, the filter is `FW x FW` with `FW = 2*R + 1`.
`out[r, c] = sum over i, j of f[i, j] * a[r - R + i, c - R + j]`, where pixels outside the image
count as 0. `cuda.grid(2)` gives `(x, y)`: x is the column, y the row."""

BASIC = (
    """\
One thread per output pixel. The thread walks the `FW x FW` window around its pixel, skipping
window positions that fall outside the image, and writes one sum. Every thread reads the filter
`f` from global memory and up to `FW * FW` pixels of `a`."""
    + _COMMON
)

CONST = (
    """\
The filter is small, never changes during the launch, and every thread reads the same tap at the
same moment: the pattern **constant memory** serves best. `cuda.const.array_like(FILTER)` copies
the module-level NumPy array `FILTER` into the kernel's constant bank when Numba compiles it, so
the kernel has no `f` parameter. The image reads are as before."""
    + _COMMON
    + """

Budget per thread: at most `FW * FW` global reads (the filter no longer counts: it is constant
memory)."""
)

TILED_IN = (
    f"""\
**Tiling with the input tile.** Each pixel of `a` is needed by up to `FW * FW` threads; load it
from global memory once per block instead. Blocks are `IN_TILE x IN_TILE` threads
(`IN_TILE = {IN_TILE}`) but produce only the inner `OUT_TILE x OUT_TILE` outputs
(`OUT_TILE = IN_TILE - 2*R`); block `(bx, by)` starts at output column `bx * OUT_TILE`. Every
thread loads one input pixel, halo included, into the shared `tile` (0 for pixels outside the
image); after a barrier the inner threads compute their output from `tile` alone. The filter is
the constant `FILTER`, read through `f`."""
    + _COMMON
    + """

Budget per thread: 1 global read, `FW * FW` shared reads."""
)

TILED_CACHED = (
    f"""\
**Tiling with the output tile, halo from the cache.** Blocks are `TILE x TILE` threads
(`TILE = {TILE}`), one output each, and each thread loads only its own pixel into `tile`. A window
position that lands inside the tile is read from `tile`; one that lands in the halo (a pixel that
belongs to a neighbouring block) is read from global memory, where the L1/L2 caches have most likely
kept it because the neighbouring block loads it too. No thread idles, and the shared tile is
smaller; the price is a branch per tap."""
    + _COMMON
    + f"""

Budget per thread: at most `FW*FW - (R+1)**2 + 1 = {FW * FW - (R + 1) ** 2 + 1}` global reads
(its own pixel plus the halo taps a corner thread needs)."""
)

REGISTER = (
    f"""\
**A sliding window in registers** (a worked example, written for the GPU). Each thread computes
`ROWS = {ROWS}` outputs of one column, rows `row0 .. row0 + ROWS - 1` with
`row0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS`. The 3 x 3 window of pixels lives in nine
registers; moving down one row loads only the three pixels of the new bottom row (the left and
right ones are also loaded by the neighbouring lanes, so the L1 cache serves them). The loads use
clamped indices, always inside the image, and ghost cells are zeroed by multiplying with 0, so no
branch stands between a thread's loads and the GPU keeps them all in flight."""
    + _COMMON
    + f"""

Budget per thread: `3 * (ROWS + 2) = {3 * (ROWS + 2)}` global reads, `ROWS` writes."""
)

PUZZLES = [
    Puzzle(
        name="ch07_conv2d_basic",
        title="2-D convolution, basic",
        statement=BASIC,
        outputs=("out",),
        spec=spec_basic,
        cases=cases_basic,
        reference=conv2d_basic,
        budget=Budget(global_writes=1),
        chapter="pmpp-07",
    ),
    Puzzle(
        name="ch07_conv2d_const",
        title="2-D convolution, filter in constant memory",
        statement=CONST,
        outputs=("out",),
        spec=spec_const,
        cases=cases_const,
        reference=conv2d_const,
        budget=Budget(global_reads=FW * FW, global_writes=1),
        chapter="pmpp-07",
    ),
    Puzzle(
        name="ch07_conv2d_tiled_in",
        title="2-D convolution, tiled (input tile with halo)",
        statement=TILED_IN,
        outputs=("out",),
        spec=spec_const,
        cases=cases_tiled_in,
        reference=conv2d_tiled_in,
        budget=Budget(
            global_reads=1, global_writes=1, shared_reads=FW * FW, shared_bytes=IN_TILE * IN_TILE * 4
        ),
        chapter="pmpp-07",
        hints=(
            "Thread (tx, ty) loads a[row, col] into tile[ty, tx]; row and col already include the -R.",
            "Pixels outside the image still need a value in the tile: the ghost value 0.",
            "Only threads with R <= tx < IN_TILE - R (same for ty) own an output, and only if it is "
            "inside the image.",
            "Output (row, col) reads tile[ty - R + i, tx - R + j].",
        ),
    ),
    Puzzle(
        name="ch07_conv2d_tiled_cached",
        title="2-D convolution, tiled (output tile, halo from cache)",
        statement=TILED_CACHED,
        outputs=("out",),
        spec=spec_const,
        cases=cases_tiled_cached,
        reference=conv2d_tiled_cached,
        budget=Budget(global_reads=FW * FW - (R + 1) ** 2 + 1, global_writes=1, shared_bytes=TILE * TILE * 4),
        chapter="pmpp-07",
        hints=(
            "Load your own pixel into tile[ty, tx] (if it is in the image), then wait for the block.",
            "For each tap: outside the image contributes 0; inside the tile comes from `tile`; "
            "anything else from `a`.",
            "Tile coordinates of tap (i, j) are (ty - R + i, tx - R + j).",
        ),
    ),
    Puzzle(
        name="ch07_conv2d_register",
        title="2-D convolution, sliding window in registers",
        statement=REGISTER,
        outputs=("out",),
        spec=spec_const,
        cases=cases_register,
        reference=conv2d_register,
        budget=Budget(global_reads=3 * (ROWS + 2), global_writes=ROWS),
        chapter="pmpp-07",
    ),
]


# ---------------------------------------------------------------------------- GPU benchmark

GPU_TILE = 32
GPU_ROWS = 16
GPU_BLOCK = (32, 8)
GPU_BATCH = 4


def variants():
    """name -> launch(out, a, f): the five puzzle kernels and the batched one, at GPU sizes."""
    tiled_in = specialize(conv2d_tiled_in, IN_TILE=GPU_TILE, OUT_TILE=GPU_TILE - 2 * R)
    cached = specialize(conv2d_tiled_cached, TILE=GPU_TILE)

    def flat(kernel, with_f):
        def launch(out, a, f):
            h, w = a.shape
            grid = (math.ceil(w / 32), math.ceil(h / 8))
            if with_f:
                kernel[grid, (32, 8)](out, a, f, h, w)
            else:
                kernel[grid, (32, 8)](out, a, h, w)

        return launch

    def launch_in(out, a, f):
        h, w = a.shape
        o = GPU_TILE - 2 * R
        tiled_in[(math.ceil(w / o), math.ceil(h / o)), (GPU_TILE, GPU_TILE)](out, a, h, w)

    def launch_cached(out, a, f):
        h, w = a.shape
        cached[(math.ceil(w / GPU_TILE), math.ceil(h / GPU_TILE)), (GPU_TILE, GPU_TILE)](out, a, h, w)

    return {
        "ch07_conv2d_basic": flat(conv2d_basic, True),
        "ch07_conv2d_const": flat(conv2d_const, False),
        "ch07_conv2d_tiled_in": launch_in,
        "ch07_conv2d_tiled_cached": launch_cached,
        "ch07_conv2d_register": register_launcher(GPU_ROWS, GPU_BLOCK),
        "ch07_conv2d_batched": register_launcher(GPU_ROWS, GPU_BLOCK, GPU_BATCH),
    }


def register_launcher(rows, block, batch=None):
    """launch(out, a, f) for the register-window kernel: `rows` outputs per thread, `block` threads;
    with `batch`, the batched kernel issuing that many rows' loads together."""
    if batch is None:
        kernel = specialize(conv2d_register, ROWS=rows)
    else:
        kernel = specialize(conv2d_register_batched, ROWS=rows, BATCH=batch)
    bx, by = block

    def launch(out, a, f):
        h, w = a.shape
        kernel[(math.ceil(w / bx), math.ceil(h / (by * rows))), block](out, a, h, w)

    return launch


TUNE_CHECK_SHAPE = (517, 1031)  # every candidate of the search is validated on an image this size
# the register kernel's knobs, searched on the GPU at hand: outputs per thread x block shape
REGISTER_GRID = {
    f"ROWS {rows}, block {bx}x{by}": (rows, (bx, by))
    for rows in (4, 8, 16, 32)
    for bx, by in ((32, 8), (32, 4), (64, 4))
}
# the batched kernel adds the loads in flight per thread
BATCHED_GRID = {
    f"ROWS {rows}, BATCH {batch}, block {bx}x{by}": (rows, (bx, by), batch)
    for rows in (16, 32, 64)
    for batch in (4, 8, 16)
    for bx, by in ((32, 8), (32, 4), (32, 2))
    if batch <= rows
}
TUNED = {"ch07_conv2d_register": REGISTER_GRID, "ch07_conv2d_batched": BATCHED_GRID}


def validate_variants(shapes=((1000, 1333), (45, 37)), seed=1):
    rng = np.random.default_rng(seed)
    d_f = cuda.to_device(FILTER)
    for name, launch in variants().items():
        for h, w in shapes:
            a = rng.standard_normal((h, w)).astype(np.float32)
            d_out = cuda.device_array((h, w), np.float32)
            launch(d_out, cuda.to_device(a), d_f)
            timing.validate(
                f"{name} ({h}x{w})", d_out.copy_to_host(), conv2d(a, FILTER), rtol=1e-4, atol=1e-4
            )


def benchmark(scale: float = 1.0):
    """The six kernels on a 256 MiB image (at scale 1), bytes = image read once + written once."""
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    validate_variants()
    # every candidate of the search validated before any is timed
    small = np.random.default_rng(3).standard_normal(TUNE_CHECK_SHAPE).astype(np.float32)
    want = conv2d(small, FILTER)
    d_small, d_f = cuda.to_device(small), cuda.to_device(FILTER)
    d_out = cuda.device_array(small.shape, np.float32)
    launchers = {cfg: register_launcher(*cfg) for grid in TUNED.values() for cfg in grid.values()}
    for name, grid in TUNED.items():
        for label, cfg in grid.items():
            launchers[cfg](d_out, d_small, d_f)
            timing.validate(f"{name} ({label})", d_out.copy_to_host(), want, rtol=1e-4, atol=1e-4)
    h = max(64, int(8192 * math.sqrt(scale)))
    w = h + 96
    a = cuda.to_device(np.random.default_rng(2).standard_normal((h, w)).astype(np.float32))
    f = cuda.to_device(FILTER)
    out = cuda.device_array((h, w), np.float32)
    rows = [
        timing.Measurement(
            name, timing.time_gpu(lambda launch=launch: launch(out, a, f)), bytes=2 * h * w * 4
        )
        for name, launch in variants().items()
        if name not in TUNED
    ]

    def measure(cfg):
        launch = launchers[cfg]
        return timing.time_gpu(lambda: launch(out, a, f))

    for name, grid in TUNED.items():
        choice, seconds = tuning.tuned_time(name, grid, measure)
        rows.append(timing.Measurement(name, seconds, bytes=2 * h * w * 4, config=choice.label))
    rows.append(timing.copy_ceiling(h * w * 4))
    launchers[choice.config](out, a, f)
    ours = out.copy_to_host()  # validated kernel's answer: the peer must agree with it
    peer = timing.library_peer(
        "2-D convolution",
        [
            timing.via("cupy", "cupyx.scipy.ndimage.correlate", _peer_cupy_correlate, a, f),
            timing.via("torch", "torch conv2d", _peer_torch_conv2d, a, f),
        ],
        bytes=2 * h * w * 4,
        check=lambda got: timing.validate("2-D convolution peer", got, ours, rtol=1e-4, atol=1e-4),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_cupy_correlate(cp, a, f):
    """What a user would call instead: zero-padded correlation (PMPP's "convolution" flips no filter)."""
    from cupyx.scipy import ndimage

    return ndimage.correlate(a, f, mode="constant", cval=0.0)


def _peer_torch_conv2d(torch, a, f):
    """PyTorch's conv2d is a correlation too; padding R = zero ghost cells around the image."""
    torch.backends.cudnn.allow_tf32 = False  # FP32 like the kernels (cuDNN defaults to TF32)
    return torch.nn.functional.conv2d(a[None, None], f[None, None], padding=R)[0, 0]


GOAL = {"ceiling": "copy", "fraction": 0.8, "best": "ch07_conv2d_batched"}
