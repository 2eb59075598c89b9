"""Known-wrong and known-right kernels for puzzles/llm/small_ops/sf_adamw.py (schedule-free AdamW).

Mutants are the reference with one mistake edited in (`M`); variants are correct kernels written
differently.
"""

import math

import numpy as np
from numba import cuda

from mutants.common import WRONG, M
from puzzles.llm.small_ops import sf_adamw as m

sf = m.sf_adamw

SF = [
    # a plain running mean of the z's: ignores that warmup's small steps should weigh less
    M(
        sf,
        "sf_uniform_average",
        WRONG,
        ("c = np.float32(lr_t * lr_t / weight_sum)", "c = np.float32(1.0 / step)"),
    ),
    # beta1 used as the averaging weight (Adam's momentum habit)
    M(
        sf,
        "sf_c_is_beta1",
        WRONG,
        ("c = np.float32(lr_t * lr_t / weight_sum)", "c = np.float32(1.0 - beta1)"),
    ),
    # the next gradient taken at z: the parameters handed to the model are z, not y
    M(sf, "sf_gradient_at_z", WRONG, ("y_out[i] = (one - b1) * zn + b1 * xn", "y_out[i] = zn")),
    # the interpolation the wrong way round: y close to z instead of close to x
    M(
        sf,
        "sf_y_weights_swapped",
        WRONG,
        ("y_out[i] = (one - b1) * zn + b1 * xn", "y_out[i] = b1 * zn + (one - b1) * xn"),
    ),
    M(sf, "sf_decay_at_z", WRONG, ("+ wd * y)", "+ wd * zi)")),  # weight decay taken at z, not at y
    M(sf, "sf_no_weight_decay", WRONG, ("+ wd * y)", ")")),
    M(
        sf,
        "sf_no_bias_correction",
        WRONG,  # lr_t without sqrt(1 - beta2^t): early steps ~30x too long
        ("lr_t = lr * sched * math.sqrt(1.0 - beta2**step)", "lr_t = lr * sched"),
    ),
    M(
        sf,
        "sf_adam_first_moment_correction",
        WRONG,  # Adam's 1 / (1 - beta1^t) carried over: there is no first moment to correct
        ("lr32 = np.float32(lr_t)", "lr32 = np.float32(lr_t / (1.0 - beta1**step))"),
    ),
    M(sf, "sf_x_averages_old_z", WRONG, ("xn = (one - c) * xi + c * zn", "xn = (one - c) * xi + c * zi")),
    M(
        sf,
        "sf_warmup_off_by_one",
        WRONG,  # counts from 0: the first step has lr 0
        ("sched = min(1.0, step / warmup)", "sched = min(1.0, (step - 1) / warmup)"),
    ),
]


@cuda.jit
def sf_paper_order(
    y_out, z_out, x_out, v_out, z, x, v, grads, lr, beta1, beta2, eps, weight_decay, step, warmup,
    weight_sum, n_decay, n,
):  # fmt: skip
    # the reference implementation's order: decay z at y first, then the gradient step, then
    # x = x + c (z - x) (a lerp), y = x + (1 - beta1) (z - x)
    sched = 1.0
    if warmup > 0 and step < warmup:
        sched = step / warmup
    lr_t = lr * sched * math.sqrt(1.0 - beta2**step)
    c = np.float32(lr_t * lr_t / weight_sum)
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        zi = z[i]
        xi = x[i]
        g = grads[i]
        if i < n_decay:
            zi -= np.float32(lr_t * weight_decay) * (xi + np.float32(1.0 - beta1) * (zi - xi))
        vo = v[i]
        vi = vo + (g * g - vo) * np.float32(1.0 - beta2)
        zi -= np.float32(lr_t) * g / (math.sqrt(vi) + np.float32(eps))
        xi += c * (zi - xi)
        y_out[i] = xi + np.float32(1.0 - beta1) * (zi - xi)
        z_out[i] = zi
        x_out[i] = xi
        v_out[i] = vi


@cuda.jit
def sf_eps_folded(
    y_out, z_out, x_out, v_out, z, x, v, grads, lr, beta1, beta2, eps, weight_decay, step, warmup,
    weight_sum, n_decay, n,
):  # fmt: skip
    # the bias correction moved from the step into v and eps: lr sqrt(c2) g / (sqrt(v) + eps)
    # = lr g / (sqrt(v / c2) + eps / sqrt(c2)); the decay term keeps lr sqrt(c2)
    c2 = 1.0 - beta2**step
    sched = min(1.0, step / warmup) if warmup > 0 else 1.0
    lr_s = lr * sched
    rc2 = np.float32(1.0 / c2)
    eps_h = np.float32(eps / math.sqrt(c2))
    decay = np.float32(lr_s * math.sqrt(c2) * weight_decay)
    c = np.float32(lr_s * lr_s * c2 / weight_sum)
    b1 = np.float32(beta1)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < n:
        g = grads[i]
        zo = z[i]
        xo = x[i]
        vi = np.float32(beta2) * v[i] + np.float32(1.0 - beta2) * g * g
        y = zo + b1 * (xo - zo)
        zn = zo - np.float32(lr_s) * g / (math.sqrt(vi * rc2) + eps_h)
        if i < n_decay:
            zn -= decay * y
        xn = xo + c * (zn - xo)
        y_out[i] = zn + b1 * (xn - zn)
        z_out[i] = zn
        x_out[i] = xn
        v_out[i] = vi
        i += cuda.blockDim.x * cuda.gridDim.x


MUTANTS = {"llm2_sf_adamw": SF}

VARIANTS = {
    "llm2_sf_adamw": [
        ("the reference implementation's order (lerps)", sf_paper_order),
        ("bias correction folded into v and eps", sf_eps_folded),
    ],
}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # seeds 0-11 checked once by hand (the report)
