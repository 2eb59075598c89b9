"""Puzzle 2, Zip: add two arrays element by element."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes


@cuda.jit
def zip_kernel(out, a, b):
    i = cuda.threadIdx.x
    ### BEGIN SOLUTION
    out[i] = a[i] + b[i]
    ### END SOLUTION


def spec(a, b):
    return a + b


def cases(rng):
    # one thread per element; sizes drawn per seed around a warp, up to 128
    out = []
    for n in edge_sizes(rng, 6, 32, (97, 128)):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        b = rng.uniform(-10, 10, n).astype(np.float32)
        out.append(Case(grid=1, block=n, args={"out": np.empty(n, np.float32), "a": a, "b": b}))
    return out


STATEMENT = """\
Write a kernel that adds `a` and `b` element by element: `out[i] = a[i] + b[i]`.

All three arrays are 1-D and the same length. The launch is one block with one thread per element;
thread `i` (`cuda.threadIdx.x`) owns position `i`. Budget per thread: 2 global reads, 1 global write."""

PUZZLES = [
    Puzzle(
        name="zip",
        title="Puzzle 2: Zip",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=zip_kernel,
        hints=(
            "Same shape of solution as Map, with one more input.",
            "Each thread reads one value from each input at its own position.",
            "Check that you read from `a` and from `b`, not twice from the same array.",
        ),
        budget=Budget(global_reads=2, global_writes=1),
        chapter="puzzles",
    )
]
