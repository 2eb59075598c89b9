"""Puzzle 8, Shared: stage data through a block's shared memory."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.rules import outputs_via_shared

TPB = 8  # threads per block; also the length of the shared array


@cuda.jit
def shared_kernel(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    ### BEGIN SOLUTION
    if i < size:
        cache[local_i] = a[i]
    cuda.syncthreads()
    if i < size:
        out[i] = cache[local_i] + 10
    ### END SOLUTION


def spec(a, size):
    return a + 10


def cases(rng):
    out = []
    # sizes per seed: 1, TPB-1, TPB, TPB+1, a few blocks, up to 8 blocks
    for n in edge_sizes(rng, 13, TPB, (41, 64)):
        a = rng.uniform(-20, 20, n).astype(np.float32)
        out.append(
            Case(
                grid=(n + TPB - 1) // TPB, block=TPB, args={"out": np.empty(n, np.float32), "a": a, "size": n}
            )
        )
    return out


STATEMENT = f"""\
Once more `out[i] = a[i] + 10` over several blocks of `TPB = {TPB}` threads, but this time every
value travels through **shared memory**: each thread copies its element of `a` into `cache`, a
`TPB`-long array that all threads of one block share (each block has its own copy), then reads it
back from `cache`, adds 10 and writes `out`. A kernel that skips shared memory is rejected: every
thread that writes `out` must have read `cache`.

`cuda.shared.array(TPB, numba.float32)` needs a size known when the kernel compiles, which is why
`TPB` is a module-level constant. Shared memory starts out holding garbage, and other threads'
writes to it are only guaranteed visible after `cuda.syncthreads()`, the barrier that every thread
of the block must reach. `i` is the global index, `local_i` the index inside the block.
Budget per thread: 1 global read, 1 global write, 1 shared write, 1 shared read;
{TPB * 4} bytes of shared memory per block."""

PUZZLES = [
    Puzzle(
        name="shared",
        title="Puzzle 8: Shared",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=shared_kernel,
        hints=(
            "Three steps: global to shared, barrier, shared to global.",
            "The shared array has TPB slots, one per thread of the block: index it with `local_i`, "
            "index `a` and `out` with `i`.",
            "The last block has threads past the end: guard the global accesses, but let every "
            "thread reach `cuda.syncthreads()`.",
        ),
        budget=Budget(global_reads=1, global_writes=1, shared_reads=1, shared_writes=1, shared_bytes=TPB * 4),
        rules=(outputs_via_shared(1),),
        chapter="puzzles",
    )
]
