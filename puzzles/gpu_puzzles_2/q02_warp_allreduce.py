"""Puzzles II.2, Warp all-reduce: every lane gets the row's sum by an XOR butterfly."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["FULL_MASK", "ROWS"]  # the notebook's constants
FULL_MASK = 0xFFFFFFFF
ROWS = 4  # rows per block: one warp per row, block = (32, ROWS)
CHAPTER = "puzzles-2"


@cuda.jit
def warp_allreduce_kernel(out, a, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    ### BEGIN SOLUTION
    if r < rows:  # a whole warp is in or out, so the shuffles below stay warp-wide
        x = a[r, lane] if lane < cols else numba.float32(0)
        total = x
        # XOR partners: after 16, 8, 4, 2, 1 every lane holds the same total
        mask = 16
        while mask > 0:
            total += cuda.shfl_xor_sync(FULL_MASK, total, mask)
            mask //= 2
        if lane < cols:
            out[r, lane] = x - total / numba.float32(cols)
    ### END SOLUTION


def spec(a, rows, cols):
    a64 = a.astype(np.float64)
    return (a64 - a64.mean(axis=1, keepdims=True)).astype(np.float32)


def cases(rng):
    out = []
    for rows, cols in (
        (4, 32),
        (1, 1),
        (7, 31),
        (int(rng.integers(5, 12)), int(rng.integers(2, 30))),
        (int(rng.integers(2, 4)), 32),
    ):
        a = rng.uniform(-10, 10, (rows, cols)).astype(np.float32)
        out.append(
            Case(
                grid=(rows + ROWS - 1) // ROWS,
                block=(32, ROWS),
                args={"out": np.empty((rows, cols), np.float32), "a": a, "rows": rows, "cols": cols},
            )
        )
    return out


STATEMENT = f"""\
Centre every row of a `rows x cols` matrix (`cols <= 32`): `out[r, c] = a[r, c] - mean(a[r, :])`.

Each block is `(32, ROWS)` threads with `ROWS = {ROWS}`: `threadIdx.y` picks the row, and the 32
threads of that row, `threadIdx.x = 0..31`, are exactly one warp (a warp is 32 consecutive threads,
counting x first). This time **every** lane needs the row's sum, not just lane 0.
`cuda.shfl_xor_sync(mask, x, m)` returns `x` from lane `lane ^ m`: with `m = 16, 8, 4, 2, 1` every
lane trades with a partner, and after five steps all 32 lanes hold the same total.

Budget per thread: 1 global read, 1 global write; 0 bytes of shared memory."""

PUZZLES = [
    Puzzle(
        name="warp_allreduce",
        title="Puzzle II.2: Warp all-reduce",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=warp_allreduce_kernel,
        hints=(
            "With shfl_down only lane 0 ends with the total; XOR pairs each lane with a partner in both "
            "directions, so both of them end with the same partial sum.",
            "Keep the loaded value in one variable and the running total in another: you need both "
            "at the end.",
            "Rows past the end are whole warps, so a row guard around everything is fine; a column guard "
            "around a shuffle is not. Divide by `cols`, not 32.",
        ),
        budget=Budget(global_reads=1, global_writes=1, shared_bytes=0),
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    )
]
