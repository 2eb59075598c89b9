"""Puzzle 10, Dot product: one block, products in shared memory, one thread sums."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

TPB = 8


@cuda.jit
def dot_kernel(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    ### BEGIN SOLUTION
    if i < size:
        cache[i] = a[i] * b[i]
    cuda.syncthreads()
    if i == 0:
        total = numba.float32(0.0)
        for k in range(size):
            total += cache[k]
        out[0] = total
    ### END SOLUTION


def spec(a, b, size):
    return np.array([np.dot(a.astype(np.float64), b.astype(np.float64))], np.float32)


def cases(rng):
    # size <= TPB: 1, TPB-1, TPB and others, per seed
    out = []
    for n in (8, 1, TPB - 1, int(rng.integers(2, TPB - 1)), int(rng.integers(2, TPB + 1)), TPB):
        a = rng.uniform(-5, 5, n).astype(np.float32)
        b = rng.uniform(-5, 5, n).astype(np.float32)
        out.append(Case(grid=1, block=TPB, args={"out": np.empty(1, np.float32), "a": a, "b": b, "size": n}))
    return out


STATEMENT = f"""\
Compute the dot product `out[0] = a[0]*b[0] + a[1]*b[1] + ... + a[size-1]*b[size-1]`.

One block of `TPB = {TPB}` threads; `size <= TPB`, so thread `i` owns the pair `a[i]`, `b[i]` (some
threads own nothing). `out` has a single element, and exactly one thread may write it: two threads
writing one place, even the same value, is a race. Each thread may read only its own pair from
global memory, so the products meet in shared memory.
Budget per thread: 2 global reads, 1 global write, {TPB} shared reads;
{TPB * 4} bytes of shared memory per block."""

PUZZLES = [
    Puzzle(
        name="dot",
        title="Puzzle 10: Dot product",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=dot_kernel,
        hints=(
            "Each thread computes one product; where does it put it so that others can see it?",
            "Before anyone adds the products up, every product must be in place.",
            "Pick one thread to add up the shared array and write `out[0]`; it must add only the "
            "slots that were written.",
        ),
        budget=Budget(global_reads=2, global_writes=1, shared_reads=TPB, shared_bytes=TPB * 4),
        rtol=1e-4,
        atol=1e-4,
        chapter="puzzles",
    )
]
