"""The flash-style attention backward, one rung: nothing of size T x T is stored.

    llm5_attn_flash_backward   dQ, dK, dV from Q, K, V, the output O, dO and each query row's saved
                               log-sum-exp L (one float per row, from the forward's online softmax):
                               P is recomputed on the fly, p_ij = exp(scale q_i . k_j - L_i), and the
                               softmax backward's row dot product is D_i = do_i . o_i

Why D_i = do_i . o_i: sum_j p_ij dp_ij = sum_j p_ij (do_i . v_j) = do_i . (sum_j p_ij v_j) = do_i . o_i,
so the row's dot product needs no row of P at all. One thread per row t of a head: as a query it
sums dq_t over keys j <= t, as a key it sums dk_t and dv_t over queries i >= t (recomputing p_it,
dp_it and D_i: about three times the forward's arithmetic, the price of storing nothing).

Tolerance: common.dot_tol over the longer of the chains (T terms of hs-long dot products).
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from puzzles.llm.backward.attention import att_shapes
from puzzles.llm.backward.common import CHAPTER, TPB, blocks, dot_tol, uniform

HS_MAX = 16  # head size the per-thread accumulators hold (64 on the GPU, timing.specialize)
_TOL = dot_tol(24, 8.0)


def flash_inputs(rng, bh, T, hs):
    """q, k, v, the forward's o and row log-sum-exp L (float64 truth, rounded), and a random dO."""
    q, k, v, do = (uniform(rng, (bh, T, hs), -1.5, 1.5) for _ in range(4))
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / math.sqrt(hs)
    s = np.where(np.tri(T, dtype=bool), s, -np.inf)
    m = s.max(-1, keepdims=True)
    lse = m + np.log(np.exp(s - m).sum(-1, keepdims=True))
    o = np.exp(s - lse) @ v.astype(np.float64)
    return q, k, v, o.astype(np.float32), do, lse[..., 0].astype(np.float32)


def flash_backward_spec(q, k, v, o, do, lse):
    T, hs = q.shape[1], q.shape[2]
    scale = 1.0 / math.sqrt(hs)
    q64, k64, v64, do64 = (a.astype(np.float64) for a in (q, k, v, do))
    s = np.where(np.tri(T, dtype=bool), q64 @ k64.transpose(0, 2, 1) * scale, -np.inf)
    p = np.exp(s - lse.astype(np.float64)[..., None])
    dp = do64 @ v64.transpose(0, 2, 1)
    ds = p * (dp - (do64 * o.astype(np.float64)).sum(-1, keepdims=True))
    return dict(
        dq=(scale * ds @ k64).astype(np.float32),
        dk=(scale * ds.transpose(0, 2, 1) @ q64).astype(np.float32),
        dv=(p.transpose(0, 2, 1) @ do64).astype(np.float32),
    )


def flash_backward_cases(rng):
    cases = []
    for bh, T, hs in att_shapes(rng):
        q, k, v, o, do, lse = flash_inputs(rng, bh, T, hs)
        z = np.zeros((bh, T, hs), np.float32)
        args = dict(dq=z, dk=z.copy(), dv=z.copy(), q=q, k=k, v=v, o=o, do=do, lse=lse)
        cases.append(Case((blocks(T, TPB), bh), TPB, args))
    return cases


@cuda.jit
def attn_flash_backward(dq, dk, dv, q, k, v, o, do, lse):
    # thread: row t of head b, as a query (dq) and as a key (dk, dv)
    t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    b = cuda.blockIdx.y
    T, hs = q.shape[1], q.shape[2]
    scale = np.float32(1.0) / math.sqrt(np.float32(hs))
    gq = cuda.local.array(HS_MAX, numba.float32)
    gk = cuda.local.array(HS_MAX, numba.float32)
    gv = cuda.local.array(HS_MAX, numba.float32)
    if t < T:
        for d in range(hs):
            gq[d] = np.float32(0.0)
            gk[d] = np.float32(0.0)
            gv[d] = np.float32(0.0)
        ### BEGIN SOLUTION
        dt = np.float32(0.0)  # D_t = do_t . o_t, the row dot product of the softmax backward
        for d in range(hs):
            dt += do[b, t, d] * o[b, t, d]
        for j in range(t + 1):  # query t against the keys it saw
            s = np.float32(0.0)
            dp = np.float32(0.0)
            for d in range(hs):
                s += q[b, t, d] * k[b, j, d]
                dp += do[b, t, d] * v[b, j, d]
            p = math.exp(s * scale - lse[b, t])
            g = p * (dp - dt)
            for d in range(hs):
                gq[d] += g * k[b, j, d]
        for i in range(t, T):  # key t against the queries that saw it
            s = np.float32(0.0)
            dp = np.float32(0.0)
            di = np.float32(0.0)
            for d in range(hs):
                s += q[b, i, d] * k[b, t, d]
                dp += do[b, i, d] * v[b, t, d]
                di += do[b, i, d] * o[b, i, d]
            p = math.exp(s * scale - lse[b, i])
            g = p * (dp - di)
            for d in range(hs):
                gk[d] += g * q[b, i, d]
                gv[d] += p * do[b, i, d]
        ### END SOLUTION
        for d in range(hs):
            dq[b, t, d] = gq[d] * scale
            dk[b, t, d] = gk[d] * scale
            dv[b, t, d] = gv[d]


ATTN_FLASH_BACKWARD = Puzzle(
    name="llm5_attn_flash_backward",
    title="Attention backward 4: flash-style, recomputing P",
    statement=f"""The backward without any `T x T` array: from `q, k, v` (BH x T x hs), the forward's
output `o`, its gradient `do`, and `lse[b, i]`, the log of row `i`'s softmax denominator (the
flash forward saves it: `max + log(sum)`). Recompute `p_ij = exp(scale q_i . k_j - lse_i)` when
needed (`scale = 1 / sqrt(hs)`, causal: `j <= i`), with `dp_ij = do_i . v_j` and the row dot
product `D_i = do_i . o_i` (equal to `sum_j p_ij dp_ij`), `ds_ij = p_ij (dp_ij - D_i)`:
`dq_t = scale sum_(j<=t) ds_tj k_j`, `dk_t = scale sum_(i>=t) ds_it q_i`, `dv_t = sum_(i>=t) p_it do_i`.
One thread per row `t`; its three accumulators `gq, gk, gv` (`HS_MAX = {HS_MAX}` floats each) and the
final writes are given.""",
    outputs=("dq", "dk", "dv"),
    spec=flash_backward_spec,
    cases=flash_backward_cases,
    reference=attn_flash_backward,
    hints=(
        "D_t needs only row t of do and o: compute it once, before the loops.",
        "As a key, thread t needs D_i of every later row i: recompute it (hs products) inside the loop.",
        "The scale goes inside the exponent (p needs the scaled score) and again on dq and dk.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


PUZZLES = [ATTN_FLASH_BACKWARD]
