"""PMPP chapter 5, memory architecture and data locality: tiled matrix multiplication. (Just over 500
lines: one chapter, one module, as its notebook.)

Ladder: naive (chapter 3) -> shared-memory tiles with boundary checks (exercise) -> the tile size
chosen at launch with dynamic shared memory (exercise) -> register tiling, each thread computing a
TM x TN block of outputs from a BM x BN block tile (worked) -> the same with the next tiles prefetched
into registers and 16-byte shared reads (worked; the SGEMM that reaches 40% of cuBLAS).

The puzzles use small tiles so the simulator stays quick; `benchmark` recompiles the same kernels
with the tile sizes a real GPU wants (`specialize`).
"""

import math

import numpy as np
from numba import cuda, float32, uint32

from helpers import timing, tuning
from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.timing import specialize
from puzzles.pmpp.ch03_grids import matmul_kernel, spec_matmul

__all__ = [
    "TILE",
    "COARSE",
    "RM",
    "BM",
    "BN",
    "BK",
    "TM",
    "TN",
    "TX",
    "TY",
    "NT",
    "A_LOADS",
    "B_LOADS",
    "PAD",
    "BM_PAD",
    "M_TILE",
    "N_TILE",
]

CHAPTER = "pmpp-05"
TILE = 8
COARSE = 2  # coarsened tiled kernel: each thread computes COARSE outputs, TILE columns apart
RM = 4  # 1-D register tiling: each thread computes RM outputs of one column (TILE must divide by RM)

# register tiling: a block computes a BM x BN tile of p; each thread a TM x TN block of it, from
# rows ty, ty + TY, ... and columns tx, tx + TX, ... (strided, so a warp's shared reads never
# collide in one bank); k advances BK at a time
BM, BN, BK, TM, TN = 32, 32, 8, 4, 4


def regtile_constants(bm, bn, bk, tm, tn):
    """The module constants the register-tiled kernel needs, derived from its five tile sizes."""
    tx, ty = bn // tn, bm // tm
    nt = tx * ty
    assert bm * bk % nt == 0 and bk * bn % nt == 0, "each thread must load whole shares of the tiles"
    return {
        "BM": bm,
        "BN": bn,
        "BK": bk,
        "TM": tm,
        "TN": tn,
        "TX": tx,
        "TY": ty,
        "NT": nt,
        "A_LOADS": bm * bk // nt,
        "B_LOADS": bk * bn // nt,
        "PAD": 4,
        "BM_PAD": bm + 4,
        "M_TILE": bk * (bm + 4),
        "N_TILE": bk * bn,
    }


TX, TY = BN // TN, BM // TM  # threads per block along x (columns) and y (rows)
NT = TX * TY
A_LOADS, B_LOADS = BM * BK // NT, BK * BN // NT  # tile elements each thread loads per k step
PAD = 4
BM_PAD = BM + PAD  # shared-array shapes must be plain constants, not expressions
M_TILE, N_TILE = BK * BM_PAD, BK * BN


