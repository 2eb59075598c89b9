"""Mutants of puzzles/pmpp/ch05_memory_tiling/tiled.py."""

from numba import cuda, float32

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import BarrierDivergence, DataRace, OutOfBounds
from mutants.common import M, over
from puzzles.pmpp import ch03_grids as ch03
from puzzles.pmpp import ch05_memory_tiling as ch05

TILE = ch05.TILE


@cuda.jit
def tiled_no_edge_check(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = float32(0)
    for t in range((inner + TILE - 1) // TILE):
        m_tile[ty, tx] = m[row, t * TILE + tx]
        n_tile[ty, tx] = n[t * TILE + ty, col]
        cuda.syncthreads()
        for kk in range(TILE):
            acc += m_tile[ty, kk] * n_tile[kk, tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        p[row, col] = acc


@cuda.jit
def tiled_one_barrier(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = float32(0)
    for t in range((inner + TILE - 1) // TILE):
        k = t * TILE + tx
        m_tile[ty, tx] = m[row, k] if row < rows and k < inner else 0
        k = t * TILE + ty
        n_tile[ty, tx] = n[k, col] if k < inner and col < cols else 0
        cuda.syncthreads()
        for kk in range(TILE):
            acc += m_tile[ty, kk] * n_tile[kk, tx]
    if row < rows and col < cols:
        p[row, col] = acc


@cuda.jit
def tiled_barrier_in_branch(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    if row < rows and col < cols:
        acc = float32(0)
        for t in range((inner + TILE - 1) // TILE):
            k = t * TILE + tx
            m_tile[ty, tx] = m[row, k] if k < inner else 0
            k = t * TILE + ty
            n_tile[ty, tx] = n[k, col] if k < inner else 0
            cuda.syncthreads()
            for kk in range(TILE):
                acc += m_tile[ty, kk] * n_tile[kk, tx]
            cuda.syncthreads()
        p[row, col] = acc


@cuda.jit
def dynamic_overlapping_tiles(p, m, n, rows, inner, cols, tile):
    smem = cuda.shared.array(0, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * tile + ty
    col = cuda.blockIdx.x * tile + tx
    acc = float32(0)
    for t in range((inner + tile - 1) // tile):
        k = t * tile + tx
        smem[ty * tile + tx] = m[row, k] if row < rows and k < inner else 0
        k = t * tile + ty
        smem[tile + ty * tile + tx] = n[k, col] if k < inner and col < cols else 0  # should be tile*tile
        cuda.syncthreads()
        for kk in range(tile):
            acc += smem[ty * tile + kk] * smem[tile + kk * tile + tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        p[row, col] = acc


@cuda.jit
def dynamic_ignores_launch(p, m, n, rows, inner, cols, tile):
    m_tile = cuda.shared.array((8, 8), float32)  # fixed size, whatever the launch provides
    n_tile = cuda.shared.array((8, 8), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * tile + ty
    col = cuda.blockIdx.x * tile + tx
    acc = float32(0)
    for t in range((inner + tile - 1) // tile):
        k = t * tile + tx
        m_tile[ty, tx] = m[row, k] if row < rows and k < inner else 0
        k = t * tile + ty
        n_tile[ty, tx] = n[k, col] if k < inner and col < cols else 0
        cuda.syncthreads()
        for kk in range(tile):
            acc += m_tile[ty, kk] * n_tile[kk, tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        p[row, col] = acc


@cuda.jit
def dynamic_two_declarations(p, m, n, rows, inner, cols, tile):
    # two dynamic declarations: on a GPU both start at the same address, so n's tile overwrites m's
    m_s = cuda.shared.array(0, float32)
    n_s = cuda.shared.array(0, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * tile + ty
    col = cuda.blockIdx.x * tile + tx
    acc = float32(0)
    for t in range((inner + tile - 1) // tile):
        k = t * tile + tx
        m_s[ty * tile + tx] = m[row, k] if row < rows and k < inner else 0
        k = t * tile + ty
        n_s[ty * tile + tx] = n[k, col] if k < inner and col < cols else 0
        cuda.syncthreads()
        for kk in range(tile):
            acc += m_s[ty * tile + kk] * n_s[kk * tile + tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        p[row, col] = acc


@cuda.jit
def tiled_four_tiles(p, m, n, rows, inner, cols):
    # the tile count of the largest inner size once tested (30): fine up to 32
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = float32(0)
    for t in range(4):
        k = t * TILE + tx
        m_tile[ty, tx] = m[row, k] if row < rows and k < inner else 0
        k = t * TILE + ty
        n_tile[ty, tx] = n[k, col] if k < inner and col < cols else 0
        cuda.syncthreads()
        for kk in range(TILE):
            acc += m_tile[ty, kk] * n_tile[kk, tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        p[row, col] = acc


MUTANTS = {
    "ch05_matmul_tiled": [
        ("tiled_four_tiles", tiled_four_tiles, WrongAnswer, None),
        ("matmul_kernel", ch03.matmul_kernel, OverBudget, "global_reads"),
        ("tiled_no_edge_check", tiled_no_edge_check, KernelDiagnosed, OutOfBounds),
        ("tiled_one_barrier", tiled_one_barrier, KernelDiagnosed, DataRace),
        ("tiled_barrier_in_branch", tiled_barrier_in_branch, KernelDiagnosed, BarrierDivergence),
        # `acc = 0.0` makes the product float64: a speed chapter rejects it (float64="reject")
        M(ch05.tiled_matmul_kernel, "tiled_float64_acc", over("float64"), ("acc = float32(0)", "acc = 0.0")),
    ],
    "ch05_matmul_dynamic": [
        ("dynamic_overlapping_tiles", dynamic_overlapping_tiles, KernelDiagnosed, DataRace),
        ("dynamic_ignores_launch", dynamic_ignores_launch, OverBudget, "shared_bytes"),
        ("dynamic_two_declarations", dynamic_two_declarations, WrongAnswer, None),
    ],
}
VARIANTS: dict = {}
SEEDS = {
    "ch05_matmul_tiled": (11,),
    "ch05_matmul_dynamic": (11,),
}
