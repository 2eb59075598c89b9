"""The seven-point stencil with a 3-D input tile in shared memory.

Rungs:
- ch08_stencil_shared (exercise): IN_TILE^3 threads per block load a tile with its one-point halo;
  after a barrier the inner OUT_TILE^3 threads compute from the tile alone.
"""

import math

from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import (
    _COMMON,
    C0,
    CHAPTER,
    CXM,
    CXP,
    CYM,
    CYP,
    CZM,
    CZP,
    IN_TILE,
    OUT_TILE,
    _args,
    _shapes,
    spec,
)

# ---------------------------------------------------------------------------- cases


def cases_shared(rng):
    return [
        Case(
            grid=(math.ceil(nx / OUT_TILE), math.ceil(ny / OUT_TILE), math.ceil(nz / OUT_TILE)),
            block=(IN_TILE, IN_TILE, IN_TILE),
            args=_args(rng, (nz, ny, nx)),
        )
        for nz, ny, nx in _shapes(rng, OUT_TILE, OUT_TILE, OUT_TILE)
    ]


# ---------------------------------------------------------------------------- 3-D shared tile


@cuda.jit
def stencil_shared(out, a, nz, ny, nx):
    tile = cuda.shared.array((IN_TILE, IN_TILE, IN_TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tz = cuda.threadIdx.z
    # Blocks step by OUT_TILE; the outermost layer of threads loads the halo.
    x = cuda.blockIdx.x * OUT_TILE + tx - 1
    y = cuda.blockIdx.y * OUT_TILE + ty - 1
    z = cuda.blockIdx.z * OUT_TILE + tz - 1
    ### BEGIN SOLUTION
    if 0 <= z < nz and 0 <= y < ny and 0 <= x < nx:
        tile[tz, ty, tx] = a[z, y, x]
    cuda.syncthreads()
    inner = 1 <= tx <= OUT_TILE and 1 <= ty <= OUT_TILE and 1 <= tz <= OUT_TILE
    if inner and z < nz and y < ny and x < nx:
        if 1 <= z < nz - 1 and 1 <= y < ny - 1 and 1 <= x < nx - 1:
            out[z, y, x] = (
                C0 * tile[tz, ty, tx]
                + CXM * tile[tz, ty, tx - 1]
                + CXP * tile[tz, ty, tx + 1]
                + CYM * tile[tz, ty - 1, tx]
                + CYP * tile[tz, ty + 1, tx]
                + CZM * tile[tz - 1, ty, tx]
                + CZP * tile[tz + 1, ty, tx]
            )
        else:
            out[z, y, x] = tile[tz, ty, tx]
    ### END SOLUTION


SHARED = (
    f"""\
**Shared-memory tiling.** Blocks are `IN_TILE^3` threads (`IN_TILE = {IN_TILE}`) and step by
`OUT_TILE = IN_TILE - 2`: block `(bx, by, bz)` owns outputs from `x = bx*OUT_TILE` (and so on)
and its outermost layer of threads loads the one-point halo. Every thread loads at most one point
of `a` into the shared `tile` (points outside the grid are not needed by anyone); after a barrier,
the inner `OUT_TILE^3` threads compute their outputs from `tile` alone.

The catch, which the next two versions fix: with small 3-D tiles the halo is a large share of the
tile (here {IN_TILE**3 - OUT_TILE**3} of {IN_TILE**3} threads only load), and a 3-D tile
worth having needs more threads than a block may hold."""
    + _COMMON
    + """

Budget per thread: 1 global read, 7 shared reads."""
)


CH08_STENCIL_SHARED = Puzzle(
    name="ch08_stencil_shared",
    title="3-D stencil, shared-memory tiling",
    statement=SHARED,
    outputs=("out",),
    spec=spec,
    cases=cases_shared,
    reference=stencil_shared,
    budget=Budget(global_reads=1, global_writes=1, shared_reads=7, shared_bytes=IN_TILE**3 * 4),
    chapter=CHAPTER,
    hints=(
        "Load a[z, y, x] into tile[tz, ty, tx] when (z, y, x) is inside the grid.",
        "Only threads with 1 <= tx, ty, tz <= OUT_TILE write, and only points inside the grid.",
        "Neighbours are one step away in the tile too: tile[tz, ty, tx - 1] is the west one.",
        "A boundary point copies its own value, which is also in the tile.",
    ),
)


PUZZLES = [CH08_STENCIL_SHARED]
