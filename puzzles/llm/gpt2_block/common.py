"""What the GPT-2 block's op files share: the launch constants and the NumPy references of GELU and
LayerNorm (in the dtype of their input: the block's truth is float64, its measure of float32's own
rounding float32)."""

import math

import numpy as np

CHAPTER = "llm-4"


TILE = 4  # matrix product tiles (TILE x TILE threads); 16 or 32 on the GPU


WARP = 32


FULL_MASK = 0xFFFFFFFF


EPS = np.float32(1e-5)  # LayerNorm epsilon, as GPT-2 and PyTorch


GELU_K = np.float32(math.sqrt(2.0 / math.pi))


GELU_C = np.float32(0.044715)


ROWS_PER_BLOCK = 2  # warp-per-row kernels: rows (warps) per block


def _blocks(n, b):
    return (n + b - 1) // b


def gelu_ref(x):
    x = np.asarray(x)
    k = x.dtype.type(math.sqrt(2.0 / math.pi))
    return x.dtype.type(0.5) * x * (1 + np.tanh(k * (x + x.dtype.type(0.044715) * x**3)))


def layernorm_ref(x, weight, bias, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    rs = 1 / np.sqrt(var + x.dtype.type(eps))
    return (x - mu) * rs * weight + bias, mu[..., 0], rs[..., 0]
