"""The same GPT-2 in PyTorch (FP32, TF32 off), from the same float32 weights, for the comparison:
same initialisation, same batches, PyTorch's AdamW with the same settings. PyTorch is imported only
here, and only when asked for (`timing.torch_or_reason()` says why not where it is absent).

    TorchBackend(cfg, params)                            eager, one launch per op
    TorchBackend(..., compile=True)                      torch.compile (default mode: fused kernels)
    TorchBackend(..., compile="reduce-overhead")         torch.compile with its CUDA graphs (forward
                                                         and backward replayed; AdamW eager)
    TorchGraphBackend(cfg, params)                       eager forward, backward and AdamW captured as
                                                         one CUDA graph (torch.cuda.graph), the twin of
                                                         the course's graph path for a fair comparison
"""

import math
import time

import numpy as np

from puzzles.llm.training import data, reference
from puzzles.llm.training.reference import LAYER, Config


class TorchBackend:
    name = "pytorch"

    def __init__(
        self, cfg: Config, params: dict, device="cuda", compile: bool | str = False, capturable=False, **adam
    ):
        import torch

        self.torch, self.cfg, self.dev = torch, cfg, device
        o = {**reference.ADAM, **adam}
        # Parameters (not plain tensors): torch.compile's CUDA graphs keep them in place, not copied
        self.p = {k: torch.nn.Parameter(torch.tensor(v, device=device)) for k, v in params.items()}
        decay = [v for v in self.p.values() if v.ndim == 2]
        rest = [v for v in self.p.values() if v.ndim != 2]
        self.opt = torch.optim.AdamW(
            [dict(params=decay, weight_decay=o["weight_decay"]), dict(params=rest, weight_decay=0.0)],
            lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"], capturable=capturable,
        )  # fmt: skip
        self.fwd = self._forward
        if compile:
            mode = compile if isinstance(compile, str) else None
            self.fwd = torch.compile(self._forward, mode=mode)
            self.name = "pytorch (compiled)" if mode is None else f"pytorch (compiled, {mode})"

    def _forward(self, tokens, targets):
        torch, F, cfg, p = self.torch, self.torch.nn.functional, self.cfg, self.p
        B, T = tokens.shape
        C, NH = cfg.C, cfg.NH
        x = p["wte"][tokens] + p["wpe"][:T]
        for layer in range(cfg.L):
            P = {k: p[f"{layer}.{k}"] for k in LAYER}
            a = F.layer_norm(x, (C,), P["ln1_w"], P["ln1_b"], eps=reference.EPS)
            q, k, v = (a @ P["w_qkv"] + P["b_qkv"]).split(C, dim=-1)
            q, k, v = (t.reshape(B, T, NH, C // NH).transpose(1, 2) for t in (q, k, v))
            s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(C // NH))
            s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=x.device).tril(), float("-inf"))
            y = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)
            x = x + y @ P["w_proj"] + P["b_proj"]
            a = F.layer_norm(x, (C,), P["ln2_w"], P["ln2_b"], eps=reference.EPS)
            x = x + F.gelu(a @ P["w_fc"] + P["b_fc"], approximate="tanh") @ P["w_fcproj"] + P["b_fcproj"]
        x = F.layer_norm(x, (C,), p["lnf_w"], p["lnf_b"], eps=reference.EPS)
        logits = x @ p["wte"].T
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.reshape(-1, cfg.V), targets.reshape(-1))

    def _t(self, a):
        return self.torch.as_tensor(np.asarray(a, np.int64), device=self.dev)

    def step(self, tokens, targets, lr):
        for g in self.opt.param_groups:
            g["lr"] = lr
        self.opt.zero_grad(set_to_none=True)
        _, loss = self.fwd(self._t(tokens), self._t(targets))
        loss.backward()
        self.opt.step()
        return float(loss.item())

    def launch_step(self, tokens, targets, lr):
        """A step without reading the loss back (for timing)."""
        self.opt.zero_grad(set_to_none=True)
        self.fwd(self._t(tokens), self._t(targets))[1].backward()
        self.opt.step()

    def loss(self, tokens, targets):
        with self.torch.no_grad():
            return float(self.fwd(self._t(tokens), self._t(targets))[1].item())

    def logits(self, tokens):
        with self.torch.no_grad():
            return self.fwd(self._t(tokens), None)[0].float().cpu().numpy()

    def loss_and_grads(self, tokens, targets):
        self.opt.zero_grad(set_to_none=True)
        _, loss = self._forward(self._t(tokens), self._t(targets))
        loss.backward()
        return float(loss.item()), {k: v.grad.cpu().numpy() for k, v in self.p.items()}


