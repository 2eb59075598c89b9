"""Moving the heads in and out of the (B * NH, T, hs) layout attention wants, two rungs:

llm4_split_heads   qkv (B, T, 3C) -> q, k, v (B * NH, T, hs)
llm4_merge_heads   (B * NH, T, hs) -> (B, T, C)
"""

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from puzzles.llm.gpt2_block.common import CHAPTER, _blocks


def _split_spec(qkv, T, NH):
    n, c3 = qkv.shape
    C = c3 // 3
    B = n // T
    parts = [
        qkv[:, i * C : (i + 1) * C].reshape(B, T, NH, C // NH).transpose(0, 2, 1, 3).reshape(B * NH, T, -1)
        for i in range(3)
    ]
    return {"q": parts[0], "k": parts[1], "v": parts[2]}


def _split_cases(rng):
    cases = []
    for B, T, NH, hs in [
        (2, int(rng.integers(3, 7)), 2, int(rng.integers(2, 6))),
        (1, 1, 1, 3),
        (1, int(rng.integers(2, 5)), 3, 1),
        (2, 2, 1, int(rng.integers(9, 13))),  # C past one block of 8 threads on every seed
    ]:
        C = NH * hs
        qkv = rng.uniform(-1, 1, (B * T, 3 * C)).astype(np.float32)
        z = np.zeros((B * NH, T, hs), np.float32)
        cases.append(
            Case((_blocks(3 * C, 8), B * T), 8, dict(q=z, k=z.copy(), v=z.copy(), qkv=qkv, T=T, NH=NH))
        )
    return cases


@cuda.jit
def split_heads(q, k, v, qkv, T, NH):
    # qkv[b * T + t, part * C + h * hs + e] -> part[b * NH + h, t, e], one thread per element of qkv
    n = cuda.blockIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    C3 = qkv.shape[1]
    if col < C3:
        C = C3 // 3
        hs = C // NH
        part = col // C
        h = (col - part * C) // hs
        e = col - part * C - h * hs
        bh = (n // T) * NH + h
        t = n % T
        val = qkv[n, col]
        if part == 0:
            q[bh, t, e] = val
        elif part == 1:
            k[bh, t, e] = val
        else:
            v[bh, t, e] = val


SPLIT_HEADS = Puzzle(
    name="llm4_split_heads",
    title="Heads in: from qkv rows to (B * NH, T, hs)",
    statement="""The QKV product gives row `b * T + t` as `[q | k | v]`, each `C = NH * hs` wide, heads
side by side. Attention wants each head's `(T, hs)` matrix contiguous: `q[b * NH + h, t, e] = qkv[b * T + t,
h * hs + e]`, and likewise `k` (offset `C`) and `v` (offset `2C`). One thread per element of `qkv`,
row `blockIdx.y`.""",
    outputs=("q", "k", "v"),
    spec=_split_spec,
    cases=_split_cases,
    reference=split_heads,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    chapter=CHAPTER,
    rtol=0,
    atol=0,
)


def _merge_spec(att, T, NH):
    bh, _, hs = att.shape
    B = bh // NH
    return att.reshape(B, NH, T, hs).transpose(0, 2, 1, 3).reshape(B * T, NH * hs)


def _merge_cases(rng):
    cases = []
    for B, T, NH, hs in [
        (2, int(rng.integers(3, 7)), 2, int(rng.integers(2, 6))),
        (1, 1, 1, 3),
        (1, int(rng.integers(2, 5)), 3, 1),
        (2, 2, 1, int(rng.integers(9, 13))),  # C past one block of 8 threads on every seed
    ]:
        att = rng.uniform(-1, 1, (B * NH, T, hs)).astype(np.float32)
        cases.append(
            Case(
                (_blocks(NH * hs, 8), B * T),
                8,
                dict(y=np.zeros((B * T, NH * hs), np.float32), att=att, T=T, NH=NH),
            )
        )
    return cases


@cuda.jit
def merge_heads(y, att, T, NH):
    # att[b * NH + h, t, e] -> y[b * T + t, h * hs + e]
    n = cuda.blockIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    C = y.shape[1]
    if col < C:
        hs = C // NH
        h = col // hs
        y[n, col] = att[(n // T) * NH + h, n % T, col - h * hs]


MERGE_HEADS = Puzzle(
    name="llm4_merge_heads",
    title="Heads out: from (B * NH, T, hs) to rows",
    statement="""The inverse: `y[b * T + t, h * hs + e] = att[b * NH + h, t, e]`, one thread per element
of `y`, row `blockIdx.y`.""",
    outputs=("y",),
    spec=_merge_spec,
    cases=_merge_cases,
    reference=merge_heads,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    chapter=CHAPTER,
    rtol=0,
    atol=0,
)


PUZZLES = [SPLIT_HEADS, MERGE_HEADS]
