"""Puzzle 4, Map 2D: a 2-D block over a square matrix."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle


@cuda.jit
def map_2d_kernel(out, a, size):
    i = cuda.threadIdx.y  # row
    j = cuda.threadIdx.x  # column
    ### BEGIN SOLUTION
    if i < size and j < size:
        out[i, j] = a[i, j] + 10
    ### END SOLUTION


def spec(a, size):
    return a + 10


def cases(rng):
    # (size, (threads in x, threads in y)): the block covers the matrix with threads to spare, and
    # not the same number along x and y; sizes per seed from 1 to 12.
    out = []
    for n in (2, 1, int(rng.integers(3, 6)), int(rng.integers(6, 9)), int(rng.integers(9, 13))):
        extra = rng.integers(1, 4, 2)
        if extra[0] == extra[1]:
            extra[1] += 1
        block = (n + int(extra[0]), n + int(extra[1]))
        if n == 2:
            block = (3, 3)  # case 0: what puzzles.show draws
        a = rng.uniform(-20, 20, (n, n)).astype(np.float32)
        out.append(Case(grid=1, block=block, args={"out": np.empty((n, n), np.float32), "a": a, "size": n}))
    return out


STATEMENT = """\
`a` is a `size` x `size` matrix; compute `out[i, j] = a[i, j] + 10`, where `i` is the **row** and `j`
the **column**.

The launch is one 2-D block, written `kernel[1, (tx, ty)]`, with at least `size` threads along each
axis (often more, and not the same number along x and y). This course follows the CUDA habit:
**x runs along columns, y along rows**, so the kernel starts with `i = cuda.threadIdx.y` (row) and
`j = cuda.threadIdx.x` (column). Thread `(j, i)` owns cell `out[i, j]`; threads outside the matrix
do nothing. Budget per thread: 1 global read, 1 global write."""

PUZZLES = [
    Puzzle(
        name="map_2d",
        title="Puzzle 4: Map 2D",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=map_2d_kernel,
        hints=(
            "It is Guards again, in two dimensions.",
            "A thread may be outside the matrix along the rows, along the columns, or both.",
            "Index 2-D arrays as `a[row, column]`, and guard both indices before touching memory.",
        ),
        budget=Budget(global_reads=1, global_writes=1),
        chapter="puzzles",
    )
]
