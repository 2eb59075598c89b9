"""Puzzle 7, Blocks 2D: a 2-D grid of 2-D blocks."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle


@cuda.jit
def blocks_2d_kernel(out, a, size):
    ### BEGIN SOLUTION
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y  # row
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x  # column
    if i < size and j < size:
        out[i, j] = a[i, j] + 10
    ### END SOLUTION


def spec(a, size):
    return a + 10


def cases(rng):
    # (size, (threads x, threads y)); the grid covers the matrix, blocks are often not square;
    # sizes per seed: 1, around one block, several blocks, up to 16.
    out = []
    sizes = [(5, (3, 3)), (1, (4, 4))]
    for lo, hi in ((3, 5), (5, 9), (9, 13), (13, 17)):
        bx, by = (int(v) for v in rng.choice((2, 3, 4, 5, 8), 2))
        sizes.append((int(rng.integers(lo, hi)), (bx, by)))
    for n, (bx, by) in sizes:
        a = rng.uniform(-20, 20, (n, n)).astype(np.float32)
        grid = ((n + bx - 1) // bx, (n + by - 1) // by)
        out.append(
            Case(grid=grid, block=(bx, by), args={"out": np.empty((n, n), np.float32), "a": a, "size": n})
        )
    return out


STATEMENT = """\
Map 2D with several blocks: `out[i, j] = a[i, j] + 10` for a `size` x `size` matrix, launched as
`kernel[(blocks_x, blocks_y), (threads_x, threads_y)]`. Blocks need not be square, and the grid
usually sticks out past the matrix on both axes.

As in Puzzle 4, **x runs along columns and y along rows**: row `i` comes from the `.y` components
(`cuda.blockIdx.y`, `cuda.blockDim.y`, `cuda.threadIdx.y`) and column `j` from the `.x` ones. Each
thread owns one cell. Budget per thread: 1 global read, 1 global write."""

PUZZLES = [
    Puzzle(
        name="blocks_2d",
        title="Puzzle 7: Blocks 2D",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=blocks_2d_kernel,
        hints=(
            "Do Puzzle 6 once per axis.",
            "Do not mix axes: the row index uses only `.y` components, the column index only `.x` ones.",
            "Blocks are not square here, so `blockDim.x` and `blockDim.y` differ; guard both indices.",
        ),
        budget=Budget(global_reads=1, global_writes=1),
        chapter="puzzles",
    )
]
