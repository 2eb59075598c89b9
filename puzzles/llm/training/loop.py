"""The training loop: batches, a step (forward, loss, backward, AdamW), validation loss every N steps,
text sampled at the start and the end, and the checks that stop a run with a clear message.

A *backend* does the arithmetic: `NumpyBackend` (the float64/float32 reference of reference.py, the
CPU fallback) or `kernels.KernelBackend` (the course's kernels, on the GPU or the simulator). Both
start from the same float32 weights (`reference.init_params(cfg, seed)`) and see the same batches
(drawn from `seed`), so their losses can be compared step by step, and with PyTorch's
(torch_model.py).
"""

import math
import time
from dataclasses import dataclass, field

import numpy as np

from puzzles.llm.training import data, kv_cache, reference
from puzzles.llm.training.reference import Config

OPTIMIZERS = ("adamw", "sf-adamw")  # sf-adamw: schedule-free AdamW (schedule_free.py)
TARGET_VAL = 2.5  # nats per byte: "time to a stated validation loss" (the uniform guess is 5.55)


class TrainingError(Exception):
    """A run stopped for a stated reason (bad option, no room, non-finite loss, missing data)."""


class NonFinite(TrainingError):
    pass


def first_non_finite(arrays: dict):
    """(name, index, value) of the first non-finite element among named arrays, or None."""
    for name, a in arrays.items():
        a = np.asarray(a)
        bad = ~np.isfinite(a)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return name, idx, float(a[idx])
    return None


def bytes_needed(cfg: Config, B: int) -> int:
    """float32 bytes of a training step: parameters, gradients, AdamW's m and v, and the saved
    activations (per layer about 16 C + 2 NH T floats a position; the logits and their gradient)."""
    N = B * cfg.T
    acts = N * (cfg.L * (16 * cfg.C + 2 * cfg.NH * cfg.T) + 2 * cfg.V + 4 * cfg.C)
    return 4 * (4 * cfg.n_params() + acts)


def check_config(cfg: Config, B: int, free_bytes: int | None, where: str) -> None:
    if cfg.C % cfg.NH:
        raise TrainingError(f"width C={cfg.C} is not a multiple of the heads NH={cfg.NH}")
    if min(cfg.L, cfg.C, cfg.NH, cfg.T, B) < 1:
        raise TrainingError(f"every size must be at least 1 (L={cfg.L}, C={cfg.C}, T={cfg.T}, B={B})")
    need = bytes_needed(cfg, B)
    if free_bytes is not None and need > free_bytes:
        raise TrainingError(
            f"the model does not fit: a step needs about {need / 2**30:.2f} GiB, {where} has "
            f"{free_bytes / 2**30:.2f} GiB free; pick a smaller --size, --batch or context"
        )


def check_optimizer(optimizer: str) -> None:
    if optimizer not in OPTIMIZERS:
        raise TrainingError(f"unknown optimizer {optimizer!r}: choose one of {', '.join(OPTIMIZERS)}")


class NumpyBackend:
    """reference.py's GPT-2 in `dtype` (float32 trains, float64 is the gradient check's truth).
    `optimizer="sf-adamw"`: schedule-free AdamW (the parameters are then y, and evaluation, sampling
    and `host_params` use x)."""

    name = "numpy"

    def __init__(self, cfg: Config, params: dict, dtype=np.float32, optimizer: str = "adamw", **adam):
        check_optimizer(optimizer)
        self.cfg, self.dtype, self.adam = cfg, dtype, adam
        self.params = {k: v.astype(dtype) for k, v in params.items()}
        self.state = {}
        self.t = 0
        self.sf = None
        if optimizer == "sf-adamw":
            from puzzles.llm.training.schedule_free import ScheduleFree

            self.sf = ScheduleFree(**adam)

    def loss_and_grads(self, tokens, targets):
        with np.errstate(all="ignore"):  # a non-finite loss is reported below, with where it starts
            _, loss, cache = reference.forward(self.params, tokens, targets, self.cfg)
        if not math.isfinite(loss):
            raise_non_finite(self.t + 1, {"logits": cache["logits"]}, loss)
        return loss, reference.backward(self.params, cache, self.cfg)

    def step(self, tokens, targets, lr):
        loss, grads = self.loss_and_grads(tokens, targets)
        bad = first_non_finite(grads)
        if bad:
            raise_non_finite(self.t + 1, grads, loss)
        self.t += 1
        if self.sf is not None:
            self.sf.step(self.params, grads, self.t, lr)
        else:
            reference.adamw_step(self.params, grads, self.state, self.t, lr=lr, **self.adam)
        return loss

    def eval_params(self) -> dict:
        """The weights to evaluate: the parameters, or x for schedule-free AdamW."""
        return self.params if self.sf is None else self.sf.eval_params(self.params)

    def loss(self, tokens, targets):
        return reference.forward(self.eval_params(), tokens, targets, self.cfg)[1]

    def logits(self, tokens):
        return reference.forward(self.eval_params(), tokens, None, self.cfg)[0]

    def host_params(self):
        return {k: v.astype(np.float32) for k, v in self.eval_params().items()}


