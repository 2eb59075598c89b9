"""Puzzle 5, Broadcast: a column plus a row gives a matrix."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle


@cuda.jit
def broadcast_kernel(out, a, b, size):
    i = cuda.threadIdx.y  # row
    j = cuda.threadIdx.x  # column
    ### BEGIN SOLUTION
    if i < size and j < size:
        out[i, j] = a[i, 0] + b[0, j]
    ### END SOLUTION


def spec(a, b, size):
    return a + b


def cases(rng):
    # one block, more threads than needed on each axis (not the same number on both); sizes per seed
    out = []
    for n in (2, 1, int(rng.integers(3, 6)), int(rng.integers(6, 9)), int(rng.integers(9, 13))):
        extra = rng.integers(1, 4, 2)
        if extra[0] == extra[1]:
            extra[0] += 1
        block = (3, 3) if n == 2 else (n + int(extra[0]), n + int(extra[1]))
        a = rng.uniform(-10, 10, (n, 1)).astype(np.float32)
        b = rng.uniform(-10, 10, (1, n)).astype(np.float32)
        out.append(
            Case(grid=1, block=block, args={"out": np.empty((n, n), np.float32), "a": a, "b": b, "size": n})
        )
    return out


STATEMENT = """\
`a` is a **column** of shape `(size, 1)` and `b` a **row** of shape `(1, size)`. Compute the
`size` x `size` matrix `out[i, j] = a[i, 0] + b[0, j]` (NumPy writes this `a + b` and calls it
broadcasting).

One 2-D block, more threads than needed on each axis; as before `i = cuda.threadIdx.y` is the row
and `j = cuda.threadIdx.x` the column, and thread `(j, i)` owns `out[i, j]`.
Budget per thread: 2 global reads, 1 global write."""

PUZZLES = [
    Puzzle(
        name="broadcast",
        title="Puzzle 5: Broadcast",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=broadcast_kernel,
        hints=(
            "Neither input is a matrix: one has a single column, the other a single row.",
            "Which of `i` and `j` selects an element of the column `a`? Which one for the row `b`?",
            "Both inputs are 2-D arrays, so both need two indices; one of them is always 0.",
        ),
        budget=Budget(global_reads=2, global_writes=1),
        chapter="puzzles",
    )
]
