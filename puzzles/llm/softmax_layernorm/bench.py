"""Transformer kernels 1 on the GPU: softmax over rows of 1024 and LayerNorm over rows of 768,
validated then timed against a device copy and PyTorch's kernels. GOAL is judged by
`python -m tools.bench`; GOALS, the notebook's further goals, by `goals(rows)`.
"""

import math

import numpy as np
from numba import cuda

from helpers import timing
from puzzles.llm.softmax_layernorm.common import (
    B_MAX,
    EPS,
    OFFSET,
    R_MAX,
    W_MAX,
    WARP,
    U,
    layernorm_ref,
    norm_input,
    params,
)
from puzzles.llm.softmax_layernorm.layernorm import (
    layernorm_forward,
    layernorm_forward_cached,
    layernorm_welford,
)
from puzzles.llm.softmax_layernorm.softmax import (
    SOFTMAX_ATOL,
    softmax_block,
    softmax_online,
    softmax_rows,
    softmax_rtol,
    softmax_spec,
    softmax_three_pass,
    softmax_warp,
    softmax_warp_cached,
)

GOAL = timing.check_goal({"ceiling": "copy", "fraction": 0.8, "best": "llm1_softmax_warp_cached"})


# the other goals, judged by the notebook's "Measure it" and checked by `goals(rows)`
GOALS = [
    ("llm1_softmax_warp_cached", "copy", 0.8),
    ("llm1_softmax_warp_cached", "torch.softmax", 1.0),
    ("llm1_layernorm_forward (registers)", "copy", 0.8),
    ("llm1_layernorm_forward (registers)", "torch layer_norm", 1.0),
]


def norm_tol(cols: int) -> dict:
    rtol = (cols + 8) * U
    atol = rtol * (math.sqrt(cols) + R_MAX) * W_MAX + U * B_MAX
    return dict(rtol=rtol, atol=atol)


def goals(rows) -> list:
    """[(variant, against, ratio, goal, met)] for GOALS, from the rows of one run (the notebook's table)."""
    return timing.goal_rows(rows, GOALS)


