"""Puzzles II.12, Transpose (swizzle): conflict-free with no spare memory, by XOR on the column."""

import numba
from numba import cuda

from helpers.puzzle import Budget, Puzzle
from helpers.rules import max_bank_conflicts
from puzzles.gpu_puzzles_2.q11_transpose_pad import ROWS, TILE, cases, spec

__all__ = ["TILE", "ROWS"]  # the notebook's constants
CHAPTER = "puzzles-2"


@cuda.jit
def transpose_swizzle_kernel(out, a, rows, cols):
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    ### BEGIN SOLUTION
    # element [y, x] of the tile is stored in column x ^ y: a permutation of each row, and a
    # column's 32 elements land in 32 different columns, so in 32 banks
    for k in range(0, TILE, ROWS):
        r = cuda.blockIdx.y * TILE + ty + k
        if r < rows and c < cols:
            tile[ty + k, tx ^ (ty + k)] = a[r, c]
    cuda.syncthreads()
    c2 = cuda.blockIdx.y * TILE + tx
    for k in range(0, TILE, ROWS):
        r2 = cuda.blockIdx.x * TILE + ty + k
        if r2 < cols and c2 < rows:
            out[r2, c2] = tile[tx, (ty + k) ^ tx]
    ### END SOLUTION


STATEMENT = f"""\
The same transpose (blocks of `(TILE, ROWS)` threads, 4 elements each), but the tile stays
`{TILE} x {TILE}`: no padding, not one spare byte
(the budget is exactly {TILE * TILE * 4} bytes). Instead, **swizzle**: store element `[y, x]` of
the tile at `tile[y, x ^ y]`. For a fixed row `y`, `x -> x ^ y` is a permutation of `0..31`, so a
row still fits in its row; reading column `x` of the tile, the lanes (`y = 0..31`) find their
elements in columns `x ^ y`, all different, so in 32 different banks. Every write and every read
must use the same mapping, or the data comes back scrambled.

Rule: every warp's shared access is conflict-free; global accesses at least 50% coalesced.
Budget per thread: 4 global reads, 4 global writes; {TILE * TILE * 4} bytes of shared memory per
block."""

PUZZLES = [
    Puzzle(
        name="transpose_swizzle",
        title="Puzzle II.12: Transpose without bank conflicts (swizzle)",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=transpose_swizzle_kernel,
        hints=(
            "Write the padded version first, with the 32 x 32 tile: then change only the tile's "
            "column indices.",
            "The write stores logical element [ty, tx]; the read wants logical element [tx, ty].",
            "Apply the XOR with the tile row you are indexing: the column index is the logical column XOR "
            "the tile row.",
        ),
        budget=Budget(
            global_reads=TILE // ROWS,
            global_writes=TILE // ROWS,
            shared_bytes=TILE * TILE * 4,
            min_coalescing=0.5,
        ),
        rules=(max_bank_conflicts(1),),
        chapter=CHAPTER,
    )
]
