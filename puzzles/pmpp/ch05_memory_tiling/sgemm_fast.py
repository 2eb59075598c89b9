"""The benchmark's fastest SGEMM (GPU benchmark only, no exercise): ch05_matmul_prefetch with the
instructions that are not multiply-adds cut, found by reading its machine code (SASS, from ptxas and
nvdisasm on the benchmark's constants): per k step of 8 the prefetching kernel ran about 960
instructions for its 512 FFMA, so at best about half the issue slots multiplied.

- **Two shared stages** (double buffering): step k reads one stage while the prefetched registers go
  into the other, so one barrier a step instead of two.
- **The k loop unrolled by 4** (`_k4`, inlined): the loop's counter, compare and address arithmetic
  are paid once per 4 steps of 64 multiply-adds instead of every step.
- **A fast path for whole tiles**: where the block's rows, columns and the next k step are inside
  the matrices (every block but the edge ones), the global loads skip the bounds tests, with unsigned
  indices (Numba adds a negative-index wraparound test to every signed one).

Same tiles, shared layout (m's tile transposed and padded), 16-byte shared reads and results as the
prefetching kernel; `tests/test_pmpp_a.py` checks it against NumPy on ragged shapes on the simulator
and reads its SASS for the multiply-add share. Module constants as regtile.py's (`regtile_constants`).
"""

import numba
from numba import cuda, float32, uint32

from .regtile import (
    A_LOADS,
    B_LOADS,
    BK,
    BM,
    BM_PAD,
    BN,
    M_TILE,
    N_TILE,
    NT,
    TM,
    TN,
    TX,
    TY,
    regtile_constants,
)

M_TILE2, N_TILE2 = 2 * M_TILE, 2 * N_TILE  # two stages (shared-array shapes must be plain constants)


def fast_constants(bm, bn, bk, tm, tn):
    """regtile_constants plus the two-stage tile sizes; BK must be a multiple of 4 (the unrolling)."""
    assert bk % 4 == 0, "the k loop is unrolled by 4: BK must be a multiple of 4"
    c = regtile_constants(bm, bn, bk, tm, tn)
    return {**c, "M_TILE2": 2 * c["M_TILE"], "N_TILE2": 2 * c["N_TILE"]}


@cuda.jit(device=True, inline="always")
def _k1(m_tile, n_tile, mb, nb, m_reg, n_reg, acc):
    # one k: TM + TN values from the tiles (runs of 4: one 16-byte read each), TM x TN multiply-adds
    for i in range(TM):
        m_reg[i] = m_tile[mb + uint32((i // 4) * (TY * 4) + i % 4)]
    for j in range(TN):
        n_reg[j] = n_tile[nb + uint32((j // 4) * (TX * 4) + j % 4)]
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
def _fetch(mf, nf, m_next, n_next, a_off, b_off, t, row0, col0, k1, rows, inner, cols, whole):
    # the k step starting at k1 into registers. m and n come flattened: element (r, kk) of m is
    # mf[r * inner + kk], so each load is a precomputed offset plus k1 (n: plus k1 * cols).
    # `whole`: every index is inside, no tests needed
    if whole:
        for s in range(A_LOADS):
            m_next[s] = mf[uint32(a_off[s] + k1)]
        kc = k1 * cols
        for s in range(B_LOADS):
            n_next[s] = nf[uint32(b_off[s] + kc)]
        return
    for s in range(A_LOADS):
        e = t + s * NT
        r = row0 + e // BK
        kk = k1 + e % BK
        m_next[s] = mf[r * inner + kk] if r < rows and kk < inner else float32(0)
    for s in range(B_LOADS):
        e = t + s * NT
        kk = k1 + e // BN
        c = col0 + e % BN
        n_next[s] = nf[kk * cols + c] if kk < inner and c < cols else float32(0)


@cuda.jit
def prefetch2_matmul_kernel(p, mf, nf, rows, inner, cols):
    # mf, nf: m and n flattened (the launcher passes m.reshape(-1)); p as the other kernels
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
    m_next = cuda.local.array(A_LOADS, float32)
    n_next = cuda.local.array(B_LOADS, float32)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0
    a_off = cuda.local.array(A_LOADS, numba.int32)  # each load's offset at k = 0, kept in registers
    b_off = cuda.local.array(B_LOADS, numba.int32)
    for s in range(A_LOADS):
        e = t + s * NT
        a_off[s] = (row0 + e // BK) * inner + e % BK
    for s in range(B_LOADS):
        e = t + s * NT
        b_off[s] = (e // BN) * cols + col0 + e % BN
    inside = row0 + BM <= rows and col0 + BN <= cols and rows * inner < 2**31 and inner * cols < 2**31
    _fetch(mf, nf, m_next, n_next, a_off, b_off, t, row0, col0, 0, rows, inner, cols, inside and BK <= inner)
    stage = 0
    for k0 in range(0, inner, BK):
        # the registers fetched last step go into this step's stage; the other stage was last read
        # before the previous barrier, so one barrier a step is enough
        ms = uint32(stage * M_TILE)
        ns = uint32(stage * N_TILE)
        for s in range(A_LOADS):
            e = t + s * NT
            m_tile[ms + uint32((e % BK) * BM_PAD + e // BK)] = m_next[s]
        for s in range(B_LOADS):
            n_tile[ns + uint32(t + s * NT)] = n_next[s]
        cuda.syncthreads()
        k1 = k0 + BK
        if k1 < inner:  # the next step's global loads, in flight during the multiply-adds
            whole = inside and k1 + BK <= inner
            _fetch(mf, nf, m_next, n_next, a_off, b_off, t, row0, col0, k1, rows, inner, cols, whole)
        mb = ms + uint32(ty * 4)
        nb = ns + uint32(tx * 4)
        for kq in range(BK // 4):
            _k4(m_tile, n_tile, mb + uint32(kq * 4 * BM_PAD), nb + uint32(kq * 4 * BN), m_reg, n_reg, acc)
        stage = 1 - stage
    for i in range(TM):
        r = row0 + ty * 4 + (i // 4) * (TY * 4) + i % 4
        for j in range(TN):
            c = col0 + tx * 4 + (j // 4) * (TX * 4) + j % 4
            if r < rows and c < cols:
                p[r, c] = acc[i, j]
