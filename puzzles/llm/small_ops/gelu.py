"""GELU (the tanh approximation GPT-2 uses), grid-stride over n floats, two rungs:

    llm2_gelu_forward    out = 0.5 x (1 + tanh(k (x + c x^3)))
    llm2_gelu_backward   dx = dout * GELU'(x)

and `gelu_forward_unrolled` (UNROLL elements per thread per round: the benchmark's best).

Tolerances (u = 2**-24): a handful of roundings and tanhf's 2 ulp, relative 16u; where tanh is near
-1 (x << 0) the 1 + tanh cancels, so an absolute X_MAX * 8u as well.

The simulator's math functions compute in float64 and round to float32 at the next float32 operation
(0.5 ulp, where the GPU's expf, logf and tanhf may be 2 ulp); the bounds above take the GPU's.
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.small_ops.common import _ELT, GELU_C, GELU_K, TPB, UNROLL, U, elementwise_sizes

X_MAX = 8.0


GELU_RTOL = 16 * U


GELU_ATOL = X_MAX * 8 * U


def gelu_ref(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def gelu_grad_ref(x):
    x = x.astype(np.float64)
    k = math.sqrt(2.0 / math.pi)
    th = np.tanh(k * (x + 0.044715 * x**3))
    return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * k * (1.0 + 3 * 0.044715 * x * x)


def gelu_spec(x, n):
    return gelu_ref(x).astype(np.float32)


def gelu_backward_spec(x, dout, n):
    return (gelu_grad_ref(x) * dout.astype(np.float64)).astype(np.float32)


def gelu_x(rng, n):
    x = rng.uniform(-X_MAX, X_MAX, n) * rng.choice([1.0, 0.25], n)  # saturated tails and the curved middle
    return x.astype(np.float32)


def gelu_cases(rng):
    return [
        Case(g, TPB, dict(out=np.zeros(n, np.float32), x=gelu_x(rng, n), n=n))
        for n, g in elementwise_sizes(rng)
    ]


def gelu_backward_cases(rng):
    return [
        Case(
            g,
            TPB,
            dict(
                dx=np.zeros(n, np.float32),
                x=gelu_x(rng, n),
                dout=rng.uniform(-2, 2, n).astype(np.float32),
                n=n,
            ),
        )
        for n, g in elementwise_sizes(rng)
    ]


@cuda.jit
def gelu_forward(out, x, n):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        v = x[i]
        out[i] = np.float32(0.5) * v * (np.float32(1.0) + math.tanh(GELU_K * (v + GELU_C * v * v * v)))
        i += step


GELU_FORWARD = Puzzle(
    name="llm2_gelu_forward",
    title="GELU (tanh approximation), grid-stride",
    statement="""`out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, GPT-2's activation, element by
element, with a grid-stride loop (the grid may be smaller than the data).""",
    outputs=("out",),
    spec=gelu_spec,
    cases=gelu_cases,
    reference=gelu_forward,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(global_reads=lambda case: -(-case.args["n"] // (case.grid * TPB))),
    rtol=GELU_RTOL,
    atol=GELU_ATOL,
    **_ELT,
)


@cuda.jit
def gelu_backward(dx, x, dout, n):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        ### BEGIN SOLUTION
        v = x[i]
        th = math.tanh(GELU_K * (v + GELU_C * v * v * v))
        # d/dv of 0.5 v (1 + tanh(u)) = 0.5 (1 + tanh u) + 0.5 v (1 - tanh^2 u) du/dv
        du = GELU_K * (np.float32(1.0) + np.float32(3.0) * GELU_C * v * v)
        dx[i] = dout[i] * (
            np.float32(0.5) * (np.float32(1.0) + th) + np.float32(0.5) * v * (np.float32(1.0) - th * th) * du
        )
        ### END SOLUTION
        i += step


GELU_BACKWARD = Puzzle(
    name="llm2_gelu_backward",
    title="GELU backward",
    statement="""`dx = dout * GELU'(x)`. With `u = k (x + c x^3)` (`k = sqrt(2/pi)`, `c = 0.044715`):
`GELU'(x) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) k (1 + 3 c x^2)`. One `tanh` per element,
grid-stride loop.""",
    outputs=("dx",),
    spec=gelu_backward_spec,
    cases=gelu_backward_cases,
    reference=gelu_backward,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(global_reads=lambda case: 2 * -(-case.args["n"] // (case.grid * TPB))),
    hints=(
        "Compute th = tanh(u) once and reuse it: 1 - th * th is tanh's derivative.",
        "Do not forget the chain rule through u: du/dx = k (1 + 3 c x^2).",
    ),
    rtol=GELU_RTOL,
    atol=GELU_ATOL,
    **_ELT,
)


@cuda.jit
def gelu_forward_unrolled(out, x, n):
    xk = cuda.local.array(UNROLL, numba.float32)
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    while i + (UNROLL - 1) * stride < n:
        for k in range(UNROLL):
            xk[k] = x[i + k * stride]
        for k in range(UNROLL):
            v = xk[k]
            out[i + k * stride] = (
                np.float32(0.5) * v * (np.float32(1.0) + math.tanh(GELU_K * (v + GELU_C * v * v * v)))
            )
        i += UNROLL * stride
    while i < n:
        v = x[i]
        out[i] = np.float32(0.5) * v * (np.float32(1.0) + math.tanh(GELU_K * (v + GELU_C * v * v * v)))
        i += stride


PUZZLES = [GELU_FORWARD, GELU_BACKWARD]
