"""Register tiling on top of the tensor cores, one rung (the ch05 step, a warp's mma tiles for a
thread's outputs):

    tc_mma_reg_gemm   C (fp32) = A @ B (fp16), any sizes: a block of 4 warps owns a 64x32 tile of C
                      (2 x 2 warps); each warp computes a 2 x 2 grid of 16x8 mma tiles (32x16), its
                      two A fragments reused across its two tile columns and its two B fragments
                      across its two tile rows, all held in registers; A's 64x8 and B's 8x32 slices
                      staged in shared memory each step of 8 along K

What it saves: per step a lane reads 2 * 4 (A) + 2 * 2 (B) = 12 fp16 values from shared memory for
4 mma, where four separate 16x8 tiles would read 4 * (4 + 2) = 24: half the shared loads per mma.
The budget holds the kernel to 12 shared reads per lane per step (`shared_reads`), so a kernel that
reloads its fragments for every tile is rejected even though its values are right.

Tolerance, derived (`common.mma_tolerance`): as tc_mma_gemm, each of the ceil(K / 8) mma steps adds
eight exact fp16 products after aligning them to the largest addend and truncating, so per element
|got - want| <= (3 K' + 1) * 2^-23 * S, S = sum_k |a_ik b_kj|, K' = K rounded up to 8.
"""

import math

import numpy as np
from numba import cuda, float32
from numba.types import float16

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.tensor_cores import mma_m16n8k8

from .common import CHAPTER, mma_tolerance

TM, TN = 2, 2  # mma tiles per warp: rows x columns of 16x8 tiles
WM, WN = 16 * TM, 8 * TN  # a warp's part of C: 32 x 16
RM, RN = 64, 32  # the block's tile of C: 2 x 2 warps
RK = 8  # K per step
TILES = TM * TN  # mma tiles (accumulators) per warp
REG_THREADS = 128  # 4 warps: warp w owns rows 32 * (w >> 1), columns 16 * (w & 1) of the block's tile
READS_PER_STEP = TM * 4 + TN * 2  # shared fp16 reads per lane per step: each fragment loaded once


def spec(a, b, m, n, k):
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def tolerance(a, b, m, n, k):
    return mma_tolerance(a, b)


def shared_reads(case) -> int:
    return READS_PER_STEP * math.ceil(case.args["k"] / RK)


def cases(rng):
    out = []
    for num, m in enumerate(edge_sizes(rng, 40, 32, (65, 72))):
        n = int(rng.integers(1, 41))
        k = int(rng.integers(1, 17)) if num else int(rng.integers(9, 17))  # case 0: two steps
        a = np.clip(rng.standard_normal((m, k)), -4, 4).astype(np.float16)
        b = np.clip(rng.standard_normal((k, n)), -4, 4).astype(np.float16)
        grid = (math.ceil(n / RN), math.ceil(m / RM))
        args = dict(c=np.zeros((m, n), np.float32), a=a, b=b, m=m, n=n, k=k)
        out.append(Case(grid, REG_THREADS, args))
    return out


@cuda.jit
def mma_reg_gemm(c, a, b, m, n, k):
    tid = cuda.threadIdx.x
    warp, lane = tid // 32, tid % 32
    group, t = lane >> 2, lane & 3
    row0 = cuda.blockIdx.y * RM  # the block's tile of C
    col0 = cuda.blockIdx.x * RN
    wr, wc = WM * (warp >> 1), WN * (warp & 1)  # this warp's 32x16 part of it
    sa = cuda.shared.array((RM, RK), float16)
    sb = cuda.shared.array((RK, RN), float16)
    fa = cuda.local.array((TM, 4), float16)  # fa[i]: the A fragment of tile row i
    fb = cuda.local.array((TN, 2), float16)  # fb[j]: the B fragment of tile column j
    fc = cuda.local.array((TILES, 4), float32)  # fc[TN * i + j]: the accumulator of tile (i, j)
    for q in range(TILES):
        for e in range(4):
            fc[q, e] = 0.0
    ### BEGIN SOLUTION
    for k0 in range(0, k, RK):
        for e in range(tid, RM * RK, REG_THREADS):  # A's 64x8 slice: four elements per thread
            r, kk = e // RK, e % RK
            if row0 + r < m and k0 + kk < k:
                sa[r, kk] = a[row0 + r, k0 + kk]
            else:
                sa[r, kk] = 0.0
        for e in range(tid, RK * RN, REG_THREADS):  # B's 8x32 slice: two per thread
            kk, cc = e // RN, e % RN
            if k0 + kk < k and col0 + cc < n:
                sb[kk, cc] = b[k0 + kk, col0 + cc]
            else:
                sb[kk, cc] = 0.0
        cuda.syncthreads()  # the slices are complete before any warp reads its fragments
        for i in range(TM):  # each fragment read from shared memory once per step
            for e in range(4):
                fa[i, e] = sa[wr + 16 * i + group + 8 * (e >> 1), 2 * t + (e & 1)]
        for j in range(TN):
            for e in range(2):
                fb[j, e] = sb[2 * t + e, wc + 8 * j + group]
        for i in range(TM):  # and used TN (A) or TM (B) times from registers
            for j in range(TN):
                mma_m16n8k8(fa[i], fb[j], fc[TN * i + j])
        cuda.syncthreads()  # all warps have read the slices before the next copies
    ### END SOLUTION
    for i in range(TM):
        for j in range(TN):
            for e in range(4):
                r = row0 + wr + 16 * i + group + 8 * (e >> 1)
                col = col0 + wc + 8 * j + 2 * t + (e & 1)
                if r < m and col < n:
                    c[r, col] = fc[TN * i + j, e]


