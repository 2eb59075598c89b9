"""Known-wrong and known-right kernels for puzzles/llm/backward/flash.py. Format: mutants/common.py."""

import math

import numba
import numpy as np
from numba import cuda

from mutants.common import WRONG, M
from puzzles.llm.backward import flash as m
from puzzles.llm.backward.flash import HS_MAX

fb = m.attn_flash_backward

FLASH = [
    # the causal mask forgotten: the recomputed p of a future key is not 0
    M(fb, "fb_no_mask", WRONG, ("for j in range(t + 1):", "for j in range(T):")),
    M(fb, "fb_no_mask_keys", WRONG, ("for i in range(t, T):", "for i in range(T):")),
    # the scale forgotten when recomputing the probabilities
    M(fb, "fb_no_scale_in_p", WRONG, ("p = math.exp(s * scale - lse[b, t])", "p = math.exp(s - lse[b, t])")),
    # the softmax backward without the row dot product
    M(fb, "fb_no_row_dot", WRONG, ("g = p * (dp - dt)", "g = p * dp")),
    # D of the key's own row used for every query (it belongs to the query row i)
    # the key's own row statistics used to recompute a query's probability
    M(
        fb,
        "fb_lse_of_key_row",
        WRONG,
        ("p = math.exp(s * scale - lse[b, i])", "p = math.exp(s * scale - lse[b, t])"),
    ),
    M(fb, "fb_own_row_dot", WRONG, ("g = p * (dp - di)", "g = p * (dp - dt)")),
]


@cuda.jit
def fb_reversed(dq, dk, dv, q, k, v, o, do, lse):
    # keys first, each loop run backwards, scale folded into q
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
        for i in range(T - 1, t - 1, -1):
            s = np.float32(0.0)
            dp = np.float32(0.0)
            di = np.float32(0.0)
            for d in range(hs):
                s += (q[b, i, d] * scale) * k[b, t, d]
                dp += v[b, t, d] * do[b, i, d]
                di += o[b, i, d] * do[b, i, d]
            p = math.exp(s - lse[b, i])
            for d in range(hs):
                gk[d] += p * (dp - di) * q[b, i, d]
                gv[d] += p * do[b, i, d]
        dt = np.float32(0.0)
        for d in range(hs):
            dt += o[b, t, d] * do[b, t, d]
        for j in range(t, -1, -1):
            s = np.float32(0.0)
            dp = np.float32(0.0)
            for d in range(hs):
                s += (q[b, t, d] * scale) * k[b, j, d]
                dp += v[b, j, d] * do[b, t, d]
            p = math.exp(s - lse[b, t])
            for d in range(hs):
                gq[d] += p * (dp - dt) * k[b, j, d]
        for d in range(hs):
            dq[b, t, d] = gq[d] * scale
            dk[b, t, d] = gk[d] * scale
            dv[b, t, d] = gv[d]


MUTANTS = {"llm5_attn_flash_backward": FLASH}
VARIANTS = {"llm5_attn_flash_backward": [("reversed", fb_reversed)]}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}
