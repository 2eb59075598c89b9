"""Sampling through a KV cache: one token a step, every layer's keys and values kept.

    NumpyDecoder(cfg, params)      the reference path (NumPy, the parameters' dtype): a CPU needs no GPU
    KernelDecoder(backend)         the course's kernels (GPU or simulator) through a KernelBackend's
                                   weights; attention is the decode kernel llm3_attn_decode
    decoder_for(backend)           the decoder that matches a training backend (None for PyTorch's)
    generate(decoder, prompt, n, T, seed, temperature)    n tokens after `prompt`

`reference.sample` recomputes the whole prefix for every new token: step s costs a forward pass over
s tokens, O(s^2) attention work. With the cache a step runs one token through the model: its query,
key and value, one row of attention over the cached keys and values, its MLP. The tokens drawn are
the same (the same random numbers, probabilities equal to float32 rounding; greedy with temperature 0):
tests/test_kv_cache.py checks it.

The context. GPT-2's positions are learned embeddings of absolute positions 0 .. T-1, so the cache
holds at most T positions. `reference.sample` slides its window once the text is longer than T: every
token then changes position, and nothing cached stays valid. `generate` does the same: while the text
fits it decodes from the cache; after that each token is a full forward pass over the last T tokens,
exactly as `reference.sample` (the cache pays for the first T tokens only).
"""

import math

import numpy as np
from numba import cuda

from helpers import device, timing
from puzzles.llm.attention import decode as attn_decode_op
from puzzles.llm.training import reference
from puzzles.llm.training.reference import LAYER, Config


class CacheError(ValueError):
    """A prompt or a position that the cache cannot hold: the message says which and what to do."""


def check_prompt(prompt, T: int) -> None:
    if len(prompt) == 0:
        raise CacheError("the prompt is empty: give at least one token (the text starts somewhere)")
    if len(prompt) > T:
        raise CacheError(
            f"the prompt has {len(prompt)} tokens, more than the model's context T={T}: the KV cache "
            f"holds T positions; keep the last {T} tokens of the prompt (prompt[-{T}:])"
        )


def check_position(pos: int, T: int) -> None:
    if not 0 <= pos < T:
        raise CacheError(
            f"cache position {pos} is outside the model's context 0..{T - 1}: GPT-2's positions are "
            f"learned for {T} places only; start again from the last tokens (generate() does so)"
        )


def attend_one(qkv, k_cache, v_cache, pos: int, NH: int):
    """NumPy decode attention of one token per sequence (the kernel's job): append its key and value at
    row pos of the (B, NH, T, hs) caches, then attend over rows 0..pos. Returns y (B, C)."""
    B, C3 = qkv.shape
    C = C3 // 3
    hs = C // NH
    q, k, v = (qkv[:, i * C : (i + 1) * C].reshape(B, NH, hs) for i in range(3))
    k_cache[:, :, pos], v_cache[:, :, pos] = k, v
    s = np.einsum("bhd,bhjd->bhj", q, k_cache[:, :, : pos + 1]) * qkv.dtype.type(1 / math.sqrt(hs))
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return np.einsum("bhj,bhjd->bhd", w, v_cache[:, :, : pos + 1]).reshape(B, C)


class NumpyDecoder:
    """reference.forward, one token at a time, with a (B=1) KV cache per layer."""

    def __init__(self, cfg: Config, params: dict):
        self.cfg, self.p = cfg, params
        dt = params["wte"].dtype
        hs = cfg.C // cfg.NH
        self.k = np.zeros((cfg.L, 1, cfg.NH, cfg.T, hs), dt)
        self.v = np.zeros_like(self.k)

    def reset(self):
        pass  # rows past the current position are never read: nothing to clear

    def step(self, token: int, pos: int) -> np.ndarray:
        """The logits (V,) after token `token` at position `pos` (every earlier position cached)."""
        cfg, p = self.cfg, self.p
        check_position(pos, cfg.T)
        x = p["wte"][[token]] + p["wpe"][[pos]]
        for layer in range(cfg.L):
            P = {k: p[f"{layer}.{k}"] for k in LAYER}
            a1, _ = reference.layernorm(x, P["ln1_w"], P["ln1_b"])
            y = attend_one(a1 @ P["w_qkv"] + P["b_qkv"], self.k[layer], self.v[layer], pos, cfg.NH)
            h = x + y @ P["w_proj"] + P["b_proj"]
            a2, _ = reference.layernorm(h, P["ln2_w"], P["ln2_b"])
            x = h + reference.gelu(a2 @ P["w_fc"] + P["b_fc"]) @ P["w_fcproj"] + P["b_fcproj"]
        xf, _ = reference.layernorm(x, p["lnf_w"], p["lnf_b"])
        return (xf @ p["wte"].T)[0]

    def logits(self, tokens):
        return reference.forward(self.p, tokens, None, self.cfg)[0]


_COPIES = {}  # (DB, MAX_D) -> the decode kernel compiled for them, once per process


@cuda.jit
def embed_one(x, wte, wpe, token, pos):
    # x[0, :] = wte[token] + wpe[pos]: the embedding of the one token a decode step runs
    c = cuda.grid(1)
    if c < x.shape[1]:
        x[0, c] = wte[token, c] + wpe[pos, c]


