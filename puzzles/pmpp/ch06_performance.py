"""PMPP chapter 6, performance: coalescing, corner turning, thread coarsening.

The ladder is a matrix transpose, the smallest kernel where the order in which
a warp touches memory is the whole story:

    ch06_transpose_naive    reads `a` down its columns (strided), writes `out` along rows
    ch06_transpose_tiled    corner turning: a tile goes through shared memory so that
                            both the global read and the global write run along rows
    ch06_transpose_coarse   the same, each thread moving TILE // ROWS elements

The puzzles use the tile a GPU wants (TILE = 32, one warp per tile row), because the lesson is
about what one warp of 32 lanes asks of memory: at smaller tiles a warp spans several tile rows and
neither the sector count nor the bank arithmetic of the prose holds. `benchmark()` times the three on
a GPU with the same sizes.
"""

import math

import numpy as np
from numba import cuda, float32
from numba import uint64 as u

from helpers import timing, tuning
from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.rules import max_bank_conflicts
from helpers.timing import specialize

__all__ = ["TILE", "TILE_P", "ROWS"]

TILE = 32  # a block handles a TILE x TILE tile: one warp per tile row
TILE_P = TILE + 1  # shared row length: one spare column so a tile column spans all 32 banks
ROWS = 8  # coarsened kernel: blocks of TILE x ROWS threads, TILE // ROWS elements each


@cuda.jit
def transpose_naive(out, a, h, w):
    # out is (w, h). Thread x walks along a row of out, so neighbouring threads
    # write neighbouring addresses but read a[x, y], a[x + 1, y]: w floats apart.
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    if x < h and y < w:
        out[y, x] = a[x, y]


@cuda.jit
def transpose_tiled(out, a, h, w):
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE  # this block's rows of a = columns of out
    col0 = cuda.blockIdx.y * TILE  # this block's columns of a = rows of out
    ### BEGIN SOLUTION
    # Load: threadIdx.x runs along a row of a (coalesced).
    if row0 + ty < h and col0 + tx < w:
        tile[ty, tx] = a[row0 + ty, col0 + tx]
    cuda.syncthreads()
    # Store: threadIdx.x runs along a row of out (coalesced); the turn happens in shared memory.
    if col0 + ty < w and row0 + tx < h:
        out[col0 + ty, row0 + tx] = tile[tx, ty]
    ### END SOLUTION


@cuda.jit
def transpose_coarse(out, a, h, w):
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    col0 = cuda.blockIdx.y * TILE
    ### BEGIN SOLUTION
    for j in range(0, TILE, ROWS):
        if row0 + ty + j < h and col0 + tx < w:
            tile[ty + j, tx] = a[row0 + ty + j, col0 + tx]
    cuda.syncthreads()
    for j in range(0, TILE, ROWS):
        if col0 + ty + j < w and row0 + tx < h:
            out[col0 + ty + j, row0 + tx] = tile[tx, ty + j]
    ### END SOLUTION