def raise_non_finite(step: int, arrays: dict, loss: float):
    bad = first_non_finite(arrays)
    where = f"{bad[0]}{list(bad[1])} = {bad[2]}" if bad else "the loss itself"
    raise NonFinite(
        f"step {step}: the loss is {loss} (first non-finite value: {where}); lower --lr, or look for "
        "a kernel that writes NaN (check it with puzzles.check)"
    )


@dataclass
class Run:
    cfg: Config
    backend: str
    losses: list = field(default_factory=list)
    val: list = field(default_factory=list)  # (step, validation loss)
    val_seconds: list = field(default_factory=list)  # training seconds spent when each was measured
    samples: dict = field(default_factory=dict)  # "start"/"end" -> text
    seconds: float = 0.0
    tokens_per_step: int = 0

    def time_to(self, target: float):
        """Training seconds (validation excluded) until the validation loss first reached `target`."""
        return next((t for (_, v), t in zip(self.val, self.val_seconds) if v <= target), None)

    def summary(self) -> dict:
        return dict(
            backend=self.backend,
            config=vars(self.cfg) if hasattr(self.cfg, "__dict__") else str(self.cfg),
            steps=len(self.losses),
            first_losses=self.losses[:10],
            final_loss=self.losses[-1] if self.losses else None,
            val=self.val,
            seconds=self.seconds,
            tokens_per_s=self.tokens_per_step * len(self.losses) / self.seconds if self.seconds else None,
            seconds_to_target_val=self.time_to(TARGET_VAL),
            target_val=TARGET_VAL,
            samples=self.samples,
        )


def val_loss(backend, val_tokens, B, T, batches: int, seed: int) -> float:
    rng = np.random.default_rng(10_000 + seed)  # the same validation batches every time
    return float(np.mean([backend.loss(*data.batch(val_tokens, B, T, rng)) for _ in range(batches)]))


def sample_text(backend, prompt: str, n: int, T: int, seed: int, kv: bool = False) -> str:
    """`kv`: through a KV cache (kv_cache.py: the same tokens, a step per token instead of a forward
    pass over the whole prefix) where the backend has a decoder; PyTorch's recomputes."""
    dec = kv_cache.decoder_for(backend) if kv else None
    if dec is not None:
        toks = kv_cache.generate(dec, data.encode(prompt), n, T, seed=seed)
    else:
        toks = reference.sample(backend.logits, data.encode(prompt), n, T, seed=seed)
    return prompt + data.decode(toks)


def train(
    backend,
    cfg: Config,
    steps: int,
    B: int,
    seed: int = 0,
    lr: float = 1e-3,
    eval_every: int = 50,
    val_batches: int = 4,
    sample_chars: int = 200,
    prompt: str = "\n",
    tokens: np.ndarray | None = None,
    log=print,
    kv: bool = False,
) -> Run:
    """Train `backend` for `steps` steps of B windows of cfg.T bytes; returns the Run record. `kv`:
    sample through a KV cache."""
    tokens = data.load_tokens() if tokens is None else tokens
    train_tokens, val_tokens = data.split(tokens)
    rng = np.random.default_rng(seed)
    run = Run(cfg, backend.name, tokens_per_step=B * cfg.T)
    if sample_chars:
        run.samples["start"] = sample_text(backend, prompt, sample_chars, cfg.T, seed, kv)
    t0 = time.perf_counter()
    for step in range(1, steps + 1):
        run.losses.append(float(backend.step(*data.batch(train_tokens, B, cfg.T, rng), lr)))
        if eval_every and (step % eval_every == 0 or step == steps):
            run.seconds += time.perf_counter() - t0
            run.val_seconds.append(run.seconds)
            run.val.append((step, val_loss(backend, val_tokens, B, cfg.T, val_batches, seed)))
            log(f"step {step:5d}  train loss {run.losses[-1]:.4f}  val loss {run.val[-1][1]:.4f}")
            t0 = time.perf_counter()
    run.seconds += time.perf_counter() - t0
    if sample_chars:
        run.samples["end"] = sample_text(backend, prompt, sample_chars, cfg.T, seed, kv)
    return run


def loss_curve(runs: list, path=None):
    """The training and validation losses of one or more runs, on one plot (a matplotlib Figure)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    for r in runs:
        line = ax.plot(range(1, len(r.losses) + 1), r.losses, alpha=0.6, label=f"{r.backend}: train")[0]
        if r.val:
            s, v = zip(*r.val)
            ax.plot(s, v, "o-", color=line.get_color(), label=f"{r.backend}: validation")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats per byte)")
    ax.legend()
    if path:
        fig.savefig(path)
    return fig
