"""Transformer kernels 3: attention, from naive to FlashAttention. (Over 500 lines: one notebook,
one module: the kernels, their traffic formulas, cases and benchmark together.)

Scaled dot-product attention for one head: `out = softmax(Q K^T / sqrt(d)) V`, with Q, K, V of shape
(T, d) (T tokens, head dimension d) and, in a causal (GPT) model, query i seeing only keys j <= i.
Every array here is (BH, T, d): batch times heads, each head independent.

The ladder:

1. naive, as three kernels through global memory: the scores S = Q K^T / sqrt(d) (T x T per head),
   a row softmax P = softmax(S), then P V. S and P are written and read back: T * T floats each per
   head, which at T = 1024 is 4 MiB per head, 400 MiB for 96 heads.
2. fused per query row: one thread per query walks the keys with the online softmax (a running
   maximum m, a running sum lsum, and an accumulator rescaled by exp(m_old - m_new) whenever the maximum
   grows). Nothing T x T is ever stored, but every thread reads all of K and V from global memory.
3. FlashAttention-style: a block of BR query rows loads K and V in tiles of BC rows into shared
   memory, once for the whole block, and each thread applies the online softmax tile by tile.
   Global reads of K and V drop by a factor BR; the score matrix is never materialised.

Tolerances. The output is a convex combination of rows of V (the weights are >= 0 and sum to 1), so
its error is bounded by max|v| times the error of the weights. A weight exp(s - m) / lsum inherits the
absolute error of the score s as a relative error; s = q.k / sqrt(d) summed in float32 carries an
error of about d * eps32 * sum|q_c k_c| / sqrt(d), eps32 = 6e-8. The ordinary cases have |q_c|, |k_c| <= 1
and d <= 16 (scores below 4: about 4e-6); the large-logit cases reach |s| = S_MAX = 100 (exp(100)
overflows float32, whose largest value is about exp(88.7)) with d <= 8: 8 * 6e-8 * 100 = 5e-5. The
maximum subtracted carries the same error, so a weight is off by at most about 1e-4 relative, and the
output by 1e-4 * max|v| = 2e-4 (|v| <= 2). The exponentials and the final division add a few ulps.
So: 3e-4 absolute plus 1e-4 relative; every wrong kernel in the tests is off by whole weights.
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

CHAPTER = "llm-3"
TPB = 8  # naive kernels: threads per block along each axis
BR = 8  # FlashAttention-style: query rows per block (one thread each)
BC = 4  # keys per K/V tile in shared memory
MAX_D = 16  # largest head dimension the puzzles use (register and shared arrays are this wide)
NEG_INF = -math.inf
S_MAX = 100.0  # the largest |score| of the large-logit cases


# ------------------------------------------------------------------ 1. naive: three kernels


@cuda.jit
def attn_scores(s, q, k, causal):
    # one thread per score: s[b, i, j] = q_i . k_j / sqrt(d), or -inf where causal hides key j
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    T = q.shape[1]
    d = q.shape[2]
    if i < T and j < T:
        ### BEGIN SOLUTION
        if causal and j > i:
            s[b, i, j] = NEG_INF
        else:
            acc = np.float32(0.0)
            for c in range(d):
                acc += q[b, i, c] * k[b, j, c]
            s[b, i, j] = acc / math.sqrt(d)
        ### END SOLUTION


@cuda.jit
def attn_softmax(p, s):
    # one thread per row, three passes over it: max, sum of exponentials, normalise
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    b = cuda.blockIdx.y
    T = s.shape[1]
    if i < T:
        m = s[b, i, 0]
        for j in range(1, T):
            m = max(m, s[b, i, j])
        total = np.float32(0.0)
        for j in range(T):
            total += math.exp(s[b, i, j] - m)
        for j in range(T):
            p[b, i, j] = math.exp(s[b, i, j] - m) / total


@cuda.jit
def attn_pv(out, p, v):
    # one thread per output element: out[b, i, c] = sum_j p[b, i, j] v[b, j, c]
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    T = v.shape[1]
    if i < T and c < v.shape[2]:
        acc = np.float32(0.0)
        for j in range(T):
            acc += p[b, i, j] * v[b, j, c]
        out[b, i, c] = acc


def attention_naive(out, q, k, v, causal: int, tpb: int = TPB) -> dict:
    """Run the three naive kernels; return the intermediate arrays (to count their bytes)."""
    bh, t, d = q.shape
    s = np.empty((bh, t, t), np.float32)
    p = np.empty((bh, t, t), np.float32)
    blocks = (t + tpb - 1) // tpb
    attn_scores[(blocks, blocks, bh), (tpb, tpb)](s, q, k, causal)
    attn_softmax[(blocks, bh), tpb](p, s)
    attn_pv[((d + tpb - 1) // tpb, blocks, bh), (tpb, tpb)](out, p, v)
    return {"s": s, "p": p}


# ------------------------------------------------------------------ 2. fused per query row


@cuda.jit
def attn_row(out, q, k, v, causal):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    b = cuda.blockIdx.y
    T = q.shape[1]
    d = q.shape[2]
    qi = cuda.local.array(MAX_D, numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    if i < T:
        scale = 1.0 / math.sqrt(d)
        for c in range(d):
            qi[c] = q[b, i, c] * scale  # the query, scaled, read once
            acc[c] = 0.0
        ### BEGIN SOLUTION
        m = NEG_INF  # running maximum of the scores seen so far
        lsum = 0.0  # running sum of exp(score - m)
        last = i + 1 if causal else T
        for j in range(last):
            x = 0.0
            for c in range(d):
                x += qi[c] * k[b, j, c]
            m_new = max(m, x)
            alpha = math.exp(m - m_new)  # 0 at the first key (m = -inf), 1 when the max stands
            p = math.exp(x - m_new)
            lsum = lsum * alpha + p
            for c in range(d):
                acc[c] = acc[c] * alpha + p * v[b, j, c]
            m = m_new
        for c in range(d):
            out[b, i, c] = acc[c] / lsum
        ### END SOLUTION


# ------------------------------------------------------------------ 3. FlashAttention-style


@cuda.jit
def attn_flash(out, q, k, v, causal):
    kt = cuda.shared.array((BC, MAX_D), numba.float32)
    vt = cuda.shared.array((BC, MAX_D), numba.float32)
    qi = cuda.local.array(MAX_D, numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    sc = cuda.local.array(BC, numba.float32)
    t = cuda.threadIdx.x
    q0 = cuda.blockIdx.x * BR
    i = q0 + t
    b = cuda.blockIdx.y
    T = q.shape[1]
    d = q.shape[2]
    scale = 1.0 / math.sqrt(d)
    if i < T:
        for c in range(d):
            qi[c] = q[b, i, c] * scale  # scaled once here, not once per key
            acc[c] = 0.0
    m = NEG_INF
    lsum = 0.0
    # causal: keys past the block's last query are never needed; every thread agrees on the count
    last = min(T, q0 + BR) if causal else T
    for k0 in range(0, last, BC):
        ### BEGIN SOLUTION
        cuda.syncthreads()  # everyone is done with the previous tile
        for e in range(t, BC * d, BR):
            r = e // d
            c = e % d
            if k0 + r < T:
                kt[r, c] = k[b, k0 + r, c]
                vt[r, c] = v[b, k0 + r, c]
        cuda.syncthreads()  # the tile is complete
        if i < T:
            hi = min(BC, T - k0)
            if causal:
                hi = min(hi, i + 1 - k0)
            m_tile = NEG_INF
            for r in range(hi):
                x = 0.0
                for c in range(d):
                    x += qi[c] * kt[r, c]
                sc[r] = x
                m_tile = max(m_tile, x)
            if hi > 0:
                m_new = max(m, m_tile)
                alpha = math.exp(m - m_new)
                lsum *= alpha
                for c in range(d):
                    acc[c] *= alpha
                for r in range(hi):
                    p = math.exp(sc[r] - m_new)
                    lsum += p
                    for c in range(d):
                        acc[c] += p * vt[r, c]
                m = m_new
        ### END SOLUTION
    if i < T:
        for c in range(d):
            out[b, i, c] = acc[c] / lsum


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

# what `from puzzles.llm.attention import *` gives a notebook: constants only, never a kernel
__all__ = [
    "TPB",
    "BR",
    "BC",
    "MAX_D",
    "NEG_INF",
    "TX",
    "TY",
    "RM",
    "RN",
    "FB_R",
    "FB_C",
    "RD",
    "RMN",
    "RMD",
    "LOG_TX",
    "FB_R1",
    "FB_C1",
    "QT_SIZE",
    "KT_SIZE",
    "VS_SIZE",
    "PS_SIZE",
    "NEG_INF32",
    "ZERO32",
    "NONNEG",
]


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
    scale = 1.0 / math.sqrt(d)
    # element e of a tile is row e // MAX_D, column e % MAX_D: MAX_D is a constant, so these are shifts
    # (d is known only at run time, and a 64-bit division by it costs dozens of instructions)
    for e in range(tid, FB_R * MAX_D, nt):
        r = (e & NONNEG) // MAX_D
        c = (e & NONNEG) % MAX_D
        if c < d:
            qt[c * FB_R1 + r] = q[b, (q0 + r) & NONNEG, c] * scale if q0 + r < T else 0.0
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


# ------------------------------------------------------------------ specs and cases


def attention_spec(q, k, v, causal):
    """float64 truth: softmax(Q K^T / sqrt(d)) V per head, keys j > i hidden when causal."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    s = scores_spec(q, k, causal)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(axis=-1, keepdims=True)
    return (w @ v).astype(np.float32)