class KernelDecoder:
    """The same step as launches of the course's kernels, on a KernelBackend's weights (its `eval`
    weights: x for schedule-free AdamW) and stream; the caches live on the device."""

    DB_GPU = 32  # the decode kernel's threads per block on a GPU (a warp); the puzzle's DB elsewhere

    def __init__(self, backend):
        cfg = backend.cfg
        self.be, self.cfg = backend, cfg
        hs = cfg.C // cfg.NH
        gpu = device.current() == "gpu"
        self.db = self.DB_GPU if gpu else attn_decode_op.DB
        kern = attn_decode_op.attn_decode
        if gpu or hs > attn_decode_op.MAX_D:  # recompiled with room for the head and the block
            key = (self.db, max(hs, attn_decode_op.MAX_D))
            if key not in _COPIES:
                _COPIES[key] = timing.specialize(kern, DB=key[0], MAX_D=key[1])
            kern = _COPIES[key]
        self.attn = kern
        self.k = cuda.device_array((cfg.L, 1, cfg.NH, cfg.T, hs), np.float32)
        self.v = cuda.device_array((cfg.L, 1, cfg.NH, cfg.T, hs), np.float32)

    def reset(self):
        pass

    def step(self, token: int, pos: int) -> np.ndarray:
        cfg, be = self.cfg, self.be
        check_position(pos, cfg.T)
        C, NH = cfg.C, cfg.NH
        buf = be._buf
        with be.eval_weights():
            p = be.p
            x = buf("dec.x", (1, C))
            be._go(embed_one, (-(-C // 128),), (128,), x, p["wte"], p["wpe"], token, pos)
            a1, m1, r1 = buf("dec.a1", (1, C)), buf("dec.m1", (1,)), buf("dec.r1", (1,))
            be._rows("layernorm_forward", 1, a1, m1, r1, x, p["0.ln1_w"], p["0.ln1_b"], 1, C)
            qkv, y, proj = buf("dec.qkv", (1, 3 * C)), buf("dec.y", (1, C)), buf("dec.proj", (1, C))
            h, a2, fc, f = (
                buf("dec.h", (1, C)),
                buf("dec.a2", (1, C)),
                buf("dec.fc", (1, 4 * C)),
                buf("dec.f", (1, 4 * C)),
            )
            mlp, m2, r2 = buf("dec.mlp", (1, C)), buf("dec.m2", (1,)), buf("dec.r2", (1,))
            for layer in range(cfg.L):
                P = {n: p[f"{layer}.{n}"] for n in LAYER}
                be._lin(qkv, a1, P["w_qkv"], P["b_qkv"])
                be._go(self.attn, (NH, 1), (self.db,), y, self.k[layer], self.v[layer], qkv, pos)
                be._lin(proj, y, P["w_proj"], P["b_proj"])
                be._residual_ln(h, a2, m2, r2, x, proj, P["ln2_w"], P["ln2_b"], 1, C)
                be._lin(fc, a2, P["w_fc"], P["b_fc"])
                be._ew("gelu_forward", 4 * C, f.reshape(-1), fc.reshape(-1), 4 * C)
                be._lin(mlp, f, P["w_fcproj"], P["b_fcproj"])
                nxt = f"{layer + 1}." if layer + 1 < cfg.L else None
                w, b = (p[f"{nxt}ln1_w"], p[f"{nxt}ln1_b"]) if nxt else (p["lnf_w"], p["lnf_b"])
                be._residual_ln(x, a1, m1, r1, h, mlp, w, b, 1, C)  # x' = h + mlp; a1 = its LayerNorm
            logits = buf("dec.logits", (1, cfg.V))
            be._nt(logits, a1, p["wte"])
            return be._host(logits)[0]

    def logits(self, tokens):
        return self.be.logits(tokens)


def decoder_for(backend):
    """The KV-cache decoder of a training backend's model; None where there is none (PyTorch's)."""
    if getattr(backend, "name", "") == "numpy":
        return NumpyDecoder(backend.cfg, backend.eval_params())
    if getattr(backend, "name", "") == "kernels":
        return KernelDecoder(backend)
    return None


def pick(z, rng, temperature: float) -> int:
    """reference.sample's draw: softmax(z / temperature) (float64); temperature 0 is greedy."""
    z = np.asarray(z, np.float64)
    if temperature == 0:
        return int(np.argmax(z))
    z = z / temperature
    pr = np.exp(z - z.max())
    return int(rng.choice(len(pr), p=pr / pr.sum()))


def generate(decoder, prompt, n: int, T: int, seed: int = 0, temperature: float = 1.0, logits_out=None):
    """n tokens after `prompt` (1 <= len(prompt) <= T), drawn as reference.sample draws them. The prompt
    goes through the cache token by token; while the text fits in T positions each new token is one
    decode step, after that a full forward pass over the last T tokens (see the module's docstring).
    `logits_out`, a list, receives each step's logits (the equality test reads them)."""
    check_prompt(prompt, T)
    rng = np.random.default_rng(seed)
    toks = [int(t) for t in prompt]
    decoder.reset()
    for pos, t in enumerate(toks):
        z = decoder.step(t, pos)
    for i in range(n):
        if logits_out is not None:
            logits_out.append(np.array(z, np.float64))
        toks.append(pick(z, rng, temperature))
        if i == n - 1:
            break  # the last token drawn: no logits after it are needed
        if len(toks) <= T:
            z = decoder.step(toks[-1], len(toks) - 1)
        else:
            z = decoder.logits(np.array(toks[-T:], np.int32)[None])[0, -1]
    return np.array(toks[len(prompt) :], np.int32)
