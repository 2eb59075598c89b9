"""Puzzle 13, Axis sum: one block per row, a tree reduction in each."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from helpers.rules import min_shared_readers

TPB = 8
STEPS = 3  # log2(TPB)


@cuda.jit
def axis_sum_kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    ### BEGIN SOLUTION
    if local_i < size:
        cache[local_i] = a[row, local_i]
    else:
        cache[local_i] = 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]
    ### END SOLUTION


def spec(a, size):
    return a.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32)


def cases(rng):
    # (rows, size): size <= TPB per seed (1, TPB-1, TPB and between), rows 1 to 9; the row is often
    # shorter than the block.
    out = []
    sizes = [(4, 6), (int(rng.integers(1, 4)), 1), (int(rng.integers(2, 6)), TPB - 1), (1, TPB)]
    sizes += [(int(rng.integers(5, 10)), TPB), (int(rng.integers(1, 8)), int(rng.integers(2, TPB)))]
    for rows, n in sizes:
        a = rng.uniform(-10, 10, (rows, n)).astype(np.float32)
        out.append(
            Case(
                grid=(1, rows),
                block=(TPB, 1),
                args={"out": np.empty((rows, 1), np.float32), "a": a, "size": n},
            )
        )
    return out


STATEMENT = f"""\
`a` has shape `(rows, size)`; sum each **row**: `out[r, 0] = a[r, 0] + a[r, 1] + ... + a[r, size-1]`
(`out` has shape `(rows, 1)`).

The launch is `kernel[(1, rows), ({TPB}, 1)]`: one block per row, the row number is
`cuda.blockIdx.y`, and thread `cuda.threadIdx.x` of that block owns column `local_i` of the row
(`size <= TPB = {TPB}`, so some threads own nothing). Reduce in shared memory as in Puzzle 12: one
thread adding up the row alone is rejected (at least half of the threads that loaded a value must
take part in the adding).
Budget per thread: 1 global read, 1 global write, {2 * STEPS + 1} shared reads;
{TPB * 4} bytes of shared memory per block."""

PUZZLES = [
    Puzzle(
        name="axis_sum",
        title="Puzzle 13: Axis sum",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=axis_sum_kernel,
        hints=(
            "It is Puzzle 12 with the block number choosing a row instead of a slice of a 1-D array.",
            "`a` is 2-D: which index of `a[?, ?]` is the row, which the column?",
            "`out` is 2-D as well, with a single column.",
        ),
        budget=Budget(global_reads=1, global_writes=1, shared_reads=2 * STEPS + 1, shared_bytes=TPB * 4),
        rules=(min_shared_readers(0.5),),
        rtol=1e-4,
        atol=1e-4,
        chapter="puzzles",
    )
]