def scores_spec(q, k, causal):
    q, k = q.astype(np.float64), k.astype(np.float64)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        t = q.shape[-2]
        s = np.where(np.tri(t, dtype=bool), s, -np.inf)
    return s


def softmax_spec(s):
    s = s.astype(np.float64)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)).astype(np.float32)


def pv_spec(p, v):
    return (p.astype(np.float64) @ v.astype(np.float64)).astype(np.float32)


def _qkv(rng, bh, t, d, big=False):
    """Q, K, V with both signs; `big` scales Q so that scores reach about +-40 (exp would overflow
    float32 past 88 without the max subtracted, and differences of 40 make some weights ~1e-17)."""
    q = rng.uniform(-1, 1, (bh, t, d)).astype(np.float32)
    k = rng.uniform(-1, 1, (bh, t, d)).astype(np.float32)
    v = rng.uniform(-2, 2, (bh, t, d)).astype(np.float32)
    if big:
        q *= np.float32(S_MAX * math.sqrt(d) / max(1.0, np.abs(q @ np.swapaxes(k, -1, -2)).max()))
    return q, k, v


def _shapes(rng):
    """(bh, T, d, causal, big): T and d straddle the tiles; one token; one head; head dim 1."""
    return [
        (
            int(rng.integers(2, 4)),
            int(rng.integers(BR + 1, 2 * BR + BC)),
            int(rng.integers(5, MAX_D + 1)),
            1,
            False,
        ),
        (1, 1, int(rng.integers(1, 6)), int(rng.integers(0, 2)), False),
        (1, int(rng.integers(3 * BC + 1, 3 * BR)), 1, 1, True),
        (int(rng.integers(1, 3)), int(rng.integers(BR - 2, BR + 2)), int(rng.integers(2, 9)), 0, True),
        (2, int(rng.integers(2 * BR + 1, 3 * BR)), MAX_D, 1, False),
    ]


