"""Puzzle 3, Guards: more threads than elements."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle


@cuda.jit
def guard_kernel(out, a, size):
    i = cuda.threadIdx.x
    ### BEGIN SOLUTION
    if i < size:
        out[i] = a[i] + 10
    ### END SOLUTION


def spec(a, size):
    return a + 10


def cases(rng):
    # (size, threads): always more threads than elements; sizes per seed from 1 to threads-1, a
    # block far larger than the data, and the largest up to 127 of 128 threads.
    out = [(5, 8)]
    for t in (4, 16, 32):
        out.append((int(rng.integers(1, t)), t))
    out += [(1, int(rng.choice((8, 32)))), (31, 32), (int(rng.integers(64, 128)), 128)]
    cases = []
    for n, threads in out:
        a = rng.uniform(-20, 20, n).astype(np.float32)
        cases.append(Case(grid=1, block=threads, args={"out": np.empty(n, np.float32), "a": a, "size": n}))
    return cases


STATEMENT = """\
Same job as Map, `out[i] = a[i] + 10`, but now the block has **more threads than `a` has elements**.
`size` is the length of `a` and `out`. Thread `i` (`cuda.threadIdx.x`) owns element `i` if there is
one; threads with `i >= size` must not touch memory at all.

A real GPU does no bounds checking: a thread that writes past the end silently corrupts whatever
lies there. The simulator stops at the first such access and names it.
Budget per thread: 1 global read, 1 global write."""

PUZZLES = [
    Puzzle(
        name="guard",
        title="Puzzle 3: Guards",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=guard_kernel,
        hints=(
            "Some threads have no element to work on.",
            "Compare the thread index with `size` before doing anything.",
            "Both the read of `a` and the write of `out` must sit behind that comparison.",
        ),
        budget=Budget(global_reads=1, global_writes=1),
        chapter="puzzles",
    )
]
