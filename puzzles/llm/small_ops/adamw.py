"""AdamW over every parameter of a model in one flat buffer, grid-stride, one rung:

    llm2_adamw   m, v and the parameter updated in one pass; elements [0, n_decay) get weight decay;
                 the outputs may alias the inputs on a GPU (each element is read and written by one
                 thread)

and `adamw_unrolled` (UNROLL elements per thread per round: the benchmark's best).

Tolerances (u = 2**-24): a few roundings on each of m, v and the update (relative 8u);
m = b1 m + (1 - b1) g may cancel (absolute 16u * G_MAX).

The simulator's math functions compute in float64 and round to float32 at the next float32 operation
(0.5 ulp, where the GPU's expf, logf and tanhf may be 2 ulp); the bounds above take the GPU's.
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.small_ops.common import _ELT, TPB, UNROLL, U, elementwise_sizes

G_MAX = 4.0


ADAM_RTOL = 8 * U


ADAM_ATOL = 16 * U * G_MAX


def adamw_ref(params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay):
    """float64 AdamW, PyTorch's formulation: (new params, new m, new v)."""
    p, g = params.astype(np.float64), grads.astype(np.float64)
    m = beta1 * m.astype(np.float64) + (1 - beta1) * g
    v = beta2 * v.astype(np.float64) + (1 - beta2) * g * g
    wd = np.where(np.arange(p.size) < n_decay, weight_decay, 0.0)
    p = p * (1 - lr * wd)
    p = p - lr * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + eps)
    return p, m, v


def adamw_spec(params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n):
    p, m2, v2 = adamw_ref(params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay)
    return dict(p_out=p.astype(np.float32), m_out=m2.astype(np.float32), v_out=v2.astype(np.float32))


def adam_state(rng, n, steps, beta1, beta2, scale):
    """Moments as a real run would leave them after `steps` updates from zero (at most 20 simulated)."""
    m = np.zeros(n)
    v = np.zeros(n)
    for _ in range(min(steps, 20)):
        g = rng.normal(0, scale, n)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
    return m.astype(np.float32), v.astype(np.float32)


def adamw_cases(rng):
    out = []
    steps = [1, int(rng.integers(2, 6)), int(rng.integers(2, 20)), int(rng.integers(100, 5000)), 1]
    for (n, g), step in zip(elementwise_sizes(rng), steps, strict=True):
        beta1, beta2 = [(0.9, 0.999), (0.9, 0.95), (0.8, 0.99)][int(rng.integers(3))]
        # the last case has tiny gradients (late in training): v is then near eps**2 ... eps matters
        scale = 1e-4 if n > 200 else float(rng.uniform(0.05, 1.0))
        m, v = adam_state(rng, n, step - 1, beta1, beta2, scale)
        out.append(
            Case(
                g,
                TPB,
                dict(
                    p_out=np.zeros(n, np.float32),
                    m_out=np.zeros(n, np.float32),
                    v_out=np.zeros(n, np.float32),
                    params=rng.normal(0, 1, n).astype(np.float32),
                    grads=rng.normal(0, scale, n).astype(np.float32),
                    m=m,
                    v=v,
                    lr=float(rng.uniform(1e-3, 1e-2)),
                    beta1=beta1,
                    beta2=beta2,
                    eps=1e-8,
                    weight_decay=float(rng.uniform(0.05, 0.2)),
                    step=step,
                    n_decay=int(rng.integers(0, n + 1)) if n > 1 else 1,
                    n=n,
                ),
            )
        )
    return out


