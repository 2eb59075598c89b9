"""Puzzles II.8, Histogram: a private shared-memory histogram per block, merged with few atomics."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["TPB", "BINS"]  # the notebook's constants
TPB = 64
BINS = 16
CHAPTER = "puzzles-2"


@cuda.jit
def histogram_kernel(out, keys, size):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    ### BEGIN SOLUTION
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    if i < size:
        cuda.atomic.add(local, keys[i], 1)  # contention stays inside the block, in fast memory
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(out, t, local[t])  # one global atomic per bin per block
    ### END SOLUTION


def spec(out, keys, size):
    # `out` arrives holding earlier batches' counts: this launch adds its own
    return (out + np.bincount(keys, minlength=BINS)).astype(np.int32)


def _earlier_counts(rng, bins):
    """What `out` holds before this launch: the counts of earlier batches of keys (its own stream,
    so the keys drawn from `rng` stay what they were)."""
    return rng.spawn(1)[0].integers(1, 200, bins).astype(np.int32)


def cases(rng):
    out = []
    for n in (
        int(rng.integers(3 * TPB, 6 * TPB)),
        TPB,
        1,
        TPB + 1,
        int(rng.integers(2, TPB)),
        int(rng.integers(TPB + 2, 2 * TPB)),
    ):
        # skewed keys: a few bins are popular, as in real data
        keys = np.minimum(rng.geometric(0.25, n) - 1, BINS - 1).astype(np.int32)
        keys = rng.permutation(keys ^ int(rng.integers(0, BINS)))
        out.append(
            Case(
                grid=(n + TPB - 1) // TPB,
                block=TPB,
                args={"out": _earlier_counts(rng, BINS), "keys": keys, "size": n},
            )
        )
    return out


STATEMENT = f"""\
Count how often each key `0 .. BINS-1` (`BINS = {BINS}`) occurs in `keys`: `out[k]` is the number
of `i` with `keys[i] == k`, added to what `out` already holds (the counts of earlier batches of
keys: `out` does not start at zero). Blocks of `TPB = {TPB}` threads, one key per thread.

`cuda.atomic.add(out, keys[i], 1)` from every thread is correct, but every block then sends one
global atomic per element, and popular bins make thousands of threads queue on one address. Do
what PMPP chapter 9 calls **privatization**: each block counts into its own histogram in shared
memory (atomics on shared memory are cheap, and only the block's threads contend), then adds its
counts to `out`, one atomic per bin. Shared memory starts as garbage, so zero it first.
Budget: at most {BINS} global atomics per block; {BINS * 4} bytes of shared memory per block."""

PUZZLES = [
    Puzzle(
        name="histogram",
        title="Puzzle II.8: Histogram",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=histogram_kernel,
        hints=(
            "Three phases separated by barriers: clear the private bins, count into them, merge them.",
            "The counting step needs atomics even in shared memory: two threads may hold the same key.",
            "Blocks finish in any order, so the merge into `out` is an atomic add, one per bin.",
        ),
        budget=Budget(global_reads=1, global_writes=0, shared_bytes=BINS * 4, global_atomics_per_block=BINS),
        accumulate=("out",),
        chapter=CHAPTER,
    )
]