MMA_REG_GEMM = Puzzle(
    name="tc_mma_reg_gemm",
    title="Register tiling on tensor cores: a warp computes a 2 x 2 grid of mma tiles",
    statement=f"""`c = a @ b` for any sizes (`a` is `m x k`, `b` is `k x n`, both float16; `c` float32), as
`tc_mma_gemm`, one rung up. A block of `{REG_THREADS}` threads (4 warps) owns the `{RM} x {RN}` tile of `c`
at (`blockIdx.y * {RM}`, `blockIdx.x * {RN}`); warp `w` owns its `{WM} x {WN}` part at rows
`wr = {WM} * (w >> 1)`, columns `wc = {WN} * (w & 1)`, as a **{TM} x {TN} grid of 16x8 mma tiles**: tile
`(i, j)` is at rows `wr + 16 * i`, columns `wc + 8 * j`, and accumulates in `fc[{TN} * i + j]`.
Walk `k` {RK} at a time: the block copies `a`'s `{RM} x {RK}` slice into `sa` and `b`'s `{RK} x {RN}` slice
into `sb` (0 past any edge) and waits. Then each warp loads the A fragment of each tile row into
`fa[i]` and the B fragment of each tile column into `fb[j]` (the layout of `tc_mma_tile`, shifted),
**once each**, and calls `mma_m16n8k8(fa[i], fb[j], fc[{TN} * i + j])` for all four tiles: A reused
across the columns, B across the rows, from registers. The block waits again before the next
slice overwrites `sa` and `sb`. The stores from `fc` are written for you.
**Budget**: {READS_PER_STEP} shared-memory reads per lane per step (loading the fragments again for
each tile would take {TM * TN * 6}). Tolerance: as `tc_mma_gemm`, `c[i, j]` may be off by
`(3 * K2 + 1) * 2**-23 * sum_k abs(a[i, k] * b[k, j])` (K2: `k` rounded up to a multiple of {RK}).""",
    outputs=("c",),
    spec=spec,
    cases=cases,
    reference=mma_reg_gemm,
    float64="reject",
    budget=Budget(
        shared_reads=shared_reads,
        shared_bytes=(RM * RK + RK * RN) * 2,
        advice={
            "shared_reads": f"load fa[i] and fb[j] once per step ({READS_PER_STEP} reads a lane), before the "
            "loops over the tiles, and reuse them from registers for every mma.",
        },
    ),
    hints=(
        "Copies: element e = tid, tid + 128, ... of A's slice is row e // 8, column e % 8; of B's, "
        "row e // 32, column e % 32.",
        "fa[i, e] = sa[wr + 16 * i + group + 8 * (e >> 1), 2 * t + (e & 1)]; "
        "fb[j, e] = sb[2 * t + e, wc + 8 * j + group].",
        "Load every fa[i] and fb[j] first, then the double loop of mma over (i, j); a barrier after "
        "the copies and one after the mma.",
    ),
    tolerance=tolerance,
    chapter=CHAPTER,
)

PUZZLES = [MMA_REG_GEMM]
