"""Puzzles II.1, Warp sum: 32 lanes add their values with register shuffles, no shared memory."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["FULL_MASK"]  # the notebook's constants
FULL_MASK = 0xFFFFFFFF  # all 32 lanes of the warp take part
CHAPTER = "puzzles-2"


@cuda.jit
def warp_sum_kernel(out, a, size):
    lane = cuda.threadIdx.x
    ### BEGIN SOLUTION
    x = a[lane] if lane < size else numba.float32(0)
    # halve the distance each step: after 16, 8, 4, 2, 1 lane 0 holds the whole sum
    offset = 16
    while offset > 0:
        x += cuda.shfl_down_sync(FULL_MASK, x, offset)
        offset //= 2
    if lane == 0:
        out[0] = x
    ### END SOLUTION


def spec(a, size):
    return np.array([a.astype(np.float64).sum()], np.float32)


def cases(rng):
    out = []
    for n in (32, 1, 31, int(rng.integers(2, 16)), int(rng.integers(17, 31))):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        out.append(Case(grid=1, block=32, args={"out": np.empty(1, np.float32), "a": a, "size": n}))
    return out


STATEMENT = """\
Sum `size <= 32` values into `out[0]` with one **warp**: a single block of 32 threads, and no
shared memory at all.

The 32 threads of a warp can read each other's registers. `cuda.shfl_down_sync(mask, x, d)`
returns the value of `x` held by the lane `d` places above the caller (lane `lane + d`); a lane
whose partner would be past lane 31 gets its own `x` back. `mask` names the lanes that take part,
and **every lane named in the mask must make the call**, so no shuffle may sit under an `if` that
some lanes skip: `FULL_MASK = 0xFFFFFFFF` means all 32. Lanes with no element still join in, with
a value that does not change the sum.

Budget per thread: 1 global read, 1 global write; 0 bytes of shared memory."""

PUZZLES = [
    Puzzle(
        name="warp_sum",
        title="Puzzle II.1: Warp sum",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=warp_sum_kernel,
        hints=(
            "Pair lane i with lane i + 16 and add: the top half's values are now folded into the "
            "bottom half.",
            "Repeat with 8, 4, 2 and 1: each step halves the number of lanes holding a useful partial sum.",
            "Load with a guard that gives lanes past `size` a zero, and keep every shuffle outside any `if`; "
            "only lane 0 writes the result.",
        ),
        budget=Budget(global_reads=1, global_writes=1, shared_bytes=0),
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    )
]
