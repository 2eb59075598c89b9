"""Puzzles II.15, Grid sync: two phases in one launch, with a barrier across every block."""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from helpers.rules import grid_stride_coalescing

__all__ = ["TPB"]  # the notebook's constants
TPB = 32
CHAPTER = "puzzles-2"
# a grid-stride loop reads and writes whole lines (~100%); a contiguous chunk per thread puts lanes
# k elements apart (case 0 always gives k >= 3: 33% or less)
COALESCED = 0.5


@cuda.jit
def grid_sync_kernel(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    step = cuda.gridDim.x * TPB
    ### BEGIN SOLUTION
    # phase 1: each thread's largest |a| over a grid-stride loop, then the block's
    m = numba.float32(0)
    for i in range(b * TPB + t, size, step):
        m = max(m, abs(a[i]))
    cache[t] = m
    stride = TPB // 2
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            cache[t] = max(cache[t], cache[t + stride])
        stride //= 2
    if t == 0:
        partial[b] = cache[0]
    cuda.cg.this_grid().sync()  # every block's partial is stored before anyone reads them
    # phase 2: everyone reads all partials and scales its elements
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    for i in range(b * TPB + t, size, step):
        out[i] = a[i] / top
    ### END SOLUTION


def spec(a, size):
    return (a.astype(np.float64) / np.abs(a).max()).astype(np.float32)


def reads_allowed(case) -> int:
    per_thread = math.ceil(case.args["size"] / (int(np.prod(case.grid)) * TPB))
    return 2 * per_thread + int(np.prod(case.grid))


def cases(rng):
    out = []
    for n, grid in (
        (int(rng.integers(200, 400)), 3),
        (TPB, 1),
        (1, 1),
        (TPB + 1, 2),
        (int(rng.integers(100, 200)), 5),
        (int(rng.integers(2, TPB)), 2),
    ):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        out.append(
            Case(
                grid=grid,
                block=TPB,
                args={
                    "out": np.empty(n, np.float32),
                    "partial": np.empty(grid, np.float32),
                    "a": a,
                    "size": n,
                },
            )
        )
    return out


STATEMENT = f"""\
Scale `a` by its largest magnitude, `out[i] = a[i] / max|a|`, in **one launch**. Every element
needs a number that depends on all of `a`, and the grid is small and fixed (a few blocks of
`TPB = {TPB}`, far fewer threads than elements): each thread walks the data with a **grid-stride
loop**, `for i in range(first, size, gridDim.x * TPB)`, so that on every trip neighbouring threads
read neighbouring elements (a contiguous chunk of elements per thread is rejected: the reads of `a`
and the writes of `out` must be at least {COALESCED:.0%} coalesced).

Phase 1: each block finds its largest `|a[i]|` and stores it in `partial[blockIdx.x]`. Phase 2:
every thread takes the largest of all partials and writes its elements. Between the phases every
block must have finished phase 1: `cuda.syncthreads()` only waits for one block.
`cuda.cg.this_grid().sync()` (cooperative groups) is a barrier for the **whole grid**. It has a
price: the blocks that wait at it must all be resident on the GPU at once, or the ones still
queued would never get a turn. A grid larger than the GPU can hold (on a T4: 40 SMs, each up to
16 blocks, 1024 threads, 64 KiB of shared memory) cannot use it; the launch fails. That is why the
grid here is small and the loop strides: the grid's size is chosen for the GPU, not for the data.
Budget per thread: 2 global reads per element it owns plus `gridDim.x` reads of `partial`."""

PUZZLES = [
    Puzzle(
        name="grid_sync",
        title="Puzzle II.15: Grid-wide barrier",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=grid_sync_kernel,
        hints=(
            "Phase 1 is puzzle II.4's block reduction with max instead of +, over a grid-stride loop.",
            "Only one thread per block stores the block's result, then the whole grid waits.",
            "After the grid barrier every thread may read every partial; loop over the same elements "
            "as in phase 1.",
        ),
        budget=Budget(
            global_reads=reads_allowed,
            global_writes=lambda c: 1 + math.ceil(c.args["size"] / (int(np.prod(c.grid)) * TPB)),
        ),
        rules=(grid_stride_coalescing(COALESCED, arrays=("a", "out")),),
        scratch=("partial",),
        rtol=1e-5,
        atol=1e-6,
        chapter=CHAPTER,
    )
]
