"""The machine's exercise: SAXPY with a grid-stride loop, the vector op that `measure` times."""

import math

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from helpers.rules import grid_stride_coalescing

__all__ = ["TPB"]  # the notebook's constants
CHAPTER = "machine"
TPB = 32  # the exercise's block size (the simulator's); the timings use 256
# a grid-stride loop moves whole lines (~100%); a contiguous chunk of k elements per thread puts
# neighbouring lanes k elements apart (case 0 always gives k >= 3: 33% or less)
COALESCED = 0.5


@cuda.jit
def saxpy_kernel(out, x, y, alpha, size):
    ### BEGIN SOLUTION
    # grid-stride: any grid covers any size, so the grid can be sized for the GPU, not the data
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    for i in range(start, size, step):
        out[i] = alpha * x[i] + y[i]
    ### END SOLUTION


def saxpy_spec(x, y, alpha, size):
    return (np.float32(alpha) * x + y).astype(np.float32)


def saxpy_cases(rng):
    out = []
    for n, grid in (
        (int(rng.integers(200, 400)), 3),
        (1, 1),
        (TPB, 1),
        (TPB + 1, 1),
        (int(rng.integers(100, 200)), 2),
        (int(rng.integers(2, TPB)), 2),
    ):
        x = rng.uniform(-10, 10, n).astype(np.float32)
        y = rng.uniform(-10, 10, n).astype(np.float32)
        alpha = np.float32(rng.uniform(-3, 3))
        out.append(
            Case(
                grid=grid,
                block=TPB,
                args={"out": np.empty(n, np.float32), "x": x, "y": y, "alpha": alpha, "size": n},
            )
        )
    return out


def _per_thread(case) -> int:
    return math.ceil(case.args["size"] / (int(np.prod(case.grid)) * int(np.prod(case.block))))


STATEMENT = f"""\
`out[i] = alpha * x[i] + y[i]` (SAXPY, the vector op of the timings below) for any `size`, with
whatever grid the caller launches: here a few blocks of `TPB = {TPB}` threads, far fewer threads
than elements. Each thread starts at its global index `cuda.grid(1)` and steps by the number of
threads in the grid, `cuda.gridsize(1)`: a **grid-stride loop**. The grid can then be sized for
the GPU (a few blocks per SM) instead of for the data, which is how the timings below launch it.
On every trip round the loop neighbouring threads touch neighbouring elements, so a warp's accesses
stay coalesced; giving each thread a contiguous chunk of its own is rejected: every line's global
accesses must be at least {COALESCED:.0%} coalesced.
Budget per thread: 2 global reads and 1 global write per element it owns."""

PUZZLES = [
    Puzzle(
        name="machine_saxpy",
        title="Exercise: SAXPY with a grid-stride loop",
        statement=STATEMENT,
        outputs=("out",),
        spec=saxpy_spec,
        cases=saxpy_cases,
        reference=saxpy_kernel,
        hints=(
            "Thread k of the grid handles elements k, k + T, k + 2T, ... where T is the number of threads.",
            "cuda.grid(1) is the first; cuda.gridsize(1) is T.",
            "A `for i in range(first, size, T)` loop stops by itself at the end: no separate guard needed.",
        ),
        budget=Budget(global_reads=lambda c: 2 * _per_thread(c), global_writes=_per_thread),
        rules=(grid_stride_coalescing(COALESCED),),
        rtol=1e-5,
        atol=1e-5,
        chapter=CHAPTER,
    )
]
