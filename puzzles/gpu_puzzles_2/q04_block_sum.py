"""Puzzles II.4, Block sum: warp sums first, then one shared slot per warp."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["FULL_MASK", "TPB", "WARPS"]  # the notebook's constants
FULL_MASK = 0xFFFFFFFF
TPB = 128  # threads per block
WARPS = TPB // 32  # warps per block: one shared slot each
CHAPTER = "puzzles-2"


@cuda.jit(device=True)
def warp_total(x):
    """The sum of `x` over the 32 lanes, in lane 0 (puzzle II.1)."""
    offset = 16
    while offset > 0:
        x += cuda.shfl_down_sync(FULL_MASK, x, offset)
        offset //= 2
    return x


@cuda.jit
def block_sum_kernel(out, a, size):
    slots = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    lane = t % 32
    warp = t // 32
    x = a[i] if i < size else numba.float32(0)
    ### BEGIN SOLUTION
    x = warp_total(x)
    if lane == 0:
        slots[warp] = x
    cuda.syncthreads()
    # the first warp adds the WARPS partial sums, again with shuffles
    if warp == 0:
        y = slots[lane] if lane < WARPS else numba.float32(0)
        y = warp_total(y)
        if lane == 0:
            out[cuda.blockIdx.x] = y
    ### END SOLUTION


def spec(a, size):
    blocks = (size + TPB - 1) // TPB
    pad = np.zeros(blocks * TPB, np.float64)
    pad[:size] = a
    return pad.reshape(blocks, TPB).sum(axis=1).astype(np.float32)


def cases(rng):
    out = []
    for n in (TPB, 1, TPB + 1, TPB - 1, int(rng.integers(2 * TPB + 1, 5 * TPB)), int(rng.integers(33, 96))):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        blocks = (n + TPB - 1) // TPB
        out.append(
            Case(grid=blocks, block=TPB, args={"out": np.empty(blocks, np.float32), "a": a, "size": n})
        )
    return out


STATEMENT = f"""\
Each block of `TPB = {TPB}` threads sums its own `TPB` elements of `a`: `out[b]` is the sum of
`a[b*TPB : (b+1)*TPB]` (the last block may have fewer). A block is `WARPS = {WARPS}` warps, and a
shuffle only reaches lanes of the same warp, so the sum goes in two rounds:

1. each warp adds its 32 values with shuffles (`warp_total`, a device function given above the
   kernel: puzzle II.1 made reusable), and lane 0 of each warp puts its warp's sum in **one shared
   slot**, `slots[warp]`;
2. after a barrier, one warp adds the `WARPS` slots, again with shuffles, and one thread writes.

That is all the shared memory a block reduction needs: `{WARPS * 4}` bytes instead of one float per
thread, and a single `cuda.syncthreads()`.
Budget per thread: 1 global read, 1 global write, 1 shared write, 1 shared read;
{WARPS * 4} bytes of shared memory per block."""

PUZZLES = [
    Puzzle(
        name="block_sum",
        title="Puzzle II.4: Block sum",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=block_sum_kernel,
        hints=(
            "Call `warp_total` from every thread of the block; which lane holds the result afterwards?",
            "Only one lane per warp writes a slot, and nobody reads a slot before the barrier.",
            "In the second round the first warp has 32 lanes but there are only WARPS slots: the other "
            "lanes bring a zero.",
        ),
        budget=Budget(
            global_reads=1, global_writes=1, shared_reads=1, shared_writes=1, shared_bytes=WARPS * 4
        ),
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    )
]
