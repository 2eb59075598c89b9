"""How KernelBackend launches each op: grids and blocks, the backend's stream, a timing record per
launch while a profile runs, the fused kernel or its unfused parts, and the fixed device buffers
(activations and the batch) that a captured CUDA graph reads at the same addresses every step.

Where a launch's shape comes from: the warp-per-row kernels (LayerNorm, cross-entropy) take
ROWS_PER_BLOCK rows a block, the element-wise ones a grid-stride loop, the products TILE x TILE
tiles (4 in the puzzles, `tile=16` on a GPU recompiles them with timing.specialize).
"""

import numpy as np
from numba import cuda

from puzzles.llm.training import fused as fused_kernels

ROWS_PER_BLOCK, WARP, EW = 2, 32, 128
SPLIT_ROWS_GPU = 64


def _b(n, b):
    return (n + b - 1) // b


class Launches:
    """The launch helpers; the model (kernels.KernelBackend) sets k, fused, tile, split_rows, stream,
    prof and _acts."""

    # -- launches ---------------------------------------------------------------------------------
    def _go(self, kern, grid, block, *args):
        """Every launch goes here: on the backend's stream, and timed when a profile is running."""
        launch = kern[grid, block] if self.stream is None else kern[grid, block, self.stream]
        if self.prof is None:
            launch(*args)
            return
        fn = getattr(kern, "py_func", None)
        self.prof.time(fn.__name__ if fn is not None else repr(kern), lambda: launch(*args))

    def _ew(self, name, n, *args):
        self._go(self.k[name], (min(_b(n, EW), 1024),), (EW,), *args)

    def _rows(self, name, rows, *args):
        kern = self.fused[name] if name in fused_kernels.FUSED else self.k[name]
        self._go(kern, (_b(rows, ROWS_PER_BLOCK),), (ROWS_PER_BLOCK * WARP,), *args)

    def _lin(self, out, inp, w, bias):
        t = self.tile
        self._go(self.k["linear"], (_b(w.shape[1], t), _b(inp.shape[0], t)), (t, t), out, inp, w, bias)

    def _nt(self, out, a, b):
        t = self.tile
        self._go(self.k["matmul_nt"], (_b(b.shape[0], t), _b(a.shape[0], t)), (t, t), out, a, b)

    def _tn(self, out, a, b):  # out += a^T b (out zeroed with the gradients)
        t = self.tile
        grid = (_b(b.shape[1], t), _b(a.shape[1], t), _b(a.shape[0], self.split_rows))
        self._go(self.k["matmul_tn_split"], grid, (t, t), out, a, b)

    def _tn_bias(self, out, db, a, b):  # out += a^T b and db += column sums of b
        if "matmul_tn_split_bias" not in self.fused:
            self._tn(out, a, b)
            self._bias(db, b)
            return
        t = self.tile
        grid = (_b(b.shape[1], t), _b(a.shape[1], t), _b(a.shape[0], self.split_rows))
        self._go(self.fused["matmul_tn_split_bias"], grid, (t, t), out, db, a, b)

    def _bias(self, db, dout):
        grid = (_b(dout.shape[1], 32), _b(dout.shape[0], 8))
        self._go(self.k["bias_grad_atomic"], grid, (32,), db, dout)

    def _residual_ln(self, res, out, mean, rstd, x, y, w, b, N, C):  # res = x + y; out = ln(res)
        if "residual_layernorm" in self.fused:
            self._rows("residual_layernorm", N, res, out, mean, rstd, x, y, w, b, N, C)
            return
        self._ew("residual_add", N * C, res.reshape(-1), x.reshape(-1), y.reshape(-1), N * C)
        self._rows("layernorm_forward", N, out, mean, rstd, res, w, b, N, C)

    def _ln_back_add(self, dx, tmp, dw, db, dout, x, mean, rstd, w, dres, N, C):  # dx = dres + ln'
        if "layernorm_backward_add" in self.fused:
            self._rows("layernorm_backward_add", N, dx, dw, db, dout, x, mean, rstd, w, dres, N, C)
            return
        self._rows("layernorm_backward", N, tmp, dw, db, dout, x, mean, rstd, w, N, C)
        self._ew("residual_add", N * C, dx.reshape(-1), dres.reshape(-1), tmp.reshape(-1), N * C)

    def _buf(self, key, shape, dtype=np.float32):
        a = self._acts.get(key)
        if a is None or a.shape != shape:
            a = self._acts[key] = cuda.device_array(shape, dtype)
        return a

    def _host(self, a):
        if self.stream is None:
            return a.copy_to_host()
        out = a.copy_to_host(stream=self.stream)
        self.stream.synchronize()
        return out

    def _inputs(self, tokens, targets):
        """Copy a batch into fixed device buffers (a captured graph reads them at fixed addresses)."""
        B, T = tokens.shape
        N = B * T
        self.shape = (B, T)
        if self.graph is not None:  # one set of buffers per batch shape: a graph's addresses stay valid
            self._acts = self._by_shape.setdefault((B, T), {})  # while sampling runs other shapes
        self.tok = self._buf("tokens", (N,), np.int32)
        self.tok.copy_to_device(np.ascontiguousarray(tokens.reshape(-1), np.int32), stream=self.stream or 0)
        if targets is not None:
            self.tgt = self._buf("targets", (N,), np.int32)
            self.tgt.copy_to_device(
                np.ascontiguousarray(targets.reshape(-1), np.int32), stream=self.stream or 0
            )
            if "dloss" not in self._acts or self._acts["dloss"].shape != (N,):
                self._acts["dloss"] = cuda.to_device(np.full(N, 1.0 / N, np.float32))

    def profile_step(self, tokens, targets, lr, hold: bool = False):
        """One step's launches timed (gpu_timer.measure): rows of (kernel name, GPU ms, host ms its
        launch call took) in launch order, and a gpu_timer.Measured with the checks. `hold=True` (a
        GPU) queues the step behind a kernel that holds the GPU so each event pair spans only its
        kernel; the batch is copied to the device first, outside the timed launches (a copy from
        pageable memory on the default stream waits for the GPU, which would end the hold)."""
        from puzzles.llm.training import gpu_timer

        self._inputs(tokens, targets)

        def step(timer):
            self.prof = timer
            try:
                self._forward(targets is not None)
                self.backward()
                self._adamw(lr)
            finally:
                self.prof = None

        m = gpu_timer.measure(gpu_timer.NumbaDriver(self.stream, can_hold=hold), step)
        return m.rows, m