def _attn_cases(rng, grid_of):
    cases = []
    for bh, t, d, causal, big in _shapes(rng):
        q, k, v = _qkv(rng, bh, t, d, big)
        grid, block = grid_of(bh, t, d)
        cases.append(
            Case(grid, block, dict(out=np.zeros((bh, t, d), np.float32), q=q, k=k, v=v, causal=causal))
        )
    return cases


def _blocks(n, b):
    return (n + b - 1) // b


def scores_cases(rng):
    cases = []
    for bh, t, d, causal, big in _shapes(rng)[:4]:
        q, k, _ = _qkv(rng, bh, t, d, big)
        cases.append(
            Case(
                (_blocks(t, TPB), _blocks(t, TPB), bh),
                (TPB, TPB),
                dict(s=np.zeros((bh, t, t), np.float32), q=q, k=k, causal=causal),
            )
        )
    return cases


def softmax_cases(rng):
    cases = []
    for bh, t, d, causal, big in _shapes(rng)[:4]:
        q, k, _ = _qkv(rng, bh, t, d, big)
        s = scores_spec(q, k, causal).astype(np.float32)
        cases.append(Case((_blocks(t, TPB), bh), TPB, dict(p=np.zeros_like(s), s=s)))
    return cases


def pv_cases(rng):
    cases = []
    for bh, t, d, causal, big in _shapes(rng)[:4]:
        q, k, v = _qkv(rng, bh, t, d, big)
        p = softmax_spec(scores_spec(q, k, causal).astype(np.float32))
        cases.append(
            Case(
                (_blocks(d, TPB), _blocks(t, TPB), bh),
                (TPB, TPB),
                dict(out=np.zeros((bh, t, d), np.float32), p=p, v=v),
            )
        )
    return cases


