"""Control divergence: the same element-wise op, branching on thread parity or on warp parity.

The simulator records which access instructions each thread executed; lanes of one warp that
executed different sets of instructions took different paths through the kernel, and a real SM runs
those paths one after the other. `paths_per_warp` counts them from the trace.

Rungs:
- ch04_parity_branch (worked): one element per thread, branch on `i % 2`: two paths in every warp.
- ch04_warp_uniform (exercise): the same output, the elements handed out so that every warp takes
  one path (checked by max_paths_per_warp(1)).
"""

import math

import numpy as np
from numba import cuda

from helpers.metrics import lane_paths, paths_per_warp  # noqa: F401  (the chapter's measures)
from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.rules import max_paths_per_warp

from .common import CHAPTER, WARP

# ---------------------------------------------------------------------------- spec


def spec_parity(a, n):
    out = np.where(np.arange(n) % 2 == 0, a * a, 1 - a)
    return out.astype(np.float32)


# ---------------------------------------------------------------------------- cases


def cases_parity(rng):
    # blocks are whole numbers of warp pairs (64 threads); case 0 n = 200 in blocks of 64, then per
    # seed a block of 128 or 256 and n at its edges (1, block-1, block, block+1), a few blocks and
    # more than before (1001-1300)
    first = (200, 64)
    tpb = 128 * 2 ** int(rng.spawn(1)[0].integers(0, 2))  # at least two warp pairs
    sizes = [first, *((n, tpb) for n in edge_sizes(rng, first[0], tpb, (1001, 1300))[1:])]
    return [
        Case(
            grid=math.ceil(n / tpb),
            block=tpb,
            args={"out": np.empty(n, np.float32), "a": rng.uniform(-3, 3, n).astype(np.float32), "n": n},
        )
        for n, tpb in sizes
    ]


# ---------------------------------------------------------------------------- branch on thread parity


@cuda.jit
def parity_branch_kernel(out, a, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        x = a[i]
        # even and odd lanes of every warp disagree here: the warp runs both sides in turn
        if i % 2 == 0:
            out[i] = x * x
        else:
            out[i] = 1 - x


CH04_PARITY_BRANCH = Puzzle(
    name="ch04_parity_branch",
    title="PMPP 4: A branch on thread parity (divergent)",
    statement="""\
`out[i] = a[i]**2` for even `i` and `1 - a[i]` for odd `i`, one element per thread. Correct, but in
every warp half the lanes want one side of the `if` and half the other: the warp executes both
sides in turn with half its lanes switched off each time. The picture below colours each lane by
the path it took.""",
    outputs=("out",),
    spec=spec_parity,
    cases=cases_parity,
    reference=parity_branch_kernel,
    budget=Budget(global_reads=1, global_writes=1),
    chapter=CHAPTER,
)


# ---------------------------------------------------------------------------- branch on warp parity


@cuda.jit
def warp_uniform_kernel(out, a, n):
    ### BEGIN SOLUTION
    t = cuda.threadIdx.x
    w = t // WARP
    # warp pair p covers 64 elements: the even warp takes the even ones, the odd warp the odd ones
    i = cuda.blockIdx.x * cuda.blockDim.x + (w // 2) * 2 * WARP + 2 * (t % WARP) + w % 2
    if i < n:
        x = a[i]
        if w % 2 == 0:
            out[i] = x * x
        else:
            out[i] = 1 - x
    ### END SOLUTION


CH04_WARP_UNIFORM = Puzzle(
    name="ch04_warp_uniform",
    title="PMPP 4: Same result, one path per warp",
    statement="""\
The same `out` as the parity kernel, but **no warp may take more than one path**: the check
counts, from the trace, the different paths the lanes of each warp took. The data decides which side
of the branch an element needs, but you decide which thread handles which element. Give each block
`blockDim.x` consecutive elements (a multiple of 64) and hand all the even ones to some warps and
all the odd ones to others. Lanes past the end of the data that do nothing at all do not count as a
path. Budget per thread: 1 global read, 1 global write.""",
    outputs=("out",),
    spec=spec_parity,
    cases=cases_parity,
    reference=warp_uniform_kernel,
    hints=(
        "Think of the block's warps in pairs: a pair covers 64 consecutive elements.",
        "In a pair, the first warp takes elements 0, 2, 4, ... 62 and the second 1, 3, ... 63.",
        "Branch on something every lane of a warp agrees on, such as the warp number's parity.",
    ),
    budget=Budget(global_reads=1, global_writes=1),
    chapter=CHAPTER,
    rules=(max_paths_per_warp(1),),
)


PUZZLES = [CH04_PARITY_BRANCH, CH04_WARP_UNIFORM]
