"""Mutants of puzzles/pmpp/ch05_memory_tiling/coarsening.py."""

from numba import cuda, float32

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import BarrierDivergence, DataRace, OutOfBounds, UninitializedRead
from puzzles.pmpp import ch05_memory_tiling as ch05

TILE = ch05.TILE


COARSE = ch05.COARSE


RM = ch05.RM


@cuda.jit
def coarse_one_barrier(p, m, n, rows, inner, cols):
    # no barrier after the products: the next n tile overwrites one a neighbour still reads
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col0 = cuda.blockIdx.x * TILE * COARSE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(COARSE, float32)
    for c in range(COARSE):
        acc[c] = 0
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
    for c in range(COARSE):
        col = col0 + c * TILE
        if row < rows and col < cols:
            p[row, col] = acc[c]


@cuda.jit
def coarse_no_edge_check(p, m, n, rows, inner, cols):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col0 = cuda.blockIdx.x * TILE * COARSE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(COARSE, float32)
    for c in range(COARSE):
        acc[c] = 0
    for t in range((inner + TILE - 1) // TILE):
        m_tile[ty, tx] = m[row, t * TILE + tx]
        for c in range(COARSE):
            n_tile[ty, tx] = n[t * TILE + ty, col0 + c * TILE]
            cuda.syncthreads()
            for kk in range(TILE):
                acc[c] += m_tile[ty, kk] * n_tile[kk, tx]
            cuda.syncthreads()
    for c in range(COARSE):
        col = col0 + c * TILE
        if row < rows and col < cols:
            p[row, col] = acc[c]


@cuda.jit
def coarse_reloads_m(p, m, n, rows, inner, cols):
    # loads the m tile again for every piece: right answer, COARSE times the m traffic
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col0 = cuda.blockIdx.x * TILE * COARSE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(COARSE, float32)
    for c in range(COARSE):
        acc[c] = 0
    for t in range((inner + TILE - 1) // TILE):
        for c in range(COARSE):
            k = t * TILE + tx
            m_tile[ty, tx] = m[row, k] if row < rows and k < inner else float32(0)
            col = col0 + c * TILE
            k = t * TILE + ty
            n_tile[ty, tx] = n[k, col] if k < inner and col < cols else float32(0)
            cuda.syncthreads()
            for kk in range(TILE):
                acc[c] += m_tile[ty, kk] * n_tile[kk, tx]
            cuda.syncthreads()
    for c in range(COARSE):
        col = col0 + c * TILE
        if row < rows and col < cols:
            p[row, col] = acc[c]


@cuda.jit
def coarse_neighbour_columns(p, m, n, rows, inner, cols):
    # pieces one column apart instead of TILE apart: threads tx and tx + 1 compute the same outputs
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col0 = cuda.blockIdx.x * TILE * COARSE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(COARSE, float32)
    for c in range(COARSE):
        acc[c] = 0
    for t in range((inner + TILE - 1) // TILE):
        k = t * TILE + tx
        m_tile[ty, tx] = m[row, k] if row < rows and k < inner else float32(0)
        for c in range(COARSE):
            col = col0 + c
            k = t * TILE + ty
            n_tile[ty, tx] = n[k, col] if k < inner and col < cols else float32(0)
            cuda.syncthreads()
            for kk in range(TILE):
                acc[c] += m_tile[ty, kk] * n_tile[kk, tx]
            cuda.syncthreads()
    for c in range(COARSE):
        col = col0 + c
        if row < rows and col < cols:
            p[row, col] = acc[c]


@cuda.jit
def coarse_one_accumulator(p, m, n, rows, inner, cols):
    # one running sum for all pieces: every output gets the sum of COARSE products
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col0 = cuda.blockIdx.x * TILE * COARSE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = float32(0)
    for t in range((inner + TILE - 1) // TILE):
        k = t * TILE + tx
        m_tile[ty, tx] = m[row, k] if row < rows and k < inner else float32(0)
        for c in range(COARSE):
            col = col0 + c * TILE
            k = t * TILE + ty
            n_tile[ty, tx] = n[k, col] if k < inner and col < cols else float32(0)
            cuda.syncthreads()
            for kk in range(TILE):
                acc += m_tile[ty, kk] * n_tile[kk, tx]
            cuda.syncthreads()
    for c in range(COARSE):
        col = col0 + c * TILE
        if row < rows and col < cols:
            p[row, col] = acc


@cuda.jit
def coarse_if_else(p, m, n, rows, inner, cols):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(COARSE, float32)
    for c in range(COARSE):
        acc[c] = 0
    steps = (inner + TILE - 1) // TILE
    for t in range(steps):
        if row < rows and t * TILE + tx < inner:
            m_tile[ty, tx] = m[row, t * TILE + tx]
        else:
            m_tile[ty, tx] = 0
        for c in range(COARSE):
            col = (cuda.blockIdx.x * COARSE + c) * TILE + tx
            if t * TILE + ty < inner and col < cols:
                n_tile[ty, tx] = n[t * TILE + ty, col]
            else:
                n_tile[ty, tx] = 0
            cuda.syncthreads()
            s = float32(0)
            for kk in range(TILE):
                s += m_tile[ty, kk] * n_tile[kk, tx]
            acc[c] += s
            cuda.syncthreads()
    for c in range(COARSE):
        col = (cuda.blockIdx.x * COARSE + c) * TILE + tx
        if row < rows and col < cols:
            p[row, col] = acc[c]


@cuda.jit
def coarse_while(p, m, n, rows, inner, cols):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    base = cuda.blockIdx.x * TILE * COARSE
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(COARSE, float32)
    for c in range(COARSE):
        acc[c] = 0
    k0 = 0
    while k0 < inner:
        ok = row < rows and k0 + tx < inner
        m_tile[ty, tx] = m[row, k0 + tx] if ok else float32(0)
        c = 0
        while c < COARSE:
            col = base + c * TILE + tx
            ok = k0 + ty < inner and col < cols
            n_tile[ty, tx] = n[k0 + ty, col] if ok else float32(0)
            cuda.syncthreads()
            for kk in range(TILE):
                acc[c] += m_tile[ty, kk] * n_tile[kk, tx]
            cuda.syncthreads()
            c += 1
        k0 += TILE
    for c in range(COARSE):
        if row < rows and base + c * TILE + tx < cols:
            p[row, base + c * TILE + tx] = acc[c]


@cuda.jit
def rows_reads_n_every_time(p, m, n, rows, inner, cols):
    # right answer, but n_tile[kk, tx] is read RM times per kk: 2 * RM shared reads for RM products
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.y * TILE + ty * RM
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(RM, float32)
    for i in range(RM):
        acc[i] = 0
    for t in range((inner + TILE - 1) // TILE):
        for i in range(RM):
            r = ty * RM + i
            k = t * TILE + tx
            m_tile[r, tx] = m[row0 + i, k] if row0 + i < rows and k < inner else float32(0)
            k = t * TILE + r
            n_tile[r, tx] = n[k, col] if k < inner and col < cols else float32(0)
        cuda.syncthreads()
        for kk in range(TILE):
            for i in range(RM):
                acc[i] += m_tile[ty * RM + i, kk] * n_tile[kk, tx]
        cuda.syncthreads()
    for i in range(RM):
        if row0 + i < rows and col < cols:
            p[row0 + i, col] = acc[i]


@cuda.jit
def rows_one_barrier(p, m, n, rows, inner, cols):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.y * TILE + ty * RM
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(RM, float32)
    for i in range(RM):
        acc[i] = 0
    for t in range((inner + TILE - 1) // TILE):
        for i in range(RM):
            r = ty * RM + i
            k = t * TILE + tx
            m_tile[r, tx] = m[row0 + i, k] if row0 + i < rows and k < inner else float32(0)
            k = t * TILE + r
            n_tile[r, tx] = n[k, col] if k < inner and col < cols else float32(0)
        cuda.syncthreads()
        for kk in range(TILE):
            b = n_tile[kk, tx]
            for i in range(RM):
                acc[i] += m_tile[ty * RM + i, kk] * b
    for i in range(RM):
        if row0 + i < rows and col < cols:
            p[row0 + i, col] = acc[i]


@cuda.jit
def rows_no_edge_check(p, m, n, rows, inner, cols):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.y * TILE + ty * RM
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(RM, float32)
    for i in range(RM):
        acc[i] = 0
    for t in range((inner + TILE - 1) // TILE):
        for i in range(RM):
            r = ty * RM + i
            m_tile[r, tx] = m[row0 + i, t * TILE + tx]
            n_tile[r, tx] = n[t * TILE + r, col]
        cuda.syncthreads()
        for kk in range(TILE):
            b = n_tile[kk, tx]
            for i in range(RM):
                acc[i] += m_tile[ty * RM + i, kk] * b
        cuda.syncthreads()
    for i in range(RM):
        if row0 + i < rows and col < cols:
            p[row0 + i, col] = acc[i]


@cuda.jit
def rows_loads_one_row(p, m, n, rows, inner, cols):
    # loads one element of each tile per thread, as the tiled kernel did: most of the tile is never
    # written, and the products read it
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.y * TILE + ty * RM
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(RM, float32)
    for i in range(RM):
        acc[i] = 0
    for t in range((inner + TILE - 1) // TILE):
        k = t * TILE + tx
        m_tile[ty, tx] = m[row0, k] if row0 < rows and k < inner else float32(0)
        k = t * TILE + ty
        n_tile[ty, tx] = n[k, col] if k < inner and col < cols else float32(0)
        cuda.syncthreads()
        for kk in range(TILE):
            b = n_tile[kk, tx]
            for i in range(RM):
                acc[i] += m_tile[ty * RM + i, kk] * b
        cuda.syncthreads()
    for i in range(RM):
        if row0 + i < rows and col < cols:
            p[row0 + i, col] = acc[i]


@cuda.jit
def rows_barrier_in_branch(p, m, n, rows, inner, cols):
    # the barrier sits inside the row test: threads past the last row never reach it
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.y * TILE + ty * RM
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(RM, float32)
    for i in range(RM):
        acc[i] = 0
    for t in range((inner + TILE - 1) // TILE):
        for i in range(RM):
            r = ty * RM + i
            k = t * TILE + tx
            m_tile[r, tx] = m[row0 + i, k] if row0 + i < rows and k < inner else float32(0)
            k = t * TILE + r
            n_tile[r, tx] = n[k, col] if k < inner and col < cols else float32(0)
        if row0 < rows:
            cuda.syncthreads()
            for kk in range(TILE):
                b = n_tile[kk, tx]
                for i in range(RM):
                    acc[i] += m_tile[ty * RM + i, kk] * b
            cuda.syncthreads()
    for i in range(RM):
        if row0 + i < rows and col < cols:
            p[row0 + i, col] = acc[i]


@cuda.jit
def rows_contiguous_rows_swapped(p, m, n, rows, inner, cols):
    # multiplies by the transposed n tile: n_tile[tx, kk] instead of n_tile[kk, tx]
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.y * TILE + ty * RM
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(RM, float32)
    for i in range(RM):
        acc[i] = 0
    for t in range((inner + TILE - 1) // TILE):
        for i in range(RM):
            r = ty * RM + i
            k = t * TILE + tx
            m_tile[r, tx] = m[row0 + i, k] if row0 + i < rows and k < inner else float32(0)
            k = t * TILE + r
            n_tile[r, tx] = n[k, col] if k < inner and col < cols else float32(0)
        cuda.syncthreads()
        for kk in range(TILE):
            b = n_tile[tx, kk]
            for i in range(RM):
                acc[i] += m_tile[ty * RM + i, kk] * b
        cuda.syncthreads()
    for i in range(RM):
        if row0 + i < rows and col < cols:
            p[row0 + i, col] = acc[i]


@cuda.jit
def rows_if_else(p, m, n, rows, inner, cols):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(RM, float32)
    for i in range(RM):
        acc[i] = 0
    col = cuda.blockIdx.x * TILE + tx
    for t in range((inner + TILE - 1) // TILE):
        for i in range(RM):
            r = ty * RM + i
            row = cuda.blockIdx.y * TILE + r
            if row < rows and t * TILE + tx < inner:
                m_tile[r, tx] = m[row, t * TILE + tx]
            else:
                m_tile[r, tx] = 0
        for i in range(RM):
            r = ty * RM + i
            if t * TILE + r < inner and col < cols:
                n_tile[r, tx] = n[t * TILE + r, col]
            else:
                n_tile[r, tx] = 0
        cuda.syncthreads()
        for kk in range(TILE):
            b = n_tile[kk, tx]
            for i in range(RM):
                acc[i] += m_tile[ty * RM + i, kk] * b
        cuda.syncthreads()
    for i in range(RM):
        row = cuda.blockIdx.y * TILE + ty * RM + i
        if row < rows and col < cols:
            p[row, col] = acc[i]


@cuda.jit
def rows_m_in_registers_too(p, m, n, rows, inner, cols):
    # reads the RM m values of a step into registers first, then the n value: same RM + 1 reads
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0 = cuda.blockIdx.y * TILE + ty * RM
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = cuda.local.array(RM, float32)
    a = cuda.local.array(RM, float32)
    for i in range(RM):
        acc[i] = 0
    for k0 in range(0, inner, TILE):
        for i in range(RM):
            r = ty * RM + i
            ok = row0 + i < rows and k0 + tx < inner
            m_tile[r, tx] = m[row0 + i, k0 + tx] if ok else float32(0)
            ok = k0 + r < inner and col < cols
            n_tile[r, tx] = n[k0 + r, col] if ok else float32(0)
        cuda.syncthreads()
        for kk in range(TILE):
            for i in range(RM):
                a[i] = m_tile[ty * RM + i, kk]
            b = n_tile[kk, tx]
            for i in range(RM):
                acc[i] += a[i] * b
        cuda.syncthreads()
    for i in range(RM):
        if row0 + i < rows and col < cols:
            p[row0 + i, col] = acc[i]


MUTANTS = {
    "ch05_matmul_coarse": [
        ("tiled_matmul_kernel", ch05.tiled_matmul_kernel, WrongAnswer, None),
        ("coarse_one_barrier", coarse_one_barrier, KernelDiagnosed, DataRace),
        ("coarse_no_edge_check", coarse_no_edge_check, KernelDiagnosed, OutOfBounds),
        ("coarse_reloads_m", coarse_reloads_m, OverBudget, "global_reads"),
        ("coarse_neighbour_columns", coarse_neighbour_columns, KernelDiagnosed, DataRace),
        ("coarse_one_accumulator", coarse_one_accumulator, WrongAnswer, None),
    ],
    "ch05_matmul_rows": [
        ("rows_reads_n_every_time", rows_reads_n_every_time, OverBudget, "shared_reads"),
        ("rows_one_barrier", rows_one_barrier, KernelDiagnosed, DataRace),
        ("rows_no_edge_check", rows_no_edge_check, KernelDiagnosed, OutOfBounds),
        ("rows_loads_one_row", rows_loads_one_row, KernelDiagnosed, UninitializedRead),
        ("rows_barrier_in_branch", rows_barrier_in_branch, KernelDiagnosed, BarrierDivergence),
        ("rows_contiguous_rows_swapped", rows_contiguous_rows_swapped, WrongAnswer, None),
    ],
}
VARIANTS = {
    "ch05_matmul_coarse": [("coarse_if_else", coarse_if_else), ("coarse_while", coarse_while)],
    "ch05_matmul_rows": [
        ("rows_if_else", rows_if_else),
        ("rows_m_in_registers_too", rows_m_in_registers_too),
    ],
}
SEEDS = {
    "ch05_matmul_coarse": (0, 1, 2),
    "ch05_matmul_rows": (0, 1, 2),
}
