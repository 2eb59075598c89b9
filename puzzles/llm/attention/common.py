"""What the attention op files share: scaled dot-product attention for one head,
`out = softmax(Q K^T / sqrt(d)) V`, with Q, K, V of shape (T, d) (T tokens, head dimension d) and, in a
causal (GPT) model, query i seeing only keys j <= i. Every array here is (BH, T, d): batch times heads,
each head independent. The constants, the float64 truth, the inputs and the tolerance.

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

import numpy as np

from helpers.puzzle import Case

CHAPTER = "llm-3"


TPB = 8  # naive kernels: threads per block along each axis


BR = 8  # FlashAttention-style: query rows per block (one thread each)


BC = 4  # keys per K/V tile in shared memory


MAX_D = 16  # largest head dimension the puzzles use (register and shared arrays are this wide)


NEG_INF = np.float32(-np.inf)  # float32: a Python float (-math.inf) makes the arithmetic float64


S_MAX = 100.0  # the largest |score| of the large-logit cases


def scores_spec(q, k, causal):
    q, k = q.astype(np.float64), k.astype(np.float64)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        t = q.shape[-2]
        s = np.where(np.tri(t, dtype=bool), s, -np.inf)
    return s


def attention_spec(q, k, v, causal):
    """float64 truth: softmax(Q K^T / sqrt(d)) V per head, keys j > i hidden when causal."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    s = scores_spec(q, k, causal)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(axis=-1, keepdims=True)
    return (w @ v).astype(np.float32)


def _qkv(rng, bh, t, d, big=False):
    """Q, K, V with both signs; `big` scales Q so that the largest |score| is S_MAX = 100, and makes
    that score positive and on the diagonal (visible under the causal mask too): exp of it overflows
    float32 (past 88.7) without the max subtracted, on every seed, and differences of 100 make some
    weights ~1e-44."""
    q = rng.uniform(-1, 1, (bh, t, d)).astype(np.float32)
    k = rng.uniform(-1, 1, (bh, t, d)).astype(np.float32)
    v = rng.uniform(-2, 2, (bh, t, d)).astype(np.float32)
    if big:
        s = q @ np.swapaxes(k, -1, -2)
        b, i, j = np.unravel_index(np.abs(s).argmax(), s.shape)
        if s[b, i, j] < 0:
            q[b] = -q[b]  # every score of head b changes sign: the largest |score| is now positive
        k[b, [i, j]] = k[b, [j, i]]  # keys i and j swap: that score moves to (i, i), the diagonal
        q *= np.float32(S_MAX * math.sqrt(d) / max(1.0, np.abs(s).max()))
    return q, k, v


def _shapes(rng):
    """(bh, T, d, causal, big): T and d straddle the tiles; one token; one head; head dim 1."""
    return [
        (
            int(rng.integers(2, 4)),
            int(rng.integers(BR + 1, 2 * BR + BC)),
            int(rng.integers(TPB + 1, MAX_D + 1)),  # d past one block of the naive kernels' TPB
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


_TOL = dict(rtol=1e-4, atol=3e-4)  # derived in the module docstring
