"""The benchmark's SGEMM with 16-byte memory instructions (GPU benchmark only, no exercise): the
two-stage kernel of sgemm_fast.py with every global load, the n-tile's shared stores and the result's
stores four floats wide (vec4.py), where the prefetching kernels issue one float per instruction.

Per k step of BK = 8 at 128 x 128 block tiles and 256 threads, a thread issues 1 + 1 global loads
(was 4 + 4), 4 + 1 shared stores (was 4 + 4) and 16 16-byte shared reads for its 512 multiply-adds.
m's tile is stored transposed (k-major, rows padded by 4), so each thread's four k of one row go to
four shared rows; n's tile keeps its layout, one 16-byte store.

The 16-byte path needs `inner` and `cols` multiples of 4 and 16-byte-aligned data (the launcher
tests them and passes `vec`); other shapes, and the edge blocks, take the bounds-tested scalar loads.
Same register tiling, shared layout and result mapping as regtile.py's prefetching kernel; module
constants from `v4_constants` (via `specialize`); tests/test_pmpp_ch02_05.py checks it against NumPy
on the simulator at small tiles and reads its PTX at the benchmark's.
"""

from numba import cuda, float32, uint32

from .regtile import BK, BM, BM_PAD, BN, NT, TM, TN, TX, TY, regtile_constants
from .vec4 import load4, load4_global, store4

A_V, B_V = BM * BK // (4 * NT), BK * BN // (4 * NT)  # 16-byte loads per thread per k step
A_REG, B_REG = 4 * A_V, 4 * B_V  # their registers (local-array shapes must be plain constants)
M_TILE2, N_TILE2 = 2 * BK * BM_PAD, 2 * BK * BN  # two stages (shared shapes must be plain constants)
KQ, NQ = BK // 4, BN // 4  # groups of 4 along a row of m's tile and of n's tile
UNROLL = 8  # k values written out per trip of the k loop (8: no loop left at BK 8; 4: fewer registers)


