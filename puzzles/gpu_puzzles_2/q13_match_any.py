"""Puzzles II.13, Match: lanes with equal keys find each other, and one of them does the atomic."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["FULL_MASK", "TPB", "BINS"]  # the notebook's constants
FULL_MASK = 0xFFFFFFFF
TPB = 64
BINS = 8
CHAPTER = "puzzles-2"


@cuda.jit
def match_any_kernel(out, keys, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    k = keys[i] if i < size else -1  # lanes past the end form a group of their own
    ### BEGIN SOLUTION
    peers = cuda.match_any_sync(FULL_MASK, k)  # the lanes holding my key
    leader = cuda.ffs(peers) - 1  # the lowest of them
    if i < size and lane == leader:
        cuda.atomic.add(out, k, cuda.popc(peers))
    ### END SOLUTION


def spec(out, keys, size):
    # `out` arrives holding earlier batches' counts: this launch adds its own
    return (out + np.bincount(keys, minlength=BINS)).astype(np.int32)


def _earlier_counts(rng, bins):
    """What `out` holds before this launch: the counts of earlier batches of keys (its own stream,
    so the keys drawn from `rng` stay what they were)."""
    return rng.spawn(1)[0].integers(1, 200, bins).astype(np.int32)


def atomics_needed(case) -> int:
    """One atomic per distinct key per warp, summed over a block's warps; the busiest block."""
    keys = case.args["keys"]
    most = 0
    for s in range(0, keys.size, TPB):
        block = keys[s : s + TPB]
        most = max(most, sum(len(set(block[w : w + 32].tolist())) for w in range(0, block.size, 32)))
    return most


def cases(rng):
    out = []
    for n in (
        int(rng.integers(3 * TPB, 5 * TPB)),
        TPB,
        1,
        TPB + 1,
        int(rng.integers(2, 32)),
        int(rng.integers(33, TPB)),
    ):
        keys = np.minimum(rng.geometric(0.3, n) - 1, BINS - 1).astype(np.int32)
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
The histogram of puzzle II.8 again (`BINS = {BINS}`, `out` holds earlier batches' counts and this
launch adds to them, blocks of `TPB = {TPB}`),
with no shared memory: each **warp** adds up its own equal keys, and one lane per distinct key
does one global atomic with the group's count. On skewed data most of a warp holds the same few
keys, so this turns 32 atomics on one address into one.

`cuda.match_any_sync(mask, value)` gives each lane the mask of the lanes whose `value` equals its
own (bit `j` set: lane `j` holds the same value).
`cuda.ffs(m)` is the position of the lowest set bit of `m`, counting from 1; `cuda.popc(m)` counts
the set bits. Lanes past `size` hold the key `-1`, which no real key matches.
Budget: per block, one global atomic per distinct key in each warp; 0 bytes of shared memory."""

PUZZLES = [
    Puzzle(
        name="match_any",
        title="Puzzle II.13: Match",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=match_any_kernel,
        hints=(
            "After the match, the lanes of one group all hold the same mask.",
            "Elect one lane per group in a way every lane of the group agrees on without talking: the "
            "lowest lane of the mask.",
            "The leader adds the size of its group, and lanes past the end add nothing.",
        ),
        budget=Budget(
            global_reads=1, global_writes=0, shared_bytes=0, global_atomics_per_block=atomics_needed
        ),
        accumulate=("out",),
        chapter=CHAPTER,
    )
]
