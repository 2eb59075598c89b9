"""GPT-2 from the course's kernels: forward, loss, backward and AdamW as launches, on the GPU or the
simulator (whichever engine is active), the parameters, gradients and AdamW state in flat float32
buffers (AdamW is one launch over all of them).

    KernelBackend(cfg, params, kernels={name: yours})   the model; `kernels` swaps in a learner's
                                                        kernel by its function name
    KernelBackend.sources()                             which kernel runs for each op: yours or the
                                                        course's solution
    KernelBackend.loss_and_grads(tokens, targets)       (mean loss, {name: gradient}) on the host
    KernelBackend(..., fused=True)                      fused.py's kernels where none of the ops they
                                                        fuse is yours (fewer launches, same results)
    KernelBackend(..., graph=True)                      GPU only: after the first step, forward and
                                                        backward replay as one CUDA graph (graph.py)
    KernelBackend.profile_step(tokens, targets, lr)     one step, every launch timed (host and GPU)

How each op is launched (grids, the stream, fused or not, the timing of a profile): launches.py.
"""

import math
from contextlib import nullcontext

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
from puzzles.llm.small_ops.sf_adamw import sf_adamw
from puzzles.llm.softmax_layernorm.layernorm import layernorm_forward
from puzzles.llm.softmax_layernorm.layernorm_grad import layernorm_backward
from puzzles.llm.training import fused as fused_kernels
from puzzles.llm.training import reference
from puzzles.llm.training.launches import EW, SPLIT_ROWS_GPU, Launches, _b
from puzzles.llm.training.loop import check_optimizer, first_non_finite, raise_non_finite
from puzzles.llm.training.reference import LAYER, Config
from puzzles.llm.training.schedule_free import FlatScheduleFree

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
OPTIMIZERS = {"sf_adamw": sf_adamw}  # launched instead of adamw with optimizer="sf-adamw"; yours too


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


_GPU_COPIES = {}


def at_gpu_tile(kernel, **constants):
    """timing.specialize, once per kernel object and constants in this process: every backend built
    (the speed table builds five) reuses the copy Numba already compiled."""
    key = (kernel, tuple(sorted(constants.items())))
    if key not in _GPU_COPIES:
        _GPU_COPIES[key] = timing.specialize(kernel, **constants)
    return _GPU_COPIES[key]


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


