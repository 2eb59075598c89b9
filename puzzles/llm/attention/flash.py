"""Attention, rungs 2 and 3: fused, the score matrix never stored.

    llm3_attn_row    one thread per query walks the keys with the online softmax (a running maximum m,
                     a running sum lsum, and an accumulator rescaled by exp(m_old - m_new) whenever the
                     maximum grows); every thread reads all of K and V from global memory
    llm3_attn_flash  FlashAttention-style: a block of BR query rows loads K and V in tiles of BC rows
                     into shared memory, once for the whole block, and each thread applies the online
                     softmax tile by tile; global reads of K and V drop by a factor BR

Tolerance: common.py's docstring.
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Puzzle
from puzzles.llm.attention.common import (
    _TOL,
    BC,
    BR,
    CHAPTER,
    MAX_D,
    NEG_INF,
    TPB,
    _attn_cases,
    _blocks,
    attention_spec,
)


def row_cases(rng):
    return _attn_cases(rng, lambda bh, t, d: ((_blocks(t, TPB), bh), TPB))


def flash_cases(rng):
    return _attn_cases(rng, lambda bh, t, d: ((_blocks(t, BR), bh), BR))


def _flash_reads(case) -> int:
    # per thread: its row of Q, then its share of each K and V tile (2 * ceil(BC * d / BR) per tile)
    t, d = case.args["q"].shape[1:]
    tiles = _blocks(t, BC)
    return d + 2 * tiles * _blocks(BC * d, BR)


@cuda.jit
def attn_row(out, q, k, v, causal):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    b = cuda.blockIdx.y
    T = q.shape[1]
    d = q.shape[2]
    qi = cuda.local.array(MAX_D, numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    if i < T:
        scale = np.float32(1.0) / math.sqrt(np.float32(d))
        for c in range(d):
            qi[c] = q[b, i, c] * scale  # the query, scaled, read once
            acc[c] = 0.0
        ### BEGIN SOLUTION
        m = NEG_INF  # running maximum of the scores seen so far
        lsum = np.float32(0.0)  # running sum of exp(score - m)
        last = i + 1 if causal else T
        for j in range(last):
            x = np.float32(0.0)
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


ATTN_ROW = Puzzle(
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
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    hints=(
        "Start with m = -inf and lsum = 0: at the first key alpha = exp(-inf) = 0 wipes nothing that "
        "matters.",
        "Both lsum and every acc[c] must be multiplied by alpha before the new key's term is added.",
        "Causal: query i sees keys 0..i, that is i + 1 keys.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


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
    scale = np.float32(1.0) / math.sqrt(np.float32(d))
    if i < T:
        for c in range(d):
            qi[c] = q[b, i, c] * scale  # scaled once here, not once per key
            acc[c] = 0.0
    m = NEG_INF
    lsum = np.float32(0.0)
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
                x = np.float32(0.0)
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


ATTN_FLASH = Puzzle(
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
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
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
)


PUZZLES = [ATTN_ROW, ATTN_FLASH]
