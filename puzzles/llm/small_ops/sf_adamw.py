"""Schedule-free AdamW (Defazio et al., 2024, "The Road Less Scheduled"), the closing rung beside AdamW:

    llm2_sf_adamw   one step over every parameter in one flat buffer: the second moment v, the base
                    sequence z, the average x, and the point y where the next gradient is taken

AdamW needs a learning-rate schedule (warmup, then a decay to a step count fixed in advance) to reach
its best loss. Schedule-free AdamW needs none: it keeps two sequences, z (plain steps, at a constant
learning rate) and x (a weighted running average of the z's, what you evaluate), and takes each
gradient at y, a point between them. At step t (from 1), with gradient g taken at y_t:

    lr_t  = lr * min(1, t / warmup) * sqrt(1 - beta2^t)   (warmup; v's bias correction folded in)
    v     = beta2 v + (1 - beta2) g^2
    z     = z - lr_t (g / (sqrt(v) + eps) + wd y_t)       (decoupled weight decay, taken at y_t)
    c     = lr_t^2 / sum_{i <= t} lr_i^2                  (the average weights steps by lr^2)
    x     = (1 - c) x + c z                               (with the new z)
    y     = (1 - beta1) z + beta1 x                       (the next gradient's point)

There is no first moment m: beta1 is the interpolation weight, and momentum comes from y sitting
beside the slowly moving x. With a constant peak lr, lr_t never decreases, so lr_t is its own running
maximum (the paper's weighting by lr_max^2) and the host passes `weight_sum`, the sum of lr_i^2 up to
and including this step (`weight_sum(...)` below). y_t, where this step's gradient was taken, is
(1 - beta1) z + beta1 x of the inputs. Evaluation, validation and sampling use **x**, not y.

Tolerances: AdamW's (adamw.py), a few roundings on each output; x and y are convex combinations.
"""

import math

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.small_ops.adamw import ADAM_ATOL, ADAM_RTOL
from puzzles.llm.small_ops.common import _ELT, TPB, elementwise_sizes


def lr_at(lr, beta2, warmup, step):
    """The step size of step `step` (from 1): linear warmup and v's bias correction."""
    sched = min(1.0, step / warmup) if warmup > 0 else 1.0
    return lr * sched * math.sqrt(1.0 - beta2**step)


def weight_sum(lr, beta2, warmup, step):
    """sum over i <= step of lr_i^2: the denominator of the averaging weight c."""
    return sum(lr_at(lr, beta2, warmup, i) ** 2 for i in range(1, step + 1))


def sf_adamw_ref(z, x, v, grads, lr, beta1, beta2, eps, weight_decay, step, warmup, wsum, n_decay):
    """float64 schedule-free AdamW on flat arrays: (y, z, x, v) after the step."""
    z, x, v, g = (a.astype(np.float64) for a in (z, x, v, grads))
    y = (1 - beta1) * z + beta1 * x
    lr_t = lr_at(lr, beta2, warmup, step)
    wd = np.where(np.arange(z.size) < n_decay, weight_decay, 0.0)
    v = beta2 * v + (1 - beta2) * g * g
    z = z - lr_t * (g / (np.sqrt(v) + eps) + wd * y)
    c = lr_t**2 / wsum
    x = (1 - c) * x + c * z
    return (1 - beta1) * z + beta1 * x, z, x, v


def sf_adamw_spec(z, x, v, grads, lr, beta1, beta2, eps, weight_decay, step, warmup, weight_sum, n_decay, n):
    y2, z2, x2, v2 = sf_adamw_ref(
        z, x, v, grads, lr, beta1, beta2, eps, weight_decay, step, warmup, weight_sum, n_decay
    )
    f = np.float32
    return dict(y_out=y2.astype(f), z_out=z2.astype(f), x_out=x2.astype(f), v_out=v2.astype(f))


