"""Attention, rung 4: register tiles (what the GPU runs).

    llm3_attn_flash_tiled  a TY x TX grid of threads per block of queries; each thread owns RM queries,
                           RN keys of each tile and RD output columns; shared tiles padded by one

`tiled_constants` gives the module constants for one block shape; `tiled_for_gpu` recompiles the
kernel at a GPU's size (the benchmark's and the GPT-2 block's). Tolerance: common.py's docstring.
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Puzzle
from puzzles.llm.attention.common import _TOL, CHAPTER, MAX_D, _attn_cases, _blocks, attention_spec

# ------------------------------------------------------------------ 4. register tiles (what the GPU runs)

# The block is a TY x TX grid of threads. Thread (ty, tx) owns the RM queries ty, ty + TY, ... of the
# block's FB_R = TY * RM, the RN keys tx, tx + TX, ... of each tile of FB_C = TX * RN, and the RD output
# columns tx, tx + TX, ... of d <= MAX_D = TX * RD. A row's TX threads are consecutive lanes of one warp,
# so its maximum and sum are combined with shuffles. Small here; the benchmark recompiles it with
# TX = 8, TY = 16, RM = 4, RN = 4 (64 queries, 32 keys a tile, 128 threads).


def tiled_constants(tx: int, ty: int, rm: int, rn: int, max_d: int) -> dict:
    """Every module constant attn_flash_tiled reads, for one shape of block (Numba needs them constant)."""
    fb_r, fb_c = ty * rm, tx * rn
    return dict(
        TX=tx,
        TY=ty,
        RM=rm,
        RN=rn,
        MAX_D=max_d,
        FB_R=fb_r,
        FB_C=fb_c,
        RD=max_d // tx,
        RMN=rm * rn,
        RMD=rm * (max_d // tx),
        LOG_TX=tx.bit_length() - 1,
        FB_R1=fb_r + 1,
        FB_C1=fb_c + 1,  # padded rows: no shared-memory bank conflicts
        QT_SIZE=max_d * (fb_r + 1),
        KT_SIZE=max_d * (fb_c + 1),
        VS_SIZE=fb_c * max_d,
        PS_SIZE=fb_r * (fb_c + 1),
    )


TX, TY, RM, RN = 4, 2, 2, 2


# the simulator's values of tiled_constants(TX, TY, RM, RN, MAX_D), spelled out (a test checks they agree)
FB_R = TY * RM  # queries per block


FB_C = TX * RN  # keys per tile


RD = MAX_D // TX  # output columns per thread


RMN = RM * RN  # scores per thread


RMD = RM * RD  # output values per thread


LOG_TX = 2  # log2(TX): shuffle steps to combine a row across its lanes


FB_R1 = FB_R + 1


FB_C1 = FB_C + 1


QT_SIZE = MAX_D * FB_R1


KT_SIZE = MAX_D * FB_C1


VS_SIZE = FB_C * MAX_D


PS_SIZE = FB_R * FB_C1


NEG_INF32 = np.float32(-np.inf)  # float32 constants: a Python float would make the arithmetic float64


ZERO32 = np.float32(0.0)


NONNEG = 0x3FFFFFFF  # i & NONNEG == i for every offset here, and is provably >= 0


TILED_GPU = (8, 16, 4, 4)  # TX, TY, RM, RN for the GPU: 128 threads, 64 queries, 32 keys a tile


def tiled_for_gpu(d: int, tx: int, ty: int, rm: int, rn: int):
    """attn_flash_tiled recompiled for head dimension d and a GPU-sized block: (kernel, queries per block)."""
    from helpers.timing import specialize

    return specialize(attn_flash_tiled, **tiled_constants(tx, ty, rm, rn, d)), ty * rm


def tiled_cases(rng):
    return _attn_cases(rng, lambda bh, t, d: ((_blocks(t, FB_R), bh), (TX, TY)))


@cuda.jit
def attn_flash_tiled(out, q, k, v, causal):
    # flat shared arrays, rows padded by one: the hot loops step an offset instead of multiplying
    qt = cuda.shared.array(QT_SIZE, numba.float32)  # Q^T, scaled: element (c, r) at c * FB_R1 + r
    kt = cuda.shared.array(KT_SIZE, numba.float32)  # K^T of the tile: (c, r) at c * FB_C1 + r
    vs = cuda.shared.array(VS_SIZE, numba.float32)  # V of the tile: (r, c) at r * MAX_D + c
    ps = cuda.shared.array(PS_SIZE, numba.float32)  # the tile's weights: (i, j) at i * FB_C1 + j
    sc = cuda.local.array(RMN, numba.float32)
    acc = cuda.local.array(RMD, numba.float32)
    m = cuda.local.array(RM, numba.float32)
    lsum = cuda.local.array(RM, numba.float32)
    qv = cuda.local.array(RM, numba.float32)
    kv = cuda.local.array(RD, numba.float32)
    red = cuda.local.array(RM, numba.float32)  # a value per row, combined across the row's lanes
    alpha = cuda.local.array(RM, numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tid = ty * TX + tx
    nt = TX * TY
    mask = 0xFFFFFFFF if nt >= 32 else (1 << nt) - 1
    b = cuda.blockIdx.y
    # the last queries first: under the causal mask they have the most keys, and starting the longest
    # blocks first leaves short ones, not long ones, for the end of the grid
    q0 = (cuda.gridDim.x - 1 - cuda.blockIdx.x) * FB_R
    T = q.shape[1]
    d = q.shape[2]
    scale = np.float32(1.0) / math.sqrt(np.float32(d))
    # element e of a tile is row e // MAX_D, column e % MAX_D: MAX_D is a constant, so these are shifts
    # (d is known only at run time, and a 64-bit division by it costs dozens of instructions)
    for e in range(tid, FB_R * MAX_D, nt):
        r = (e & NONNEG) // MAX_D
        c = (e & NONNEG) % MAX_D
        if c < d:
            qt[c * FB_R1 + r] = q[b, (q0 + r) & NONNEG, c] * scale if q0 + r < T else ZERO32
    for ii in range(RM):
        m[ii] = NEG_INF32
        lsum[ii] = ZERO32
        for cc in range(RD):
            acc[ii * RD + cc] = ZERO32
    last = min(T, q0 + FB_R) if causal else T
    for k0 in range(0, last, FB_C):
        cuda.syncthreads()
        for e in range(tid, FB_C * MAX_D, nt):
            r = (e & NONNEG) // MAX_D
            c = (e & NONNEG) % MAX_D
            if c < d:
                if k0 + r < T:
                    j = (k0 + r) & NONNEG
                    kt[c * FB_C1 + r] = k[b, j, c]
                    vs[r * MAX_D + c] = v[b, j, c]
                else:
                    kt[c * FB_C1 + r] = 0.0
            else:
                vs[r * MAX_D + c] = 0.0  # columns past d: zeros, so that P V needs no test
        cuda.syncthreads()
        # S = Q K^T for this thread's RM x RN scores: RM + RN shared loads per RM * RN multiply-adds.
        # Numba wraps negative indices as Python does, a test and a select per access, unless it can
        # prove the index >= 0: the masks with NONNEG below (which change nothing) prove it
        for x in range(RMN):
            sc[x] = ZERO32
        qo = ty
        ko = tx
        c = 0
        while c < d:
            qb = qo & NONNEG  # no-op, but now the compiler knows qb >= 0: no wrap-around test
            kb = ko & NONNEG
            for ii in range(RM):
                qv[ii] = qt[qb + TY * ii]
            for jj in range(RN):
                kv[jj] = kt[kb + TX * jj]
            for ii in range(RM):
                for jj in range(RN):
                    sc[ii * RN + jj] += qv[ii] * kv[jj]
            qo += FB_R1
            ko += FB_C1
            c += 1
        # the online softmax, row by row; every loop has a constant trip count so that the compiler
        # unrolls it and keeps these small arrays in registers (one variable index would put them all
        # in slow local memory)
        for ii in range(RM):
            i = q0 + ty + TY * ii
            mx = NEG_INF32
            for jj in range(RN):
                j = k0 + tx + TX * jj
                if j >= T or (causal and j > i):
                    sc[ii * RN + jj] = NEG_INF32
                mx = max(mx, sc[ii * RN + jj])
            red[ii] = mx
        for step in range(LOG_TX):  # the row's TX lanes: xor 4, 2, 1 on the GPU
            for ii in range(RM):
                red[ii] = max(red[ii], cuda.shfl_xor_sync(mask, red[ii], TX >> (step + 1)))
        for ii in range(RM):
            m_new = max(m[ii], red[ii])
            alpha[ii] = math.exp(m[ii] - m_new)
            m[ii] = m_new
            rs = ZERO32
            for jj in range(RN):
                p = math.exp(sc[ii * RN + jj] - m_new)
                ps[(ty + TY * ii) * FB_C1 + tx + TX * jj] = p
                rs += p
            red[ii] = rs
        for step in range(LOG_TX):
            for ii in range(RM):
                red[ii] += cuda.shfl_xor_sync(mask, red[ii], TX >> (step + 1))
        for ii in range(RM):
            lsum[ii] = lsum[ii] * alpha[ii] + red[ii]
            for cc in range(RD):
                acc[ii * RD + cc] *= alpha[ii]
        cuda.syncthreads()
        # O += P V: RM + RD shared loads per RM * RD multiply-adds
        n = min(FB_C, T - k0)
        po = ty * FB_C1
        vo = tx
        j = 0
        while j < n:
            pb = po & NONNEG
            vb = vo & NONNEG
            for ii in range(RM):
                qv[ii] = ps[pb + TY * FB_C1 * ii]
            for cc in range(RD):
                kv[cc] = vs[vb + TX * cc]
            for ii in range(RM):
                for cc in range(RD):
                    acc[ii * RD + cc] += qv[ii] * kv[cc]
            po += 1
            vo += MAX_D
            j += 1
    for ii in range(RM):
        i = q0 + ty + TY * ii
        if i < T:
            for cc in range(RD):
                c = tx + TX * cc
                if c < d:
                    out[b, i, c] = acc[ii * RD + cc] / lsum[ii]


ATTN_FLASH_TILED = Puzzle(
    name="llm3_attn_flash_tiled",
    title="FlashAttention-2 style: register tiles and warp shuffles",
    statement=f"""The FlashAttention-style kernel organised like a fast matrix product, to be timed on a
GPU. A `TY x TX` block (here `{TY} x {TX}`; `8 x 16` on the GPU) handles `FB_R = TY * RM` queries.
Each thread computes an `RM x RN` patch of the tile's scores from `Q^T` and `K^T` in shared memory
(each value it loads serves `RN` or `RM` multiply-adds), keeps the running maximum and sum of its
`RM` rows, combines them across the row's `TX` threads with `shfl_xor_sync`, writes its weights to
shared memory, and accumulates an `RM x RD` patch of the output from `P` and `V`. Three barriers per
tile: before loading, after loading, and between writing `P` and reading it.""",
    outputs=("out",),
    spec=attention_spec,
    cases=tiled_cases,
    reference=attn_flash_tiled,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    chapter=CHAPTER,
    **_TOL,
)


PUZZLES = [ATTN_FLASH_TILED]
