"""Tiled matrix multiplication in shared memory: each block walks `inner` one tile at a time.

Rungs:
- ch05_matmul_tiled (exercise): TILE x TILE tiles of m and n staged in shared memory, two barriers per
  step, zeros where a tile hangs over an edge; 2 global reads per thread per tile step.
- ch05_matmul_dynamic (exercise): the same with the tile size chosen at launch: both tiles in one
  dynamic shared array of exactly the bytes the launch provides.
"""

import math

from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import CHAPTER, TILE, _operands, _shapes, _tiles, spec

# ---------------------------------------------------------------------------- cases


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


# ---------------------------------------------------------------------------- tiles of a fixed size


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


CH05_MATMUL_TILED = Puzzle(
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
    float64="reject",  # the lesson is speed: a float64 accumulator is up to 64 times slower
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
)


# ---------------------------------------------------------------------------- the tile size chosen at launch


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


CH05_MATMUL_DYNAMIC = Puzzle(
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
    float64="reject",  # the lesson is speed: a float64 accumulator is up to 64 times slower
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
)


PUZZLES = [CH05_MATMUL_TILED, CH05_MATMUL_DYNAMIC]
