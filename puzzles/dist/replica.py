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
    def __init__(self, cfg: Config, params: dict, **adam):
        self.cfg = cfg
        self.adam = {**reference.ADAM, **adam}
        self.order, self.n_decay = reference.param_order(cfg)
        self.shapes = reference.param_shapes(cfg)
        self.params = np.concatenate([params[n].astype(np.float32).ravel() for n in self.order])
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
        self.grad[:] = np.concatenate([g[n].ravel() for n in self.order])
        self._cache = None

    def scale_grad(self, w: float) -> None:
        self.grad *= np.float32(w)

    def step(self, lr: float) -> None:
        """AdamW on the flat buffers, the arithmetic of reference.adamw_step (float32)."""
        self.stepped.append(self.grad.copy())
        self.t += 1
        o = self.adam
        b1, b2, g, p = o["beta1"], o["beta2"], self.grad, self.params
        self.m[:] = b1 * self.m + (1 - b1) * g
        self.v[:] = b2 * self.v + (1 - b2) * g * g
        p[: self.n_decay] *= 1 - lr * o["weight_decay"]
        p -= lr * (self.m / (1 - b1**self.t)) / (np.sqrt(self.v / (1 - b2**self.t)) + o["eps"])


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
