"""Thread coarsening of the tiled kernel: more outputs per thread, fewer loads per output.

Rungs:
- ch05_matmul_coarse (exercise): one block computes COARSE tiles of p side by side, loading each m tile
  once for all of them: (1 + COARSE) global reads per tile step instead of 2 * COARSE.
- ch05_matmul_rows (exercise): register tiling in one dimension: RM outputs of one column per thread,
  each n_tile value read once into a register: RM + 1 shared reads for RM multiply-adds.
"""

import math

from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import CHAPTER, SHAPES, TILE, _operands, _tiles, spec

COARSE = 2  # coarsened tiled kernel: each thread computes COARSE outputs, TILE columns apart
RM = 4  # 1-D register tiling: each thread computes RM outputs of one column (TILE must divide by RM)


# ---------------------------------------------------------------------------- cases


def cases_coarse(rng):
    return [
        Case(
            grid=(math.ceil(c / (TILE * COARSE)), math.ceil(r / TILE)),
            block=(TILE, TILE),
            args=_operands(rng, r, k, c),
        )
        for r, k, c in SHAPES
    ]


def cases_rows(rng):
    return [
        Case(
            grid=(math.ceil(c / TILE), math.ceil(r / TILE)),
            block=(TILE, TILE // RM),
            args=_operands(rng, r, k, c),
        )
        for r, k, c in SHAPES
    ]


# ---------------------------------------------------------------------------- COARSE tiles per block


@cuda.jit
def coarse_matmul_kernel(p, m, n, rows, inner, cols):
    # A block computes a TILE x (COARSE * TILE) piece of p: the m tile is loaded once per step and
    # reused against COARSE n tiles, one after another.
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col0 = cuda.blockIdx.x * TILE * COARSE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(COARSE, float32)
    for c in range(COARSE):
        acc[c] = 0
    ### BEGIN SOLUTION
    for t in range((inner + TILE - 1) // TILE):
        k = t * TILE + tx
        m_tile[ty, tx] = m[row, k] if row < rows and k < inner else float32(0)
        for c in range(COARSE):
            col = col0 + c * TILE
            k = t * TILE + ty
            n_tile[ty, tx] = n[k, col] if k < inner and col < cols else float32(0)
            cuda.syncthreads()
            for kk in range(TILE):
                acc[c] += m_tile[ty, kk] * n_tile[kk, tx]
            # the next n tile overwrites this one: everyone must be done reading it
            cuda.syncthreads()
    ### END SOLUTION
    for c in range(COARSE):
        col = col0 + c * TILE
        if row < rows and col < cols:
            p[row, col] = acc[c]


CH05_MATMUL_COARSE = Puzzle(
    name="ch05_matmul_coarse",
    title="PMPP 5/6: Thread coarsening of the tiled kernel",
    statement=f"""\
The tiled kernel loads an `m` tile and an `n` tile for every `TILE x TILE` piece of `p`. Two blocks
side by side load the **same** `m` tile. Coarsening merges them: one block of `TILE x TILE` threads
computes `COARSE` pieces side by side (`COARSE = {COARSE}`), so thread `(tx, ty)` computes the
outputs of row `row` at columns `col0 + c * TILE`, `c = 0 ... COARSE - 1`, kept in `acc[c]`. Per
step of `k`, the block loads its `m` tile once, then for each `c` loads the `n` tile of piece `c`
into the one `n_tile`, waits, accumulates, and waits again before the next `n` tile overwrites it.
The grid has `ceil(cols / (TILE * COARSE))` blocks along x. Budget per thread: `(1 + COARSE)`
global reads per tile step (the tiled kernel run `COARSE` times would read `2 * COARSE`),
`COARSE` writes, two `TILE x TILE` shared tiles.""",
    outputs=("p",),
    spec=spec,
    cases=cases_coarse,
    reference=coarse_matmul_kernel,
    float64="reject",  # the lesson is speed: a float64 accumulator is up to 64 times slower
    hints=(
        "Keep the tiled kernel's loop over t; inside it, load m's tile, then loop over c.",
        "Piece c's column is col0 + c * TILE; its n tile comes from n[t*TILE + ty, that column].",
        "Each c needs its own pair of barriers: after loading n's tile, and after using it.",
    ),
    budget=Budget(
        global_reads=lambda c: (1 + COARSE) * _tiles(c, TILE),
        global_writes=COARSE,
        shared_bytes=2 * TILE * TILE * 4,
    ),
    rtol=1e-4,
    atol=1e-4,
    chapter=CHAPTER,
)


# -------------------------------------------------------------------------- RM outputs of a column per thread


@cuda.jit
def rows_matmul_kernel(p, m, n, rows, inner, cols):
    # Blocks of TILE x (TILE // RM) threads; thread (tx, ty) computes rows ty * RM ... ty * RM + RM - 1
    # of the block's TILE x TILE piece of p, in column tx.
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.y * TILE + ty * RM
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(RM, float32)
    for i in range(RM):
        acc[i] = 0
    ### BEGIN SOLUTION
    for t in range((inner + TILE - 1) // TILE):
        for i in range(RM):  # each thread loads RM elements of each tile
            r = ty * RM + i
            k = t * TILE + tx
            m_tile[r, tx] = m[row0 + i, k] if row0 + i < rows and k < inner else float32(0)
            k = t * TILE + r
            n_tile[r, tx] = n[k, col] if k < inner and col < cols else float32(0)
        cuda.syncthreads()
        for kk in range(TILE):
            b = n_tile[kk, tx]  # one shared read, reused by RM multiply-adds from a register
            for i in range(RM):
                acc[i] += m_tile[ty * RM + i, kk] * b
        cuda.syncthreads()
    ### END SOLUTION
    for i in range(RM):
        if row0 + i < rows and col < cols:
            p[row0 + i, col] = acc[i]


CH05_MATMUL_ROWS = Puzzle(
    name="ch05_matmul_rows",
    title="PMPP 5: Register tiling in one dimension",
    statement=f"""\
The tiled kernel's inner loop reads two shared values per multiply-add. Give each thread `RM`
outputs of one column (`RM = {RM}`): blocks are `TILE x (TILE // RM)` threads, thread `(tx, ty)`
computes rows `ty * RM ... ty * RM + RM - 1` of the block's `TILE x TILE` piece of `p`, column `tx`,
in `acc[0 ... RM - 1]`. Each thread loads `RM` elements of each tile (tile rows `ty * RM + i`). In
the product loop, read `n_tile[kk, tx]` **once** into a register and use it for all `RM` outputs:
`RM + 1` shared reads feed `RM` multiply-adds, instead of `2 * RM`. Budget per thread: `2 * RM`
global reads per tile step, `RM` writes, and at most `(RM + 1) * TILE` shared reads per tile step.""",
    outputs=("p",),
    spec=spec,
    cases=cases_rows,
    reference=rows_matmul_kernel,
    float64="reject",  # the lesson is speed: a float64 accumulator is up to 64 times slower
    hints=(
        "Loading: for i in range(RM), tile row r = ty*RM + i: m_tile[r, tx] = m[row0 + i, t*TILE + tx].",
        "n_tile[r, tx] = n[t*TILE + r, col]; zeros past the edges, as before.",
        "Products: for kk: b = n_tile[kk, tx]; then for i: acc[i] += m_tile[ty*RM + i, kk] * b.",
    ),
    budget=Budget(
        global_reads=lambda c: 2 * RM * _tiles(c, TILE),
        global_writes=RM,
        shared_reads=lambda c: (RM + 1) * TILE * _tiles(c, TILE),
        shared_bytes=2 * TILE * TILE * 4,
    ),
    rtol=1e-4,
    atol=1e-4,
    chapter=CHAPTER,
)


PUZZLES = [CH05_MATMUL_COARSE, CH05_MATMUL_ROWS]
