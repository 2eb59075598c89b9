"""How KernelBackend launches each op: grids and blocks, the backend's stream, a timing record per
launch while a profile runs, the fused kernel or its unfused parts, and the fixed device buffers
(activations and the batch) that a captured CUDA graph reads at the same addresses every step.

Where a launch's shape comes from: the warp-per-row kernels (LayerNorm, cross-entropy) take
ROWS_PER_BLOCK rows a block, the element-wise ones a grid-stride loop, the products TILE x TILE
tiles (4 in the puzzles, `tile=16` on a GPU recompiles them with timing.specialize).
"""

import time

import numpy as np
from numba import cuda

from puzzles.llm.training import fused as fused_kernels

ROWS_PER_BLOCK, WARP, EW = 2, 32, 128
SPLIT_ROWS_GPU = 64


def _b(n, b):
    return (n + b - 1) // b


@cuda.jit
def hold(ns):
    # keeps the GPU busy for about ns nanoseconds (the profile queues a step's launches behind it)
    if cuda.grid(1) == 0:
        waited = 0
        while waited < ns:
            cuda.nanosleep(1000)
            waited += 1000


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
        e0, e1 = cuda.event(), cuda.event()
        e0.record(self.stream or 0)
        t0 = time.perf_counter()
        launch(*args)
        host = time.perf_counter() - t0
        e1.record(self.stream or 0)
        fn = getattr(kern, "py_func", None)
        self.prof.append((fn.__name__ if fn is not None else repr(kern), e0, e1, host))

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

    def profile_step(self, tokens, targets, lr, hold_ms: float = 0.0):
        """Two steps launch by launch (no graph), every launch timed: (kernel name, GPU ms, host ms its
        launch call took) in launch order, and the first step's wall-clock ms. The first step times
        the host side as it runs; the second measures GPU time with events around each launch, queued
        behind a kernel that holds the GPU for `hold_ms` (on a GPU: long enough for the host to queue
        the whole step), so an event pair spans the kernel and not the host's gap before it."""
        rows = []
        try:
            for timed_gpu in (False, True):
                self.prof = []
                cuda.synchronize()
                if timed_gpu and hold_ms:
                    h = hold[(1,), (1,)] if self.stream is None else hold[(1,), (1,), self.stream]
                    h(int(hold_ms * 1e6))
                t0 = time.perf_counter()
                self.forward(tokens, targets)
                self.backward()
                self._adamw(lr)
                if not timed_gpu:
                    cuda.synchronize()
                    wall = (time.perf_counter() - t0) * 1e3
                    hosts = [h * 1e3 for *_, h in self.prof]
                else:
                    cuda.synchronize()
                    rows = [
                        (n, cuda.event_elapsed_time(e0, e1), hh)
                        for (n, e0, e1, _), hh in zip(self.prof, hosts)
                    ]
        finally:
            self.prof = None
        return rows, wall
