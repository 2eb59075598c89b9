"""Known-wrong and known-right kernels for puzzles/llm/backward/attention.py. Format: mutants/common.py."""

import math

import numpy as np
from numba import cuda

from mutants.common import WRONG, M
from puzzles.llm.backward import attention as m

DP = [
    # the causal mask forgotten: dP above the diagonal is written, not 0
    M(
        m.attn_backward_dp,
        "dp_no_mask",
        WRONG,
        ("        if j <= i:\n            for d", "        if True:\n            for d"),
    ),
    # the mask off by one: the diagonal (a query's own key) left out
    M(
        m.attn_backward_dp,
        "dp_mask_off_by_one",
        WRONG,
        ("        if j <= i:\n            for d", "        if j < i:\n            for d"),
    ),
    M(m.attn_backward_dp, "dp_v_row_i", WRONG, ("do[b, i, d] * v[b, j, d]", "do[b, i, d] * v[b, i, d]")),
]

SOFTMAX_BACKWARD = [
    # the row dot product left out: ds = p * dp treats the softmax as element-wise
    M(m.softmax_backward, "sb_no_row_dot", WRONG, ("(dp[b, i, j] - dot)", "dp[b, i, j]")),
    # the causal mask forgotten: the dot product runs over the whole row (reads undefined entries)
    M(m.softmax_backward, "sb_no_mask", WRONG, ("for j in range(i + 1):", "for j in range(T):")),
    M(
        m.softmax_backward,
        "sb_dot_without_p",
        WRONG,
        ("dot += p[b, i, j] * dp[b, i, j]", "dot += dp[b, i, j]"),
    ),
]

QKV = [
    M(m.attn_backward_qkv, "qkv_no_scale", WRONG, ("dq[b, i, d] = gq * scale", "dq[b, i, d] = gq")),
    M(m.attn_backward_qkv, "qkv_scale_on_dv", WRONG, ("dv[b, i, d] = gv\n", "dv[b, i, d] = gv * scale\n")),
    # the causal mask forgotten: query i sums over every key
    M(m.attn_backward_qkv, "qkv_no_mask", WRONG, ("for j in range(i + 1):", "for j in range(T):")),
    # a missing transpose: dK from row i of dS instead of column i
    M(
        m.attn_backward_qkv,
        "qkv_dk_not_transposed",
        WRONG,
        ("gk += ds[b, j, i] * q[b, j, d]", "gk += ds[b, i, j] * q[b, j, d]"),
    ),
    M(
        m.attn_backward_qkv,
        "qkv_dv_not_transposed",
        WRONG,
        ("gv += p[b, j, i] * do[b, j, d]", "gv += p[b, i, j] * do[b, j, d]"),
    ),
]


@cuda.jit
def sb_two_arrays_pass(ds, p, dp):
    # writes p * dp first, then subtracts p * dot in a second pass
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    b = cuda.blockIdx.y
    T = p.shape[1]
    if i < T:
        dot = np.float32(0.0)
        for j in range(T):
            ds[b, i, j] = np.float32(0.0)
            if j <= i:
                pj = p[b, i, j]
                g = pj * dp[b, i, j]
                ds[b, i, j] = g
                dot += g
        for j in range(i + 1):
            ds[b, i, j] -= p[b, i, j] * dot


@cuda.jit
def qkv_scaled_inputs(dq, dk, dv, ds, p, q, k, do):
    # the scale folded into the operands instead of the result
    d = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    T, hs = q.shape[1], q.shape[2]
    scale = np.float32(1.0) / math.sqrt(np.float32(hs))
    if i < T and d < hs:
        gq = np.float32(0.0)
        for j in range(i + 1):
            gq += (scale * ds[b, i, j]) * k[b, j, d]
        gk = np.float32(0.0)
        gv = np.float32(0.0)
        for j in range(T - 1, i - 1, -1):
            gk += (scale * ds[b, j, i]) * q[b, j, d]
            gv += p[b, j, i] * do[b, j, d]
        dq[b, i, d] = gq
        dk[b, i, d] = gk
        dv[b, i, d] = gv


@cuda.jit
def dp_reversed(dp, do, v):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    T, hs = do.shape[1], do.shape[2]
    if i < T and j < T:
        if j > i:
            dp[b, i, j] = np.float32(0.0)
        else:
            acc = np.float32(0.0)
            for d in range(hs - 1, -1, -1):
                acc += v[b, j, d] * do[b, i, d]
            dp[b, i, j] = acc


MUTANTS = {
    "llm5_attn_backward_dp": DP,
    "llm5_softmax_backward": SOFTMAX_BACKWARD,
    "llm5_attn_backward_qkv": QKV,
}
VARIANTS = {
    "llm5_attn_backward_dp": [("reversed", dp_reversed)],
    "llm5_softmax_backward": [("two_passes", sb_two_arrays_pass)],
    "llm5_attn_backward_qkv": [("scaled_inputs", qkv_scaled_inputs)],
}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}