def sf_adamw_cases(rng):
    out = []
    # the first step, warmup steps, the end of warmup, long after it (x then moves slowly), step 1 again
    warm = int(rng.integers(4, 12))
    steps = [1, int(rng.integers(2, warm)), warm, int(rng.integers(100, 3000)), 1]
    for (n, grid), step in zip(elementwise_sizes(rng), steps, strict=True):
        beta1, beta2 = [(0.9, 0.999), (0.9, 0.95), (0.8, 0.99)][int(rng.integers(3))]
        scale = 1e-4 if n > 200 else float(rng.uniform(0.05, 1.0))  # tiny gradients: eps matters
        z = rng.normal(0, 1, n)
        x = z + rng.normal(0, 0.3, n)  # x trails z: they differ by whole steps
        v = np.zeros(n) if step == 1 else rng.uniform(0.2, 1.0, n) * scale**2
        lr = float(rng.uniform(1e-3, 2e-2))
        wu = warm if step != 1 or n > 1 else 0  # one case without warmup
        out.append(
            Case(
                grid,
                TPB,
                dict(
                    y_out=np.zeros(n, np.float32),
                    z_out=np.zeros(n, np.float32),
                    x_out=np.zeros(n, np.float32),
                    v_out=np.zeros(n, np.float32),
                    z=z.astype(np.float32),
                    x=x.astype(np.float32),
                    v=v.astype(np.float32),
                    grads=rng.normal(0, scale, n).astype(np.float32),
                    lr=lr,
                    beta1=beta1,
                    beta2=beta2,
                    eps=1e-8,
                    weight_decay=float(rng.uniform(0.05, 0.2)),
                    step=step,
                    warmup=wu,
                    weight_sum=weight_sum(lr, beta2, wu, step),
                    n_decay=int(rng.integers(0, n + 1)) if n > 1 else 1,
                    n=n,
                ),
            )
        )
    return out


@cuda.jit
def sf_adamw(
    y_out, z_out, x_out, v_out, z, x, v, grads, lr, beta1, beta2, eps, weight_decay, step, warmup,
    weight_sum, n_decay, n,
):  # fmt: skip
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    ### BEGIN SOLUTION
    # the step's scalars, once per launch (float64 on purpose: beta2^step for a large step)
    sched = min(1.0, step / warmup) if warmup > 0 else 1.0
    lr_t = lr * sched * math.sqrt(1.0 - beta2**step)
    c = np.float32(lr_t * lr_t / weight_sum)
    lr32 = np.float32(lr_t)
    b1 = np.float32(beta1)
    b2 = np.float32(beta2)
    eps32 = np.float32(eps)
    one = np.float32(1.0)
    while i < n:
        zi = z[i]
        xi = x[i]
        g = grads[i]
        y = (one - b1) * zi + b1 * xi  # where this step's gradient was taken
        vi = b2 * v[i] + (one - b2) * g * g
        wd = np.float32(weight_decay) if i < n_decay else np.float32(0.0)
        zn = zi - lr32 * (g / (math.sqrt(vi) + eps32) + wd * y)
        xn = (one - c) * xi + c * zn
        y_out[i] = (one - b1) * zn + b1 * xn
        z_out[i] = zn
        x_out[i] = xn
        v_out[i] = vi
        i += stride
    ### END SOLUTION


SF_ADAMW = Puzzle(
    name="llm2_sf_adamw",
    title="Schedule-free AdamW: no learning-rate schedule",
    statement="""One step of schedule-free AdamW over all the parameters in one flat buffer (weight decay for
`i < n_decay`). The state is `z` (the base sequence), `x` (the average: what you evaluate) and `v` (the
second moment); the gradient `g` was taken at `y = (1 - beta1) z + beta1 x`. With `t = step` (from 1):

- `lr_t = lr * min(1, t / warmup) * sqrt(1 - beta2^t)` (no warmup when `warmup` is 0);
- `v = beta2 v + (1 - beta2) g^2`;
- `z = z - lr_t (g / (sqrt(v) + eps) + wd y)` with the `y` of the inputs, `wd = weight_decay` or 0;
- `c = lr_t^2 / weight_sum` (`weight_sum`, from the host: the sum of `lr_i^2` over steps `i <= t`);
- `x = (1 - c) x + c z` with the new `z`; then the next gradient's point `y = (1 - beta1) z + beta1 x`.

Write `y_out`, `z_out`, `x_out`, `v_out`. No first moment, no `1 - beta1^t`. Grid-stride; each input
read once and each output written once per element (budget).""",
    outputs=("y_out", "z_out", "x_out", "v_out"),
    spec=sf_adamw_spec,
    cases=sf_adamw_cases,
    reference=sf_adamw,
    float64="allow",  # the step's scalars in float64 once per launch, as in llm2_adamw
    budget=Budget(
        global_reads=lambda case: 4 * -(-case.args["n"] // (case.grid * TPB)),
        global_writes=lambda case: 4 * -(-case.args["n"] // (case.grid * TPB)),
    ),
    hints=(
        "lr_t, c and the float32 constants are the same for every element: compute them before the loop.",
        "The weight decay is taken at y (recomputed from the z and x you read), not at z.",
        "x averages the NEW z; y is then built from the new z and the new x.",
        "v's bias correction is the sqrt(1 - beta2^t) inside lr_t; there is no m to correct.",
    ),
    rtol=ADAM_RTOL,
    atol=ADAM_ATOL,
    **_ELT,
)


PUZZLES = [SF_ADAMW]
