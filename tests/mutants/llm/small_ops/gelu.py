"""Known-wrong and known-right kernels for puzzles/llm/small_ops/gelu.py.

Mutants are the reference with one learner's mistake edited in (`mutate`: exact replacements, each
required to match once); variants are correct kernels written differently.
"""

import math

import numpy as np
from numba import cuda

from mutants.common import RACE, WRONG, M, over
from puzzles.llm.small_ops import gelu as m
from puzzles.llm.small_ops.common import GELU_C, GELU_K

gb = m.gelu_backward


GELU_BACKWARD = [
    M(
        gb,
        "gelu_no_chain_rule",
        WRONG,  # forgets du/dx
        ("* (np.float32(1.0) - th * th) * du\n", "* (np.float32(1.0) - th * th)\n"),
    ),
    M(
        gb,
        "gelu_tanh_derivative_wrong",
        WRONG,  # d tanh = 1 - tanh^2, not 1 - tanh
        ("(np.float32(1.0) - th * th) * du", "(np.float32(1.0) - th) * du"),
    ),
    M(
        gb,
        "gelu_cubic_derivative_wrong",
        WRONG,  # d(c x^3)/dx = 3 c x^2
        ("np.float32(3.0) * GELU_C * v * v", "GELU_C * v * v"),
    ),
    M(gb, "gelu_forgets_dout", WRONG, ("dx[i] = dout[i] * (", "dx[i] = (")),
    M(
        gb,
        "gelu_block_stride",
        RACE,  # steps by one block: the blocks overlap
        ("    step = cuda.gridsize(1)\n", "    step = cuda.blockDim.x\n"),
    ),
    M(
        gb,
        "gelu_if_not_while",
        WRONG,  # the grid may be smaller than the data
        ("    while i < n:\n", "    if i < n:\n"),
    ),
]


@cuda.jit
def gelu_sech(dx, x, dout, n):
    # 1 - tanh^2 u = 1 / cosh^2 u; the loop as a range over the thread's elements
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = x[i]
        u = GELU_K * (v + GELU_C * v * v * v)
        ch = math.cosh(u)
        left = np.float32(0.5) * (np.float32(1.0) + math.tanh(u))
        du = GELU_K * (np.float32(1.0) + np.float32(3.0) * GELU_C * v * v)
        right = np.float32(0.5) * v * du / (ch * ch)
        dx[i] = (left + right) * dout[i]


@cuda.jit
def gelu_expanded(dx, x, dout, n):
    # the same derivative with the products regrouped
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < n:
        v = x[i]
        v2 = v * v
        th = math.tanh(GELU_K * v * (np.float32(1.0) + GELU_C * v2))
        sech2 = (np.float32(1.0) - th) * (np.float32(1.0) + th)
        g = (
            np.float32(0.5)
            + np.float32(0.5) * th
            + np.float32(0.5) * GELU_K * v * sech2 * (np.float32(1.0) + np.float32(3.0) * GELU_C * v2)
        )
        dx[i] = g * dout[i]
        i += cuda.blockDim.x * cuda.gridDim.x


GELU_FORWARD = [
    M(m.gelu_forward, "gelu_fwd_if_not_while", WRONG, ("    while i < n:\n", "    if i < n:\n")),
    M(m.gelu_forward, "gelu_fwd_cubic_sign", WRONG, ("(v + GELU_C * v * v * v)", "(v - GELU_C * v * v * v)")),
    # a Python float makes the arithmetic float64: this exercise (float64="reject") fails it
    M(m.gelu_forward, "gelu_fwd_python_half", over("float64"), ("np.float32(0.5) * v", "0.5 * v")),
]


MUTANTS = {
    "llm2_gelu_forward": GELU_FORWARD,
    "llm2_gelu_backward": GELU_BACKWARD,
}

VARIANTS = {
    "llm2_gelu_backward": [("sech", gelu_sech), ("expanded", gelu_expanded)],
    "llm2_gelu_forward": [("unrolled", m.gelu_forward_unrolled)],
}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
