"""Chapter 4's benchmark: the divergent and the warp-uniform branch with enough arithmetic per
element that the cost of running both sides shows (GPU only). The chapter sets no goal.
"""

import math

import numpy as np
from numba import cuda

from helpers import timing

from .common import WARP

# The issue sets no performance goal for chapter 4.
GOAL = None
ROUNDS = 256  # arithmetic per element in the benchmark kernels, so the branch cost shows


@cuda.jit
def _divergent_heavy(out, a, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        x = a[i]
        y = x
        if i % 2 == 0:
            for _ in range(ROUNDS):
                y = y * np.float32(0.999) + np.float32(0.001)
        else:
            for _ in range(ROUNDS):
                y = y * np.float32(0.998) - np.float32(0.002)
        out[i] = y


@cuda.jit
def _uniform_heavy(out, a, n):
    t = cuda.threadIdx.x
    w = t // WARP
    i = cuda.blockIdx.x * cuda.blockDim.x + (w // 2) * 2 * WARP + 2 * (t % WARP) + w % 2
    if i < n:
        x = a[i]
        y = x
        if w % 2 == 0:
            for _ in range(ROUNDS):
                y = y * np.float32(0.999) + np.float32(0.001)
        else:
            for _ in range(ROUNDS):
                y = y * np.float32(0.998) - np.float32(0.002)
        out[i] = y


def _spec_heavy(a):
    even = a.astype(np.float32).copy()
    odd = even.copy()
    for _ in range(ROUNDS):
        even = even * np.float32(0.999) + np.float32(0.001)
        odd = odd * np.float32(0.998) - np.float32(0.002)
    return np.where(np.arange(a.size) % 2 == 0, even, odd)


def benchmark(scale: float = 1.0) -> list:
    """The divergent and the warp-uniform kernel, each with ROUNDS multiply-adds per element."""
    rng = np.random.default_rng(5)
    variants = [
        ("divergent (branch on i % 2)", _divergent_heavy),
        ("warp-uniform (branch on warp % 2)", _uniform_heavy),
    ]
    nv = 100_003
    a = rng.uniform(-3, 3, nv).astype(np.float32)
    da, dout = cuda.to_device(a), cuda.device_array(nv, np.float32)
    expected = _spec_heavy(a)
    for name, kernel in variants:
        for tpb in (64, 128, 256, 1024):
            kernel[math.ceil(nv / tpb), tpb](dout, da, nv)
            timing.validate(f"{name} (block {tpb})", dout.copy_to_host(), expected, rtol=1e-4, atol=1e-5)
    n = max(1 << 16, int((64 << 20) * scale))
    da, dout = cuda.to_device(rng.uniform(-3, 3, n).astype(np.float32)), cuda.device_array(n, np.float32)
    rows = []
    for name, kernel in variants:
        grid = math.ceil(n / 256)
        seconds = timing.time_gpu(lambda k=kernel, g=grid: k[g, 256](dout, da, n))
        rows.append(timing.Measurement(name, seconds, bytes=8 * n, flops=2 * ROUNDS * n))
    return rows
