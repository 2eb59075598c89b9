"""Tiled convolution: each pixel of the image loaded from global memory once per block.

Rungs:
- ch07_conv2d_tiled_in (exercise): blocks sized to the input tile, halo included; each thread loads one
  pixel into shared memory, the inner threads compute.
- ch07_conv2d_tiled_cached (exercise): blocks sized to the output tile; the tile comes from shared
  memory, the halo from global memory (the caches catch it).
"""

import math

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import _COMMON, CHAPTER, FILTER, FW, R, _image, _shapes, spec_const

IN_TILE = 8  # tiled_in: blocks of IN_TILE x IN_TILE threads (32 on the GPU)
OUT_TILE = IN_TILE - 2 * R
TILE = 8  # tiled_cached: blocks of TILE x TILE threads, one output each (32 on the GPU)


# ---------------------------------------------------------------------------- cases


def cases_tiled_in(rng):
    return [
        Case(
            grid=(math.ceil(w / OUT_TILE), math.ceil(h / OUT_TILE)),
            block=(IN_TILE, IN_TILE),
            args={"out": np.empty((h, w), np.float32), "a": _image(rng, h, w), "h": h, "w": w},
        )
        for h, w in _shapes(rng, OUT_TILE, OUT_TILE)
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


# ---------------------------------------------------------------------------- input tile with halo


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


CH07_CONV2D_TILED_IN = Puzzle(
    name="ch07_conv2d_tiled_in",
    title="2-D convolution, tiled (input tile with halo)",
    statement=TILED_IN,
    outputs=("out",),
    spec=spec_const,
    cases=cases_tiled_in,
    reference=conv2d_tiled_in,
    budget=Budget(global_reads=1, global_writes=1, shared_reads=FW * FW, shared_bytes=IN_TILE * IN_TILE * 4),
    chapter=CHAPTER,
    hints=(
        "Thread (tx, ty) loads a[row, col] into tile[ty, tx]; row and col already include the -R.",
        "Pixels outside the image still need a value in the tile: the ghost value 0.",
        "Only threads with R <= tx < IN_TILE - R (same for ty) own an output, and only if it is "
        "inside the image.",
        "Output (row, col) reads tile[ty - R + i, tx - R + j].",
    ),
)


# --------------------------------------------------------------------------- output tile, halo from the cache


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


CH07_CONV2D_TILED_CACHED = Puzzle(
    name="ch07_conv2d_tiled_cached",
    title="2-D convolution, tiled (output tile, halo from cache)",
    statement=TILED_CACHED,
    outputs=("out",),
    spec=spec_const,
    cases=cases_tiled_cached,
    reference=conv2d_tiled_cached,
    budget=Budget(global_reads=FW * FW - (R + 1) ** 2 + 1, global_writes=1, shared_bytes=TILE * TILE * 4),
    chapter=CHAPTER,
    hints=(
        "Load your own pixel into tile[ty, tx] (if it is in the image), then wait for the block.",
        "For each tap: outside the image contributes 0; inside the tile comes from `tile`; "
        "anything else from `a`.",
        "Tile coordinates of tap (i, j) are (ty - R + i, tx - R + j).",
    ),
)


PUZZLES = [CH07_CONV2D_TILED_IN, CH07_CONV2D_TILED_CACHED]
