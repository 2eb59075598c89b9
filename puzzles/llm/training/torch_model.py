"""The same GPT-2 in PyTorch (FP32, TF32 off), from the same float32 weights, for the comparison:
same initialisation, same batches, PyTorch's AdamW with the same settings. PyTorch is imported only
here, and only when asked for (`timing.torch_or_reason()` says why not where it is absent)."""

import math
import time

import numpy as np

from puzzles.llm.training import data, reference
from puzzles.llm.training.reference import LAYER, Config


class TorchBackend:
    name = "pytorch"

    def __init__(self, cfg: Config, params: dict, device="cuda", compile=False, **adam):
        import torch

        self.torch, self.cfg, self.dev = torch, cfg, device
        o = {**reference.ADAM, **adam}
        self.p = {k: torch.tensor(v, device=device, requires_grad=True) for k, v in params.items()}
        decay = [v for v in self.p.values() if v.ndim == 2]
        rest = [v for v in self.p.values() if v.ndim != 2]
        self.opt = torch.optim.AdamW(
            [dict(params=decay, weight_decay=o["weight_decay"]), dict(params=rest, weight_decay=0.0)],
            lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
        )  # fmt: skip
        self.fwd = torch.compile(self._forward) if compile else self._forward
        if compile:
            self.name = "pytorch (compiled)"

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


def tokens_per_second(backend, cfg: Config, B: int, steps: int = 20, warmup: int = 5, sync=None) -> float:
    """Training steps per second times B * T, on random windows of the text, after `warmup` steps."""
    rng = np.random.default_rng(0)
    tokens = data.load_tokens()
    batches = [data.batch(tokens, B, cfg.T, rng) for _ in range(warmup + steps)]
    for x, y in batches[:warmup]:
        backend.step(x, y, 1e-4)
    if sync:
        sync()
    t0 = time.perf_counter()
    for x, y in batches[warmup:]:
        backend.step(x, y, 1e-4)
    if sync:
        sync()
    return steps * B * cfg.T / (time.perf_counter() - t0)
