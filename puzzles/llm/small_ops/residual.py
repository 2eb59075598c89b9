"""The residual add, one rung:

llm2_residual_add   out = a + b, grid-stride over n floats (one rounding: 2u relative)
"""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.small_ops.common import _ELT, TPB, U, elementwise_sizes


def residual_spec(a, b, n):
    return (a.astype(np.float64) + b.astype(np.float64)).astype(np.float32)


def residual_cases(rng):
    return [
        Case(
            g,
            TPB,
            dict(
                out=np.zeros(n, np.float32),
                a=rng.normal(0, 2, n).astype(np.float32),
                b=rng.normal(0, 2, n).astype(np.float32),
                n=n,
            ),
        )
        for n, g in elementwise_sizes(rng)
    ]


@cuda.jit
def residual_add(out, a, b, n):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        out[i] = a[i] + b[i]
        i += step


RESIDUAL_ADD = Puzzle(
    name="llm2_residual_add",
    title="Residual add",
    statement="""`out = a + b`: the residual connection around attention and the MLP, grid-stride.""",
    outputs=("out",),
    spec=residual_spec,
    cases=residual_cases,
    reference=residual_add,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(global_reads=lambda case: 2 * -(-case.args["n"] // (case.grid * TPB))),
    rtol=2 * U,
    atol=0.0,
    **_ELT,
)


PUZZLES = [RESIDUAL_ADD]
