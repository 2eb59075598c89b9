"""Known-wrong and known-right kernels for puzzles/tensor_cores/reg_gemm.py (a warp's 2 x 2 grid of
mma tiles, fragments reused from registers, shared staging)."""

from numba import cuda, float32
from numba.types import float16

from helpers.tensor_cores import mma_m16n8k8
from mutants.common import NO_BARRIER, RACE, WRONG, M, over
from puzzles.tensor_cores import reg_gemm as m
from puzzles.tensor_cores.reg_gemm import RK, RM, RN

rg = m.mma_reg_gemm
SB = RM * RK  # where B's slice starts in the flat shared array of the variant
FLAT = RM * RK + RK * RN

MUTANTS = {
    "tc_mma_reg_gemm": [
        # the loop indices mixed up: tile (i, j) multiplies the A fragment of tile row j, so the second
        # tile row of the first column and the first of the second use the wrong rows of A
        M(rg, "a_fragment_of_wrong_row", WRONG, ("mma_m16n8k8(fa[i], fb[j],", "mma_m16n8k8(fa[j], fb[j],")),
        # no barrier after the mma: the next step's copies overwrite slices a slower warp still reads
        M(
            rg,
            "no_barrier_before_overwrite",
            RACE,
            ("        cuda.syncthreads()  # all warps have read the slices before the next copies\n", ""),
        ),
        # no barrier between the copies and the fragment loads
        M(
            rg,
            "no_barrier_before_mma",
            NO_BARRIER,
            (
                "        cuda.syncthreads()  # the slices are complete before any warp reads its fragments\n",
                "",
            ),
        ),
        # the fragments read for the warp's rows from the wrong bit of its number: warps 1 and 2 read
        # each other's rows of A while the given stores write their own
        M(
            rg,
            "wrong_warp_to_tile_mapping",
            WRONG,
            ("sa[wr + 16 * i + group", "sa[WM * (warp & 1) + 16 * i + group"),
        ),
        # one accumulator per tile column, not per tile: both tile rows add into fc[j]
        M(rg, "accumulators_not_per_tile", WRONG, ("fc[TN * i + j])", "fc[j])")),
        # right values, no reuse: the fragments loaded again for every tile (24 reads a step, not 12)
        M(
            rg,
            "fragments_reloaded_per_tile",
            over("shared_reads"),
            (
                "            for j in range(TN):\n                mma_m16n8k8(",
                "            for j in range(TN):\n"
                "                for e in range(4):\n"
                "                    fa[i, e] = sa[wr + 16 * i + group + 8 * (e >> 1), 2 * t + (e & 1)]\n"
                "                for e in range(2):\n"
                "                    fb[j, e] = sb[2 * t + e, wc + 8 * j + group]\n"
                "                mma_m16n8k8(",
            ),
        ),
    ]
}


@cuda.jit
def named_fragments(c, a, b, m, n, k):  # every fragment its own array, the 2 x 2 tiles written out
    # (128 threads: each copies four values of A's slice and two of B's)
    tid = cuda.threadIdx.x
    warp, lane = tid // 32, tid % 32
    g, t = lane // 4, lane % 4
    row0 = cuda.blockIdx.y * RM
    col0 = cuda.blockIdx.x * RN
    wr, wc = 32 * (warp // 2), 16 * (warp % 2)
    s = cuda.shared.array(FLAT, float16)  # A's slice, then B's, flat
    a0 = cuda.local.array(4, float16)
    a1 = cuda.local.array(4, float16)
    b0 = cuda.local.array(2, float16)
    b1 = cuda.local.array(2, float16)
    c00 = cuda.local.array(4, float32)
    c01 = cuda.local.array(4, float32)
    c10 = cuda.local.array(4, float32)
    c11 = cuda.local.array(4, float32)
    for e in range(4):
        c00[e] = 0.0
        c01[e] = 0.0
        c10[e] = 0.0
        c11[e] = 0.0
    steps = (k + RK - 1) // RK
    for step in range(steps):
        k0 = step * RK
        for q in range(4):  # A: thread tid copies row tid // 2, four columns from 4 * (tid % 2)
            r, kk = tid // 2, 4 * (tid % 2) + q
            ok = row0 + r < m and k0 + kk < k
            s[r * RK + kk] = a[row0 + r, k0 + kk] if ok else float16(0)
        for q in range(2):  # B: row tid // 16, two neighbours
            kk, cc = tid // 16, 2 * (tid % 16) + q
            ok = k0 + kk < k and col0 + cc < n
            s[SB + kk * RN + cc] = b[k0 + kk, col0 + cc] if ok else float16(0)
        cuda.syncthreads()
        for e in range(4):
            col = 2 * t + e % 2
            a0[e] = s[(wr + g + 8 * (e // 2)) * RK + col]
            a1[e] = s[(wr + 16 + g + 8 * (e // 2)) * RK + col]
        for e in range(2):
            b0[e] = s[SB + (2 * t + e) * RN + wc + g]
            b1[e] = s[SB + (2 * t + e) * RN + wc + 8 + g]
        mma_m16n8k8(a0, b0, c00)
        mma_m16n8k8(a0, b1, c01)
        mma_m16n8k8(a1, b0, c10)
        mma_m16n8k8(a1, b1, c11)
        cuda.syncthreads()
    for e in range(4):
        r = row0 + wr + g + 8 * (e // 2)
        col = col0 + wc + 2 * t + e % 2
        if r < m and col < n:
            c[r, col] = c00[e]
        if r < m and col + 8 < n:
            c[r, col + 8] = c01[e]
        if r + 16 < m and col < n:
            c[r + 16, col] = c10[e]
        if r + 16 < m and col + 8 < n:
            c[r + 16, col + 8] = c11[e]


VARIANTS = {"tc_mma_reg_gemm": [("named_fragments", named_fragments)]}
SEEDS = {"tc_mma_reg_gemm": (0, 1)}