def row_cases(rng):
    return _attn_cases(rng, lambda bh, t, d: ((_blocks(t, TPB), bh), TPB))


def flash_cases(rng):
    return _attn_cases(rng, lambda bh, t, d: ((_blocks(t, BR), bh), BR))


def tiled_cases(rng):
    return _attn_cases(rng, lambda bh, t, d: ((_blocks(t, FB_R), bh), (TX, TY)))


_TOL = dict(rtol=1e-4, atol=3e-4)  # derived in the module docstring


def _flash_reads(case) -> int:
    # per thread: its row of Q, then its share of each K and V tile (2 * ceil(BC * d / BR) per tile)
    t, d = case.args["q"].shape[1:]
    tiles = _blocks(t, BC)
    return d + 2 * tiles * _blocks(BC * d, BR)


PUZZLES = [
    Puzzle(
        name="llm3_attn_scores",
        title="Naive attention 1: the score matrix",
        statement="""`s[b, i, j] = q[b, i, :] . k[b, j, :] / sqrt(d)` for every head `b`, query `i` and key
`j`: one thread per score, `x` over keys, `y` over queries, `blockIdx.z` over heads. When `causal` is 1,
query `i` may not look ahead: `s[b, i, j] = -inf` for `j > i` (the softmax turns it into a weight of
exactly 0). `T = q.shape[1]` and `d = q.shape[2]` need not be multiples of the block.""",
        outputs=("s",),
        spec=scores_spec,
        cases=scores_cases,
        reference=attn_scores,
        hints=(
            "Key j is hidden when j > i: the diagonal (j == i) is a token attending to itself, and it "
            "counts.",
            "Divide the dot product by math.sqrt(d): without it scores grow with the head dimension and "
            "the softmax saturates.",
        ),
        chapter=CHAPTER,
        **_TOL,
    ),
    Puzzle(
        name="llm3_attn_softmax",
        title="Naive attention 2: softmax of each row",
        statement="""`p[b, i, :] = softmax(s[b, i, :])`, one thread per row: the maximum, the sum of
`exp(s - max)`, then each `exp(s - max) / sum`. Masked scores are `-inf` and give weight 0. (Transformer
kernels 1 builds the fast softmax; this one is the simplest that is right.)""",
        outputs=("p",),
        spec=softmax_spec,
        cases=softmax_cases,
        reference=attn_softmax,
        chapter=CHAPTER,
        **_TOL,
    ),
    Puzzle(
        name="llm3_attn_pv",
        title="Naive attention 3: weights times values",
        statement="""`out[b, i, c] = sum_j p[b, i, j] * v[b, j, c]`: one thread per output element.""",
        outputs=("out",),
        spec=pv_spec,
        cases=pv_cases,
        reference=attn_pv,
        chapter=CHAPTER,
        **_TOL,
    ),
    Puzzle(
        name="llm3_attn_row",
        title="Fused attention, one thread per query row",
        statement=f"""The whole of attention for query `i` of head `b` in one thread, with no score matrix:
walk the keys `j` (all `T`, or `j <= i` when `causal`), compute the score `x = q_i . k_j / sqrt(d)`
and keep the **online softmax** state: the running maximum `m`, the running sum `lsum` of `exp(x - m)`,
and the accumulator `acc[:d]` of `exp(x - m) * v_j`. When a key raises the maximum to `m_new`, all
that was summed so far is scaled by `alpha = exp(m - m_new)`. At the end `out[b, i, :] = acc / lsum`.
`acc` is a local array of `MAX_D = {MAX_D}` floats; `d <= MAX_D`.""",
        outputs=("out",),
        spec=attention_spec,
        cases=row_cases,
        reference=attn_row,
        hints=(
            "Start with m = -inf and lsum = 0: at the first key alpha = exp(-inf) = 0 wipes nothing that "
            "matters.",
            "Both lsum and every acc[c] must be multiplied by alpha before the new key's term is added.",
            "Causal: query i sees keys 0..i, that is i + 1 keys.",
        ),
        chapter=CHAPTER,
        **_TOL,
    ),
    Puzzle(
        name="llm3_attn_flash",
        title="FlashAttention-style: K and V tiles in shared memory",
        statement=f"""A block of `BR = {BR}` threads handles `BR` consecutive queries of one head (thread `t`
owns query `i = blockIdx.x * BR + t`; its scaled row of Q is already in registers, `qi`). The keys come
in tiles of `BC = {BC}`: the block copies a tile of K and of V into shared memory (`kt`, `vt`), all
threads together, then each thread scores its query against the tile's keys, takes the tile's
maximum, rescales its `lsum` and `acc` once, and adds the tile's weighted values. Only `min(BC, T - k0)`
keys of the last tile exist (no reads past the sequence end); causal rows stop at key `i`. Barriers:
before a tile is overwritten and after it is loaded. The block never stores a score in global or
shared memory. Budget: each thread reads its row of Q plus its share of every K and V tile once.""",
        outputs=("out",),
        spec=attention_spec,
        cases=flash_cases,
        reference=attn_flash,
        budget=Budget(global_reads=_flash_reads, global_writes=MAX_D, shared_bytes=2 * BC * MAX_D * 4),
        hints=(
            "Load the tile with a loop over e = t, t + BR, ... < BC * d: row e // d, column e % d.",
            "Guard the load with k0 + r < T, and score only the keys that exist (and, causal, j <= i).",
            "Two barriers per tile: one before loading (others may still be reading the last tile), "
            "one after (the tile must be complete before anyone reads it). Keep both outside `if i < T`.",
            "With the tile maximum m_tile: m_new = max(m, m_tile); lsum and acc are multiplied by "
            "exp(m - m_new) before the tile's terms exp(x - m_new) are added.",
        ),
        chapter=CHAPTER,
        **_TOL,
    ),
    Puzzle(
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
        chapter=CHAPTER,
        **_TOL,
    ),
]