@cuda.jit
def adamw(p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    ### BEGIN SOLUTION
    # bias corrections: m and v start at 0, so early averages are too small by 1 - beta^step
    b1 = np.float32(beta1)
    b2 = np.float32(beta2)
    c1 = np.float32(1.0 - beta1**step)
    c2 = np.float32(1.0 - beta2**step)
    lr32 = np.float32(lr)
    eps32 = np.float32(eps)
    while i < n:
        g = grads[i]
        mi = b1 * m[i] + (np.float32(1.0) - b1) * g
        vi = b2 * v[i] + (np.float32(1.0) - b2) * g * g
        p = params[i]
        # decoupled weight decay (the W of AdamW): shrink the weight itself, not the gradient
        wd = np.float32(weight_decay) if i < n_decay else np.float32(0.0)
        p_out[i] = p - lr32 * ((mi / c1) / (math.sqrt(vi / c2) + eps32) + wd * p)
        m_out[i] = mi
        v_out[i] = vi
        i += stride
    ### END SOLUTION


ADAMW = Puzzle(
    name="llm2_adamw",
    title="AdamW: one fused kernel for every parameter",
    statement="""One step of AdamW over all the model's parameters, laid out in one flat buffer (the
tensors that get weight decay first: elements `i < n_decay`). With `t = step` (the first step is 1):
`m = beta1 m + (1 - beta1) g`, `v = beta2 v + (1 - beta2) g^2`, `m_hat = m / (1 - beta1^t)`,
`v_hat = v / (1 - beta2^t)`, `p = p - lr (m_hat / (sqrt(v_hat) + eps) + wd p)` with `wd =
weight_decay` for `i < n_decay`, else 0. Write the new `p`, `m`, `v` to `p_out`, `m_out`, `v_out`
(the checker keeps inputs unchanged; on a GPU they may be the same arrays). Grid-stride; one read of
each input and one write of each output per element (budget).""",
    outputs=("p_out", "m_out", "v_out"),
    spec=adamw_spec,
    cases=adamw_cases,
    reference=adamw,
    # the bias corrections 1 - beta^step are computed once per launch in float64 on purpose (beta^step
    # for a large step loses digits in float32) and rounded to float32 before the per-element loop
    float64="allow",
    budget=Budget(
        global_reads=lambda case: 4 * -(-case.args["n"] // (case.grid * TPB)),
        global_writes=lambda case: 3 * -(-case.args["n"] // (case.grid * TPB)),
    ),
    hints=(
        "The bias corrections 1 - beta^step are the same for every element: compute them once, before "
        "the loop. step counts from 1.",
        "Weight decay in AdamW is decoupled: it shrinks p directly (lr * wd * p), it is not added to g.",
        "eps is added to sqrt(v_hat), outside the square root.",
    ),
    rtol=ADAM_RTOL,
    atol=ADAM_ATOL,
    **_ELT,
)


@cuda.jit
def adamw_unrolled(
    p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n
):
    # the same update, UNROLL elements per thread per round: all their loads are issued before the first
    # is used, so each thread keeps 4 * UNROLL loads in flight (a load under an `if` waits for the one
    # before it, so a whole round is tested once and the last elements go one by one)
    pk = cuda.local.array(UNROLL, numba.float32)
    gk = cuda.local.array(UNROLL, numba.float32)
    mk = cuda.local.array(UNROLL, numba.float32)
    vk = cuda.local.array(UNROLL, numba.float32)
    b1 = np.float32(beta1)
    b2 = np.float32(beta2)
    c1 = np.float32(1.0 - beta1**step)
    c2 = np.float32(1.0 - beta2**step)
    lr32 = np.float32(lr)
    eps32 = np.float32(eps)
    wd32 = np.float32(weight_decay)
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    while i + (UNROLL - 1) * stride < n:
        for k in range(UNROLL):
            j = i + k * stride
            pk[k] = params[j]
            gk[k] = grads[j]
            mk[k] = m[j]
            vk[k] = v[j]
        for k in range(UNROLL):
            j = i + k * stride
            mi = b1 * mk[k] + (np.float32(1.0) - b1) * gk[k]
            vi = b2 * vk[k] + (np.float32(1.0) - b2) * gk[k] * gk[k]
            wd = wd32 if j < n_decay else np.float32(0.0)
            p_out[j] = pk[k] - lr32 * ((mi / c1) / (math.sqrt(vi / c2) + eps32) + wd * pk[k])
            m_out[j] = mi
            v_out[j] = vi
        i += UNROLL * stride
    while i < n:
        g = grads[i]
        mi = b1 * m[i] + (np.float32(1.0) - b1) * g
        vi = b2 * v[i] + (np.float32(1.0) - b2) * g * g
        p = params[i]
        wd = wd32 if i < n_decay else np.float32(0.0)
        p_out[i] = p - lr32 * ((mi / c1) / (math.sqrt(vi / c2) + eps32) + wd * p)
        m_out[i] = mi
        v_out[i] = vi
        i += stride


PUZZLES = [ADAMW]
