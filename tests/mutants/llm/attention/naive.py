"""Known-wrong and known-right kernels for puzzles/llm/attention/naive.py (the three naive kernels).

MUTANTS[puzzle] = [(name, kernel, expected exception, detail)]; VARIANTS[puzzle] = [(name, kernel)].
Format: mutants/common.py. Every mutant is a mistake a learner makes writing attention.
"""

import math

import numpy as np
from numba import cuda

from mutants.common import OOB, RACE, WRONG, M
from puzzles.llm.attention import naive as la
from puzzles.llm.attention.common import NEG_INF


@cuda.jit
def scores_no_scale(s, q, k, causal):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    if i < q.shape[1] and j < q.shape[1]:
        if causal and j > i:
            s[b, i, j] = NEG_INF
        else:
            acc = np.float32(0.0)
            for c in range(q.shape[2]):
                acc += q[b, i, c] * k[b, j, c]
            s[b, i, j] = acc  # 1 / sqrt(d) forgotten


@cuda.jit
def scores_causal_off_by_one(s, q, k, causal):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    if i < q.shape[1] and j < q.shape[1]:
        if causal and j >= i:  # hides the diagonal: a token may attend to itself
            s[b, i, j] = NEG_INF
        else:
            acc = np.float32(0.0)
            for c in range(q.shape[2]):
                acc += q[b, i, c] * k[b, j, c]
            s[b, i, j] = acc / math.sqrt(q.shape[2])


@cuda.jit
def scores_mask_zero(s, q, k, causal):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    if i < q.shape[1] and j < q.shape[1]:
        if causal and j > i:
            s[b, i, j] = 0.0  # exp(0) = 1: the future still gets weight
        else:
            acc = np.float32(0.0)
            for c in range(q.shape[2]):
                acc += q[b, i, c] * k[b, j, c]
            s[b, i, j] = acc / math.sqrt(q.shape[2])


@cuda.jit
def scores_no_guard(s, q, k, causal):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    if causal and j > i:
        s[b, i, j] = NEG_INF
    else:
        acc = np.float32(0.0)
        for c in range(q.shape[2]):
            acc += q[b, i, c] * k[b, j, c]
        s[b, i, j] = acc / math.sqrt(q.shape[2])


@cuda.jit
def scores_query_as_key(s, q, k, causal):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    if i < q.shape[1] and j < q.shape[1]:
        if causal and j > i:
            s[b, i, j] = NEG_INF
        else:
            acc = np.float32(0.0)
            for c in range(q.shape[2]):
                acc += q[b, i, c] * k[b, i, c]  # key i instead of key j
            s[b, i, j] = acc / math.sqrt(q.shape[2])


@cuda.jit
def scores_sqrt_seq(s, q, k, causal):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    if i < q.shape[1] and j < q.shape[1]:
        if causal and j > i:
            s[b, i, j] = NEG_INF
        else:
            acc = np.float32(0.0)
            for c in range(q.shape[2]):
                acc += q[b, i, c] * k[b, j, c]
            s[b, i, j] = acc / math.sqrt(q.shape[1])  # sqrt of the sequence length, not the head dim


@cuda.jit
def scores_prescaled(s, q, k, causal):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    T = q.shape[1]
    if i >= T or j >= T:
        return
    d = q.shape[2]
    r = np.float32(1.0) / math.sqrt(np.float32(d))
    acc = np.float32(0.0)
    for c in range(d - 1, -1, -1):
        acc += (q[b, i, c] * r) * k[b, j, c]
    s[b, i, j] = acc if (causal == 0 or j <= i) else -np.inf


@cuda.jit
def scores_grid_stride(s, q, k, causal):
    # each thread walks the keys of its query in steps of the grid's width
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    T = q.shape[1]
    d = q.shape[2]
    if i < T:
        j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        while j < T:
            if causal == 1 and i < j:
                s[b, i, j] = NEG_INF
            else:
                x = np.float32(0.0)
                for c in range(d):
                    x += q[b, i, c] * k[b, j, c]
                s[b, i, j] = x / math.sqrt(np.float32(d))
            j += cuda.gridDim.x * cuda.blockDim.x


# P V with one block assumed to cover the head dimension (d > TPB on every seed): the blocks along x
# all write columns 0..TPB-1
PV = [
    M(
        la.attn_pv,
        "pv_d_fits_block",
        RACE,
        ("c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "c = cuda.threadIdx.x"),
    ),
]

MUTANTS = {
    "llm3_attn_pv": PV,
    "llm3_attn_scores": [
        ("scale 1/sqrt(d) missing", scores_no_scale, *WRONG),
        ("causal mask off by one (diagonal hidden)", scores_causal_off_by_one, *WRONG),
        ("masked score 0 instead of -inf", scores_mask_zero, *WRONG),
        ("no bounds guard", scores_no_guard, *OOB),
        ("query dotted with its own key", scores_query_as_key, *WRONG),
        ("divided by sqrt(T) instead of sqrt(d)", scores_sqrt_seq, *WRONG),
    ],
}

VARIANTS = {
    "llm3_attn_scores": [
        ("scale folded into q, -inf by expression", scores_prescaled),
        ("grid-stride over keys", scores_grid_stride),
    ],
}

SEEDS = {p.name: (0, 1, 2) for p in la.PUZZLES}  # references and worked kernels too
