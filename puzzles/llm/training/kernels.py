"""GPT-2 from the course's kernels: forward, loss, backward and AdamW as launches, on the GPU or the
simulator (whichever engine is active), the parameters, gradients and AdamW state in flat float32
buffers (AdamW is one launch over all of them).

    KernelBackend(cfg, params, kernels={name: yours})   the model; `kernels` swaps in a learner's
                                                        kernel by its function name
    KernelBackend.sources()                             which kernel runs for each op: yours or the
                                                        course's solution
    KernelBackend.loss_and_grads(tokens, targets)       (mean loss, {name: gradient}) on the host

Where a launch's shape comes from: the warp-per-row kernels (LayerNorm, cross-entropy) take
ROWS_PER_BLOCK rows a block, the element-wise ones a grid-stride loop, the products TILE x TILE
tiles (4 in the puzzles, `tile=16` on a GPU recompiles them with timing.specialize).
"""

import math

import numpy as np
from numba import cuda

from helpers import timing
from puzzles.llm.attention.naive import attn_pv, attn_scores, attn_softmax
from puzzles.llm.backward.attention import attn_backward_dp, attn_backward_qkv, softmax_backward
from puzzles.llm.backward.linear import bias_grad_atomic, matmul_nt, matmul_tn_split
from puzzles.llm.gpt2_block.heads import merge_heads, split_heads
from puzzles.llm.gpt2_block.matmul import linear
from puzzles.llm.small_ops.adamw import adamw
from puzzles.llm.small_ops.crossentropy import crossentropy_softmax_backward
from puzzles.llm.small_ops.embedding import embedding_backward_atomic, embedding_forward
from puzzles.llm.small_ops.gelu import gelu_backward, gelu_forward
from puzzles.llm.small_ops.residual import residual_add
from puzzles.llm.softmax_layernorm.layernorm import layernorm_forward
from puzzles.llm.softmax_layernorm.layernorm_grad import layernorm_backward
from puzzles.llm.training import reference
from puzzles.llm.training.loop import first_non_finite, raise_non_finite
from puzzles.llm.training.reference import LAYER, Config

ROWS_PER_BLOCK, WARP, EW = 2, 32, 128
SPLIT_ROWS_GPU = 64

# every kernel the model launches, by function name: the course's solutions
COURSE = {
    k.py_func.__name__: k
    for k in (
        embedding_forward, layernorm_forward, linear, split_heads, attn_scores, attn_softmax, attn_pv,
        merge_heads, residual_add, gelu_forward, matmul_nt, crossentropy_softmax_backward,
        matmul_tn_split, bias_grad_atomic, gelu_backward, layernorm_backward, attn_backward_dp,
        softmax_backward, attn_backward_qkv, embedding_backward_atomic, adamw,
    )
}  # fmt: skip


@cuda.jit
def zero_fill(a, n):
    i = cuda.grid(1)
    while i < n:
        a[i] = np.float32(0.0)
        i += cuda.gridsize(1)


