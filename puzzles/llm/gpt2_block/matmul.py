"""The block's matrix products, two rungs (tiled, TILE x TILE threads, PMPP chapter 5's kernel):

llm4_linear        out = inp @ w + b
llm4_linear_gelu   out = gelu(inp @ w + b): the epilogue applies the bias and GELU (one write and
                   one read of the product fewer than linear followed by gelu_forward)
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.gpt2_block.common import CHAPTER, GELU_C, GELU_K, TILE, _blocks, gelu_ref


def _linear_spec(inp, w, bias):
    return (inp.astype(np.float64) @ w.astype(np.float64) + bias).astype(np.float32)


def _linear_gelu_spec(inp, w, bias):
    return gelu_ref(inp.astype(np.float64) @ w.astype(np.float64) + bias).astype(np.float32)


def _linear_cases(rng):
    cases = []
    # rows, in, out: not multiples of the tile, one row, one input feature, one output, several tiles
    for n, cin, cout in [
        (int(rng.integers(5, 12)), int(rng.integers(5, 14)), int(rng.integers(9, 19))),
        (1, int(rng.integers(2, 7)), int(rng.integers(2, 6))),
        (int(rng.integers(2, 9)), 1, int(rng.integers(3, 8))),
        (int(rng.integers(3, 7)), int(rng.integers(TILE + 1, 3 * TILE)), 1),
        (2 * TILE, 3 * TILE, 2 * TILE + 1),
    ]:
        inp = rng.uniform(-2, 2, (n, cin)).astype(np.float32)
        w = rng.uniform(-1, 1, (cin, cout)).astype(np.float32)
        bias = rng.uniform(-1, 1, cout).astype(np.float32)
        cases.append(
            Case(
                (_blocks(cout, TILE), _blocks(n, TILE)),
                (TILE, TILE),
                dict(out=np.zeros((n, cout), np.float32), inp=inp, w=w, bias=bias),
            )
        )
    return cases


# A product of length cin <= 12 of values below 2 and 1: |error| <= cin * eps32 * sum|a w| ~ 12 * 6e-8 * 24,
# under 2e-5; GELU's tanh adds a few ulps. LayerNorm: see Transformer kernels 1; its rows here are at
# most 70 long and the "offset" rows have mean 300: the mean's rounding, 300 * 70 * 6e-8 = 1.3e-3
# absolute in h, divided by a spread of ~1.2, is the dominant term, so the fused LayerNorm is compared
# at 2e-3 absolute (the one-pass-variance mutant is off by O(1) there).
_LIN_TOL = dict(rtol=2e-5, atol=2e-5)


@cuda.jit
def linear(out, inp, w, bias):
    # out[n, o] = inp[n, :] . w[:, o] + bias[o]: the tiled product of PMPP chapter 5, bias at the end
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    w_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    n = cuda.blockIdx.y * TILE + ty
    rows, cin = inp.shape
    cout = w.shape[1]
    acc = np.float32(0.0)
    for c0 in range(0, cin, TILE):
        a_t[ty, tx] = inp[n, c0 + tx] if n < rows and c0 + tx < cin else np.float32(0.0)
        w_t[ty, tx] = w[c0 + ty, o] if c0 + ty < cin and o < cout else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[ty, kk] * w_t[kk, tx]
        cuda.syncthreads()
    if n < rows and o < cout:
        out[n, o] = acc + bias[o]


LINEAR = Puzzle(
    name="llm4_linear",
    title="A linear layer: tiled product plus bias",
    statement=f"""`out[n, o] = inp[n, :] . w[:, o] + bias[o]`, with `inp` of shape `(N, C_in)` and `w` of
shape `(C_in, C_out)` (GPT-2 stores its weights this way round). The tiled product of PMPP chapter 5 with
`TILE = {TILE}`: tiles of `inp` and `w` go through shared memory, out-of-range elements load as 0, and
the bias is added once, at the end.""",
    outputs=("out",),
    spec=_linear_spec,
    cases=_linear_cases,
    reference=linear,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    chapter=CHAPTER,
    **_LIN_TOL,
)


@cuda.jit(device=True)
def gelu_tanh(x):
    """GPT-2's GELU: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    return np.float32(0.5) * x * (np.float32(1.0) + math.tanh(GELU_K * (x + GELU_C * x * x * x)))


@cuda.jit
def linear_gelu(out, inp, w, bias):
    # the same product; its epilogue adds the bias and applies GELU before the only write
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    w_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    n = cuda.blockIdx.y * TILE + ty
    rows, cin = inp.shape
    cout = w.shape[1]
    acc = np.float32(0.0)
    ### BEGIN SOLUTION
    for c0 in range(0, cin, TILE):
        a_t[ty, tx] = inp[n, c0 + tx] if n < rows and c0 + tx < cin else np.float32(0.0)
        w_t[ty, tx] = w[c0 + ty, o] if c0 + ty < cin and o < cout else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[ty, kk] * w_t[kk, tx]
        cuda.syncthreads()
    if n < rows and o < cout:
        out[n, o] = gelu_tanh(acc + bias[o])
    ### END SOLUTION


LINEAR_GELU = Puzzle(
    name="llm4_linear_gelu",
    title="Fused: the product, the bias and GELU in one kernel",
    statement=f"""`out[n, o] = gelu(inp[n, :] . w[:, o] + bias[o])` with GPT-2's GELU (the tanh form,
`gelu_tanh`, is given). Write the tiled product (`TILE = {TILE}`) and apply bias and GELU in its
epilogue, before the only write of `out`: the unfused pair writes the `N x 4C` pre-activation and reads
it straight back. Budget: one global write per thread.""",
    outputs=("out",),
    spec=_linear_gelu_spec,
    cases=_linear_cases,
    reference=linear_gelu,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(global_writes=1, shared_bytes=2 * TILE * TILE * 4),
    hints=(
        "Two barriers per tile: after loading it, and before the next load overwrites it.",
        "Load 0 for elements past the matrix, but keep every thread in the loop (barriers).",
        "Bias first, then GELU: gelu_tanh(acc + bias[o]).",
    ),
    chapter=CHAPTER,
    **_LIN_TOL,
)


PUZZLES = [LINEAR, LINEAR_GELU]
