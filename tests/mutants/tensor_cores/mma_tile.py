"""Known-wrong and known-right kernels for puzzles/tensor_cores/mma_tile.py (one warp, one mma)."""

import numba
from numba import cuda, float32
from numba.types import float16

from helpers.tensor_cores import mma_m16n8k8
from mutants.common import UNINIT, WARP_DIV, WRONG, M
from puzzles.tensor_cores import mma_tile as m

mt = m.mma_tile

MUTANTS = {
    "tc_mma_tile": [
        # wrong fragment index: a[1] and a[2] swapped (i & 1 and i >> 1 confused for A)
        M(
            mt,
            "fragment_index_swapped",
            WRONG,
            (
                "fa[i] = a[group + 8 * (i >> 1), 2 * t + (i & 1)]",
                "fa[i] = a[group + 8 * (i & 1), 2 * t + (i >> 1)]",
            ),
        ),
        # wrong lane mapping: group and thread-in-group from the wrong bits
        M(
            mt,
            "lane_mapping_swapped",
            WRONG,
            ("group = lane >> 2", "group = lane & 7"),
            ("t = lane & 3", "t = lane >> 3"),
        ),
        # B read along a row instead of down a column (B taken as row-major)
        M(mt, "b_row_major", WRONG, ("fb[i] = b[2 * t + i, group]", "fb[i] = b[group, 2 * t + i]")),
        # the accumulator never zeroed: the mma adds A @ B to garbage
        M(mt, "accumulator_not_zeroed", UNINIT, ("        fc[i] = 0.0\n", "")),
        # only half the warp calls the mma
        M(
            mt,
            "half_warp_calls",
            WARP_DIV,
            ("    mma_m16n8k8(fa, fb, fc)", "    if lane < 16:\n        mma_m16n8k8(fa, fb, fc)"),
        ),
        # results stored at A's transposed positions
        M(
            mt,
            "stores_transposed_pairs",
            WRONG,
            (
                "c[group + 8 * (i >> 1), 2 * t + (i & 1)] = fc[i]",
                "c[group + 8 * (i & 1), 2 * t + (i >> 1)] = fc[i]",
            ),
        ),
    ]
}


@cuda.jit
def unrolled(c, a, b):
    lane = cuda.threadIdx.x
    g = lane // 4
    t2 = 2 * (lane % 4)
    fa = cuda.local.array(4, float16)
    fb = cuda.local.array(2, float16)
    fc = cuda.local.array(4, float32)
    fa[0] = a[g, t2]
    fa[1] = a[g, t2 + 1]
    fa[2] = a[g + 8, t2]
    fa[3] = a[g + 8, t2 + 1]
    fb[0] = b[t2, g]
    fb[1] = b[t2 + 1, g]
    fc[0] = 0.0
    fc[1] = 0.0
    fc[2] = 0.0
    fc[3] = 0.0
    mma_m16n8k8(fa, fb, fc)
    c[g, t2] = fc[0]
    c[g, t2 + 1] = fc[1]
    c[g + 8, t2] = fc[2]
    c[g + 8, t2 + 1] = fc[3]


@cuda.jit
def pairs_loop(c, a, b):
    lane = cuda.threadIdx.x
    g, t = lane >> 2, lane & 3
    fa = cuda.local.array(4, numba.types.float16)
    fb = cuda.local.array(2, numba.types.float16)
    fc = cuda.local.array(4, numba.float32)
    for half in range(2):  # rows g and g + 8
        for j in range(2):
            fa[2 * half + j] = a[g + 8 * half, 2 * t + j]
            fc[2 * half + j] = 0.0
        fb[half] = b[2 * t + half, g]
    mma_m16n8k8(fa, fb, fc)
    for half in range(2):
        for j in range(2):
            c[g + 8 * half, 2 * t + j] = fc[2 * half + j]


VARIANTS = {"tc_mma_tile": [("unrolled", unrolled), ("pairs_loop", pairs_loop)]}
SEEDS = {"tc_mma_tile": (0, 1, 2)}