def v4_constants(bm, bn, bk, tm, tn, unroll=8):
    """regtile_constants plus the 16-byte load counts (every tile row a whole number of 16 bytes) and
    UNROLL, the k values written out per trip of the k loop (8 or 4)."""
    c = regtile_constants(bm, bn, bk, tm, tn)
    nt = c["NT"]
    assert tm % 4 == 0 and tn % 4 == 0, "TM and TN must be multiples of 4"
    assert unroll in (4, 8) and bk % unroll == 0, "BK must be a multiple of the unrolling (4 or 8)"
    assert bm * bk % (4 * nt) == 0 and bk * bn % (4 * nt) == 0, "each thread must load whole groups of 4"
    return {
        **c,
        "A_V": bm * bk // (4 * nt),
        "B_V": bk * bn // (4 * nt),
        "A_REG": 4 * (bm * bk // (4 * nt)),
        "B_REG": 4 * (bk * bn // (4 * nt)),
        "M_TILE2": 2 * c["M_TILE"],
        "N_TILE2": 2 * c["N_TILE"],
        "KQ": bk // 4,
        "NQ": bn // 4,
        "UNROLL": unroll,
    }


@cuda.jit(device=True, inline="always")
def _fetch(mf, nf, a_reg, b_reg, t, row0, col0, k1, rows, inner, cols, whole):
    # the k step starting at k1 into registers: for m, group e of 4 is row e // KQ, k (e % KQ) * 4;
    # for n, row e // NQ, columns (e % NQ) * 4. `whole`: inside and aligned, 16 bytes per load
    for s in range(A_V):
        e = t + s * NT
        r = row0 + e // KQ
        kk = k1 + (e % KQ) * 4
        if whole:
            a_reg[4 * s], a_reg[4 * s + 1], a_reg[4 * s + 2], a_reg[4 * s + 3] = load4_global(
                mf, uint32(r * inner + kk)
            )
        else:
            for q in range(4):
                ok = r < rows and kk + q < inner
                a_reg[4 * s + q] = mf[r * inner + kk + q] if ok else float32(0)
    for s in range(B_V):
        e = t + s * NT
        kk = k1 + e // NQ
        c = col0 + (e % NQ) * 4
        if whole:
            b_reg[4 * s], b_reg[4 * s + 1], b_reg[4 * s + 2], b_reg[4 * s + 3] = load4_global(
                nf, uint32(kk * cols + c)
            )
        else:
            for q in range(4):
                ok = kk < inner and c + q < cols
                b_reg[4 * s + q] = nf[kk * cols + c + q] if ok else float32(0)


@cuda.jit(device=True, inline="always")
def _k1(m_tile, n_tile, mb, nb, m_reg, n_reg, acc):
    # one k: TM + TN values in 16-byte shared reads (runs of 4, strided by TY*4 / TX*4), TM x TN FMAs
    for g in range(TM // 4):
        m_reg[4 * g], m_reg[4 * g + 1], m_reg[4 * g + 2], m_reg[4 * g + 3] = load4(
            m_tile, mb + uint32(g * TY * 4)
        )
    for g in range(TN // 4):
        n_reg[4 * g], n_reg[4 * g + 1], n_reg[4 * g + 2], n_reg[4 * g + 3] = load4(
            n_tile, nb + uint32(g * TX * 4)
        )
    for i in range(TM):
        for j in range(TN):
            acc[i, j] += m_reg[i] * n_reg[j]


@cuda.jit(device=True, inline="always")
def _k4(m_tile, n_tile, mb, nb, m_reg, n_reg, acc):
    _k1(m_tile, n_tile, mb, nb, m_reg, n_reg, acc)
    _k1(m_tile, n_tile, mb + uint32(BM_PAD), nb + uint32(BN), m_reg, n_reg, acc)
    _k1(m_tile, n_tile, mb + uint32(2 * BM_PAD), nb + uint32(2 * BN), m_reg, n_reg, acc)
    _k1(m_tile, n_tile, mb + uint32(3 * BM_PAD), nb + uint32(3 * BN), m_reg, n_reg, acc)


@cuda.jit(device=True, inline="always")
def _k8(m_tile, n_tile, mb, nb, m_reg, n_reg, acc):
    # 8 k written out: at BK 8 the step has no k loop left (ptxas at 128x128: 153 registers, no spill;
    # UNROLL 4 keeps a two-trip loop, 125 registers: two blocks of 256 threads per SM instead of one)
    _k4(m_tile, n_tile, mb, nb, m_reg, n_reg, acc)
    _k4(m_tile, n_tile, mb + uint32(4 * BM_PAD), nb + uint32(4 * BN), m_reg, n_reg, acc)


@cuda.jit
def v4_matmul_kernel(pf, mf, nf, rows, inner, cols, vec):
    # pf, mf, nf: p, m and n flattened (row-major); vec: 1 when inner and cols are multiples of 4
    # and the three arrays' data 16-byte aligned (the launcher checks), else 0
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TX + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    m_tile = cuda.shared.array(M_TILE2, float32, alignment=16)  # two stages, one after the other
    n_tile = cuda.shared.array(N_TILE2, float32, alignment=16)
    acc = cuda.local.array((TM, TN), float32)
    m_reg = cuda.local.array(TM, float32)
    n_reg = cuda.local.array(TN, float32)
    a_reg = cuda.local.array(A_REG, float32)
    b_reg = cuda.local.array(B_REG, float32)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0
    inside = vec == 1 and row0 + BM <= rows and col0 + BN <= cols and rows * inner < 2**31
    inside = inside and inner * cols < 2**31 and rows * cols < 2**31
    _fetch(mf, nf, a_reg, b_reg, t, row0, col0, 0, rows, inner, cols, inside and BK <= inner)
    stage = 0
    for k0 in range(0, inner, BK):
        # last step's registers go into this step's stage; the other stage was last read before the
        # previous barrier, so one barrier a step is enough
        ms = uint32(stage * BK * BM_PAD)
        ns = uint32(stage * BK * BN)
        for s in range(A_V):
            e = t + s * NT
            r = uint32(e // KQ)
            kq = uint32((e % KQ) * 4)
            for q in range(4):  # transposed: four k of one row go to four rows of the tile
                m_tile[ms + (kq + q) * BM_PAD + r] = a_reg[4 * s + q]
        for s in range(B_V):
            e = t + s * NT
            store4(
                n_tile, ns + uint32(e * 4), b_reg[4 * s], b_reg[4 * s + 1], b_reg[4 * s + 2], b_reg[4 * s + 3]
            )
        cuda.syncthreads()
        k1 = k0 + BK
        if k1 < inner:  # the next step's global loads, in flight during the multiply-adds
            _fetch(mf, nf, a_reg, b_reg, t, row0, col0, k1, rows, inner, cols, inside and k1 + BK <= inner)
        mb = ms + uint32(ty * 4)
        nb = ns + uint32(tx * 4)
        if UNROLL == 8:
            for kq8 in range(BK // 8):
                _k8(
                    m_tile,
                    n_tile,
                    mb + uint32(kq8 * 8 * BM_PAD),
                    nb + uint32(kq8 * 8 * BN),
                    m_reg,
                    n_reg,
                    acc,
                )
        else:
            for kq4 in range(BK // 4):
                _k4(
                    m_tile,
                    n_tile,
                    mb + uint32(kq4 * 4 * BM_PAD),
                    nb + uint32(kq4 * 4 * BN),
                    m_reg,
                    n_reg,
                    acc,
                )
        stage = 1 - stage
    for i in range(TM):
        r = row0 + ty * 4 + (i // 4) * (TY * 4) + i % 4
        for g in range(TN // 4):
            c = col0 + tx * 4 + g * (TX * 4)
            if inside:
                j = 4 * g
                store4(pf, uint32(r * cols + c), acc[i, j], acc[i, j + 1], acc[i, j + 2], acc[i, j + 3])
            else:
                for q in range(4):
                    if r < rows and c + q < cols:
                        pf[r * cols + c + q] = acc[i, 4 * g + q]
