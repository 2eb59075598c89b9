"""Matrix transpose, the smallest kernel where the order in which a warp touches memory is the
whole story.

Rungs:
- ch06_transpose_naive (worked): reads `a` down its columns (strided), writes `out` along rows.
- ch06_transpose_tiled (exercise): corner turning: a tile goes through padded shared memory so that
  both the global read and the global write run along rows (coalesced, conflict-free).
- ch06_transpose_coarse (exercise): the same, each thread moving TILE // ROWS elements.

The puzzles use the tile a GPU wants (TILE = 32, one warp per tile row), because the lesson is
about what one warp of 32 lanes asks of memory: at smaller tiles a warp spans several tile rows and
neither the sector count nor the bank arithmetic of the prose holds.
"""

import math

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.rules import max_bank_conflicts

CHAPTER = "pmpp-06"


TILE = 32  # a block handles a TILE x TILE tile: one warp per tile row
TILE_P = TILE + 1  # shared row length: one spare column so a tile column spans all 32 banks
ROWS = 8  # coarsened kernel: blocks of TILE x ROWS threads, TILE // ROWS elements each


# ---------------------------------------------------------------------------- spec


def spec(a, h, w):
    return a.T.copy()


# ---------------------------------------------------------------------------- cases


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


# -------------------------------------------------------------------------- the rules every shared rung keeps


# A warp of the tiled kernels reads one tile row: 32 floats, 4 sectors, 5 when the row starts
# mid-sector. The naive kernel's column reads need a sector per lane (an eighth at full warps, under
# 40% on every case mix), so 45% tells them apart.
COALESCED = 0.45
CONFLICT_FREE = (max_bank_conflicts(1),)
_SHARED = Budget(global_reads=1, global_writes=1, shared_bytes=TILE * TILE_P * 4, min_coalescing=COALESCED)


def _geometry(block):
    return f"""

`a` is `h x w` (float32), `out` is `w x h`: `out[j, i] = a[i, j]`. Blocks are {block} threads
(`TILE = {TILE}`); block `(bx, by)` owns rows `bx*TILE ...` of `a`, which are columns
`bx*TILE ...` of `out`, and columns `by*TILE ...` of `a`. `h` and `w` are not multiples of the tile."""


# ---------------------------------------------------------------------------- naive: strided reads


@cuda.jit
def transpose_naive(out, a, h, w):
    # out is (w, h). Thread x walks along a row of out, so neighbouring threads
    # write neighbouring addresses but read a[x, y], a[x + 1, y]: w floats apart.
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    if x < h and y < w:
        out[y, x] = a[x, y]


NAIVE = """\
The simplest transpose: each thread copies one element. `threadIdx.x` walks along a row of `out`,
so the writes of a warp are neighbours in memory, but the matching reads walk down a **column** of
`a`, `w` floats apart: each lane of the warp reads from its own memory segment.""" + _geometry(
    "`TILE x TILE`"
)


CH06_TRANSPOSE_NAIVE = Puzzle(
    name="ch06_transpose_naive",
    title="Transpose, naive (strided reads)",
    statement=NAIVE,
    outputs=("out",),
    spec=spec,
    cases=cases_tile,
    reference=transpose_naive,
    budget=Budget(global_reads=1, global_writes=1),
    chapter=CHAPTER,
)


# ---------------------------------------------------------------------------- corner turning


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


CH06_TRANSPOSE_TILED = Puzzle(
    name="ch06_transpose_tiled",
    title="Transpose, corner-turned through shared memory",
    statement=TILED,
    outputs=("out",),
    spec=spec,
    cases=cases_tile,
    reference=transpose_tiled,
    budget=_SHARED,
    rules=CONFLICT_FREE,
    chapter=CHAPTER,
    hints=(
        "Load with `tile[ty, tx] = a[row0 + ty, col0 + tx]`: threadIdx.x moves along a row of a.",
        "Every thread must have stored its element before any thread reads the tile.",
        "Thread (tx, ty) writes out[col0 + ty, row0 + tx]; which tile element belongs there?",
        "Guard the load and the store separately: their bounds are h and w swapped.",
    ),
)


# ---------------------------------------------------------------------------- corner turning, coarsened


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


CH06_TRANSPOSE_COARSE = Puzzle(
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
    chapter=CHAPTER,
    hints=(
        "Take the tiled kernel and wrap the load and the store in `for j in range(0, TILE, ROWS)`.",
        "Thread row ty handles tile rows ty + j.",
        "One barrier between the two loops is enough.",
    ),
)


PUZZLES = [CH06_TRANSPOSE_NAIVE, CH06_TRANSPOSE_TILED, CH06_TRANSPOSE_COARSE]