class TorchGraphBackend(TorchBackend):
    """Forward, loss, backward and AdamW of one step captured once as a CUDA graph and replayed
    (PyTorch's whole-network capture: static input tensors, AdamW with capturable=True). The graph
    fixes the learning rate it was captured with; a step with another one is refused."""

    name = "pytorch (CUDA graph)"

    def __init__(self, cfg: Config, params: dict, device="cuda", **adam):
        super().__init__(cfg, params, device=device, capturable=True, **adam)
        self.graph, self.lr, self.shape = None, None, None

    def _capture(self, shape, lr):
        torch = self.torch
        self.x = torch.zeros(shape, dtype=torch.int64, device=self.dev)
        self.y = torch.zeros(shape, dtype=torch.int64, device=self.dev)
        start = {k: v.detach().clone() for k, v in self.p.items()}
        for g in self.opt.param_groups:
            g["lr"] = lr
        side = torch.cuda.Stream()  # warm-up on a side stream (allocations, AdamW's state), as capture wants
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.opt.zero_grad(set_to_none=True)
                self.fwd(self.x, self.y)[1].backward()
                self.opt.step()
        torch.cuda.current_stream().wait_stream(side)
        self.opt.zero_grad(set_to_none=True)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_loss = self.fwd(self.x, self.y)[1]
            self.static_loss.backward()
            self.opt.step()
        with torch.no_grad():  # the warm-up moved weights and AdamW's state: back to the start, in place
            for k, v in self.p.items():
                v.copy_(start[k])
            for state in self.opt.state.values():
                for t in state.values():
                    if torch.is_tensor(t):
                        t.zero_()
        self.lr, self.shape = lr, shape

    def launch_step(self, tokens, targets, lr):
        if self.graph is None:
            self._capture(tokens.shape, lr)
        if lr != self.lr or tokens.shape != self.shape:
            raise ValueError(
                f"the CUDA graph was captured for lr={self.lr}, batch {self.shape}: "
                "build another TorchGraphBackend for another"
            )
        self.x.copy_(self._t(tokens))
        self.y.copy_(self._t(targets))
        self.graph.replay()

    def step(self, tokens, targets, lr):
        self.launch_step(tokens, targets, lr)
        return float(self.static_loss.item())


def tokens_per_second(
    backend, cfg: Config, B: int, steps: int = 20, warmup: int = 5, sync=None, losses: list | None = None
) -> float:
    """Training steps per second times B * T, on random windows of the text, after `warmup` steps
    (their losses appended to `losses`: the same batches every call, so backends can be compared)."""
    rng = np.random.default_rng(0)
    tokens = data.load_tokens()
    batches = [data.batch(tokens, B, cfg.T, rng) for _ in range(warmup + steps)]
    for x, y in batches[:warmup]:
        loss = backend.step(x, y, 1e-4)
        if losses is not None:
            losses.append(loss)
    if sync:
        sync()
    t0 = time.perf_counter()
    for x, y in batches[warmup:]:
        backend.step(x, y, 1e-4)
    if sync:
        sync()
    return steps * B * cfg.T / (time.perf_counter() - t0)
