"""Known-wrong and known-right kernels for puzzles/llm/attention/decode.py (decode attention over a KV
cache). Mutants are the reference with one mistake edited in (`M`); variants are written differently.
"""

import math

import numba
import numpy as np
from numba import cuda

from mutants.common import NO_BARRIER, RACE, WRONG, M
from puzzles.llm.attention import decode as ld
from puzzles.llm.attention.common import MAX_D, NEG_INF
from puzzles.llm.attention.decode import DB

ad = ld.attn_decode

DECODE = [
    # the loop runs one row too far: the stale row pos + 1 joins the softmax
    M(ad, "decode_reads_stale_row", WRONG, ("range(t, pos + 1, DB)", "range(t, pos + 2, DB)")),
    M(
        ad,
        "decode_whole_cache",
        WRONG,  # attends over every row of the cache, stale ones included
        ("range(t, pos + 1, DB)", "range(t, k_cache.shape[2], DB)"),
    ),
    M(
        ad,
        "decode_no_scale",
        WRONG,
        ("scale = np.float32(1.0) / math.sqrt(np.float32(hs))", "scale = np.float32(1.0)"),
    ),
    M(
        ad,
        "decode_no_max_subtraction",
        WRONG,  # exp(100) overflows float32: inf / inf
        ("m_new = max(m, x)", "m_new = np.float32(0.0)"),
        ("mx = max(mx, sm[r])", "mx = np.float32(0.0)"),
        ("mx = sm[0]  #", "mx = np.float32(0.0)  #"),
    ),
    M(
        ad,
        "decode_head_stride_interleaved",
        WRONG,  # reads qkv as if each head's q, k, v were adjacent (h * 3 * hs)
        ("qkv[b, C + h * hs + c]", "qkv[b, h * 3 * hs + hs + c]"),
        ("qkv[b, 2 * C + h * hs + c]", "qkv[b, h * 3 * hs + 2 * hs + c]"),
        ("qkv[b, h * hs + c] * scale", "qkv[b, h * 3 * hs + c] * scale"),
    ),
    M(
        ad,
        "decode_append_one_late",
        WRONG,  # the new key and value go to row pos + 1; row pos stays stale
        ("k_cache[b, h, pos, c] =", "k_cache[b, h, pos + 1, c] ="),
        ("v_cache[b, h, pos, c] =", "v_cache[b, h, pos + 1, c] ="),
    ),
    M(ad, "decode_no_barrier_after_append", RACE, ("    cuda.syncthreads()\n    # 2.", "    # 2.")),
    M(ad, "decode_no_barrier_before_merge", NO_BARRIER, ("    cuda.syncthreads()\n    # 3.", "    # 3.")),
    M(
        ad,
        "decode_merge_not_rescaled",
        WRONG,  # the states summed as if every thread had the same maximum
        ("w = math.exp(sm[r] - mx)", "w = np.float32(1.0) if sm[r] > NEG_INF else np.float32(0.0)"),
    ),
]


@cuda.jit
def decode_scores_in_shared(y, k_cache, v_cache, qkv, pos):
    # the new row read straight from qkv (no barrier needed for it), scores kept in shared memory,
    # then a block maximum and sum by thread 0, then one output column per thread
    s = cuda.shared.array(64, numba.float32)
    stat = cuda.shared.array(2, numba.float32)
    h = cuda.blockIdx.x
    b = cuda.blockIdx.y
    t = cuda.threadIdx.x
    NH = k_cache.shape[1]
    hs = k_cache.shape[3]
    C = NH * hs
    r = np.float32(1.0) / math.sqrt(np.float32(hs))
    for j in range(t, pos + 1, DB):
        x = np.float32(0.0)
        for c in range(hs):
            kj = qkv[b, C + h * hs + c] if j == pos else k_cache[b, h, j, c]
            x += qkv[b, h * hs + c] * kj
        s[j] = x * r
    cuda.syncthreads()
    if t == 0:
        mx = NEG_INF
        for j in range(pos + 1):
            mx = max(mx, s[j])
        total = np.float32(0.0)
        for j in range(pos + 1):
            total += math.exp(s[j] - mx)
        stat[0] = mx
        stat[1] = total
    cuda.syncthreads()
    for c in range(t, hs, DB):
        o = np.float32(0.0)
        for j in range(pos + 1):
            vj = qkv[b, 2 * C + h * hs + c] if j == pos else v_cache[b, h, j, c]
            o += math.exp(s[j] - stat[0]) * vj
        y[b, h * hs + c] = o / stat[1]
        k_cache[b, h, pos, c] = qkv[b, C + h * hs + c]
        v_cache[b, h, pos, c] = qkv[b, 2 * C + h * hs + c]


@cuda.jit
def decode_thread0_merges(y, k_cache, v_cache, qkv, pos):
    # the states merged pairwise by thread 0 (exactly as two split-K blocks would be), all columns
    sm = cuda.shared.array(DB, numba.float32)
    sl = cuda.shared.array(DB, numba.float32)
    sacc = cuda.shared.array((DB, MAX_D), numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    h = cuda.blockIdx.x
    b = cuda.blockIdx.y
    t = cuda.threadIdx.x
    NH = k_cache.shape[1]
    hs = k_cache.shape[3]
    C = NH * hs
    if t == 0:
        for c in range(hs):
            k_cache[b, h, pos, c] = qkv[b, C + h * hs + c]
            v_cache[b, h, pos, c] = qkv[b, 2 * C + h * hs + c]
    cuda.syncthreads()
    m = NEG_INF
    lsum = np.float32(0.0)
    for c in range(hs):
        acc[c] = 0.0
    j = t
    while j <= pos:
        x = np.float32(0.0)
        for c in range(hs):
            x += qkv[b, h * hs + c] * k_cache[b, h, j, c]
        x /= math.sqrt(np.float32(hs))
        if x > m:
            alpha = math.exp(m - x)
            lsum *= alpha
            for c in range(hs):
                acc[c] *= alpha
            m = x
        p = math.exp(x - m)
        lsum += p
        for c in range(hs):
            acc[c] += p * v_cache[b, h, j, c]
        j += DB
    sm[t] = m
    sl[t] = lsum
    for c in range(hs):
        sacc[t, c] = acc[c]
    cuda.syncthreads()
    if t == 0:
        m0 = sm[0]
        l0 = sl[0]
        for c in range(hs):
            acc[c] = sacc[0, c]
        for r in range(1, DB):
            if sm[r] > NEG_INF:
                mn = max(m0, sm[r])
                a0 = math.exp(m0 - mn)
                a1 = math.exp(sm[r] - mn)
                l0 = l0 * a0 + sl[r] * a1
                for c in range(hs):
                    acc[c] = acc[c] * a0 + sacc[r, c] * a1
                m0 = mn
        for c in range(hs):
            y[b, h * hs + c] = acc[c] / l0


MUTANTS = {"llm3_attn_decode": DECODE}

VARIANTS = {
    "llm3_attn_decode": [
        ("scores in shared memory, thread 0 reduces", decode_scores_in_shared),
        ("states merged pairwise by thread 0", decode_thread0_merges),
    ],
}

SEEDS = {p.name: (0, 1, 2) for p in ld.PUZZLES}  # seeds 0-11 checked once by hand (the report)
