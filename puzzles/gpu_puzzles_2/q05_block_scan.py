"""Puzzles II.5, Block scan: warp scans, then each warp adds the totals of the warps before it."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["FULL_MASK", "TPB", "WARPS"]  # the notebook's constants
FULL_MASK = 0xFFFFFFFF
TPB = 128
WARPS = TPB // 32
CHAPTER = "puzzles-2"


@cuda.jit(device=True)
def warp_scan(x):
    """Inclusive scan of `x` over the 32 lanes (puzzle II.3)."""
    lane = cuda.threadIdx.x % 32
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if lane >= d:
            x += y
        d *= 2
    return x


@cuda.jit
def block_scan_kernel(out, a, size):
    totals = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    lane = t % 32
    warp = t // 32
    x = a[i] if i < size else numba.float32(0)
    ### BEGIN SOLUTION
    x = warp_scan(x)
    if lane == 31:  # the last lane's inclusive sum is the warp's total
        totals[warp] = x
    cuda.syncthreads()
    for w in range(warp):
        x += totals[w]
    if i < size:
        out[i] = x
    ### END SOLUTION


def spec(a, size):
    out = np.empty(size, np.float64)
    for s in range(0, size, TPB):
        out[s : s + TPB] = np.cumsum(a[s : s + TPB].astype(np.float64))
    return out.astype(np.float32)


def cases(rng):
    out = []
    for n in (TPB, 1, TPB + 1, TPB - 1, int(rng.integers(2 * TPB + 1, 4 * TPB)), int(rng.integers(33, 96))):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        out.append(
            Case(
                grid=(n + TPB - 1) // TPB, block=TPB, args={"out": np.empty(n, np.float32), "a": a, "size": n}
            )
        )
    return out


STATEMENT = f"""\
An inclusive prefix sum of each block's `TPB = {TPB}` elements: `out[i]` adds `a` from the start
of `i`'s block up to `i`. `warp_scan(x)`, given above the kernel, is puzzle II.3 as a device
function: it scans within one warp. A block has `WARPS = {WARPS}` warps, so after the warp scans
each value still lacks the totals of the warps before its own.

Put each warp's total in its shared slot `totals[warp]` (which lane holds a warp's total after an
inclusive scan?), wait for all of them, and add the totals of the earlier warps.
Budget per thread: 1 global read, 1 global write, 1 shared write, {WARPS - 1} shared reads;
{WARPS * 4} bytes of shared memory per block."""

PUZZLES = [
    Puzzle(
        name="block_scan",
        title="Puzzle II.5: Block scan",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=block_scan_kernel,
        hints=(
            "Every thread calls warp_scan; afterwards lane k holds the sum of lanes 0..k of its warp.",
            "A warp's total sits in its last lane, not its first.",
            "Warp w needs totals[0] .. totals[w - 1], and not its own total, which is already in its values.",
        ),
        budget=Budget(
            global_reads=1, global_writes=1, shared_reads=WARPS - 1, shared_writes=1, shared_bytes=WARPS * 4
        ),
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    )
]
