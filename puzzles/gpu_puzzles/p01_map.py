"""Puzzle 1, Map: one thread per element, out = a + 10."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes


@cuda.jit
def map_kernel(out, a):
    i = cuda.threadIdx.x
    ### BEGIN SOLUTION
    out[i] = a[i] + 10
    ### END SOLUTION


def spec(a):
    return a + 10


def cases(rng):
    # One block of exactly len(a) threads; the length changes from case to case and from seed to
    # seed: 1, around a warp (31, 32, 33), a few warps, and up to 128.
    out = []
    for n in edge_sizes(rng, 5, 32, (97, 128)):
        a = rng.uniform(-20, 20, n).astype(np.float32)
        out.append(Case(grid=1, block=n, args={"out": np.empty(n, np.float32), "a": a}))
    return out


STATEMENT = """\
Write a kernel that adds 10 to every element of the 1-D array `a` and stores the result in `out`:
`out[i] = a[i] + 10`.

The launch is **one block** with exactly as many threads as `a` has elements, so thread `i`
(`cuda.threadIdx.x`) owns element `i`: it reads `a[i]` once and writes `out[i]` once.
Budget per thread: 1 global read, 1 global write."""

PUZZLES = [
    Puzzle(
        name="map",
        title="Puzzle 1: Map",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=map_kernel,
        hints=(
            "Each thread handles exactly one element; `i` already tells you which one.",
            "Read one value from `a` and write one value to `out`, both at the same position.",
            "The right-hand side is an expression of `a[i]` alone; the thread index itself is not data.",
        ),
        budget=Budget(global_reads=1, global_writes=1),
        chapter="puzzles",
    )
]