@cuda.jit
def heads_of(out, x, T, NH):
    # (B*T, C) -> (B*NH, T, hs): the layout attention works in (split_heads for one tensor)
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    n = cuda.blockIdx.y
    C = x.shape[1]
    if c < C:
        hs = C // NH
        out[(n // T) * NH + c // hs, n % T, c % hs] = x[n, c]


@cuda.jit
def qkv_of(dqkv, dq, dk, dv, T, NH):
    # three (B*NH, T, hs) gradients -> (B*T, 3C), the inverse of split_heads
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    n = cuda.blockIdx.y
    C = dq.shape[2] * NH
    if c < C:
        hs = C // NH
        bh, t, d = (n // T) * NH + c // hs, n % T, c % hs
        dqkv[n, c] = dq[bh, t, d]
        dqkv[n, C + c] = dk[bh, t, d]
        dqkv[n, 2 * C + c] = dv[bh, t, d]


def learner_kernels(namespace: dict, registry) -> dict:
    """The kernels of `namespace` (a notebook's globals) whose puzzle passed `registry.check` in this
    session (`registry` is the `puzzles` package, passed in: this module sits below it), by function
    name: the model runs yours where you have one, the course's elsewhere."""
    out = {}
    for name in registry.names():
        fn = getattr(registry.get(name).reference, "py_func", None)
        mine = fn is not None and fn.__name__ in COURSE and fn.__name__ in namespace
        if mine and name in registry._PASSED:
            out[fn.__name__] = namespace[fn.__name__]
    return out


def _b(n, b):
    return (n + b - 1) // b


class KernelBackend:
    name = "kernels"

    def __init__(self, cfg: Config, params: dict, kernels: dict | None = None, tile: int = 4, **adam):
        self.cfg, self.tile = cfg, tile
        self.adam = {**reference.ADAM, **adam}
        self.yours = dict(kernels or {})
        unknown = set(self.yours) - set(COURSE)
        if unknown:
            raise KeyError(f"no kernel of the model is called {sorted(unknown)}; the names: {sorted(COURSE)}")
        self.k = {**COURSE, **self.yours}
        if tile != 4:  # GPU sizes: the same code, yours or the course's, recompiled with bigger tiles
            # (a kernel launched with tile x tile blocks must size its shared tiles for them)
            for name in ("linear", "matmul_nt"):
                self.k[name] = timing.specialize(self.k[name], TILE=tile)
            self.k["matmul_tn_split"] = timing.specialize(
                self.k["matmul_tn_split"], TILE=tile, SPLIT_ROWS=SPLIT_ROWS_GPU
            )
        self.split_rows = SPLIT_ROWS_GPU if tile != 4 else 2 * 4
        self.order, self.n_decay = reference.param_order(cfg)
        shapes = reference.param_shapes(cfg)
        flat = np.concatenate([params[n].astype(np.float32).ravel() for n in self.order])
        self.n = flat.size
        self.flat = cuda.to_device(flat)
        self.gflat = cuda.to_device(np.zeros_like(flat))
        self.m = cuda.to_device(np.zeros_like(flat))
        self.v = cuda.to_device(np.zeros_like(flat))
        self.p, self.g, off = {}, {}, 0
        for n in self.order:
            size = int(np.prod(shapes[n]))
            self.p[n] = self.flat[off : off + size].reshape(shapes[n])
            self.g[n] = self.gflat[off : off + size].reshape(shapes[n])
            off += size
        self.t = 0
        self._acts = {}

    def sources(self) -> dict:
        return {n: ("yours" if n in self.yours else "course solution") for n in COURSE}

    # -- launches ---------------------------------------------------------------------------------
    def _ew(self, name, n, *args):
        self.k[name][(min(_b(n, EW), 1024),), (EW,)](*args)

    def _rows(self, name, rows, *args):
        self.k[name][(_b(rows, ROWS_PER_BLOCK),), (ROWS_PER_BLOCK * WARP,)](*args)

    def _lin(self, out, inp, w, bias):
        t = self.tile
        self.k["linear"][(_b(w.shape[1], t), _b(inp.shape[0], t)), (t, t)](out, inp, w, bias)

    def _nt(self, out, a, b):
        t = self.tile
        self.k["matmul_nt"][(_b(b.shape[0], t), _b(a.shape[0], t)), (t, t)](out, a, b)

    def _tn(self, out, a, b):  # out += a^T b (out zeroed with the gradients)
        t = self.tile
        grid = (_b(b.shape[1], t), _b(a.shape[1], t), _b(a.shape[0], self.split_rows))
        self.k["matmul_tn_split"][grid, (t, t)](out, a, b)

    def _bias(self, db, dout):
        grid = (_b(dout.shape[1], 32), _b(dout.shape[0], 8))
        self.k["bias_grad_atomic"][grid, (32,)](db, dout)

    def _buf(self, key, shape):
        a = self._acts.get(key)
        if a is None or a.shape != shape:
            a = self._acts[key] = cuda.device_array(shape, np.float32)
        return a

    # -- the model --------------------------------------------------------------------------------
    def forward(self, tokens, targets):
        """Every activation the backward needs; returns the device arrays of the losses and logits."""
        cfg, k, buf = self.cfg, self.k, self._buf
        B, T = tokens.shape
        N, C, NH, V = B * T, cfg.C, cfg.NH, cfg.V
        hs, BH = C // NH, B * NH
        self.shape = (B, T)
        self.tok = cuda.to_device(tokens.reshape(-1).astype(np.int32))
        x = buf("x0", (N, C))
        self._ew("embedding_forward", N * C, x, self.tok, self.p["wte"], self.p["wpe"], N, T, C)
        t8 = 4 if self.tile == 4 else 16
        for layer in range(cfg.L):
            P = {n: self.p[f"{layer}.{n}"] for n in LAYER}

            def a(name, shape, layer=layer):
                return buf(f"{layer}.{name}", shape)

            a1, m1, r1 = a("a1", (N, C)), a("m1", (N,)), a("r1", (N,))
            self._rows("layernorm_forward", N, a1, m1, r1, x, P["ln1_w"], P["ln1_b"], N, C)
            qkv = a("qkv", (N, 3 * C))
            self._lin(qkv, a1, P["w_qkv"], P["b_qkv"])
            q, kk, v = a("q", (BH, T, hs)), a("k", (BH, T, hs)), a("v", (BH, T, hs))
            k["split_heads"][(_b(3 * C, EW), N), (EW,)](q, kk, v, qkv, T, NH)
            s, pr, o = a("s", (BH, T, T)), a("p", (BH, T, T)), a("o", (BH, T, hs))
            k["attn_scores"][(_b(T, t8), _b(T, t8), BH), (t8, t8)](s, q, kk, 1)
            k["attn_softmax"][(_b(T, EW), BH), (EW,)](pr, s)
            k["attn_pv"][(_b(hs, t8), _b(T, t8), BH), (t8, t8)](o, pr, v)
            y = a("y", (N, C))
            k["merge_heads"][(_b(C, EW), N), (EW,)](y, o, T, NH)
            proj, h = a("proj", (N, C)), a("h", (N, C))
            self._lin(proj, y, P["w_proj"], P["b_proj"])
            self._ew("residual_add", N * C, h.reshape(-1), x.reshape(-1), proj.reshape(-1), N * C)
            a2, m2, r2 = a("a2", (N, C)), a("m2", (N,)), a("r2", (N,))
            self._rows("layernorm_forward", N, a2, m2, r2, h, P["ln2_w"], P["ln2_b"], N, C)
            fc, f = a("fc", (N, 4 * C)), a("f", (N, 4 * C))
            self._lin(fc, a2, P["w_fc"], P["b_fc"])
            self._ew("gelu_forward", N * 4 * C, f.reshape(-1), fc.reshape(-1), N * 4 * C)
            mlp, x = a("mlp", (N, C)), buf(f"x{layer + 1}", (N, C))
            self._lin(mlp, f, P["w_fcproj"], P["b_fcproj"])
            self._ew("residual_add", N * C, x.reshape(-1), h.reshape(-1), mlp.reshape(-1), N * C)
        xf, mf, rf = buf("xf", (N, C)), buf("mf", (N,)), buf("rf", (N,))
        self._rows("layernorm_forward", N, xf, mf, rf, x, self.p["lnf_w"], self.p["lnf_b"], N, C)
        logits = buf("logits", (N, V))
        self._nt(logits, xf, self.p["wte"])
        if targets is None:
            return None, logits
        losses, dlogits = buf("losses", (N,)), buf("dlogits", (N, V))
        self.tgt = cuda.to_device(targets.reshape(-1).astype(np.int32))
        dloss = cuda.to_device(np.full(N, 1.0 / N, np.float32))
        self._rows("crossentropy_softmax_backward", N, dlogits, losses, logits, self.tgt, dloss, N, V)
        return losses, logits

    def backward(self):
        cfg, k, buf, g = self.cfg, self.k, self._buf, self.g
        B, T = self.shape
        N, C, NH = B * T, cfg.C, cfg.NH
        hs, BH = C // NH, B * NH
        act = self._acts
        zero_fill[(min(_b(self.n, EW), 1024),), (EW,)](self.gflat, self.n)
        dlogits, xf = act["dlogits"], act["xf"]
        self._tn(g["wte"], dlogits, xf)  # the tied output layer's share of dwte
        dxf, dx = buf("dxf", (N, C)), buf("dx", (N, C))
        zero = buf("zero_c", (C,))
        zero_fill[(1,), (EW,)](zero, C)
        self._lin(dxf, dlogits, self.p["wte"], zero)  # dlogits (N, V) @ wte (V, C)
        L = cfg.L
        self._rows(
            "layernorm_backward", N, dx, g["lnf_w"], g["lnf_b"], dxf, act[f"x{L}"], act["mf"], act["rf"],
            self.p["lnf_w"], N, C,
        )  # fmt: skip
        t8 = 4 if self.tile == 4 else 16
        for layer in reversed(range(L)):
            P = {n: self.p[f"{layer}.{n}"] for n in LAYER}
            G = {n: g[f"{layer}.{n}"] for n in LAYER}
            A = {n.split(".", 1)[1]: v for n, v in act.items() if n.startswith(f"{layer}.")}
            # x' = h + fcproj(gelu(fc(ln2(h))))
            self._tn(G["w_fcproj"], A["f"], dx)
            self._bias(G["b_fcproj"], dx)
            df, dfc = buf("df", (N, 4 * C)), buf("dfc", (N, 4 * C))
            self._nt(df, dx, P["w_fcproj"])
            self._ew(
                "gelu_backward", N * 4 * C, dfc.reshape(-1), A["fc"].reshape(-1), df.reshape(-1), N * 4 * C
            )
            self._tn(G["w_fc"], A["a2"], dfc)
            self._bias(G["b_fc"], dfc)
            da2, dln = buf("da2", (N, C)), buf("dln", (N, C))
            self._nt(da2, dfc, P["w_fc"])
            self._rows(
                "layernorm_backward", N, dln, G["ln2_w"], G["ln2_b"], da2, A["h"], A["m2"], A["r2"],
                P["ln2_w"], N, C,
            )  # fmt: skip
            dh = buf("dh", (N, C))
            self._ew("residual_add", N * C, dh.reshape(-1), dx.reshape(-1), dln.reshape(-1), N * C)
            # h = x + proj(attention(ln1(x)))
            self._tn(G["w_proj"], A["y"], dh)
            self._bias(G["b_proj"], dh)
            dy, do = buf("dy", (N, C)), buf("do", (BH, T, hs))
            self._nt(dy, dh, P["w_proj"])
            heads_of[(_b(C, EW), N), (EW,)](do, dy, T, NH)
            dp, ds = buf("dp", (BH, T, T)), buf("ds", (BH, T, T))
            k["attn_backward_dp"][(_b(T, t8), _b(T, t8), BH), (t8, t8)](dp, do, A["v"])
            k["softmax_backward"][(_b(T, EW), BH), (EW,)](ds, A["p"], dp)
            dq, dk, dv = buf("dq", (BH, T, hs)), buf("dk", (BH, T, hs)), buf("dv", (BH, T, hs))
            grid = (_b(hs, t8), _b(T, t8), BH)
            k["attn_backward_qkv"][grid, (t8, t8)](dq, dk, dv, ds, A["p"], A["q"], A["k"], do)
            dqkv = buf("dqkv", (N, 3 * C))
            qkv_of[(_b(C, EW), N), (EW,)](dqkv, dq, dk, dv, T, NH)
            self._tn(G["w_qkv"], A["a1"], dqkv)
            self._bias(G["b_qkv"], dqkv)
            da1 = buf("da1", (N, C))
            self._nt(da1, dqkv, P["w_qkv"])
            self._rows(
                "layernorm_backward", N, dln, G["ln1_w"], G["ln1_b"], da1, act[f"x{layer}"], A["m1"], A["r1"],
                P["ln1_w"], N, C,
            )  # fmt: skip
            self._ew("residual_add", N * C, dx.reshape(-1), dh.reshape(-1), dln.reshape(-1), N * C)
        self._ew("embedding_backward_atomic", N * C, g["wte"], g["wpe"], dx, self.tok, N, T, C)

    def loss_and_grads(self, tokens, targets):
        losses, _ = self.forward(tokens, targets)
        self.backward()
        loss = float(losses.copy_to_host().astype(np.float64).mean())
        return loss, {n: self.g[n].copy_to_host() for n in self.order}

    def step(self, tokens, targets, lr):
        losses, _ = self.forward(tokens, targets)
        loss = float(losses.copy_to_host().astype(np.float64).mean())
        if not math.isfinite(loss):
            raise_non_finite(
                self.t + 1,
                {"losses": losses.copy_to_host(), "logits": self._acts["logits"].copy_to_host()},
                loss,
            )
        self.backward()
        self._adamw(lr)
        return loss

    def launch_step(self, tokens, targets, lr):
        """A step's launches without reading the loss back (no synchronisation: for timing)."""
        self.forward(tokens, targets)
        self.backward()
        self._adamw(lr)

    def _adamw(self, lr):
        self.t += 1
        o = {k: np.float32(v) for k, v in self.adam.items()}
        self._ew(
            "adamw", self.n, self.flat, self.m, self.v, self.flat, self.gflat, self.m, self.v, np.float32(lr),
            o["beta1"], o["beta2"], o["eps"], o["weight_decay"], self.t, self.n_decay, self.n,
        )  # fmt: skip

    def loss(self, tokens, targets):
        losses, _ = self.forward(tokens, targets)
        return float(losses.copy_to_host().astype(np.float64).mean())

    def logits(self, tokens):
        B, T = tokens.shape
        return self.forward(tokens, None)[1].copy_to_host().reshape(B, T, self.cfg.V)

    def host_params(self):
        return {n: self.p[n].copy_to_host() for n in self.order}


def non_finite_grads(grads: dict):
    return first_non_finite(grads)
