"""Puzzles II.11, Transpose (padding): a 32x32 shared tile whose columns hit 32 different banks."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from helpers.rules import max_bank_conflicts

__all__ = ["TILE", "ROWS", "PADDED"]  # the notebook's constants
TILE = 32
ROWS = 8  # block = (TILE, ROWS): each thread moves TILE // ROWS = 4 elements
PADDED = TILE + 1  # Numba wants shared shapes as plain constants: not `TILE + 1` in the kernel
CHAPTER = "puzzles-2"


@cuda.jit
def transpose_pad_kernel(out, a, rows, cols):
    ### BEGIN SOLUTION
    # one spare column: element [r, c] sits in word 33r + c, so a column's 32 words hit 32 banks
    tile = cuda.shared.array((TILE, PADDED), numba.float32)
    ### END SOLUTION
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    for k in range(0, TILE, ROWS):
        r = cuda.blockIdx.y * TILE + ty + k
        if r < rows and c < cols:
            tile[ty + k, tx] = a[r, c]
    cuda.syncthreads()
    # the tile lands at the mirrored place: read down a tile column, write along a row of out
    c2 = cuda.blockIdx.y * TILE + tx
    for k in range(0, TILE, ROWS):
        r2 = cuda.blockIdx.x * TILE + ty + k
        if r2 < cols and c2 < rows:
            out[r2, c2] = tile[tx, ty + k]


def spec(a, rows, cols):
    return a.T.copy()


def cases(rng):
    out = []
    for rows, cols in (
        (32, 32),
        (1, 1),
        (33, 31),
        (int(rng.integers(40, 70)), int(rng.integers(20, 40))),
        (int(rng.integers(2, 31)), int(rng.integers(33, 64))),
    ):
        a = rng.uniform(-10, 10, (rows, cols)).astype(np.float32)
        out.append(
            Case(
                grid=((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE),
                block=(TILE, ROWS),
                args={"out": np.empty((cols, rows), np.float32), "a": a, "rows": rows, "cols": cols},
            )
        )
    return out


STATEMENT = f"""\
Transpose `a` (`rows x cols`) into `out` (`cols x rows`), through a `{TILE} x {TILE}` tile in
shared memory, so that both the global read and the global write go along rows (coalesced). The
kernel is written; only the tile's declaration is missing.

Shared memory is split into 32 **banks**, 4 bytes wide: word `w` lives in bank `w % 32`. A warp's
access is served in one pass when its 32 lanes touch 32 different banks (or the same word); when
`k` lanes need different words of one bank, it takes `k` passes. Blocks are `(TILE, ROWS)` =
`({TILE}, 8)` threads and each thread moves 4 elements, `ROWS` rows apart; a warp is one row of the
block (`threadIdx.y` fixed, `threadIdx.x = 0..31`). Writing `tile[ty + k, tx]` walks along a tile
row: fine. Reading `tile[tx, ty + k]` walks down a column: with a `{TILE} x {TILE}` tile, those words are 32
apart, **all in one bank**, 32 passes. Declare the tile so that a column is conflict-free too
(`PADDED = TILE + 1` is defined for you: Numba needs a shared array's shape as plain constants).

Rule: every warp's shared access is conflict-free (1 pass); global accesses at least 50%
coalesced. Budget per thread: 4 global reads, 4 global writes."""

PUZZLES = [
    Puzzle(
        name="transpose_pad",
        title="Puzzle II.11: Transpose without bank conflicts (padding)",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=transpose_pad_kernel,
        hints=(
            "Element [r, c] of a 2-D shared array with W columns is word r * W + c. Which bank is that?",
            "With W = 32, every r * 32 + c has the same bank for a fixed c. Try another W.",
            "One unused column per row is enough, and costs 128 bytes.",
        ),
        budget=Budget(global_reads=TILE // ROWS, global_writes=TILE // ROWS, min_coalescing=0.5),
        rules=(max_bank_conflicts(1),),
        chapter=CHAPTER,
    )
]
