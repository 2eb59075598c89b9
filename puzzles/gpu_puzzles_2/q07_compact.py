"""Puzzles II.7, Compact: each warp packs its positive values to the front with ballot + popc."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["FULL_MASK", "TPB"]  # the notebook's constants
FULL_MASK = 0xFFFFFFFF
TPB = 64
CHAPTER = "puzzles-2"


@cuda.jit
def compact_kernel(out, count, a, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    seg = i - lane  # where this warp's 32-element segment starts
    ### BEGIN SOLUTION
    x = a[i] if i < size else numba.float32(0)
    keep = i < size and x > 0
    kept = cuda.ballot_sync(FULL_MASK, keep)  # bit k set: lane k keeps its value
    before = cuda.popc(kept & cuda.lanemask_lt())  # kept values in lower lanes
    total = cuda.popc(kept)
    if keep:
        out[seg + before] = x
    elif i < size:
        # the dropped values' slots, after the kept ones, get zeros
        out[seg + total + (lane - before)] = 0.0
    if lane == 0 and i < size:
        count[i // 32] = total
    ### END SOLUTION


def spec(a, size):
    out = np.zeros(size, np.float32)
    count = np.zeros((size + 31) // 32, np.int32)
    for w, s in enumerate(range(0, size, 32)):
        kept = a[s : s + 32][a[s : s + 32] > 0]
        out[s : s + kept.size] = kept
        count[w] = kept.size
    return {"out": out, "count": count}


def cases(rng):
    out = []
    for n in (32, 1, 64, 33, int(rng.integers(65, 200)), int(rng.integers(2, 31))):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        out.append(
            Case(
                grid=(n + TPB - 1) // TPB,
                block=TPB,
                args={
                    "out": np.empty(n, np.float32),
                    "count": np.empty((n + 31) // 32, np.int32),
                    "a": a,
                    "size": n,
                },
            )
        )
    return out


STATEMENT = f"""\
**Stream compaction**, one warp at a time. Warp `w` of the grid owns the segment
`a[32*w : 32*w + 32]` (the last one may be shorter). It writes the segment's positive values, in
their original order, to the front of the same segment of `out`, fills the rest of the segment
with zeros, and writes how many it kept to `count[w]`. Blocks have `TPB = {TPB}` threads.

Each lane can find its destination without a loop: `cuda.ballot_sync(mask, p)` returns a 32-bit
integer whose bit `k` is lane `k`'s `p`, the same in every lane; `cuda.popc(x)` counts the set
bits of `x`, and `cuda.lanemask_lt()` has a bit set for each lane below the caller. So the number of
lanes below you that keep their value is your offset.

Budget per thread: 1 global read, 1 global write to `out` (lane 0 one more, to `count`);
0 bytes of shared memory."""

PUZZLES = [
    Puzzle(
        name="compact",
        title="Puzzle II.7: Compact",
        statement=STATEMENT,
        outputs=("out", "count"),
        spec=spec,
        cases=cases,
        reference=compact_kernel,
        hints=(
            "Every lane, in range or not, takes part in the ballot; lanes past `size` vote no.",
            "Mask the ballot with lanemask_lt before counting: you want the kept lanes strictly below you.",
            "A dropped value's zero goes after all the kept ones: the warp's total plus the number of "
            "dropped lanes below you.",
        ),
        budget=Budget(global_reads=1, global_writes=2, shared_bytes=0),
        chapter=CHAPTER,
    )
]
