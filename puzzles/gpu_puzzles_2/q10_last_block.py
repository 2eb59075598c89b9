"""Puzzles II.10, Last block: a one-launch reduction where the block that finishes last adds up."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["TPB"]  # the notebook's constants
TPB = 32
CHAPTER = "puzzles-2"


@cuda.jit
def last_block_kernel(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    am_last = cuda.shared.array(1, numba.int32)
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    i = b * TPB + t
    cache[t] = a[i] if i < size else 0.0
    stride = TPB // 2
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            cache[t] += cache[t + stride]
        stride //= 2
    ### BEGIN SOLUTION
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()  # the partial sum is visible to every block before the ticket is
        taken = cuda.atomic.add(ticket, 0, 1)
        am_last[0] = taken == cuda.gridDim.x - 1
    cuda.syncthreads()
    if am_last[0] and t == 0:
        total = numba.float32(0)
        for k in range(cuda.gridDim.x):
            total += partial[k]
        out[0] = total
    ### END SOLUTION


def spec(a, size):
    return np.array([a.astype(np.float64).sum()], np.float32)


def cases(rng):
    out = []
    # several many-block cases: the block that finishes last is rarely the one with the last index
    for n in (
        int(rng.integers(8 * TPB + 1, 12 * TPB)),
        TPB,
        1,
        TPB + 1,
        int(rng.integers(2, TPB)),
        int(rng.integers(4 * TPB + 1, 7 * TPB)),
    ):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        blocks = (n + TPB - 1) // TPB
        out.append(
            Case(
                grid=blocks,
                block=TPB,
                args={
                    "out": np.empty(1, np.float32),
                    "partial": np.empty(blocks, np.float32),
                    "ticket": np.empty(1, np.int32),
                    "a": a,
                    "size": n,
                },
            )
        )
    return out


STATEMENT = f"""\
Sum all of `a` into `out[0]` in **one launch** with several blocks of `TPB = {TPB}` threads, where
`out[0]` is written once, by one thread, and starts as garbage (so no `atomic.add` into it).

The kernel already reduces each block's elements into `cache[0]` (puzzle 10's tree). Now: thread 0
of each block stores its block's sum in `partial[blockIdx.x]`, then takes a **ticket** with
`cuda.atomic.add(ticket, 0, 1)`, which returns the count before its own increment (`ticket`
starts at 0). Blocks finish in any order, but exactly one of them draws ticket `gridDim.x - 1`:
that block knows every other partial sum is already stored, adds them up and writes `out[0]`.
Between the store of `partial` and the ticket goes `cuda.threadfence()`: without it, a GPU may let
another block see the new ticket before the partial sum. (The simulator runs blocks one after
another, so it cannot catch a missing fence: this one is on your honour.) Tell the rest of your
block whether it is last through shared memory (`am_last`), after a barrier.
Budget per thread: 1 global read of `a` plus `gridDim.x` reads of `partial` for the one thread
that adds them; at most 1 global atomic per block."""

PUZZLES = [
    Puzzle(
        name="last_block",
        title="Puzzle II.10: The last block",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=last_block_kernel,
        hints=(
            "One thread per block does the bookkeeping: store the partial, fence, take a ticket.",
            "The ticket's old value tells you how many blocks finished before you; compare it with the "
            "number of blocks minus one.",
            "Only the last block reads `partial`; one of its threads adds all `gridDim.x` entries.",
        ),
        budget=Budget(
            global_reads=lambda c: 1 + int(np.prod(c.grid)), global_writes=2, global_atomics_per_block=1
        ),
        scratch=("partial", "ticket"),
        # of the work arrays, the ticket counter starts at 0 (the statement says so); `partial` starts
        # as garbage, so a block reading a partial sum no block has stored yet reads garbage
        zeroed=("ticket",),
        # blocks talk through `partial` and `ticket` by design, so a cross-block access is not a race in
        # itself; what orders them is the ticket (an atomic), and a read of a partial no block has
        # stored yet is an uninitialised read of scratch
        cross_block_races=False,
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    )
]