@cuda.jit
def transpose_batched(out, a, h, w):
    # transpose_coarse with every load of a thread issued before any is used: loads go to registers
    # first (clamped into the matrix, so no branch separates them), then to the tile. A thread then
    # waits one memory latency per tile, not one per element. Indices are cast to unsigned (u is
    # uint64): Numba wraps a signed index that could be negative (a[-1] is the last element, as in
    # Python) at a cost of a few integer instructions per access, and this kernel is short of those.
    tile = cuda.shared.array((TILE, TILE_P), float32)
    v = cuda.local.array(TILE, float32)  # only TILE // ROWS slots are used: registers after unrolling
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    col0 = cuda.blockIdx.y * TILE
    c = min(col0 + tx, w - 1)
    for j in range(0, TILE, ROWS):
        v[j // ROWS] = a[u(min(row0 + ty + j, h - 1)), u(c)]
    for j in range(0, TILE, ROWS):
        tile[u(ty + j), u(tx)] = v[j // ROWS]
    cuda.syncthreads()
    for j in range(0, TILE, ROWS):
        if col0 + ty + j < w and row0 + tx < h:
            out[u(col0 + ty + j), u(row0 + tx)] = tile[u(tx), u(ty + j)]


def spec(a, h, w):
    return a.T.copy()


# (h, w): never square; one partial tile, tile - 1, tile + 1, several tiles; case 0 has full tiles
SHAPES = ((40, 36), (5, 3), (31, 33), (33, 70), (12, 65))


def _shapes(rng):
    """Case 0 the notebook's 40 x 36; then per seed, per axis, the edges around one tile (1, TILE-1,
    TILE, TILE+1, a few tiles) and a side longer than before (h 41-48, w 71-80); h descending against
    w ascending keeps every image small, and a square one is made one column wider."""
    hs = edge_sizes(rng, SHAPES[0][0], TILE, (41, 48))[1:]
    ws = edge_sizes(rng, SHAPES[0][1], TILE, (71, 80))[1:]
    k = max(len(hs), len(ws))
    hs = sorted(hs + [TILE // 2] * (k - len(hs)), reverse=True)
    hs = hs[1:] + hs[:1]  # the tallest meets the widest: at most 2 x 3 tiles, as before
    ws = sorted(ws + [TILE // 2 + 1] * (k - len(ws)))
    return [SHAPES[0], *((h, w + (h == w)) for h, w in zip(hs, ws))]


def _cases(rng, block_rows):
    out = []
    for h, w in _shapes(rng):
        a = rng.uniform(-50, 50, (h, w)).astype(np.float32)
        out.append(
            Case(
                grid=(math.ceil(h / TILE), math.ceil(w / TILE)),
                block=(TILE, block_rows),
                args={"out": np.empty((w, h), np.float32), "a": a, "h": h, "w": w},
            )
        )
    return out


def cases_tile(rng):
    return _cases(rng, TILE)


def cases_coarse(rng):
    return _cases(rng, ROWS)


def _geometry(block):
    return f"""

`a` is `h x w` (float32), `out` is `w x h`: `out[j, i] = a[i, j]`. Blocks are {block} threads
(`TILE = {TILE}`); block `(bx, by)` owns rows `bx*TILE ...` of `a`, which are columns
`bx*TILE ...` of `out`, and columns `by*TILE ...` of `a`. `h` and `w` are not multiples of the tile."""


NAIVE = """\
The simplest transpose: each thread copies one element. `threadIdx.x` walks along a row of `out`,
so the writes of a warp are neighbours in memory, but the matching reads walk down a **column** of
`a`, `w` floats apart: each lane of the warp reads from its own memory segment.""" + _geometry(
    "`TILE x TILE`"
)

TILED = (
    """\
**Corner turning.** Make *both* global accesses run along rows. The block reads its `TILE x TILE`
tile of `a` row by row (`threadIdx.x` along the columns of `a`), parks it in the shared array
`tile`, waits for the whole tile, then writes the tile's transpose to `out`, again with `threadIdx.x`
along a row, reading `tile` down a column instead. The turn happens in shared memory, where
strided access is cheap as long as the 32 lanes hit 32 different banks: `TILE_P = TILE + 1` pads
each shared row so that a column of `tile` (word `tx * TILE_P + ty`, bank `(tx + ty) % 32`) spans
all 32 banks. An unpadded `TILE x TILE` tile puts a whole column in one bank: a 32-way conflict."""
    + _geometry("`TILE x TILE`")
    + """

Budget per thread: 1 global read, 1 global write; shared memory at most `TILE * TILE_P` floats;
every shared access conflict-free (one pass per warp)."""
)

COARSE = (
    f"""\
**Thread coarsening.** Same corner turn, but the block is only `TILE x ROWS` threads
(`ROWS = {ROWS}`) and each thread moves `TILE // ROWS` elements: rows `ty, ty + ROWS, ty + 2*ROWS...`
of the tile. Fewer threads do the index arithmetic and barrier once for several elements; a warp
still touches whole rows, so every access stays coalesced."""
    + _geometry("`TILE x ROWS`")
    + """

Budget per thread: `TILE // ROWS` global reads and writes; shared accesses conflict-free."""
)

# A warp of the tiled kernels reads one tile row: 32 floats, 4 sectors, 5 when the row starts
# mid-sector. The naive kernel's column reads need a sector per lane (an eighth at full warps, under
# 40% on every case mix), so 45% tells them apart.
COALESCED = 0.45
CONFLICT_FREE = (max_bank_conflicts(1),)
_SHARED = Budget(global_reads=1, global_writes=1, shared_bytes=TILE * TILE_P * 4, min_coalescing=COALESCED)

PUZZLES = [
    Puzzle(
        name="ch06_transpose_naive",
        title="Transpose, naive (strided reads)",
        statement=NAIVE,
        outputs=("out",),
        spec=spec,
        cases=cases_tile,
        reference=transpose_naive,
        budget=Budget(global_reads=1, global_writes=1),
        chapter="pmpp-06",
    ),
    Puzzle(
        name="ch06_transpose_tiled",
        title="Transpose, corner-turned through shared memory",
        statement=TILED,
        outputs=("out",),
        spec=spec,
        cases=cases_tile,
        reference=transpose_tiled,
        budget=_SHARED,
        rules=CONFLICT_FREE,
        chapter="pmpp-06",
        hints=(
            "Load with `tile[ty, tx] = a[row0 + ty, col0 + tx]`: threadIdx.x moves along a row of a.",
            "Every thread must have stored its element before any thread reads the tile.",
            "Thread (tx, ty) writes out[col0 + ty, row0 + tx]; which tile element belongs there?",
            "Guard the load and the store separately: their bounds are h and w swapped.",
        ),
    ),
    Puzzle(
        name="ch06_transpose_coarse",
        title="Transpose, corner-turned and coarsened",
        statement=COARSE,
        outputs=("out",),
        spec=spec,
        cases=cases_coarse,
        reference=transpose_coarse,
        budget=Budget(
            global_reads=TILE // ROWS,
            global_writes=TILE // ROWS,
            shared_bytes=TILE * TILE_P * 4,
            min_coalescing=COALESCED,
        ),
        rules=CONFLICT_FREE,
        chapter="pmpp-06",
        hints=(
            "Take the tiled kernel and wrap the load and the store in `for j in range(0, TILE, ROWS)`.",
            "Thread row ty handles tile rows ty + j.",
            "One barrier between the two loops is enough.",
        ),
    ),
]


# ---------------------------------------------------------------------------- GPU benchmark

GPU_TILE, GPU_ROWS = 32, 8


def variants(tile=GPU_TILE, rows=GPU_ROWS):
    """name -> launch(out, a): the kernels with GPU tile sizes (one thread per element only where a
    tile x tile block fits)."""
    c = {"TILE": tile, "TILE_P": tile + 1, "ROWS": rows}
    naive, tiled, coarse, batched = (
        specialize(k, **c) for k in (transpose_naive, transpose_tiled, transpose_coarse, transpose_batched)
    )

    def launcher(kernel, block):
        def launch(out, a):
            h, w = a.shape
            kernel[(math.ceil(h / tile), math.ceil(w / tile)), block](out, a, h, w)

        return launch

    one_per_thread = {}
    if tile * tile <= 1024:  # a block of tile x tile threads must fit the 1024-thread limit
        one_per_thread = {
            "ch06_transpose_naive": launcher(naive, (tile, tile)),
            "ch06_transpose_tiled": launcher(tiled, (tile, tile)),
        }
    return {
        **one_per_thread,
        "ch06_transpose_coarse": launcher(coarse, (tile, rows)),
        "ch06_transpose_batched": launcher(batched, (tile, rows)),
    }


def validate_variants(shapes=((1000, 777), (33, 65)), configs=((32, 8), (16, 4)), seed=1):
    """Run every variant on fresh random data for several tile sizes; raise naming the first wrong one."""
    rng = np.random.default_rng(seed)
    for tile, rows in configs:
        for name, launch in variants(tile, rows).items():
            for h, w in shapes:
                a = rng.standard_normal((h, w)).astype(np.float32)
                d_out = cuda.device_array((w, h), np.float32)
                launch(d_out, cuda.to_device(a))
                timing.validate(f"{name} (TILE={tile}, ROWS={rows}, {h}x{w})", d_out.copy_to_host(), a.T)


TUNED = ("ch06_transpose_coarse", "ch06_transpose_batched")
TUNE_GRID = {f"TILE {t}, ROWS {r}": (t, r) for t, r in ((32, 4), (32, 8), (32, 16), (64, 8), (64, 16))}


def benchmark(scale: float = 1.0):
    """Naive vs corner-turned vs coarsened transpose of a 256 MiB matrix (at scale 1), plus the copy
    ceiling measured in the same run."""
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    validate_variants(configs=(*TUNE_GRID.values(), (16, 4)))
    h = max(64, int(8192 * math.sqrt(scale)))
    w = h + 64  # not square, still a multiple of the tile
    host = np.random.default_rng(2).standard_normal((h, w)).astype(np.float32)
    a = cuda.to_device(host)
    out = cuda.device_array((w, h), np.float32)
    rows = [
        timing.Measurement(name, timing.time_gpu(lambda launch=launch: launch(out, a)), bytes=2 * h * w * 4)
        for name, launch in variants().items()
        if name not in TUNED
    ]
    # the coarsened kernels' tile and rows per thread, tuned on this GPU (cached per device)
    for name in TUNED:

        def measure(cfg, name=name):
            launch = variants(*cfg)[name]
            return timing.time_gpu(lambda: launch(out, a))

        choice, seconds = tuning.tuned_time(name, TUNE_GRID, measure)
        rows.append(timing.Measurement(name, seconds, bytes=2 * h * w * 4, config=choice.label))
    rows.append(timing.copy_ceiling(h * w * 4))
    peer = timing.library_peer(
        "transpose",
        [
            timing.via("cupy", "cupy transpose copy", _peer_transpose, a),
            timing.via("torch", "torch transpose copy", _peer_transpose, a),
        ],
        bytes=2 * h * w * 4,
        check=lambda got: timing.validate("transpose peer", got, host.T, rtol=0, atol=0),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_transpose(xp, a):
    """What a user would call instead: a contiguous copy of the transposed view."""
    if hasattr(xp, "ascontiguousarray"):  # CuPy, NumPy
        return xp.ascontiguousarray(a.T)
    return a.t().contiguous()  # PyTorch


GOAL = {"ceiling": "copy", "fraction": 0.85, "best": "ch06_transpose_batched"}