class KernelBackend(Launches):
    name = "kernels"

    def __init__(
        self, cfg: Config, params: dict, kernels: dict | None = None, tile: int = 4, fused: bool = False,
        graph: bool = False, optimizer: str = "adamw", warmup: int = 0, **adam,
    ):  # fmt: skip
        self.cfg, self.tile = cfg, tile
        self.adam = {**reference.ADAM, **adam}
        self.yours = dict(kernels or {})
        unknown = set(self.yours) - set(COURSE) - set(OPTIMIZERS)
        if unknown:
            raise KeyError(f"no kernel of the model is called {sorted(unknown)}; the names: {sorted(COURSE)}")
        self.k = {**COURSE, **OPTIMIZERS, **self.yours}
        # a fused kernel stands in only where every op it fuses is the course's
        self.fused = {
            n: k for n, k in fused_kernels.FUSED.items()
            if fused and not set(fused_kernels.REPLACES[n]) & set(self.yours)
        }  # fmt: skip
        if tile != 4:  # GPU sizes: the same code, yours or the course's, recompiled with bigger tiles
            # (a kernel launched with tile x tile blocks must size its shared tiles for them)
            for name in ("linear", "matmul_nt"):
                self.k[name] = at_gpu_tile(self.k[name], TILE=tile)
            self.k["matmul_tn_split"] = at_gpu_tile(
                self.k["matmul_tn_split"], TILE=tile, SPLIT_ROWS=SPLIT_ROWS_GPU
            )
            for name in ("linear_gelu_save", "matmul_nt_gelu_backward", "matmul_tn_split_bias"):
                if name in self.fused:
                    self.fused[name] = at_gpu_tile(self.fused[name], TILE=tile, SPLIT_ROWS=SPLIT_ROWS_GPU)
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
        check_optimizer(optimizer)
        self.sf = FlatScheduleFree(self, warmup) if optimizer == "sf-adamw" else None  # y = self.flat
        self._acts, self._by_shape = {}, {}
        self.stream, self.graph, self._graphs, self.prof = None, None, {}, None
        if graph:
            from puzzles.llm.training import graph as cuda_graph

            self.graph = cuda_graph  # raises GraphError with the reason where graphs cannot work
            self.stream = cuda_graph.capture_stream()

    def sources(self) -> dict:
        out = {n: ("yours" if n in self.yours else "course solution") for n in COURSE}
        for f in self.fused:  # the op's launches next to the one it fuses with run as that kernel
            for n in fused_kernels.REPLACES[f]:
                out[n] += f" + fused {f}" if "fused" in out[n] else f", fused where it meets another op ({f}"
        return {n: s + (")" if "fused" in s else "") for n, s in out.items()}

    # -- the model --------------------------------------------------------------------------------
    def forward(self, tokens, targets):
        """Every activation the backward needs; returns the device arrays of the losses and logits."""
        self._inputs(tokens, targets)
        return self._forward(targets is not None)

    def _forward(self, with_loss):
        cfg, k, buf, go = self.cfg, self.k, self._buf, self._go
        B, T = self.shape
        N, C, NH, V = B * T, cfg.C, cfg.NH, cfg.V
        hs, BH = C // NH, B * NH
        x = buf("x0", (N, C))
        self._ew("embedding_forward", N * C, x, self.tok, self.p["wte"], self.p["wpe"], N, T, C)
        t8 = 4 if self.tile == 4 else 16
        a1, m1, r1 = buf("0.a1", (N, C)), buf("0.m1", (N,)), buf("0.r1", (N,))
        self._rows("layernorm_forward", N, a1, m1, r1, x, self.p["0.ln1_w"], self.p["0.ln1_b"], N, C)
        for layer in range(cfg.L):
            P = {n: self.p[f"{layer}.{n}"] for n in LAYER}

            def a(name, shape, layer=layer):
                return buf(f"{layer}.{name}", shape)

            a1 = a("a1", (N, C))  # LayerNorm 1 of x: written by the step before (fused or not)
            qkv = a("qkv", (N, 3 * C))
            self._lin(qkv, a1, P["w_qkv"], P["b_qkv"])
            q, kk, v = a("q", (BH, T, hs)), a("k", (BH, T, hs)), a("v", (BH, T, hs))
            go(k["split_heads"], (_b(3 * C, EW), N), (EW,), q, kk, v, qkv, T, NH)
            s, pr, o = a("s", (BH, T, T)), a("p", (BH, T, T)), a("o", (BH, T, hs))
            go(k["attn_scores"], (_b(T, t8), _b(T, t8), BH), (t8, t8), s, q, kk, 1)
            go(k["attn_softmax"], (_b(T, EW), BH), (EW,), pr, s)
            go(k["attn_pv"], (_b(hs, t8), _b(T, t8), BH), (t8, t8), o, pr, v)
            y = a("y", (N, C))
            go(k["merge_heads"], (_b(C, EW), N), (EW,), y, o, T, NH)
            proj, h = a("proj", (N, C)), a("h", (N, C))
            self._lin(proj, y, P["w_proj"], P["b_proj"])
            a2, m2, r2 = a("a2", (N, C)), a("m2", (N,)), a("r2", (N,))
            self._residual_ln(h, a2, m2, r2, x, proj, P["ln2_w"], P["ln2_b"], N, C)
            fc, f = a("fc", (N, 4 * C)), a("f", (N, 4 * C))
            if "linear_gelu_save" in self.fused:
                grid = (_b(4 * C, self.tile), _b(N, self.tile))
                go(
                    self.fused["linear_gelu_save"],
                    grid,
                    (self.tile, self.tile),
                    fc,
                    f,
                    a2,
                    P["w_fc"],
                    P["b_fc"],
                )
            else:
                self._lin(fc, a2, P["w_fc"], P["b_fc"])
                self._ew("gelu_forward", N * 4 * C, f.reshape(-1), fc.reshape(-1), N * 4 * C)
            mlp, x = a("mlp", (N, C)), buf(f"x{layer + 1}", (N, C))
            self._lin(mlp, f, P["w_fcproj"], P["b_fcproj"])
            # x' = h + mlp, then the next LayerNorm of x' (the next layer's first, or the final one)
            nxt = f"{layer + 1}." if layer + 1 < cfg.L else "f"
            w, b = (
                (self.p[f"{nxt}ln1_w"], self.p[f"{nxt}ln1_b"])
                if nxt != "f"
                else (self.p["lnf_w"], self.p["lnf_b"])
            )
            names = (f"{nxt}a1", f"{nxt}m1", f"{nxt}r1") if nxt != "f" else ("xf", "mf", "rf")
            out, mean, rstd = buf(names[0], (N, C)), buf(names[1], (N,)), buf(names[2], (N,))
            self._residual_ln(x, out, mean, rstd, h, mlp, w, b, N, C)
        xf = buf("xf", (N, C))
        logits = buf("logits", (N, V))
        self._nt(logits, xf, self.p["wte"])
        if not with_loss:
            return None, logits
        losses, dlogits = buf("losses", (N,)), buf("dlogits", (N, V))
        dloss = self._acts["dloss"]
        self._rows("crossentropy_softmax_backward", N, dlogits, losses, logits, self.tgt, dloss, N, V)
        return losses, logits

    def backward(self):
        cfg, k, buf, g, go = self.cfg, self.k, self._buf, self.g, self._go
        B, T = self.shape
        N, C, NH = B * T, cfg.C, cfg.NH
        hs, BH = C // NH, B * NH
        act = self._acts
        go(zero_fill, (min(_b(self.n, EW), 1024),), (EW,), self.gflat, self.n)
        dlogits, xf = act["dlogits"], act["xf"]
        self._tn(g["wte"], dlogits, xf)  # the tied output layer's share of dwte
        dxf, dx = buf("dxf", (N, C)), buf("dx", (N, C))
        zero = act.get("zero_c")
        if zero is None or zero.shape != (C,):
            zero = buf("zero_c", (C,))
            go(zero_fill, (1,), (EW,), zero, C)  # once: the buffer is only ever read
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
            self._tn_bias(G["w_fcproj"], G["b_fcproj"], A["f"], dx)
            dfc = buf("dfc", (N, 4 * C))
            if "matmul_nt_gelu_backward" in self.fused:
                grid = (_b(4 * C, self.tile), _b(N, self.tile))
                go(
                    self.fused["matmul_nt_gelu_backward"],
                    grid,
                    (self.tile,) * 2,
                    dfc,
                    dx,
                    P["w_fcproj"],
                    A["fc"],
                )
            else:
                df = buf("df", (N, 4 * C))
                self._nt(df, dx, P["w_fcproj"])
                self._ew(
                    "gelu_backward",
                    N * 4 * C,
                    dfc.reshape(-1),
                    A["fc"].reshape(-1),
                    df.reshape(-1),
                    N * 4 * C,
                )
            self._tn_bias(G["w_fc"], G["b_fc"], A["a2"], dfc)
            da2, dln, dh = buf("da2", (N, C)), buf("dln", (N, C)), buf("dh", (N, C))
            self._nt(da2, dfc, P["w_fc"])
            self._ln_back_add(
                dh, dln, G["ln2_w"], G["ln2_b"], da2, A["h"], A["m2"], A["r2"], P["ln2_w"], dx, N, C
            )
            # h = x + proj(attention(ln1(x)))
            self._tn_bias(G["w_proj"], G["b_proj"], A["y"], dh)
            dy, do = buf("dy", (N, C)), buf("do", (BH, T, hs))
            self._nt(dy, dh, P["w_proj"])
            go(heads_of, (_b(C, EW), N), (EW,), do, dy, T, NH)
            dp, ds = buf("dp", (BH, T, T)), buf("ds", (BH, T, T))
            go(k["attn_backward_dp"], (_b(T, t8), _b(T, t8), BH), (t8, t8), dp, do, A["v"])
            go(k["softmax_backward"], (_b(T, EW), BH), (EW,), ds, A["p"], dp)
            dq, dk, dv = buf("dq", (BH, T, hs)), buf("dk", (BH, T, hs)), buf("dv", (BH, T, hs))
            grid = (_b(hs, t8), _b(T, t8), BH)
            go(k["attn_backward_qkv"], grid, (t8, t8), dq, dk, dv, ds, A["p"], A["q"], A["k"], do)
            dqkv = buf("dqkv", (N, 3 * C))
            go(qkv_of, (_b(C, EW), N), (EW,), dqkv, dq, dk, dv, T, NH)
            self._tn_bias(G["w_qkv"], G["b_qkv"], A["a1"], dqkv)
            da1 = buf("da1", (N, C))
            self._nt(da1, dqkv, P["w_qkv"])
            self._ln_back_add(
                dx, dln, G["ln1_w"], G["ln1_b"], da1, act[f"x{layer}"], A["m1"], A["r1"], P["ln1_w"], dh, N, C
            )
        self._ew("embedding_backward_atomic", N * C, g["wte"], g["wpe"], dx, self.tok, N, T, C)

    def _forward_backward(self, tokens, targets):
        """The step's launches up to AdamW: replayed from a CUDA graph when graph=True (captured after
        the first step of each batch shape, which runs launch by launch and compiles everything)."""
        self._inputs(tokens, targets)
        shape = self.shape
        if self.graph is not None and shape in self._graphs:
            self._graphs[shape].launch()
            return self._acts["losses"]
        losses, _ = self._forward(True)
        self.backward()
        if self.graph is not None:
            self._graphs[shape] = self.graph.capture(
                self.stream, lambda: (self._forward(True), self.backward())
            )
        return losses

    def loss_and_grads(self, tokens, targets):
        losses = self._forward_backward(tokens, targets)
        loss = float(self._host(losses).astype(np.float64).mean())
        return loss, {n: self._host(self.g[n]) for n in self.order}

    def step(self, tokens, targets, lr):
        losses = self._forward_backward(tokens, targets)
        loss = float(self._host(losses).astype(np.float64).mean())
        if not math.isfinite(loss):  # stopped before AdamW: the weights stay as they were
            raise_non_finite(
                self.t + 1, {"losses": self._host(losses), "logits": self._host(self._acts["logits"])}, loss
            )
        self._adamw(lr)
        return loss

    def launch_step(self, tokens, targets, lr):
        """A step's launches without reading the loss back (no synchronisation: for timing)."""
        self._forward_backward(tokens, targets)
        self._adamw(lr)

    def eval_weights(self):
        """The weights to evaluate and sample with in self.p: x for schedule-free AdamW."""
        return self.sf.evaluating() if self.sf is not None else nullcontext()

    def _adamw(self, lr):
        if self.sf is not None:
            return self.sf.launch(lr)
        self.t += 1
        o = {k: np.float32(v) for k, v in self.adam.items()}
        self._ew(
            "adamw", self.n, self.flat, self.m, self.v, self.flat, self.gflat, self.m, self.v, np.float32(lr),
            o["beta1"], o["beta2"], o["eps"], o["weight_decay"], self.t, self.n_decay, self.n,
        )  # fmt: skip

    def loss(self, tokens, targets):
        with self.eval_weights():
            losses, _ = self.forward(tokens, targets)
            return float(self._host(losses).astype(np.float64).mean())

    def logits(self, tokens):
        B, T = tokens.shape
        with self.eval_weights():
            return self._host(self.forward(tokens, None)[1]).reshape(B, T, self.cfg.V)

    def host_params(self):
        with self.eval_weights():
            return {n: self._host(self.p[n]) for n in self.order}


def non_finite_grads(grads: dict):
    return first_non_finite(grads)
