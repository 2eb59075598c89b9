"""Register tiling: each thread a TM x TN block of outputs from a BM x BN block tile.

The puzzles use small tiles so the simulator stays quick; `bench.py` recompiles the same kernels with
the tile sizes a real GPU wants (`specialize`, with `regtile_constants`).

Rungs:
- ch05_matmul_regtile (worked): TM x TN outputs in registers, strided so a warp's shared reads never
  collide, block-tile loads spread over all threads; m's tile stored transposed and padded.
- ch05_matmul_prefetch (worked): the same with the next step's tiles prefetched into registers and
  16-byte shared reads (the SGEMM that reaches 40% of cuBLAS).
"""

import math

from numba import cuda, float32, uint32

from helpers.puzzle import Budget, Case, Puzzle

from .common import CHAPTER, _operands, _tiles, spec

# register tiling: a block computes a BM x BN tile of p; each thread a TM x TN block of it, from
# rows ty, ty + TY, ... and columns tx, tx + TX, ... (strided, so a warp's shared reads never
# collide in one bank); k advances BK at a time
BM, BN, BK, TM, TN = 32, 32, 8, 4, 4


def regtile_constants(bm, bn, bk, tm, tn):
    """The module constants the register-tiled kernel needs, derived from its five tile sizes."""
    tx, ty = bn // tn, bm // tm
    nt = tx * ty
    assert bm * bk % nt == 0 and bk * bn % nt == 0, "each thread must load whole shares of the tiles"
    return {
        "BM": bm,
        "BN": bn,
        "BK": bk,
        "TM": tm,
        "TN": tn,
        "TX": tx,
        "TY": ty,
        "NT": nt,
        "A_LOADS": bm * bk // nt,
        "B_LOADS": bk * bn // nt,
        "PAD": 4,
        "BM_PAD": bm + 4,
        "M_TILE": bk * (bm + 4),
        "N_TILE": bk * bn,
    }


TX, TY = BN // TN, BM // TM  # threads per block along x (columns) and y (rows)
NT = TX * TY
A_LOADS, B_LOADS = BM * BK // NT, BK * BN // NT  # tile elements each thread loads per k step
PAD = 4
BM_PAD = BM + PAD  # shared-array shapes must be plain constants, not expressions
M_TILE, N_TILE = BK * BM_PAD, BK * BN


# ---------------------------------------------------------------------------- cases


def cases_regtile(rng):
    # two block tiles in each direction somewhere, ragged edges everywhere
    return [
        Case(grid=(math.ceil(c / BN), math.ceil(r / BM)), block=(TX, TY), args=_operands(rng, r, k, c))
        for r, k, c in ((37, 9, 41), (5, 9, 3), (40, 6, 17), (32, 7, 32), (10, 11, 70))
    ]


# ---------------------------------------------------------------------------- TM x TN outputs per thread


