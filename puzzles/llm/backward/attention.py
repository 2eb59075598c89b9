"""Causal attention's backward pass from the saved probabilities P (BH x T x T), three rungs, the
order a training step runs them in:

    llm5_attn_backward_dp     dP = dO V^T on the causal triangle (zero above it)
    llm5_softmax_backward     dS = P * (dP - rowsum(P * dP)), a row per thread: the row dot product
                              is the softmax's Jacobian, every probability depends on every score
    llm5_attn_backward_qkv    dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO, on the triangle

The forward was S = scale Q K^T (scale = 1 / sqrt(hs)), masked above the diagonal, P = softmax(S),
O = P V. Above the diagonal P is 0 and S was -inf: the backward never reads dP, dS or P there (the
cases fill those entries with NaN, so a kernel that reads them fails).

Tolerance: float32 sums of at most hs or T products (common.dot_tol).
"""

import math

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from puzzles.llm.backward.common import CHAPTER, TPB, blocks, dot_tol, uniform

T2 = 4  # the two-dimensional kernels' blocks: T2 x T2 threads
MAX_T = 20
_TOL = dot_tol(MAX_T, 4.0)


def _tri(T):
    return np.tri(T, dtype=bool)


def probabilities(rng, bh, T, hs):
    """P of random scores at the scale the forward gives, causal, NaN above the diagonal (unread)."""
    s = rng.normal(0, 1.5, (bh, T, T))
    s = np.where(_tri(T), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.where(_tri(T), p, np.nan).astype(np.float32)


def att_shapes(rng):
    """(BH, T, hs) per case, drawn per seed: one position, T not a multiple of the block, one head
    dimension, several blocks each way."""
    r = rng.integers
    return [
        (1, 1, int(r(1, 5))),
        (int(r(1, 3)), int(r(2, 6)), 1),
        (int(r(2, 4)), int(r(T2 + 1, 3 * T2)), int(r(2, 9))),
        (2, int(r(3 * T2, MAX_T)), int(r(T2 + 1, 3 * T2))),
    ]


def dp_spec(do, v):
    T = do.shape[1]
    dp = do.astype(np.float64) @ v.astype(np.float64).transpose(0, 2, 1)
    return np.where(_tri(T), dp, 0.0).astype(np.float32)


def softmax_backward_ref(p, dp):
    """float64 dS from P and dP; NaN above the diagonal is never read: the result is 0 there."""
    T = p.shape[1]
    p64 = np.where(_tri(T), p.astype(np.float64), 0.0)
    dp64 = np.where(_tri(T), dp.astype(np.float64), 0.0)
    return p64 * (dp64 - (p64 * dp64).sum(-1, keepdims=True))


def softmax_backward_spec(p, dp):
    return softmax_backward_ref(p, dp).astype(np.float32)


def qkv_spec(ds, p, q, k, do):
    T, hs = q.shape[1], q.shape[2]
    scale = 1.0 / math.sqrt(hs)
    ds64 = np.where(_tri(T), ds.astype(np.float64), 0.0)
    p64 = np.where(_tri(T), p.astype(np.float64), 0.0)
    q64, k64, do64 = (a.astype(np.float64) for a in (q, k, do))
    return dict(
        dq=(scale * ds64 @ k64).astype(np.float32),
        dk=(scale * ds64.transpose(0, 2, 1) @ q64).astype(np.float32),
        dv=(p64.transpose(0, 2, 1) @ do64).astype(np.float32),
    )


def dp_cases(rng):
    return [
        Case(
            (blocks(T, T2), blocks(T, T2), bh),
            (T2, T2),
            dict(
                dp=np.zeros((bh, T, T), np.float32), do=uniform(rng, (bh, T, hs)), v=uniform(rng, (bh, T, hs))
            ),
        )
        for bh, T, hs in att_shapes(rng)
    ]


def _nan_above(a):
    T = a.shape[1]
    return np.where(_tri(T), a, np.nan).astype(np.float32)


def softmax_backward_cases(rng):
    return [
        Case(
            (blocks(T, TPB), bh),
            TPB,
            dict(
                ds=np.zeros((bh, T, T), np.float32),
                p=probabilities(rng, bh, T, hs),
                dp=_nan_above(uniform(rng, (bh, T, T), -2, 2)),
            ),
        )
        for bh, T, hs in att_shapes(rng)
    ]


def qkv_cases(rng):
    cases = []
    for bh, T, hs in att_shapes(rng):
        p = probabilities(rng, bh, T, hs)
        ds = _nan_above(softmax_backward_ref(p, uniform(rng, (bh, T, T), -2, 2)))
        z = np.zeros((bh, T, hs), np.float32)
        args = dict(dq=z, dk=z.copy(), dv=z.copy(), ds=ds, p=p)
        args.update(q=uniform(rng, (bh, T, hs)), k=uniform(rng, (bh, T, hs)), do=uniform(rng, (bh, T, hs)))
        cases.append(Case((blocks(hs, T2), blocks(T, T2), bh), (T2, T2), args))
    return cases


@cuda.jit
def attn_backward_dp(dp, do, v):
    # thread (j, i) of head b: dp[b, i, j] = do[b, i, :] . v[b, j, :] for j <= i, else 0
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    T, hs = do.shape[1], do.shape[2]
    if i < T and j < T:
        ### BEGIN SOLUTION
        acc = np.float32(0.0)
        if j <= i:
            for d in range(hs):
                acc += do[b, i, d] * v[b, j, d]
        dp[b, i, j] = acc
        ### END SOLUTION


ATTN_BACKWARD_DP = Puzzle(
    name="llm5_attn_backward_dp",
    title="Attention backward 1: dP = dO V^T",
    statement="""The forward's last product was `O = P V`; its gradient with respect to `P` is
`dP = dO V^T`: `dp[b, i, j] = do[b, i, :] . v[b, j, :]`. Only the causal triangle `j <= i` matters
(P is 0 above it): write 0 there. One thread per `(i, j)`, grid `(T blocks, T blocks, BH)`.""",
    outputs=("dp",),
    spec=dp_spec,
    cases=dp_cases,
    reference=attn_backward_dp,
    hints=("Row i of dO against row j of V: both are read along hs, nothing is transposed in memory.",),
    chapter=CHAPTER,
    **_TOL,
)


@cuda.jit
def softmax_backward(ds, p, dp):
    # one thread per row i of head b
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    b = cuda.blockIdx.y
    T = p.shape[1]
    if i < T:
        ### BEGIN SOLUTION
        dot = np.float32(0.0)
        for j in range(i + 1):
            dot += p[b, i, j] * dp[b, i, j]
        for j in range(T):
            ds[b, i, j] = p[b, i, j] * (dp[b, i, j] - dot) if j <= i else np.float32(0.0)
        ### END SOLUTION


SOFTMAX_BACKWARD = Puzzle(
    name="llm5_softmax_backward",
    title="Attention backward 2: the softmax backward on a row",
    statement="""`p = softmax(s)` on each row, so `ds_j = sum_k dp_k dp_k/ds_j = p_j (dp_j - sum_k p_k dp_k)`:
every probability depends on every score, and the row's dot product `sum_k p_k dp_k` carries that
(one number per row, computed first). Causal rows: only `j <= i` exists; `p` and `dp` above the
diagonal are undefined (NaN here) and `ds` is 0 there. One thread per row, grid `(T blocks, BH)`.""",
    outputs=("ds",),
    spec=softmax_backward_spec,
    cases=softmax_backward_cases,
    reference=softmax_backward,
    hints=(
        "Two passes over the row: the dot product, then each ds.",
        "Stop both at j = i; write 0 past it without reading p or dp there.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


@cuda.jit
def attn_backward_qkv(dq, dk, dv, ds, p, q, k, do):
    # thread (d, i) of head b: element d of query i's, key i's and value i's gradients
    d = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    T, hs = q.shape[1], q.shape[2]
    scale = np.float32(1.0) / math.sqrt(np.float32(hs))
    if i < T and d < hs:
        ### BEGIN SOLUTION
        gq = np.float32(0.0)
        for j in range(i + 1):  # the keys query i saw
            gq += ds[b, i, j] * k[b, j, d]
        gk = np.float32(0.0)
        gv = np.float32(0.0)
        for j in range(i, T):  # the queries that saw key i
            gk += ds[b, j, i] * q[b, j, d]
            gv += p[b, j, i] * do[b, j, d]
        dq[b, i, d] = gq * scale
        dk[b, i, d] = gk * scale
        dv[b, i, d] = gv
        ### END SOLUTION


ATTN_BACKWARD_QKV = Puzzle(
    name="llm5_attn_backward_qkv",
    title="Attention backward 3: dQ, dK and dV",
    statement="""From `S = scale Q K^T` (`scale = 1 / sqrt(hs)`) and `O = P V`:
`dQ = scale dS K`, `dK = scale dS^T Q`, `dV = P^T dO`. On the causal triangle: query `i` saw keys
`j <= i`; key `i` was seen by queries `j >= i`. One thread per `(i, d)`: element `d` of row `i` of all
three gradients (the transposes are in which index of `ds` and `p` is the loop's). Entries of `ds` and
`p` above the diagonal are NaN here: never read them.""",
    outputs=("dq", "dk", "dv"),
    spec=qkv_spec,
    cases=qkv_cases,
    reference=attn_backward_qkv,
    hints=(
        "dq: row i of ds, j from 0 to i. dk and dv: column i of ds and p, j from i to T - 1.",
        "The scale multiplies dq and dk (they come through S), not dv (it comes through O = P V).",
    ),
    chapter=CHAPTER,
    **_TOL,
)


PUZZLES = [ATTN_BACKWARD_DP, SOFTMAX_BACKWARD, ATTN_BACKWARD_QKV]
