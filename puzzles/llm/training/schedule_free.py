"""Schedule-free AdamW for the training loop, on the NumPy reference's dict of parameters (the kernel
exercise and its float64 formulas: puzzles/llm/small_ops/sf_adamw.py; the kernel backend launches that
kernel over its flat buffers).

The model's parameters hold y, where each gradient is taken; the state keeps z, x and v per parameter.
Validation, sampling and the weights handed out use **x** (`eval_params`): y is only where gradients
are taken. Weight decay, as in `reference.adamw_step`, applies to the matrices only.
"""

import math
from contextlib import contextmanager

import numpy as np

SF_ADAM = dict(beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, warmup=0)


class ScheduleFree:
    """State and step of schedule-free AdamW (Defazio et al., 2024), general in the learning rate: the
    averaging weight of step t is lr_max_t^2 (lr_max_t the largest lr_t so far), as in the paper."""

    def __init__(self, **opt):
        unknown = set(opt) - set(SF_ADAM) - {"lr"}
        if unknown:
            raise TypeError(f"schedule-free AdamW has no option {sorted(unknown)}; it has {sorted(SF_ADAM)}")
        self.o = {**SF_ADAM, **{k: v for k, v in opt.items() if k != "lr"}}
        self.state = {}  # name -> (z, x, v)
        self.lr_max = 0.0
        self.weight_sum = 0.0

    def lr_t(self, lr: float, step: int) -> float:
        o = self.o
        sched = min(1.0, step / o["warmup"]) if o["warmup"] > 0 else 1.0
        return lr * sched * math.sqrt(1.0 - o["beta2"] ** step)

    def step(self, params: dict, grads: dict, step: int, lr: float) -> None:
        """One step, in place: params (= y) move to the next y; z, x, v kept here."""
        o = self.o
        lr_t = self.lr_t(lr, step)
        self.lr_max = max(self.lr_max, lr_t)
        weight = self.lr_max**2
        self.weight_sum += weight
        c = weight / self.weight_sum if self.weight_sum > 0 else 0.0
        b1, b2 = o["beta1"], o["beta2"]
        for name, p in params.items():
            g = grads[name]
            z, x, v = self.state.setdefault(name, (p.copy(), p.copy(), np.zeros_like(p)))
            y = p  # the gradient was taken here
            v[:] = b2 * v + (1 - b2) * g * g
            wd = o["weight_decay"] if p.ndim == 2 else 0.0
            z[:] = z - lr_t * (g / (np.sqrt(v) + o["eps"]) + wd * y)
            x[:] = (1 - c) * x + c * z
            p[:] = (1 - b1) * z + b1 * x

    def eval_params(self, params: dict) -> dict:
        """The weights to evaluate and sample with: x (y before the first step, when x = y = z)."""
        return {n: self.state[n][1] if n in self.state else p for n, p in params.items()}


class FlatScheduleFree:
    """Schedule-free AdamW over a kernels.KernelBackend's flat float32 buffers, one launch of the
    course's `sf_adamw` (or yours) a step: y is the backend's parameter buffer (what forward and backward
    read), z and x two more device buffers, v the backend's. The kernel takes the averaging weight as
    lr_t^2 / weight_sum, which is the paper's lr_max^2 weighting while lr_t never decreases (a constant
    peak lr, as the loop trains): a step with a smaller lr_t stops with a message."""

    def __init__(self, backend, warmup: int = 0):
        from numba import cuda

        self.be = backend
        o = backend.adam
        self.opt = ScheduleFree(
            beta1=o["beta1"], beta2=o["beta2"], eps=o["eps"], weight_decay=o["weight_decay"], warmup=warmup
        )
        start = backend.flat.copy_to_host()
        self.z, self.x = cuda.to_device(start), cuda.to_device(start)

    def launch(self, lr: float) -> None:
        be, opt = self.be, self.opt
        be.t += 1
        lr_t = opt.lr_t(lr, be.t)
        if lr_t < opt.lr_max:
            raise ValueError(
                f"schedule-free AdamW on the kernels needs a learning rate that does not decrease "
                f"(step {be.t}: lr_t {lr_t:.3g} < {opt.lr_max:.3g}); keep lr constant"
            )
        opt.lr_max = lr_t
        opt.weight_sum += lr_t**2
        o = opt.o
        be._ew(
            "sf_adamw", be.n, be.flat, self.z, self.x, be.v, self.z, self.x, be.v, be.gflat, float(lr),
            o["beta1"], o["beta2"], o["eps"], o["weight_decay"], be.t, o["warmup"], opt.weight_sum,
            be.n_decay, be.n,
        )  # fmt: skip

    @contextmanager
    def evaluating(self):
        """x in the parameter buffer while the block runs (validation, sampling), y back after it."""
        be = self.be
        if be.t == 0:  # x = y = z before the first step
            yield
            return
        from numba import cuda

        keep = cuda.device_array_like(be.flat)
        keep.copy_to_device(be.flat)
        be.flat.copy_to_device(self.x)
        try:
            yield
        finally:
            be.flat.copy_to_device(keep)
