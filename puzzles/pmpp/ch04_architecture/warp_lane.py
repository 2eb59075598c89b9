"""Which warp and lane a thread of a 2-D block is.

Rungs:
- ch04_warp_lane (exercise): a block's threads numbered x fastest, warps as runs of 32 of them (the
  last warp of a block whose size is no multiple of 32 partly empty); write each pixel's global warp
  number and lane.
"""

import math

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes

from .common import CHAPTER, WARP

# ---------------------------------------------------------------------------- spec


def spec_warp_lane(height, width, block_w, block_h):
    row, col = np.mgrid[0:height, 0:width]
    t = (row % block_h) * block_w + col % block_w
    blocks_x = math.ceil(width / block_w)
    block = (row // block_h) * blocks_x + col // block_w
    warps_per_block = math.ceil(block_w * block_h / WARP)
    return {
        "warp": (block * warps_per_block + t // WARP).astype(np.int32),
        "lane": (t % WARP).astype(np.int32),
    }


# ---------------------------------------------------------------------------- cases


def cases_warp_lane(rng):
    out = []
    # 12 x 6 = 72 threads: three warps, the last one only 8 lanes full
    # case 0 that; then per seed one block shape of the list and, per axis, the edges around it (1,
    # block-1, block, block+1, a few blocks) and a side longer than before (w 71-80 or h 34-40), the
    # widest paired with the shortest
    shapes = (
        ((10, 20), (16, 4)),
        ((13, 30), (12, 6)),
        ((7, 5), (8, 8)),
        ((33, 9), (4, 16)),
        ((6, 70), (32, 2)),
    )
    pair = rng.spawn(1)[0]
    bw, bh = shapes[int(pair.integers(0, len(shapes)))][1]
    ws = edge_sizes(rng, 20, bw, (71, 80))[1:]
    hs = edge_sizes(rng, 10, bh, (34, 40))[1:]
    k = max(len(ws), len(hs))
    ws = sorted(ws + [int(pair.integers(1, 3 * bw))] * (k - len(ws)))
    hs = sorted(hs + [int(pair.integers(1, 3 * bh))] * (k - len(hs)), reverse=True)
    # and always a 12 x 6 block (a partly filled last warp) over several blocks, at a drawn size
    partial = ((int(pair.integers(7, 19)), int(pair.integers(13, 37))), (12, 6))
    for (h, w), (bw, bh) in [shapes[0], *(((h, w), (bw, bh)) for h, w in zip(hs, ws)), partial]:
        # extra scalars describe the launch to the spec; the kernel may read them or blockDim
        out.append(
            Case(
                grid=(math.ceil(w / bw), math.ceil(h / bh)),
                block=(bw, bh),
                args={
                    "warp": np.empty((h, w), np.int32),
                    "lane": np.empty((h, w), np.int32),
                    "height": h,
                    "width": w,
                    "block_w": bw,
                    "block_h": bh,
                },
            )
        )
    return out


# ---------------------------------------------------------------------------- warps of a 2-D block


@cuda.jit
def warp_lane_kernel(warp, lane, height, width, block_w, block_h):
    row = cuda.blockIdx.y * block_h + cuda.threadIdx.y
    col = cuda.blockIdx.x * block_w + cuda.threadIdx.x
    ### BEGIN SOLUTION
    # a block's threads are numbered x fastest, then y; warps are runs of 32 in that order
    t = cuda.threadIdx.y * block_w + cuda.threadIdx.x
    warps_per_block = (block_w * block_h + WARP - 1) // WARP
    block = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
    if row < height and col < width:
        warp[row, col] = block * warps_per_block + t // WARP
        lane[row, col] = t % WARP
    ### END SOLUTION


CH04_WARP_LANE = Puzzle(
    name="ch04_warp_lane",
    title="PMPP 4: Which warp is this thread in?",
    statement="""\
An SM schedules warps of 32 threads, not single threads. In a 2-D block the threads are numbered
`x` first: thread `(tx, ty)` is number `ty * blockDim.x + tx`, and warp `k` of the block holds
numbers `32k .. 32k + 31`. A block whose size is not a multiple of 32 still gets whole warps: the
last one runs with some lanes empty. Write, for the thread that owns pixel `(row, col)`, its global
warp number (blocks numbered `x` first; every block holds the same number of warps) into
`warp[row, col]`, and its lane (position inside the warp) into `lane[row, col]`.
`block_w` and `block_h` repeat the block shape; you may use them or `cuda.blockDim`.""",
    outputs=("warp", "lane"),
    spec=spec_warp_lane,
    cases=cases_warp_lane,
    reference=warp_lane_kernel,
    hints=(
        "First the thread's number inside its block, x fastest.",
        "Warps per block is the thread count divided by 32, rounded up.",
    ),
    budget=Budget(global_reads=0, global_writes=2),
    chapter=CHAPTER,
)


PUZZLES = [CH04_WARP_LANE]