def benchmark(scale: float = 1.0):
    """Validate, then time: softmax over rows of 1024 and LayerNorm over rows of 768 (GPT-2 small's
    width), 32768 rows each at scale 1, every variant of the chapter and PyTorch's kernels, against a
    device copy of the same bytes. Bytes counted: the input read once and the output written once."""

    rng = np.random.default_rng(20)
    torch, why = timing.torch_or_reason()
    rpb = 4  # rows (warps) per block on the GPU

    def warp_launch(k, rpb=rpb):
        return lambda out, x: k[(x.shape[0] + rpb - 1) // rpb, rpb * WARP](out, x, x.shape[0], x.shape[1])

    sm_cols = 1024
    cached = timing.specialize(softmax_warp_cached, PER_LANE=sm_cols // WARP)
    softmax = {
        "llm1_softmax_three_pass": lambda out, x: softmax_three_pass[(x.shape[0] + 127) // 128, 128](
            out, x, x.shape[0], x.shape[1]
        ),
        "llm1_softmax_block": (lambda k: lambda out, x: k[x.shape[0], 256](out, x, x.shape[0], x.shape[1]))(
            timing.specialize(softmax_block, TPB=256)
        ),
        "llm1_softmax_warp": warp_launch(softmax_warp),
        "llm1_softmax_online": warp_launch(softmax_online),
        "llm1_softmax_warp_cached": warp_launch(
            timing.specialize(softmax_warp_cached, PER_LANE=sm_cols // WARP)
        ),
    }
    # the register-cached kernel with other block sizes (rows per block): its row is its best
    other_blocks = {f"llm1_softmax_warp_cached ({r} rows/block)": warp_launch(cached, r) for r in (1, 2, 8)}
    # validation: masked rows, large logits, odd shapes; a vocabulary-long row for the uncached kernels
    for rows, cols, kind in [(777, 1000, "masked"), (301, sm_cols, "large"), (64, 50257, "normal")]:
        x = softmax_rows(rng, rows, cols, kind)
        want = softmax_spec(x, rows, cols)
        d_x = cuda.to_device(x)
        for name, launch in softmax.items():
            if cols > sm_cols and name == "llm1_softmax_warp_cached":
                continue
            out = cuda.device_array_like(x)
            launch(out, d_x)
            timing.validate(
                f"{name} ({rows}x{cols}, {kind})",
                out.copy_to_host(),
                want,
                rtol=softmax_rtol(cols),
                atol=SOFTMAX_ATOL,
            )
        if torch is not None:
            got = torch.softmax(torch.as_tensor(x, device="cuda"), dim=1).cpu().numpy()
            masked = np.isneginf(x).all(axis=1)
            got[masked] = 0.0  # torch gives NaN on a fully masked row
            timing.validate(
                f"torch.softmax ({rows}x{cols})", got, want, rtol=softmax_rtol(cols), atol=SOFTMAX_ATOL
            )

    rows_n = max(64, int(32768 * scale))
    x = softmax_rows(rng, rows_n, sm_cols, "normal")
    d_x, d_out = cuda.to_device(x), cuda.device_array_like(x)
    nbytes = x.nbytes
    results = [timing.copy_ceiling(nbytes)]
    for name, launch in softmax.items():
        seconds = timing.time_gpu(lambda launch=launch: launch(d_out, d_x))
        if name == "llm1_softmax_warp_cached":
            for label, other in other_blocks.items():
                other(d_out, d_x)
                timing.validate(
                    label,
                    d_out.copy_to_host()[:64],
                    softmax_spec(x[:64], 64, sm_cols),
                    rtol=softmax_rtol(sm_cols),
                    atol=SOFTMAX_ATOL,
                )
                t = timing.time_gpu(lambda other=other: other(d_out, d_x))
                print(f"{label}: {2 * nbytes / t / 1e9:.0f} GB/s")
                seconds = min(seconds, t)
        results.append(timing.Measurement(name, seconds, bytes=2 * nbytes))
    if torch is not None:
        tx = torch.as_tensor(x, device="cuda")
        results.append(
            timing.Measurement(
                "torch.softmax", timing.time_gpu(lambda: torch.softmax(tx, dim=1)), bytes=2 * nbytes
            )
        )
    else:
        print(why)

    # LayerNorm at GPT-2 small's width
    ln_cols = 768

    def ln_launch(k, rpb=rpb):
        return lambda out, mean, rstd, x, w, b: k[(x.shape[0] + rpb - 1) // rpb, rpb * WARP](
            out, mean, rstd, x, w, b, x.shape[0], x.shape[1]
        )

    norms = {
        "llm1_layernorm_forward": ln_launch(layernorm_forward),
        "llm1_layernorm_welford": ln_launch(layernorm_welford),
        "llm1_layernorm_forward (registers)": ln_launch(
            timing.specialize(layernorm_forward_cached, PER_LANE=ln_cols // WARP)
        ),
    }
    for rows, kind in [(777, "normal"), (333, "offset")]:
        x = norm_input(rng, rows, ln_cols, kind)
        w, b = params(rng, ln_cols)
        want, mu, rs = layernorm_ref(x, w, b)
        d = [cuda.to_device(a) for a in (x, w, b)]
        tol = norm_tol(ln_cols)
        if kind == "offset":  # the mean's own rounding, u * 1000 / std per rounding (docstring)
            tol["atol"] += (ln_cols // WARP + 8) * U * OFFSET / 0.9 * W_MAX
        for name, launch in norms.items():
            out = cuda.device_array_like(x)
            mean, rstd = cuda.device_array(rows, np.float32), cuda.device_array(rows, np.float32)
            launch(out, mean, rstd, *d)
            timing.validate(f"{name} ({rows}x{ln_cols}, {kind})", out.copy_to_host(), want, **tol)
            timing.validate(f"{name} rstd", rstd.copy_to_host(), rs, **tol)
        if torch is not None:
            tx, tw, tb = (torch.as_tensor(a, device="cuda") for a in (x, w, b))
            got = torch.nn.functional.layer_norm(tx, (ln_cols,), tw, tb, eps=float(EPS)).cpu().numpy()
            timing.validate(f"torch layer_norm ({kind})", got, want, **tol)
    x = norm_input(rng, rows_n, ln_cols, "normal")
    w, b = params(rng, ln_cols)
    d = [cuda.to_device(a) for a in (x, w, b)]
    out, mean, rstd = (
        cuda.device_array_like(x),
        cuda.device_array(rows_n, np.float32),
        cuda.device_array(rows_n, np.float32),
    )
    ln_bytes = 2 * x.nbytes
    ln_cached = timing.specialize(layernorm_forward_cached, PER_LANE=ln_cols // WARP)
    for name, launch in norms.items():
        seconds = timing.time_gpu(lambda launch=launch: launch(out, mean, rstd, *d))
        if name.endswith("(registers)"):
            for r in (1, 2, 8):
                other = ln_launch(ln_cached, r)
                other(out, mean, rstd, *d)
                timing.validate(
                    f"{name} ({r} rows/block)",
                    out.copy_to_host()[:64],
                    layernorm_ref(x[:64], w, b)[0],
                    **norm_tol(ln_cols),
                )
                t = timing.time_gpu(lambda other=other: other(out, mean, rstd, *d))
                print(f"{name} ({r} rows/block): {ln_bytes / t / 1e9:.0f} GB/s")
                seconds = min(seconds, t)
        results.append(timing.Measurement(name, seconds, bytes=ln_bytes))
    if torch is not None:
        tx, tw, tb = (torch.as_tensor(a, device="cuda") for a in (x, w, b))
        F = torch.nn.functional
        seconds = timing.time_gpu(lambda: F.layer_norm(tx, (ln_cols,), tw, tb, eps=float(EPS)))
        results.append(timing.Measurement("torch layer_norm", seconds, bytes=ln_bytes))
    return results
