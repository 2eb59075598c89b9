"""The gradient check of the whole model: the kernels' gradients against the float64 NumPy reference,
at every parameter, on one batch.

The tolerance, derived: the kernels compute in float32, so their gradients differ from the float64
truth by float32's rounding through the whole backward chain. Rather than bound that chain by hand
(a worst case thousands of times the real error), the same formulas are run in NumPy float32 on the
same batch: that measures what float32 costs on these inputs, summing in NumPy's order. The kernels
sum in another order, so their error is of the same size, not the same value. A tensor passes when

    max |g_kernels - g_float64| <= 8 * max |g_numpy32 - g_float64| + 64 u * max |g_float64|

(u = 2**-24; the second term keeps the bound sensible where float32 NumPy happens to be nearly
exact). A wrong kernel is off by O(1) of the gradient's size: the check catches it (tests swap in a
softmax backward without its row dot product, and a dW kernel without atomics on a GPU).
"""

import numpy as np

from puzzles.llm.training import reference

U = 2.0**-24


def perturbed_params(cfg, seed: int) -> dict:
    """GPT-2's initialisation moved away from its symmetric start (LayerNorm weights 1, biases 0 make
    some gradients vanish or coincide, which would hide a mistake)."""
    rng = np.random.default_rng(seed + 1)
    return {
        k: (v + rng.normal(0, 0.1, v.shape)).astype(np.float32)
        for k, v in reference.init_params(cfg, seed).items()
    }


def check(backend_cls, cfg, B: int = 2, seed: int = 0, **backend_kwargs) -> list:
    """Rows (name, error, tolerance, largest |gradient|, ok) for every parameter tensor."""
    params = perturbed_params(cfg, seed)
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, cfg.V, (B, cfg.T)).astype(np.int32)
    targets = rng.integers(0, cfg.V, (B, cfg.T)).astype(np.int32)
    _, got = backend_cls(cfg, params, **backend_kwargs).loss_and_grads(tokens, targets)
    truth, f32 = ({}, {})
    for dtype, out in ((np.float64, truth), (np.float32, f32)):
        p = {k: v.astype(dtype) for k, v in params.items()}
        _, _, cache = reference.forward(p, tokens, targets, cfg)
        out.update(reference.backward(p, cache, cfg))
    rows = []
    for name in truth:
        big = float(np.abs(truth[name]).max())
        err = float(np.abs(got[name].astype(np.float64) - truth[name]).max())
        tol = 8 * float(np.abs(f32[name] - truth[name]).max()) + 64 * U * big
        rows.append((name, err, tol, big, bool(err <= tol)))
    return rows


def report(rows) -> str:
    lines = [f"{'parameter':12s} {'max error':>10s} {'tolerance':>10s} {'max |grad|':>10s}"]
    for name, err, tol, big, ok in rows:
        lines.append(f"{name:12s} {err:10.2e} {tol:10.2e} {big:10.2e} {'ok' if ok else 'FAIL'}")
    return "\n".join(lines)
