"""FlashAttention forward in Triton, beside Transformer kernels 3's `attn_flash` (K/V tiles in shared
memory, one thread per query).

`out = softmax(Q K^T / sqrt(d)) V` per head, causal or not, q/k/v of shape (BH, T, d). The mapping:
one program per BR queries of one head (the Numba block: grid (query blocks, heads)); the Numba
kernel's shared K and V tiles are `tl.load`s of BC x d tiles; its per-thread loop of dot products is
one `tl.dot(q, tl.trans(k))` of BR x BC scores; the online softmax is the same algebra on vectors (a
running maximum m and sum l per query, the accumulator rescaled by exp(m_old - m_new) per tile). The
causal mask and the keys past T are a `tl.where(..., s, -inf)`. Tiles of at least 16 (tl.dot's least).
"""

from __future__ import annotations

import math

import numpy as np

from puzzles.llm.attention.common import _qkv
from puzzles.llm.attention.flash import ATTN_FLASH as TWIN
from puzzles.llm.attention.flash import attn_flash as numba_kernel  # noqa: F401
from puzzles.triton.lang import jit, launch, tl
from puzzles.triton.softmax import block_for

NAME = "triton_flash_attention"
BR = BC = 16


@jit
def flash_kernel(out_ptr, q_ptr, k_ptr, v_ptr, T, d, scale, CAUSAL: tl.constexpr, BR: tl.constexpr,
                 BC: tl.constexpr, BD: tl.constexpr):  # fmt: skip
    qb = tl.program_id(0)
    head = tl.program_id(1) * T * d  # where this head's (T, d) matrices start
    i = qb * BR + tl.arange(0, BR)  # the program's queries
    col = tl.arange(0, BD)
    qmask = (i[:, None] < T) & (col[None, :] < d)
    q = tl.load(q_ptr + head + i[:, None] * d + col[None, :], mask=qmask, other=0.0) * scale
    m = tl.full((BR,), -float("inf"), tl.float32)
    lsum = tl.zeros((BR,), tl.float32)
    acc = tl.zeros((BR, BD), tl.float32)
    last = tl.minimum(T, (qb + 1) * BR) if CAUSAL else T  # causal: no key past the last query
    for k0 in range(0, last, BC):
        j = k0 + tl.arange(0, BC)
        kvmask = (j[:, None] < T) & (col[None, :] < d)
        k = tl.load(k_ptr + head + j[:, None] * d + col[None, :], mask=kvmask, other=0.0)
        v = tl.load(v_ptr + head + j[:, None] * d + col[None, :], mask=kvmask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee")  # (BR, BC) scores
        ok = j[None, :] < T
        if CAUSAL:
            ok = ok & (j[None, :] <= i[:, None])
        s = tl.where(ok, s, -float("inf"))
        # the first tile holds key 0, which every query sees: m is finite from then on
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        lsum = lsum * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m = m_new
    tl.store(out_ptr + head + i[:, None] * d + col[None, :], acc / lsum[:, None], mask=qmask)


def run(kernel, torch, args: dict, device: str, br: int = BR, bc: int = BC) -> dict:
    q, k, v = (args[n] for n in ("q", "k", "v"))
    bh, t, d = q.shape
    out = torch.full((bh, t, d), float("nan"), device=device)
    grid = ((t + br - 1) // br, bh)
    scale = 1.0 / math.sqrt(d)
    launch(kernel, grid, out, q, k, v, t, d, scale, CAUSAL=bool(args["causal"]), BR=br, BC=bc,
           BD=max(16, block_for(d)))  # fmt: skip
    return {"out": out.cpu().numpy()}


def cases(rng) -> list[dict]:
    """The twin's cases (T up to about 24), then two spanning three or more of Triton's 16-key tiles,
    one with the large logits: a maximum that grows tile after tile must rescale what came before."""
    out = [c.args for c in TWIN.cases(rng)]
    for t, d, causal, big in (
        (int(rng.integers(40, 64)), int(rng.integers(9, 17)), 1, False),
        (50, 8, 0, True),
    ):
        q, k, v = _qkv(rng, 2, t, d, big)
        out.append(dict(out=np.zeros_like(q), q=q, k=k, v=v, causal=causal))
    return out


REFERENCE = flash_kernel
OUTPUTS = ("out",)
