"""A block of warps tiles a matrix product on the tensor cores, one rung:

    tc_mma_gemm   C (fp32) = A @ B (fp16), any sizes: a block of 4 warps owns a 32x16 tile of C (2 x 2
                  warps, each one 16x8 mma tile); it walks K eight at a time, staging A's 32x8 and B's
                  8x16 slices in shared memory (zeros past the edges), a barrier, one mma per warp, a
                  barrier

Tolerance, derived (`common.mma_tolerance`): each of the ceil(K / 8) mma steps adds eight exact fp16
products to the fp32 accumulator after aligning them to the largest addend and truncating, so the
error follows S = sum_k |a_ik b_kj| (and the accumulator, at most S): per element
|got - want| <= (3 K' + 1) * 2^-23 * S, K' = K rounded up to 8 (K = 24: 73 * 2^-23 * S = 8.7e-6 S).
"""

import math

import numpy as np
from numba import cuda, float32
from numba.types import float16

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.tensor_cores import mma_m16n8k8

from .common import CHAPTER, mma_tolerance

BM, BN, BK = 32, 16, 8  # the block's tile of C, and K per step
THREADS = 128  # 4 warps: warp w computes rows 16 * (w >> 1) and columns 8 * (w & 1) of the block's tile


def spec(a, b, m, n, k):
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def tolerance(a, b, m, n, k):
    return mma_tolerance(a, b)


def cases(rng):
    out = []
    for m in edge_sizes(rng, 20, 16, (33, 40)):
        n = int(rng.integers(1, 21))
        k = int(rng.integers(1, 25))
        a = np.clip(rng.standard_normal((m, k)), -4, 4).astype(np.float16)
        b = np.clip(rng.standard_normal((k, n)), -4, 4).astype(np.float16)
        grid = (math.ceil(n / BN), math.ceil(m / BM))
        args = dict(c=np.zeros((m, n), np.float32), a=a, b=b, m=m, n=n, k=k)
        out.append(Case(grid, THREADS, args))
    return out


@cuda.jit
def mma_gemm(c, a, b, m, n, k):
    tid = cuda.threadIdx.x
    warp, lane = tid // 32, tid % 32
    group, t = lane >> 2, lane & 3
    row0 = cuda.blockIdx.y * BM  # the block's tile of C
    col0 = cuda.blockIdx.x * BN
    wr, wc = 16 * (warp >> 1), 8 * (warp & 1)  # this warp's 16x8 tile inside it
    sa = cuda.shared.array((BM, BK), float16)
    sb = cuda.shared.array((BK, BN), float16)
    fa = cuda.local.array(4, float16)
    fb = cuda.local.array(2, float16)
    fc = cuda.local.array(4, float32)
    for i in range(4):
        fc[i] = 0.0
    ### BEGIN SOLUTION
    for k0 in range(0, k, BK):
        for e in range(tid, BM * BK, THREADS):  # A's 32x8 slice: two elements per thread
            r, kk = e // BK, e % BK
            if row0 + r < m and k0 + kk < k:
                sa[r, kk] = a[row0 + r, k0 + kk]
            else:
                sa[r, kk] = 0.0
        kk, cc = tid // BN, tid % BN  # B's 8x16 slice: one element per thread
        if k0 + kk < k and col0 + cc < n:
            sb[kk, cc] = b[k0 + kk, col0 + cc]
        else:
            sb[kk, cc] = 0.0
        cuda.syncthreads()  # the slices are complete before any warp reads its fragments
        for i in range(4):
            fa[i] = sa[wr + group + 8 * (i >> 1), 2 * t + (i & 1)]
        for i in range(2):
            fb[i] = sb[2 * t + i, wc + group]
        mma_m16n8k8(fa, fb, fc)
        cuda.syncthreads()  # all warps have read them before the next copies
    ### END SOLUTION
    for i in range(4):
        r = row0 + wr + group + 8 * (i >> 1)
        col = col0 + wc + 2 * t + (i & 1)
        if r < m and col < n:
            c[r, col] = fc[i]


MMA_GEMM = Puzzle(
    name="tc_mma_gemm",
    title="A block of warps: a tensor-core matrix product with shared-memory staging",
    statement=f"""`c = a @ b` for any sizes (`a` is `m x k`, `b` is `k x n`, both float16; `c` float32).
A block of `{THREADS}` threads (4 warps) owns the `{BM} x {BN}` tile of `c` at
(`blockIdx.y * {BM}`, `blockIdx.x * {BN}`); warp `w` computes its 16x8 part at rows
`16 * (w >> 1)`, columns `8 * (w & 1)`, in `fc`. Walk `k` {BK} at a time: the block copies `a`'s
`{BM} x {BK}` slice into `sa` and `b`'s `{BK} x {BN}` slice into `sb` (0 past any edge), waits, each
warp loads its fragments from shared memory (the layout of `tc_mma_tile`, shifted to its part) and
calls `mma_m16n8k8`, and the block waits again before the next slice overwrites the shared arrays.
The stores from `fc` are written for you. Tolerance: the tensor core truncates as it sums, so
`c[i, j]` may be off by `(3 * K2 + 1) * 2**-23 * sum_k abs(a[i, k] * b[k, j])` (K2: `k` rounded up
to a multiple of {BK}).""",
    outputs=("c",),
    spec=spec,
    cases=cases,
    reference=mma_gemm,
    float64="reject",
    budget=Budget(shared_bytes=(BM * BK + BK * BN) * 2),
    hints=(
        "Thread tid copies A-slice elements e = tid, tid + 128 (row e // 8, column e % 8), B element tid.",
        "fa[i] = sa[wr + group + 8 * (i >> 1), 2 * t + (i & 1)]; fb[i] = sb[2 * t + i, wc + group].",
        "Two barriers per step: after the copies, and after the mma.",
    ),
    tolerance=tolerance,
    chapter=CHAPTER,
)

PUZZLES = [MMA_GEMM]