# ------------------------------------------------------------------ memory traffic


def traffic(bh: int, t: int, d: int, version: str, br: int = BR) -> dict:
    """Global-memory bytes each version's threads request (float32, no causal mask), and the memory it
    allocates beyond Q, K, V and O. The simulator's trace counts exactly these accesses
    (`counted_accesses`); on a GPU the L1 and L2 caches absorb part of the repeated reads, which is
    why the FlashAttention-style kernel keeps its reuse in shared memory instead of hoping for it.

    naive: scores read a row of Q and of K per score (2d) and write S; softmax reads S three times
    (max, sum, normalise) and writes P; P V reads a row of P and a column of V per output (2T).
    row: each query reads its row of Q once, then every row of K and V. flash: each block of `br`
    queries reads every row of K and V once.
    """
    f = 4
    tt = bh * t * t
    if version == "naive":
        reads = tt * 2 * d + 3 * tt + bh * t * d * 2 * t
        writes = 2 * tt + bh * t * d
        return {"bytes": (reads + writes) * f, "reads": reads, "writes": writes, "extra": 2 * tt * f}
    if version == "row":
        reads = bh * t * (d + 2 * t * d)
    elif version == "flash":
        reads = bh * t * d + bh * _blocks(t, br) * 2 * t * d
    else:
        raise ValueError(f"version must be naive, row or flash; got {version!r}")
    writes = bh * t * d
    return {"bytes": (reads + writes) * f, "reads": reads, "writes": writes, "extra": 0}


# ------------------------------------------------------------------ GPU benchmark