@cuda.jit
def regtile_matmul_kernel(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TX + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    # Flat shared tiles, k-major: element (kk, r) of m's tile is m_tile[kk * BM_PAD + r] (stored
    # transposed so the compute loop reads it like n's), element (kk, c) of n's is n_tile[kk * BN + c].
    # The stores turn the tile (a warp's 32 lanes store BK values of k for 32 / BK rows), so lane
    # (r, kk) writes word kk * BM_PAD + r, in bank (kk * PAD + r) % 32 since BM_PAD = BM + PAD and
    # BM is a multiple of 32. With PAD = 4 and BK = 8 (here and in the benchmark) those are 32
    # different banks; without the padding, every lane with the same r would share one bank.
    m_tile = cuda.shared.array(M_TILE, float32)
    n_tile = cuda.shared.array(N_TILE, float32)
    acc = cuda.local.array((TM, TN), float32)
    m_reg = cuda.local.array(TM, float32)
    n_reg = cuda.local.array(TN, float32)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0
    for k0 in range(0, inner, BK):
        for s in range(A_LOADS):
            e = t + s * NT
            r = e // BK
            kk = e % BK
            inside = row0 + r < rows and k0 + kk < inner
            m_tile[kk * BM_PAD + r] = m[row0 + r, k0 + kk] if inside else float32(0)
        for s in range(B_LOADS):
            e = t + s * NT
            kk = e // BN
            c = e % BN
            inside = k0 + kk < inner and col0 + c < cols
            n_tile[kk * BN + c] = n[k0 + kk, col0 + c] if inside else float32(0)
        cuda.syncthreads()
        for kk in range(BK):
            # One base per k step plus constant offsets: cheap addresses in the hot loop. Unsigned,
            # because Numba adds a negative-index wraparound test to every signed index.
            mb = uint32(kk * BM_PAD + ty)
            nb = uint32(kk * BN + tx)
            for i in range(TM):
                m_reg[i] = m_tile[mb + uint32(i * TY)]
            for j in range(TN):
                n_reg[j] = n_tile[nb + uint32(j * TX)]
            # TM + TN shared reads feed TM * TN multiply-adds
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += m_reg[i] * n_reg[j]
        cuda.syncthreads()
    for i in range(TM):
        r = row0 + ty + i * TY
        for j in range(TN):
            c = col0 + tx + j * TX
            if r < rows and c < cols:
                p[r, c] = acc[i, j]


CH05_MATMUL_REGTILE = Puzzle(
    name="ch05_matmul_regtile",
    title="PMPP 5: Register tiling (thread coarsening)",
    statement=f"""\
Each thread computes a `TM x TN` block of `p` (here `{TM} x {TN}`; `{BM} x {BN}` per block of
`{TX} x {TY}` threads) held in registers. Per step of `k` it reads `TM` values of `m`'s tile and
`TN` of `n`'s from shared memory and does `TM * TN` multiply-adds with them: `TM * TN / (TM + TN)`
multiply-adds per shared read instead of 1/2, and each global load of a block tile now feeds
`TM` (or `TN`) times more arithmetic. The loads of a block tile are spread over all its threads, and
each thread's outputs are strided (`ty + i * TY`, `tx + j * TX`) so the lanes of a warp read
neighbouring shared words. The benchmark compiles this kernel with `BM = BN = 128, BK = 8,
TM = TN = 8`.""",
    outputs=("p",),
    spec=spec,
    cases=cases_regtile,
    reference=regtile_matmul_kernel,
    float64="reject",  # the lesson is speed: a float64 accumulator is up to 64 times slower
    budget=Budget(
        global_reads=lambda c: (A_LOADS + B_LOADS) * _tiles(c, BK),
        global_writes=TM * TN,
        shared_bytes=(M_TILE + N_TILE) * 4,
    ),
    rtol=1e-4,
    atol=1e-4,
    chapter=CHAPTER,
)


# -------------------------------------------------------------------------- prefetch and 16-byte shared reads


@cuda.jit
def prefetch_matmul_kernel(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TX + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    # 16-byte aligned, so four neighbouring floats can come in one 128-bit shared load
    m_tile = cuda.shared.array(M_TILE, float32, alignment=16)
    n_tile = cuda.shared.array(N_TILE, float32, alignment=16)
    acc = cuda.local.array((TM, TN), float32)
    m_reg = cuda.local.array(TM, float32)
    n_reg = cuda.local.array(TN, float32)
    m_next = cuda.local.array(A_LOADS, float32)
    n_next = cuda.local.array(B_LOADS, float32)
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = 0
    for s in range(A_LOADS):
        e = t + s * NT
        r = e // BK
        kk = e % BK
        m_next[s] = m[row0 + r, kk] if row0 + r < rows and kk < inner else float32(0)
    for s in range(B_LOADS):
        e = t + s * NT
        kk = e // BN
        c = e % BN
        n_next[s] = n[kk, col0 + c] if kk < inner and col0 + c < cols else float32(0)
    for k0 in range(0, inner, BK):
        for s in range(A_LOADS):
            e = t + s * NT
            m_tile[(e % BK) * BM_PAD + e // BK] = m_next[s]
        for s in range(B_LOADS):
            n_tile[t + s * NT] = n_next[s]
        cuda.syncthreads()
        # issue the global loads of the next step now; they arrive while the products below run
        k1 = k0 + BK
        for s in range(A_LOADS):
            e = t + s * NT
            r = e // BK
            kk = k1 + e % BK
            m_next[s] = m[row0 + r, kk] if row0 + r < rows and kk < inner else float32(0)
        for s in range(B_LOADS):
            e = t + s * NT
            kk = k1 + e // BN
            c = e % BN
            n_next[s] = n[kk, col0 + c] if kk < inner and col0 + c < cols else float32(0)
        for kk in range(BK):
            # rows ty*4 .. ty*4+3, then the same 4 rows TY*4 further on (columns alike): runs of 4
            # contiguous, aligned floats, which the compiler turns into one ld.shared.v4 each
            mb = uint32(kk * BM_PAD + ty * 4)
            nb = uint32(kk * BN + tx * 4)
            for i in range(TM):
                m_reg[i] = m_tile[mb + uint32((i // 4) * (TY * 4) + i % 4)]
            for j in range(TN):
                n_reg[j] = n_tile[nb + uint32((j // 4) * (TX * 4) + j % 4)]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += m_reg[i] * n_reg[j]
        cuda.syncthreads()
    for i in range(TM):
        r = row0 + ty * 4 + (i // 4) * (TY * 4) + i % 4
        for j in range(TN):
            c = col0 + tx * 4 + (j // 4) * (TX * 4) + j % 4
            if r < rows and c < cols:
                p[r, c] = acc[i, j]


CH05_MATMUL_PREFETCH = Puzzle(
    name="ch05_matmul_prefetch",
    title="PMPP 5: Register tiling with prefetch and 16-byte shared reads",
    statement=f"""\
The register-tiled kernel again, with two changes that matter on a real GPU. **Prefetch**: right
after the barrier, each thread issues the global loads of the *next* `k` step into registers
(`m_next`, `n_next`), then does this step's products; the loads arrive while the multiply-adds run,
and are stored to shared memory at the top of the next step. **Runs of 4**: each thread's rows are
`ty*4 .. ty*4+3` and the same four `TY*4` further on (columns alike), so its reads of a tile row are
4 contiguous, 16-byte aligned floats (`cuda.shared.array(..., alignment=16)`), which the compiler
turns into one 128-bit `ld.shared.v4` instead of four loads. Same global reads and shared memory as
before. The benchmark compiles it with `BM = BN = 128, BK = 8, TM = TN = 8` and at most 128
registers per thread (two blocks per SM). `TM` and `TN` must be multiples of 4 (here `{TM} x {TN}`).""",
    outputs=("p",),
    spec=spec,
    cases=cases_regtile,
    reference=prefetch_matmul_kernel,
    float64="reject",  # the lesson is speed: a float64 accumulator is up to 64 times slower
    budget=Budget(
        global_reads=lambda c: (A_LOADS + B_LOADS) * _tiles(c, BK),
        global_writes=TM * TN,
        shared_bytes=(M_TILE + N_TILE) * 4,
    ),
    rtol=1e-4,
    atol=1e-4,
    chapter=CHAPTER,
)


PUZZLES = [CH05_MATMUL_REGTILE, CH05_MATMUL_PREFETCH]
