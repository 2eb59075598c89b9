"""Known-wrong and known-right kernels for puzzles/llm/small_ops/adamw.py.

Mutants are the reference with one learner's mistake edited in (`mutate`: exact replacements, each
required to match once); variants are correct kernels written differently.
"""

import math

import numpy as np
from numba import cuda

from mutants.common import WRONG, M
from puzzles.llm.small_ops import adamw as m

aw = m.adamw


ADAMW = [
    M(
        aw,
        "adam_step_minus_one",
        WRONG,  # counts steps from 0: 1 - beta^0 = 0 at the first step
        ("c1 = np.float32(1.0 - beta1**step)", "c1 = np.float32(1.0 - beta1 ** (step - 1))"),
        ("c2 = np.float32(1.0 - beta2**step)", "c2 = np.float32(1.0 - beta2 ** (step - 1))"),
    ),
    M(
        aw,
        "adam_step_plus_one",
        WRONG,
        ("c1 = np.float32(1.0 - beta1**step)", "c1 = np.float32(1.0 - beta1 ** (step + 1))"),
        ("c2 = np.float32(1.0 - beta2**step)", "c2 = np.float32(1.0 - beta2 ** (step + 1))"),
    ),
    M(
        aw,
        "adam_no_bias_correction",
        WRONG,
        ("p - lr32 * ((mi / c1) / (math.sqrt(vi / c2) + eps32)", "p - lr32 * (mi / (math.sqrt(vi) + eps32)"),
    ),
    M(
        aw,
        "adam_l2_not_decoupled",
        WRONG,  # Adam with L2: the decay goes through the moments
        (
            "        g = grads[i]\n",
            "        g = grads[i] + (np.float32(weight_decay) * params[i]"
            " if i < n_decay else np.float32(0.0))\n",
        ),
        ("+ wd * p)", ")"),
    ),
    M(
        aw,
        "adam_decay_everything",
        WRONG,  # biases and LayerNorm weights decayed too
        ("if i < n_decay else np.float32(0.0)", ""),
    ),
    M(
        aw,
        "adam_eps_inside_sqrt",
        WRONG,  # the tiny-gradient case: v_hat is near eps
        ("(math.sqrt(vi / c2) + eps32)", "math.sqrt(vi / c2 + eps32)"),
    ),
    M(aw, "adam_m_not_saved", WRONG, ("        m_out[i] = mi\n", "")),
]


@cuda.jit
def adam_torch_order(
    p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n
):
    # PyTorch's order: decay the weight first, then a step of size lr / c1 with denominator
    # sqrt(v) / sqrt(c2) + eps
    c1 = 1.0 - beta1**step
    c2 = 1.0 - beta2**step
    step_size = np.float32(lr / c1)
    rc2 = np.float32(1.0 / math.sqrt(c2))
    shrink = np.float32(1.0 - lr * weight_decay)
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        g = grads[i]
        mo = m[i]
        vo = v[i]
        mi = mo + (g - mo) * np.float32(1.0 - beta1)
        vi = vo + (g * g - vo) * np.float32(1.0 - beta2)
        p = params[i] * shrink if i < n_decay else params[i]
        p_out[i] = p - step_size * mi / (math.sqrt(vi) * rc2 + np.float32(eps))
        m_out[i] = mi
        v_out[i] = vi


@cuda.jit
def adam_folded(
    p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n
):
    # the bias corrections folded into the step size and eps (Kingma and Ba, section 2):
    # lr * m_hat / (sqrt(v_hat) + eps) = (lr sqrt(c2) / c1) * m / (sqrt(v) + eps sqrt(c2))
    c1 = 1.0 - beta1**step
    c2 = 1.0 - beta2**step
    step_size = np.float32(lr * math.sqrt(c2) / c1)
    eps_hat = np.float32(eps * math.sqrt(c2))
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < n:
        g = grads[i]
        mi = np.float32(beta1) * m[i] + np.float32(1.0 - beta1) * g
        vi = np.float32(beta2) * v[i] + np.float32(1.0 - beta2) * (g * g)
        p = params[i]
        if i < n_decay:
            p -= np.float32(lr * weight_decay) * p
        p_out[i] = p - step_size * mi / (math.sqrt(vi) + eps_hat)
        m_out[i] = mi
        v_out[i] = vi
        i += cuda.blockDim.x * cuda.gridDim.x


MUTANTS = {"llm2_adamw": ADAMW}

VARIANTS = {
    "llm2_adamw": [
        ("torch_order", adam_torch_order),
        ("folded", adam_folded),
        ("unrolled", m.adamw_unrolled),
    ],
}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