@cuda.jit
def tiled_matmul_kernel(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = float32(0)
    ### BEGIN SOLUTION
    for t in range((inner + TILE - 1) // TILE):
        # each thread brings in one element of each tile; zeros stand in past the edges
        k = t * TILE + tx
        if row < rows and k < inner:
            m_tile[ty, tx] = m[row, k]
        else:
            m_tile[ty, tx] = 0
        k = t * TILE + ty
        if k < inner and col < cols:
            n_tile[ty, tx] = n[k, col]
        else:
            n_tile[ty, tx] = 0
        cuda.syncthreads()
        for kk in range(TILE):
            acc += m_tile[ty, kk] * n_tile[kk, tx]
        # nobody may overwrite the tiles while a neighbour is still reading them
        cuda.syncthreads()
    ### END SOLUTION
    if row < rows and col < cols:
        p[row, col] = acc


@cuda.jit
def dynamic_tiled_matmul_kernel(p, m, n, rows, inner, cols, tile):
    # tile == blockDim.x == blockDim.y; the launch gives 2 * tile * tile * 4 bytes of shared memory
    smem = cuda.shared.array(0, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * tile + ty
    col = cuda.blockIdx.x * tile + tx
    acc = float32(0)
    ### BEGIN SOLUTION
    n_base = tile * tile  # the n tile sits right after the m tile
    for t in range((inner + tile - 1) // tile):
        k = t * tile + tx
        if row < rows and k < inner:
            smem[ty * tile + tx] = m[row, k]
        else:
            smem[ty * tile + tx] = 0
        k = t * tile + ty
        if k < inner and col < cols:
            smem[n_base + ty * tile + tx] = n[k, col]
        else:
            smem[n_base + ty * tile + tx] = 0
        cuda.syncthreads()
        for kk in range(tile):
            acc += smem[ty * tile + kk] * smem[n_base + kk * tile + tx]
        cuda.syncthreads()
    ### END SOLUTION
    if row < rows and col < cols:
        p[row, col] = acc


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


@cuda.jit
def regtile_matmul_kernel(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TX + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    # Flat shared tiles, k-major: element (kk, r) of m's tile is m_tile[kk * BM_PAD + r] (stored
    # transposed so the compute loop reads it like n's), element (kk, c) of n's is n_tile[kk * BN + c].
    # The stores turn the tile (a warp's 32 lanes store BK values of k for 32 / BK rows), so lane
    # (r, kk) writes word kk * BM_PAD + r, in bank (kk * PAD + r) % 32 since BM_PAD = BM + PAD and
    # BM is a multiple of 32. With PAD = 4 and BK = 8 (here and in the benchmark) those are 32
    # different banks; without the padding, every lane with the same r would share one bank.
    m_tile = cuda.shared.array(M_TILE, float32)
    n_tile = cuda.shared.array(N_TILE, float32)
    acc = cuda.local.array((TM, TN), float32)
    m_reg = cuda.local.array(TM, float32)
    n_reg = cuda.local.array(TN, float32)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0
    for k0 in range(0, inner, BK):
        for s in range(A_LOADS):
            e = t + s * NT
            r = e // BK
            kk = e % BK
            inside = row0 + r < rows and k0 + kk < inner
            m_tile[kk * BM_PAD + r] = m[row0 + r, k0 + kk] if inside else float32(0)
        for s in range(B_LOADS):
            e = t + s * NT
            kk = e // BN
            c = e % BN
            inside = k0 + kk < inner and col0 + c < cols
            n_tile[kk * BN + c] = n[k0 + kk, col0 + c] if inside else float32(0)
        cuda.syncthreads()
        for kk in range(BK):
            # One base per k step plus constant offsets: cheap addresses in the hot loop. Unsigned,
            # because Numba adds a negative-index wraparound test to every signed index.
            mb = uint32(kk * BM_PAD + ty)
            nb = uint32(kk * BN + tx)
            for i in range(TM):
                m_reg[i] = m_tile[mb + uint32(i * TY)]
            for j in range(TN):
                n_reg[j] = n_tile[nb + uint32(j * TX)]
            # TM + TN shared reads feed TM * TN multiply-adds
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += m_reg[i] * n_reg[j]
        cuda.syncthreads()
    for i in range(TM):
        r = row0 + ty + i * TY
        for j in range(TN):
            c = col0 + tx + j * TX
            if r < rows and c < cols:
                p[r, c] = acc[i, j]


@cuda.jit
def prefetch_matmul_kernel(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TX + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    # 16-byte aligned, so four neighbouring floats can come in one 128-bit shared load
    m_tile = cuda.shared.array(M_TILE, float32, alignment=16)
    n_tile = cuda.shared.array(N_TILE, float32, alignment=16)
    acc = cuda.local.array((TM, TN), float32)
    m_reg = cuda.local.array(TM, float32)
    n_reg = cuda.local.array(TN, float32)
    m_next = cuda.local.array(A_LOADS, float32)
    n_next = cuda.local.array(B_LOADS, float32)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0
    for s in range(A_LOADS):
        e = t + s * NT
        r = e // BK
        kk = e % BK
        m_next[s] = m[row0 + r, kk] if row0 + r < rows and kk < inner else float32(0)
    for s in range(B_LOADS):
        e = t + s * NT
        kk = e // BN
        c = e % BN
        n_next[s] = n[kk, col0 + c] if kk < inner and col0 + c < cols else float32(0)
    for k0 in range(0, inner, BK):
        for s in range(A_LOADS):
            e = t + s * NT
            m_tile[(e % BK) * BM_PAD + e // BK] = m_next[s]
        for s in range(B_LOADS):
            n_tile[t + s * NT] = n_next[s]
        cuda.syncthreads()
        # issue the global loads of the next step now; they arrive while the products below run
        k1 = k0 + BK
        for s in range(A_LOADS):
            e = t + s * NT
            r = e // BK
            kk = k1 + e % BK
            m_next[s] = m[row0 + r, kk] if row0 + r < rows and kk < inner else float32(0)
        for s in range(B_LOADS):
            e = t + s * NT
            kk = k1 + e // BN
            c = e % BN
            n_next[s] = n[kk, col0 + c] if kk < inner and col0 + c < cols else float32(0)
        for kk in range(BK):
            # rows ty*4 .. ty*4+3, then the same 4 rows TY*4 further on (columns alike): runs of 4
            # contiguous, aligned floats, which the compiler turns into one ld.shared.v4 each
            mb = uint32(kk * BM_PAD + ty * 4)
            nb = uint32(kk * BN + tx * 4)
            for i in range(TM):
                m_reg[i] = m_tile[mb + uint32((i // 4) * (TY * 4) + i % 4)]
            for j in range(TN):
                n_reg[j] = n_tile[nb + uint32((j // 4) * (TX * 4) + j % 4)]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += m_reg[i] * n_reg[j]
        cuda.syncthreads()
    for i in range(TM):
        r = row0 + ty * 4 + (i // 4) * (TY * 4) + i % 4
        for j in range(TN):
            c = col0 + tx * 4 + (j // 4) * (TX * 4) + j % 4
            if r < rows and c < cols:
                p[r, c] = acc[i, j]


# ---------------------------------------------------------------------------- cases

SHAPES = ((9, 21, 13), (4, 17, 3), (20, 5, 11), (1, 30, 10), (17, 12, 10))  # rows, inner, cols


def _operands(rng, rows, inner, cols):
    m = rng.normal(0, 1, (rows, inner)).astype(np.float32)
    n = rng.uniform(-2, 2, (inner, cols)).astype(np.float32)
    return {
        "p": np.empty((rows, cols), np.float32),
        "m": m,
        "n": n,
        "rows": rows,
        "inner": inner,
        "cols": cols,
    }


def _shapes(rng) -> list[tuple[int, int, int]]:
    """SHAPES[0] first (the one pictures show), then shapes drawn per seed: the inner size at the
    tile's edges (1, TILE-1, TILE, TILE+1), a few tiles, and up to 6 tiles, so a fixed tile count
    fails; rows and columns from 1 to 20, one of them sometimes a single row or column."""
    sub = rng.spawn(1)[0]  # its own stream: the operands drawn from `rng` stay what they were
    out = [SHAPES[0]]
    for k in edge_sizes(rng, SHAPES[0][1], TILE, (5 * TILE + 1, 6 * TILE))[1:]:
        r, c = (int(v) for v in sub.integers(1, 21, 2))
        out.append((r, k, c))
    one = int(sub.integers(1, len(out)))
    out[one] = (1, out[one][1], int(sub.integers(2, 21)))
    return out


def cases_tiled(rng):
    return [
        Case(
            grid=(math.ceil(c / TILE), math.ceil(r / TILE)), block=(TILE, TILE), args=_operands(rng, r, k, c)
        )
        for r, k, c in _shapes(rng)
    ]


def cases_dynamic(rng):
    out = []
    for (r, k, c), tile in zip(_shapes(rng), (4, 8, 4, 8, 2, 4, 8)):
        args = _operands(rng, r, k, c)
        args["tile"] = tile
        out.append(
            Case(
                grid=(math.ceil(c / tile), math.ceil(r / tile)),
                block=(tile, tile),
                args=args,
                shared_bytes=2 * tile * tile * 4,
            )
        )
    return out


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


def cases_regtile(rng):
    # two block tiles in each direction somewhere, ragged edges everywhere
    return [
        Case(grid=(math.ceil(c / BN), math.ceil(r / BM)), block=(TX, TY), args=_operands(rng, r, k, c))
        for r, k, c in ((37, 9, 41), (5, 9, 3), (40, 6, 17), (32, 7, 32), (10, 11, 70))
    ]


def spec(m, n, rows, inner, cols, tile=None):
    return spec_matmul(m, n, rows, inner, cols)


def _tiles(case, width):
    return math.ceil(case.args["inner"] / width)


PUZZLES = [
    Puzzle(
        name="ch05_matmul_tiled",
        title="PMPP 5: Tiled matrix multiplication in shared memory",
        statement=f"""\
`p = m @ n` again (`m` is `rows x inner`, `n` is `inner x cols`, none of them a multiple of the tile),
with blocks of `TILE x TILE` threads (`TILE = {TILE}`). The naive kernel reads `2 * inner` values from
global memory per thread; here each thread may read only **2 per tile step**: the block walks along
`inner` one tile at a time, every thread copies one element of `m`'s tile and one of `n`'s into
shared memory, the block waits (`cuda.syncthreads()`), every thread accumulates `TILE` products from
shared memory, and the block waits again before the tiles are overwritten. Where a tile hangs over
the edge of a matrix, store 0 instead of reading. Budget per thread: `2 * ceil(inner / TILE)` global
reads, 1 write, `2 * TILE * TILE * 4` bytes of shared memory per block.""",
        outputs=("p",),
        spec=spec,
        cases=cases_tiled,
        reference=tiled_matmul_kernel,
        hints=(
            "Loop `t` over `ceil(inner / TILE)` tile steps.",
            "Thread (tx, ty) loads m[row, t*TILE + tx] and n[t*TILE + ty, col], or 0 off the edge.",
            "Two barriers per step: after the loads, and after the products.",
        ),
        budget=Budget(
            global_reads=lambda c: 2 * _tiles(c, TILE), global_writes=1, shared_bytes=2 * TILE * TILE * 4
        ),
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch05_matmul_dynamic",
        title="PMPP 5: The tile size chosen at launch (dynamic shared memory)",
        statement="""\
`cuda.shared.array((TILE, TILE), float32)` fixes the tile size when the kernel is compiled. To pick it
at launch instead (from the device's shared memory size, say), declare `cuda.shared.array(0,
float32)`: a 1-D array whose size is the 4th launch parameter, in bytes,
`kernel[grid, block, 0, nbytes](...)`. Every such declaration in a kernel starts at the same
address, so both tiles live in one array: `m`'s tile in the first `tile * tile` floats (row-major,
`[ty * tile + tx]`), `n`'s right after it. Same algorithm as before, with the scalar `tile` in
place of `TILE`. Budget: `2 * ceil(inner / tile)` global reads per thread and exactly the
`2 * tile * tile * 4` bytes the launch provides.""",
        outputs=("p",),
        spec=spec,
        cases=cases_dynamic,
        reference=dynamic_tiled_matmul_kernel,
        hints=(
            "m's tile element (ty, kk) is smem[ty * tile + kk].",
            "n's tile element (kk, tx) is smem[tile * tile + kk * tile + tx].",
        ),
        budget=Budget(
            global_reads=lambda c: 2 * _tiles(c, c.args["tile"]),
            global_writes=1,
            shared_bytes=lambda c: c.shared_bytes,
        ),
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    ),
    Puzzle(
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
    ),
    Puzzle(
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
    ),
    Puzzle(
        name="ch05_matmul_regtile",
        title="PMPP 5: Register tiling (thread coarsening)",
        statement=f"""\
Each thread computes a `TM x TN` block of `p` (here `{TM} x {TN}`; `{BM} x {BN}` per block of
`{TX} x {TY}` threads) held in registers. Per step of `k` it reads `TM` values of `m`'s tile and
`TN` of `n`'s from shared memory and does `TM * TN` multiply-adds with them: `TM * TN / (TM + TN)`
multiply-adds per shared read instead of 1/2, and each global load of a block tile now feeds
`TM` (or `TN`) times more arithmetic. The loads of a block tile are spread over all its threads, and
each thread's outputs are strided (`ty + i * TY`, `tx + j * TX`) so the lanes of a warp read
neighbouring shared words. The benchmark compiles this kernel with `BM = BN = 128, BK = 8,
TM = TN = 8`.""",
        outputs=("p",),
        spec=spec,
        cases=cases_regtile,
        reference=regtile_matmul_kernel,
        budget=Budget(
            global_reads=lambda c: (A_LOADS + B_LOADS) * _tiles(c, BK),
            global_writes=TM * TN,
            shared_bytes=(M_TILE + N_TILE) * 4,
        ),
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch05_matmul_prefetch",
        title="PMPP 5: Register tiling with prefetch and 16-byte shared reads",
        statement=f"""\
The register-tiled kernel again, with two changes that matter on a real GPU. **Prefetch**: right
after the barrier, each thread issues the global loads of the *next* `k` step into registers
(`m_next`, `n_next`), then does this step's products; the loads arrive while the multiply-adds run,
and are stored to shared memory at the top of the next step. **Runs of 4**: each thread's rows are
`ty*4 .. ty*4+3` and the same four `TY*4` further on (columns alike), so its reads of a tile row are
4 contiguous, 16-byte aligned floats (`cuda.shared.array(..., alignment=16)`), which the compiler
turns into one 128-bit `ld.shared.v4` instead of four loads. Same global reads and shared memory as
before. The benchmark compiles it with `BM = BN = 128, BK = 8, TM = TN = 8` and at most 128
registers per thread (two blocks per SM). `TM` and `TN` must be multiples of 4 (here `{TM} x {TN}`).""",
        outputs=("p",),
        spec=spec,
        cases=cases_regtile,
        reference=prefetch_matmul_kernel,
        budget=Budget(
            global_reads=lambda c: (A_LOADS + B_LOADS) * _tiles(c, BK),
            global_writes=TM * TN,
            shared_bytes=(M_TILE + N_TILE) * 4,
        ),
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    ),
]

BEST = "prefetched 128x128, 8x8/thread, v4 shared reads"
GOAL = {"ceiling": "sgemm", "fraction": 0.7, "best": BEST}


# ---------------------------------------------------------------------------- GPU only


def _launchers():
    """(name, launch(p, m, n, rows, inner, cols)) for every variant, at GPU-sized tiles."""

    def grid_for(rows, cols, bm, bn):
        return (math.ceil(cols / bn), math.ceil(rows / bm))

    def naive(p, m, n, rows, inner, cols):
        matmul_kernel[grid_for(rows, cols, 16, 16), (16, 16)](p, m, n, rows, inner, cols)

    def tiled(tile):
        kernel = specialize(tiled_matmul_kernel, TILE=tile)

        def launch(p, m, n, rows, inner, cols):
            kernel[grid_for(rows, cols, tile, tile), (tile, tile)](p, m, n, rows, inner, cols)

        return launch

    def dynamic(tile):
        nbytes = 2 * tile * tile * 4

        def launch(p, m, n, rows, inner, cols):
            grid = grid_for(rows, cols, tile, tile)
            dynamic_tiled_matmul_kernel[grid, (tile, tile), 0, nbytes](p, m, n, rows, inner, cols, tile)

        return launch

    def regtile(bm, bn, bk, tm, tn, kernel=regtile_matmul_kernel, jit_options=None):
        consts = regtile_constants(bm, bn, bk, tm, tn)
        kernel = specialize(kernel, jit_options=jit_options, **consts)

        def launch(p, m, n, rows, inner, cols):
            kernel[grid_for(rows, cols, bm, bn), (consts["TX"], consts["TY"])](p, m, n, rows, inner, cols)

        return launch

    return [
        ("naive (ch. 3)", naive),
        ("tiled 16x16", tiled(16)),
        ("tiled 32x32", tiled(32)),
        ("dynamic shared, tile 32", dynamic(32)),
        ("register-tiled 64x64, 4x4/thread", regtile(64, 64, 8, 4, 4)),
        ("register-tiled 128x128, 8x8/thread", regtile(128, 128, 8, 8, 8)),
        # capped at 128 registers (150 uncapped): two blocks of 256 threads per SM instead of one
        (BEST, prefetch_launcher(128, 8, 128)),
    ]


def prefetch_launcher(bn: int, bk: int, max_registers: int | None):
    """launch(p, m, n, rows, inner, cols) for the prefetching kernel: 128 x `bn` block tiles, 8 x 8
    outputs per thread, `bk` columns of m per step, registers capped at `max_registers`."""
    consts = regtile_constants(128, bn, bk, 8, 8)
    options = {"max_registers": max_registers} if max_registers else None
    kernel = specialize(prefetch_matmul_kernel, jit_options=options, **consts)
    grid_block = (consts["TX"], consts["TY"])

    def launch(p, m, n, rows, inner, cols):
        kernel[(math.ceil(cols / bn), math.ceil(rows / 128)), grid_block](p, m, n, rows, inner, cols)

    return launch


# the prefetching kernel's knobs, searched on the GPU at hand: block tile width x k step x register cap
PREFETCH_GRID = {
    f"128x{bn}, BK {bk}, {cap or 'no'} register cap": (bn, bk, cap)
    for bn in (128, 64)
    for bk in (8, 16)
    for cap in (128, None)
}


# FLOP per byte of global loads each variant's algorithm issues: 2 FLOPs per multiply-add; a
# bm x bn block tile loads bm + bn floats per k for bm * bn multiply-adds (naive: 1 x 1 "tile")
def intensity(bm: int, bn: int) -> float:
    return 2 * bm * bn / (4 * (bm + bn))


INTENSITY = {
    "naive (ch. 3)": intensity(1, 1),
    "tiled 16x16": intensity(16, 16),
    "tiled 32x32": intensity(32, 32),
    "dynamic shared, tile 32": intensity(32, 32),
    "register-tiled 64x64, 4x4/thread": intensity(64, 64),
    "register-tiled 128x128, 8x8/thread": intensity(128, 128),
    BEST: intensity(128, 128),
}


def benchmark(scale: float = 1.0) -> list:
    """Validate every variant on ragged shapes, then time it on square matrices against cuBLAS."""
    rng = np.random.default_rng(6)
    launchers = _launchers()
    candidates = {cfg: prefetch_launcher(*cfg) for cfg in PREFETCH_GRID.values()}
    searched = [(f"{BEST} [{label}]", candidates[cfg]) for label, cfg in PREFETCH_GRID.items()]
    for rows, inner, cols in ((517, 389, 263), (128, 64, 256), (1, 1000, 3), (300, 7, 129)):
        m = rng.normal(0, 1, (rows, inner)).astype(np.float32)
        n = rng.normal(0, 1, (inner, cols)).astype(np.float32)
        expected = spec_matmul(m, n, rows, inner, cols)
        dm, dn = cuda.to_device(m), cuda.to_device(n)
        for name, launch in launchers + searched:
            dp = cuda.to_device(np.full((rows, cols), np.nan, np.float32))
            launch(dp, dm, dn, rows, inner, cols)
            timing.validate(
                f"{name} ({rows}x{inner} @ {inner}x{cols})",
                dp.copy_to_host(),
                expected,
                rtol=1e-3,
                atol=1e-3 * math.sqrt(inner),
            )

    size = max(256, int(4096 * scale ** (1 / 3)) // 128 * 128)
    m = rng.normal(0, 1, (size, size)).astype(np.float32)
    n = rng.normal(0, 1, (size, size)).astype(np.float32)
    dm, dn, dp = cuda.to_device(m), cuda.to_device(n), cuda.device_array((size, size), np.float32)
    rows_out = []
    choice = tuning.tune(
        "ch05 prefetched",
        PREFETCH_GRID,
        lambda cfg: timing.time_gpu(lambda: candidates[cfg](dp, dm, dn, size, size, size), reps=10),
    )
    launchers = [(name, candidates[choice.config] if name == BEST else launch) for name, launch in launchers]
    for name, launch in launchers:
        slow = name.startswith("naive")
        seconds = timing.time_gpu(
            lambda f=launch: f(dp, dm, dn, size, size, size), warmup=1 if slow else 3, reps=5 if slow else 20
        )
        rows_out.append(
            timing.Measurement(
                name,
                seconds,
                bytes=3 * 4 * size * size,
                flops=2 * size**3,
                intensity=intensity(128, choice.config[0]) if name == BEST else INTENSITY[name],
                config=choice.label if name == BEST else "",
            )
        )
    # spot-check the big result of the last (best) variant on a few rows
    got = dp.copy_to_host()
    pick = rng.choice(size, 8, replace=False)
    expected = (m[pick].astype(np.float64) @ n).astype(np.float32)
    timing.validate(f"{BEST} ({size}^3, 8 rows)", got[pick], expected, rtol=1e-3, atol=1e-3 * math.sqrt(size))
    ceiling = timing.sgemm_ceiling(size)
    if ceiling is not None:
        ceiling.peer = True  # cuBLAS through cupy.matmul: the ceiling and what a user calls instead
        rows_out.append(ceiling)
    else:  # no CuPy: PyTorch's matmul is the same cuBLAS SGEMM (a peer, not judged as the ceiling)
        peer = timing.library_peer(
            "SGEMM",
            [timing.via("torch", "torch.matmul (cuBLAS SGEMM)", _peer_matmul, dm, dn)],
            bytes=3 * 4 * size * size,
            flops=2 * size**3,
            check=lambda got: timing.validate(
                "SGEMM peer", got[pick], expected, rtol=1e-3, atol=1e-3 * math.sqrt(size)
            ),
        )
        if peer is not None:
            rows_out.append(peer)
    rows_out.append(timing.copy_ceiling())  # the bandwidth roof of the roofline chart
    return rows_out


def _peer_matmul(xp, m, n):
    """What a user would call instead: the library's matrix product (cuBLAS on a GPU)."""
    return xp.matmul(m, n)
