"""Puzzle 9, Pooling: a running sum of three, with a halo between blocks."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes

TPB = 8
CACHE = TPB + 2  # shared-array lengths must be plain constants, not expressions


@cuda.jit
def pool_kernel(out, a, size):
    # cache[k + 2] holds this block's element k; cache[0] and cache[1] the two before the block.
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    ### BEGIN SOLUTION
    if i < size:
        cache[local_i + 2] = a[i]
    if local_i < 2 and i >= 2:
        cache[local_i] = a[i - 2]
    cuda.syncthreads()
    if i < size:
        total = cache[local_i + 2]
        if i >= 1:
            total += cache[local_i + 1]
        if i >= 2:
            total += cache[local_i]
        out[i] = total
    ### END SOLUTION


def spec(a, size):
    c = np.concatenate([[0.0], np.cumsum(a, dtype=np.float64)])
    lo = np.maximum(np.arange(1, size + 1) - 3, 0)
    return (c[1:] - c[lo]).astype(np.float32)


def cases(rng):
    out = []
    # sizes per seed: 1, TPB-1, TPB, TPB+1, a few blocks, up to 8 blocks
    for n in edge_sizes(rng, 13, TPB, (41, 64)):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        out.append(
            Case(
                grid=(n + TPB - 1) // TPB, block=TPB, args={"out": np.empty(n, np.float32), "a": a, "size": n}
            )
        )
    return out


STATEMENT = f"""\
Sum each element with the two before it: `out[i] = a[i-2] + a[i-1] + a[i]`, leaving out terms before
the start of the array (so `out[0] = a[0]` and `out[1] = a[0] + a[1]`).

Blocks of `TPB = {TPB}` threads, one thread per element, several blocks. Every element of `a` is
needed by three threads, and a thread may read **at most 2 values from global memory**, so the
block loads its elements into the shared array `cache` once and the threads read their neighbours
from there. The first two threads of a block also need the two elements just before the block
(the *halo*), which belong to the previous block.
Budget per thread: 2 global reads, 1 global write, 2 shared writes, 3 shared reads;
{(TPB + 2) * 4} bytes of shared memory per block."""

PUZZLES = [
    Puzzle(
        name="pool",
        title="Puzzle 9: Pooling",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=pool_kernel,
        hints=(
            "Load first, `cuda.syncthreads()`, then compute: nobody may read a neighbour's slot before "
            "the neighbour has written it.",
            "The comment in the kernel gives the layout of `cache`: element k of the block lives at k + 2.",
            "Two threads have an extra job before the barrier: fetch the halo. Which indices of `a` is "
            "that, and when does it not exist?",
            "Shared memory is not zeroed: a slot nobody wrote must not be read. Skip missing terms "
            "with a test on the global index.",
        ),
        budget=Budget(
            global_reads=2, global_writes=1, shared_reads=3, shared_writes=2, shared_bytes=(TPB + 2) * 4
        ),
        chapter="puzzles",
    )
]
