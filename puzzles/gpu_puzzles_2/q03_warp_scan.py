"""Puzzles II.3, Warp scan: an inclusive prefix sum of each 32-element segment with shfl_up_sync."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["FULL_MASK", "TPB"]  # the notebook's constants
FULL_MASK = 0xFFFFFFFF
TPB = 64  # two warps per block
CHAPTER = "puzzles-2"


@cuda.jit
def warp_scan_kernel(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    ### BEGIN SOLUTION
    x = a[i] if i < size else numba.float32(0)
    # Hillis-Steele in registers: at step d, add the value d lanes below (if there is one)
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if lane >= d:
            x += y
        d *= 2
    if i < size:
        out[i] = x
    ### END SOLUTION


def spec(a, size):
    out = np.empty(size, np.float64)
    for s in range(0, size, 32):
        out[s : s + 32] = np.cumsum(a[s : s + 32].astype(np.float64))
    return out.astype(np.float32)


def cases(rng):
    out = []
    for n in (32, 1, 64, 33, int(rng.integers(65, 200)), int(rng.integers(2, 31))):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        out.append(
            Case(
                grid=(n + TPB - 1) // TPB, block=TPB, args={"out": np.empty(n, np.float32), "a": a, "size": n}
            )
        )
    return out


STATEMENT = f"""\
An inclusive prefix sum of each 32-element segment of `a`: `out[i] = a[s] + a[s+1] + ... + a[i]`,
where `s = i - i % 32` is the start of the segment that holds `i`. Blocks have `TPB = {TPB}`
threads (two warps), and warp `w` of the grid owns segment `w`; `lane = threadIdx.x % 32`.

`cuda.shfl_up_sync(mask, x, d)` returns `x` from lane `lane - d`; lanes below `d` have no such
partner and get their own `x` back, which they must not add. Five steps (`d = 1, 2, 4, 8, 16`)
each double how far back every lane's sum reaches: this is the Hillis-Steele scan of puzzle 12,
in registers and with no barrier, because the lanes of a shuffle exchange values in one step.

Budget per thread: 1 global read, 1 global write; 0 bytes of shared memory."""

PUZZLES = [
    Puzzle(
        name="warp_scan",
        title="Puzzle II.3: Warp scan",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=warp_scan_kernel,
        hints=(
            "After the step with distance d, each lane holds the sum of up to 2d values ending at itself.",
            "Every lane must make every shuffle call; only the addition depends on the lane number.",
            "Lanes past `size` still shuffle (with a zero); only the final write needs a guard.",
        ),
        budget=Budget(global_reads=1, global_writes=1, shared_bytes=0),
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    )
]