GOAL = {"ceiling": "torch SDPA (FP32)", "fraction": 0.5, "best": "llm3_attn_flash_tiled"}

BENCH_SHAPE = dict(batch=8, heads=12, seq=1024, dim=64)


def attention_flops(bh: int, t: int, d: int, causal: bool) -> int:
    """Q K^T and P V: 2 * T * T * d multiply-adds each per head; causal needs about half."""
    full = 4 * bh * t * t * d
    return full // 2 if causal else full


TILED_GPU = (8, 16, 4, 4)  # TX, TY, RM, RN for the GPU: 128 threads, 64 queries, 32 keys a tile


def tiled_for_gpu(d: int, tx: int, ty: int, rm: int, rn: int):
    """attn_flash_tiled recompiled for head dimension d and a GPU-sized block: (kernel, queries per block)."""
    from helpers.timing import specialize

    return specialize(attn_flash_tiled, **tiled_constants(tx, ty, rm, rn, d)), ty * rm


def benchmark(scale: float = 1.0, configs=(TILED_GPU,)):
    """Validate, then time, naive (three kernels), both flash kernels and torch's FP32 SDPA, causal, in
    the same run.

    The shape is GPT-2 small's attention at a 1024-token context: batch 8, 12 heads, head dim 64
    (`scale` shrinks the sequence). TF32 is off for torch: `torch.backends.cuda.matmul.allow_tf32 =
    False` and `torch.backends.cudnn.allow_tf32 = False`, so every product is a true FP32 one as in
    our kernels. Prints the memory each version allocates beside Q, K, V and O.
    """
    from helpers import timing
    from helpers.timing import specialize

    b, h, d = BENCH_SHAPE["batch"], BENCH_SHAPE["heads"], BENCH_SHAPE["dim"]
    t = max(64, int(BENCH_SHAPE["seq"] * scale))
    bh = b * h
    rng = np.random.default_rng(15)
    br, bc = 64, 32
    flash = specialize(attn_flash, BR=br, BC=bc, MAX_D=d)
    scores = specialize(attn_scores)
    softmax = specialize(attn_softmax)
    pv = specialize(attn_pv)
    tpb = 16

    def naive(tt, nbh):
        def run(out, q, k, v, s, p):
            blocks = _blocks(tt, tpb)
            scores[(blocks, blocks, nbh), (tpb, tpb)](s, q, k, 1)
            softmax[(_blocks(tt, 128), nbh), 128](p, s)
            pv[(_blocks(d, tpb), blocks, nbh), (tpb, tpb)](out, p, v)

        return run

    def launcher(kern, per_block, block):
        # make(T, BH) -> run(out, q, k, v): the grid depends on the shape
        def make(tt, nbh):
            return lambda out, q, k, v: kern[(_blocks(tt, per_block), nbh), block](out, q, k, v, 1)

        return make

    fused = {"llm3_attn_flash": launcher(flash, br, br)}
    for cfg in configs:
        kern, fb_r = tiled_for_gpu(d, *cfg)
        name = "llm3_attn_flash_tiled" if cfg == configs[0] else f"llm3_attn_flash_tiled {cfg}"
        fused[name] = launcher(kern, fb_r, (cfg[0], cfg[1]))

    # validation at a small, awkward size first, then at the timed size against NumPy on a few heads
    for tv, bhv in ((77, 3), (t, bh)):
        q, k, v = _qkv(rng, bhv, tv, d)
        dq, dk, dv = (cuda.to_device(a) for a in (q, k, v))
        heads = slice(0, 3)
        want = attention_spec(q[heads], k[heads], v[heads], 1)
        for name, make in fused.items():
            out = cuda.device_array((bhv, tv, d), np.float32)
            make(tv, bhv)(out, dq, dk, dv)
            timing.validate(f"{name} (T={tv})", out.copy_to_host()[heads], want, **_TOL)
        s = cuda.device_array((bhv, tv, tv), np.float32)
        p = cuda.device_array((bhv, tv, tv), np.float32)
        out = cuda.device_array((bhv, tv, d), np.float32)
        naive(tv, bhv)(out, dq, dk, dv, s, p)
        timing.validate(f"naive attention (T={tv})", out.copy_to_host()[heads], want, **_TOL)

    flops = attention_flops(bh, t, d, True)
    q, k, v = _qkv(rng, bh, t, d)
    dq, dk, dv = (cuda.to_device(a) for a in (q, k, v))
    out = cuda.device_array((bh, t, d), np.float32)
    sd = cuda.device_array((bh, t, t), np.float32)
    pd = cuda.device_array((bh, t, t), np.float32)
    run_naive = naive(t, bh)
    rows = [
        timing.Measurement(
            "naive (3 kernels)",
            timing.time_gpu(lambda: run_naive(out, dq, dk, dv, sd, pd), reps=5, batch=2),
            flops=flops,
        )
    ]
    memory = {"naive (3 kernels)": traffic(bh, t, d, "naive")["extra"]}
    for name, make in fused.items():
        run = make(t, bh)
        seconds = timing.time_gpu(lambda run=run: run(out, dq, dk, dv))
        rows.append(timing.Measurement(name, seconds, flops=flops))
        memory[name] = 0
    torch_row, torch_extra = _torch_sdpa(q, k, v, b, h, t, d, flops)
    if torch_row is not None:
        rows.insert(0, torch_row)
        memory["torch SDPA (FP32)"] = torch_extra
    for name, extra in memory.items():
        print(f"  {name}: {extra / 2**20:.1f} MiB of memory beyond Q, K, V and O")
    return rows


