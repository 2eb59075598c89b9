"""Puzzle 12, Block sum (named `prefix_sum` in the original GPU Puzzles): a tree reduction in shared
memory."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.rules import min_shared_readers

TPB = 8
STEPS = 3  # log2(TPB): halvings until one number is left


@cuda.jit
def prefix_sum_kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    ### BEGIN SOLUTION
    if i < size:
        cache[local_i] = a[i]
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
        out[cuda.blockIdx.x] = cache[0]
    ### END SOLUTION


def spec(a, size):
    nblocks = (size + TPB - 1) // TPB
    padded = np.zeros(nblocks * TPB, np.float64)
    padded[:size] = a
    return padded.reshape(nblocks, TPB).sum(axis=1).astype(np.float32)


def cases(rng):
    # sizes per seed: 1, TPB-1, TPB, TPB+1, a few blocks, up to 8 blocks
    out = []
    for n in edge_sizes(rng, 13, TPB, (41, 64)):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        nblocks = (n + TPB - 1) // TPB
        out.append(
            Case(grid=nblocks, block=TPB, args={"out": np.empty(nblocks, np.float32), "a": a, "size": n})
        )
    return out


STATEMENT = f"""\
Sum `a` block by block: block `k` (blocks of `TPB = {TPB}` threads) writes the sum of its elements
`a[k*TPB]` ... `a[k*TPB + TPB - 1]` (those that exist) to `out[k]`. With one block, that is the sum
of the whole array.

Do it the parallel way, in {STEPS} steps: in each step half of the still-active threads add a
partner's partial sum to their own, so {TPB} numbers become {TPB // 2}, then {TPB // 4}, then 1.
One thread adding up all {TPB} values alone is rejected, however few shared reads it makes (even
with its running total in a register): in every block at least half of the threads that loaded a
value must take part in the adding. (The original GPU Puzzles call this one "prefix sum"; it is a
block sum, a reduction. A real prefix sum, a scan, is the subject of PMPP chapter 11.)
Budget per thread: 1 global read, 1 global write, {2 * STEPS + 1} shared reads;
{TPB * 4} bytes of shared memory per block."""

PUZZLES = [
    Puzzle(
        name="prefix_sum",
        title="Puzzle 12: Block sum",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=prefix_sum_kernel,
        hints=(
            "Start like Dot: every thread puts its value in shared memory. Threads past the end need a "
            "value too; which one leaves the sum unchanged?",
            "Loop over a stride that halves each time (4, 2, 1); threads below the stride add the value "
            "`stride` slots away into their own slot.",
            "Every step needs a barrier after it, and every thread of the block must reach it: keep "
            "`cuda.syncthreads()` outside any `if`.",
            "At the end slot 0 holds the block's sum; one thread writes it to `out[cuda.blockIdx.x]`.",
        ),
        budget=Budget(global_reads=1, global_writes=1, shared_reads=2 * STEPS + 1, shared_bytes=TPB * 4),
        rules=(min_shared_readers(0.5),),
        rtol=1e-4,
        atol=1e-4,
        chapter="puzzles",
    )
]
