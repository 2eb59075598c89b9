"""Attention, rung 1: naive, as three kernels through global memory.

    llm3_attn_scores   S = Q K^T / sqrt(d) (T x T per head), -inf where the causal mask hides a key
    llm3_attn_softmax  P = softmax(S), one thread per row
    llm3_attn_pv       out = P V, one thread per output element

S and P are written and read back: T * T floats each per head, which at T = 1024 is 4 MiB per head,
400 MiB for 96 heads. `attention_naive` runs the three on the host's arrays (the pipeline the fused
kernels replace).
"""

import math

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from puzzles.llm.attention.common import _TOL, CHAPTER, NEG_INF, TPB, _blocks, _qkv, _shapes, scores_spec


def softmax_spec(s):
    s = s.astype(np.float64)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)).astype(np.float32)


def pv_spec(p, v):
    return (p.astype(np.float64) @ v.astype(np.float64)).astype(np.float32)


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
            s[b, i, j] = acc / math.sqrt(np.float32(d))
        ### END SOLUTION


ATTN_SCORES = Puzzle(
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
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    hints=(
        "Key j is hidden when j > i: the diagonal (j == i) is a token attending to itself, and it counts.",
        "Divide the dot product by math.sqrt(d): without it scores grow with the head dimension and "
        "the softmax saturates.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


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


ATTN_SOFTMAX = Puzzle(
    name="llm3_attn_softmax",
    title="Naive attention 2: softmax of each row",
    statement="""`p[b, i, :] = softmax(s[b, i, :])`, one thread per row: the maximum, the sum of
`exp(s - max)`, then each `exp(s - max) / sum`. Masked scores are `-inf` and give weight 0. (Transformer
kernels 1 builds the fast softmax; this one is the simplest that is right.)""",
    outputs=("p",),
    spec=softmax_spec,
    cases=softmax_cases,
    reference=attn_softmax,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    chapter=CHAPTER,
    **_TOL,
)


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


ATTN_PV = Puzzle(
    name="llm3_attn_pv",
    title="Naive attention 3: weights times values",
    statement="""`out[b, i, c] = sum_j p[b, i, j] * v[b, j, c]`: one thread per output element.""",
    outputs=("out",),
    spec=pv_spec,
    cases=pv_cases,
    reference=attn_pv,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    chapter=CHAPTER,
    **_TOL,
)


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


PUZZLES = [ATTN_SCORES, ATTN_SOFTMAX, ATTN_PV]
