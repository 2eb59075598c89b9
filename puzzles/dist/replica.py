"""One rank's copy of the course's GPT-2 for data-parallel training: the parameters, the gradient and
AdamW's state in flat float32 buffers, so that one collective moves the whole gradient.

    NumpyReplica(cfg, params)    reference.py's forward and backward in float32 (CPU ranks)
    KernelReplica(cfg, params)   the course's kernels (kernels.KernelBackend, GPU sizes) on a GPU

Both have the same five calls, the whole of what a data-parallel step needs:

    loss = model.forward(tokens, targets)   the mean loss of these windows (activations kept)
    model.backward()                        model.grad := d(that mean loss)/d(parameters), overwritten
    model.scale_grad(w)                     model.grad *= w (a share of the batch: n_r / B)
    model.step(lr)                          AdamW with model.grad (PyTorch's, decay on the matrices)
    model.grad, model.params                the flat buffers (NumPy arrays, or device arrays on a GPU)

`stepped` records the gradient each `step` used (a copy), for the checker.
"""

import numpy as np
from numba import cuda

from puzzles.llm.training import reference
from puzzles.llm.training.reference import Config


class EmptyShard(ValueError):
    """A rank was given no windows."""


class NumpyReplica:
    """`pad`: the flat buffers padded with zeros to a multiple of it (ZeRO cuts them in equal shards;
    a padding element's gradient is 0 and its parameter stays 0)."""

    def __init__(self, cfg: Config, params: dict, pad: int = 1, **adam):
        self.cfg = cfg
        self.adam = {**reference.ADAM, **adam}
        self.order, self.n_decay = reference.param_order(cfg)
        self.shapes = reference.param_shapes(cfg)
        flat = np.concatenate([params[n].astype(np.float32).ravel() for n in self.order])
        self.n = flat.size
        self.params = np.zeros(-(-self.n // pad) * pad, np.float32)
        self.params[: self.n] = flat
        self.grad = np.zeros_like(self.params)
        self.m, self.v = np.zeros_like(self.params), np.zeros_like(self.params)
        self.t = 0
        self.stepped = []
        self._cache = None

    def __repr__(self) -> str:
        c = self.cfg
        return f"GPT-2 replica (L={c.L}, C={c.C}, T={c.T}, {self.params.size:,} parameters)"

    def views(self, flat: np.ndarray) -> dict:
        """{name: view} of a flat buffer, in the model's order."""
        out, off = {}, 0
        for n in self.order:
            size = int(np.prod(self.shapes[n]))
            out[n] = flat[off : off + size].reshape(self.shapes[n])
            off += size
        return out

    def forward(self, tokens, targets) -> float:
        if len(tokens) == 0:
            raise EmptyShard("forward() got no windows: every rank needs at least one (B >= ranks)")
        _, loss, self._cache = reference.forward(self.views(self.params), tokens, targets, self.cfg)
        return loss

    def backward(self) -> None:
        if self._cache is None:
            raise RuntimeError("backward() before forward(): there are no activations to differentiate")
        g = reference.backward(self.views(self.params), self._cache, self.cfg)
        self.grad[: self.n] = np.concatenate([g[n].ravel() for n in self.order])
        self._cache = None

    def scale_grad(self, w: float) -> None:
        self.grad *= np.float32(w)

    def step(self, lr: float) -> None:
        """AdamW on the flat buffers, the arithmetic of reference.adamw_step (float32)."""
        self.stepped.append(self.grad.copy())
        self.t += 1
        _adamw(self.params, self.grad, self.m, self.v, self.t, lr, self.adam, self.n_decay)

    def step_shard(self, grad_shard, lo: int, hi: int, lr: float) -> None:
        """ZeRO-1: AdamW on params[lo:hi] only, with this shard's gradient; AdamW's m and v are kept
        for this shard alone (the memory ZeRO saves), so every step must name the same shard."""
        if not (0 <= lo < hi <= self.params.size) or len(grad_shard) != hi - lo:
            raise ValueError(
                f"step_shard(grad of {len(grad_shard)}, {lo}, {hi}): a shard is lo < hi within the "
                f"{self.params.size} parameters, and its gradient holds hi - lo values"
            )
        if self.t and self.shard != (lo, hi):
            raise ValueError(f"step_shard: this rank's shard is {self.shard}, not ({lo}, {hi})")
        if not self.t:
            self.shard, self.m, self.v = (
                (lo, hi),
                np.zeros(hi - lo, np.float32),
                np.zeros(hi - lo, np.float32),
            )
        self.stepped.append((lo, hi, np.array(grad_shard, np.float32)))
        self.t += 1
        decay = min(max(self.n_decay - lo, 0), hi - lo)
        _adamw(self.params[lo:hi], np.asarray(grad_shard), self.m, self.v, self.t, lr, self.adam, decay)


def _adamw(p, g, m, v, t: int, lr: float, o: dict, n_decay: int) -> None:
    """reference.adamw_step's arithmetic on flat float32 buffers, in place; decay on p[:n_decay]."""
    b1, b2 = o["beta1"], o["beta2"]
    m[:] = b1 * m + (1 - b1) * g
    v[:] = b2 * v + (1 - b2) * g * g
    p[:n_decay] *= 1 - lr * o["weight_decay"]
    p -= lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + o["eps"])


class KernelReplica:
    """The course's kernels (GPU sizes: 16 x 16 tiles), the flat buffers on the device."""

    def __init__(self, cfg: Config, params: dict, tile: int = 16, **adam):
        from puzzles.llm.training.kernels import KernelBackend

        self.cfg = cfg
        self.kb = KernelBackend(cfg, params, tile=tile, **adam)
        self.params, self.grad = self.kb.flat, self.kb.gflat
        self.stepped = []
        self.record = False  # the timing runs keep no copies

    def forward(self, tokens, targets) -> float:
        if len(tokens) == 0:
            raise EmptyShard("forward() got no windows: every rank needs at least one (B >= ranks)")
        self._losses, _ = self.kb.forward(tokens, targets)
        return self._losses  # a device array: read it (copy_to_host) only when it is needed

    def backward(self) -> None:
        self.kb.backward()

    def scale_grad(self, w: float) -> None:
        n = self.kb.n
        _scale[(min((n + 127) // 128, 1024),), (128,)](self.grad, np.float32(w), n)

    def step(self, lr: float) -> None:
        if self.record:
            self.stepped.append(self.grad.copy_to_host())
        self.kb._adamw(lr)


@cuda.jit
def _scale(a, w, n):
    i = cuda.grid(1)
    while i < n:
        a[i] *= w
        i += cuda.gridsize(1)
