"""Known-wrong and known-right kernels for puzzles/tensor_cores/mma_gemm.py (a block of warps, shared
staging, one mma per warp per step)."""

from numba import cuda, float32
from numba.types import float16

from helpers.tensor_cores import mma_m16n8k8
from mutants.common import NO_BARRIER, OOB, RACE, WRONG, M
from puzzles.tensor_cores import mma_gemm as m
from puzzles.tensor_cores.mma_gemm import BK, BM, BN, THREADS

mg = m.mma_gemm
FLAT = BM * BK + BK * BN  # both slices in one shared array

MUTANTS = {
    "tc_mma_gemm": [
        # no barrier between the staging and the mma: a warp reads slices other warps have not written
        M(
            mg,
            "no_barrier_before_mma",
            NO_BARRIER,
            (
                "        cuda.syncthreads()  # the slices are complete before any warp reads its fragments\n",
                "",
            ),
        ),
        # no barrier after the mma: the next step's copies overwrite what a slower warp still reads
        M(
            mg,
            "no_barrier_after_mma",
            RACE,
            (
                "        cuda.syncthreads()  # all warps have read them before the next copies\n",
                "",
            ),
        ),
        # every warp reads the block's first 16x8 part: its own offset forgotten
        M(
            mg,
            "warp_offset_forgotten",
            WRONG,
            (
                "fa[i] = sa[wr + group + 8 * (i >> 1), 2 * t + (i & 1)]",
                "fa[i] = sa[group + 8 * (i >> 1), 2 * t + (i & 1)]",
            ),
        ),
        # fragment values from the wrong slots of the slice: B's rows and columns exchanged
        M(
            mg,
            "b_fragment_index",
            WRONG,
            ("fb[i] = sb[2 * t + i, wc + group]", "fb[i] = sb[group, wc + 2 * t + i]"),
        ),
        # no zeros past the edge of k: stale values of the previous step join the sum
        M(
            mg,
            "no_zero_padding",
            OOB,
            ("            if row0 + r < m and k0 + kk < k:", "            if True:"),
        ),
    ]
}


@cuda.jit
def two_loads_per_thread(c, a, b, m, n, k):
    tid = cuda.threadIdx.x
    warp, lane = tid // 32, tid % 32
    group, t = lane >> 2, lane & 3
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    wr, wc = 16 * (warp >> 1), 8 * (warp & 1)
    sa = cuda.shared.array((BM, BK), float16)
    sb = cuda.shared.array((BK, BN), float16)
    fa = cuda.local.array(4, float16)
    fb = cuda.local.array(2, float16)
    fc = cuda.local.array(4, float32)
    for i in range(4):
        fc[i] = 0.0
    ra, ka = tid // 4, 2 * (tid % 4)  # a thread copies two neighbours of one row of A
    for k0 in range(0, k, BK):
        for j in range(2):
            ok = row0 + ra < m and k0 + ka + j < k
            sa[ra, ka + j] = a[row0 + ra, k0 + ka + j] if ok else float16(0)
        kb, cb = tid // BN, tid % BN
        ok = k0 + kb < k and col0 + cb < n
        sb[kb, cb] = b[k0 + kb, col0 + cb] if ok else float16(0)
        cuda.syncthreads()
        for i in range(4):
            fa[i] = sa[wr + group + 8 * (i >> 1), 2 * t + (i & 1)]
        for i in range(2):
            fb[i] = sb[2 * t + i, wc + group]
        mma_m16n8k8(fa, fb, fc)
        cuda.syncthreads()
    for i in range(4):
        r = row0 + wr + group + 8 * (i >> 1)
        col = col0 + wc + 2 * t + (i & 1)
        if r < m and col < n:
            c[r, col] = fc[i]


@cuda.jit
def flat_shared(c, a, b, m, n, k):  # one flat shared array for both slices
    tid = cuda.threadIdx.x
    warp, lane = tid // 32, tid % 32
    g, t = lane >> 2, lane & 3
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    wr, wc = 16 * (warp // 2), 8 * (warp % 2)
    s = cuda.shared.array(FLAT, float16)
    fa = cuda.local.array(4, float16)
    fb = cuda.local.array(2, float16)
    fc = cuda.local.array(4, float32)
    for i in range(4):
        fc[i] = 0.0
    steps = (k + BK - 1) // BK
    for step in range(steps):
        k0 = step * BK
        for e in range(tid, BM * BK, THREADS):
            r, kk = e // BK, e % BK
            s[e] = a[row0 + r, k0 + kk] if (row0 + r < m and k0 + kk < k) else float16(0)
        kk, cc = tid // BN, tid % BN
        s[BM * BK + tid] = b[k0 + kk, col0 + cc] if (k0 + kk < k and col0 + cc < n) else float16(0)
        cuda.syncthreads()
        for i in range(4):
            fa[i] = s[(wr + g + 8 * (i // 2)) * BK + 2 * t + i % 2]
        for i in range(2):
            fb[i] = s[BM * BK + (2 * t + i) * BN + wc + g]
        mma_m16n8k8(fa, fb, fc)
        cuda.syncthreads()
    for i in range(4):
        r = row0 + wr + g + 8 * (i // 2)
        col = col0 + wc + 2 * t + i % 2
        if r < m and col < n:
            c[r, col] = fc[i]


VARIANTS = {"tc_mma_gemm": [("two_loads_per_thread", two_loads_per_thread), ("flat_shared", flat_shared)]}
SEEDS = {"tc_mma_gemm": (0, 1, 2)}