def _torch_sdpa(q, k, v, b, h, t, d, flops):
    """torch's F.scaled_dot_product_attention in FP32, causal, validated against NumPy; (row, extra bytes)."""
    from helpers import timing

    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("  torch SDPA: torch is not installed, row skipped")
        return None, 0
    if not torch.cuda.is_available():
        print("  torch SDPA: torch sees no CUDA device, row skipped")
        return None, 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tq, tk, tv = (torch.from_numpy(a.reshape(b, h, t, d)).cuda() for a in (q, k, v))
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    o = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - base - o.numel() * 4
    want = attention_spec(q[:3], k[:3], v[:3], 1)
    timing.validate("torch SDPA (FP32)", o.reshape(b * h, t, d)[:3].cpu().numpy(), want, **_TOL)
    seconds = timing.time_gpu(lambda: F.scaled_dot_product_attention(tq, tk, tv, is_causal=True))
    return timing.Measurement("torch SDPA (FP32)", seconds, flops=flops, ceiling=True), extra


def counted_accesses(t: int = 32, d: int = 8, causal: int = 0, seed: int = 0) -> dict:
    """Global-memory elements read and written by each version on one head, counted in the simulator's
    trace (what the threads request, before any cache): {version: (reads, writes)}."""
    from helpers.check import run_case

    rng = np.random.default_rng(seed)
    q, k, v = _qkv(rng, 1, t, d)
    blocks = _blocks(t, TPB)
    out = np.zeros((1, t, d), np.float32)
    s = scores_spec(q, k, causal).astype(np.float32)
    p = softmax_spec(s)
    runs = {
        "naive": [
            ("llm3_attn_scores", Case((blocks, blocks, 1), (TPB, TPB), dict(s=s, q=q, k=k, causal=causal))),
            ("llm3_attn_softmax", Case((blocks, 1), TPB, dict(p=p, s=s))),
            ("llm3_attn_pv", Case((_blocks(d, TPB), blocks, 1), (TPB, TPB), dict(out=out, p=p, v=v))),
        ],
        "row": [("llm3_attn_row", Case((blocks, 1), TPB, dict(out=out, q=q, k=k, v=v, causal=causal)))],
        "flash": [
            ("llm3_attn_flash", Case((_blocks(t, BR), 1), BR, dict(out=out, q=q, k=k, v=v, causal=causal)))
        ],
    }
    by_name = {p.name: p for p in PUZZLES}
    counts = {}
    for version, launches in runs.items():
        reads = writes = 0
        for name, case in launches:
            launch, _ = run_case(by_name[name], by_name[name].reference, case)
            acc = launch.trace.select(space="global")
            reads += int((acc["kind"] == 0).sum())
            writes += int((acc["kind"] == 1).sum())
        counts[version] = (reads, writes)
    return counts
