"""Puzzle 6, Blocks: several blocks, a global index."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes


@cuda.jit
def blocks_kernel(out, a, size):
    ### BEGIN SOLUTION
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10
    ### END SOLUTION


def spec(a, size):
    return a + 10


def cases(rng):
    # (size, threads per block): the grid has just enough blocks; sizes per seed around one block
    # (1, t-1, t, t+1), a few blocks, and the largest up to 20 blocks.
    out = []
    t = int(rng.choice((4, 8)))
    sizes = [(9, 4)] + [(n, t) for n in edge_sizes(rng, 9, t, (12 * t, 20 * t))[1:]]
    sizes.append((int(rng.integers(33, 64)), 16))
    for n, threads in sizes:
        a = rng.uniform(-20, 20, n).astype(np.float32)
        grid = (n + threads - 1) // threads
        out.append(Case(grid=grid, block=threads, args={"out": np.empty(n, np.float32), "a": a, "size": n}))
    return out


STATEMENT = """\
Map again, `out[i] = a[i] + 10`, but now a block has **fewer threads than `a` has elements**, so
the launch uses several blocks: `kernel[blocks, threads_per_block]`. Every block runs the same code;
`cuda.blockIdx.x` says which block a thread is in and `cuda.blockDim.x` how many threads each block
has. Each thread owns one element, numbered across the whole grid; the last block usually
sticks out past the end (`size` is the length of `a`).
Budget per thread: 1 global read, 1 global write."""

PUZZLES = [
    Puzzle(
        name="blocks",
        title="Puzzle 6: Blocks",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=blocks_kernel,
        hints=(
            "`cuda.threadIdx.x` restarts at 0 in every block, so it alone cannot name an element.",
            "Work out how many elements the blocks before yours cover.",
            "Global index = block number x threads per block + thread number; then guard as in Puzzle 3.",
        ),
        budget=Budget(global_reads=1, global_writes=1),
        chapter="puzzles",
    )
]
