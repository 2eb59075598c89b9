"""Chapter 17's GPU benchmark: gather and chunked constant memory, IEEE and fastmath trig, against FP32
SGEMM; and the probe of float32 sin/cos error the tolerance must cover.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .common import ANGLE_ROUNDINGS, ARG_MAX, EPS32, MU_MAX, _k, _mu, _pos, fhd_ref
from .const import fhd_const
from .fhd import fhd_gather

FLOPS_PER_PAIR = 16  # angle 6 (3 mul, 2 add, x 2 pi), cos and sin 1 each, two complex accumulations 4 each


GOAL = None  # chapter 17: GFLOP/s against the SGEMM ceiling reported, no goal set


@cuda.jit
def _trig_probe(out_sin, out_cos, arg):
    i = cuda.grid(1)
    if i < arg.shape[0]:
        out_sin[i] = math.sin(arg[i])
        out_cos[i] = math.cos(arg[i])


def trig_errors(n: int = 1 << 20):
    """Largest absolute error of float32 sin/cos (IEEE and fastmath) on the GPU against float64,
    for n angles up to ARG_MAX: what the tolerance must cover."""
    from helpers.timing import specialize

    arg = np.random.default_rng(1).uniform(-ARG_MAX, ARG_MAX, n).astype(np.float32)
    exact_s, exact_c = np.sin(arg.astype(np.float64)), np.cos(arg.astype(np.float64))
    out = {}
    for name, opts in (("math.sin/cos", None), ("fastmath", {"fastmath": True})):
        kern = specialize(_trig_probe, jit_options=opts)
        s, c = cuda.device_array(arg.size, np.float32), cuda.device_array(arg.size, np.float32)
        kern[math.ceil(arg.size / 256), 256](s, c, cuda.to_device(arg))
        out[name] = max(np.abs(s.copy_to_host() - exact_s).max(), np.abs(c.copy_to_host() - exact_c).max())
    return out


def benchmark(scale: float = 1.0, *, sizes: tuple = (32768, 16384, 4096, 1 << 20)):
    """F^H D for 32768 voxels and 16384 samples: gather and chunked constant memory, IEEE and fastmath
    trig, validated against float64 on 256 voxels, against FP32 SGEMM. `sizes` = (voxels, samples,
    samples per constant-memory chunk, angles for the trig-error probe) (smaller for a dry run)."""
    from helpers import timing
    from helpers.timing import specialize

    rng = np.random.default_rng(17)
    n, m, chunk, n_trig = sizes  # 4096 samples x 3 floats = 48 KB of constant memory per chunk (of 64 KB)
    n = max(min(n, 1024), int(n * scale))
    m = max(min(m, 1024), int(m * scale))
    k, mu, pos = _k(rng, m), _mu(rng, m), _pos(rng, n)
    checked = min(256, n)
    want_r, want_i = fhd_ref(k, mu, pos[:checked])
    want = np.stack([want_r, want_i]).astype(np.float32)
    d_k, d_mu, d_pos = cuda.to_device(k), cuda.to_device(mu), cuda.to_device(pos)
    r, i = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
    zero = cuda.to_device(np.zeros(n, np.float32))
    flops = FLOPS_PER_PAIR * n * m
    rows = []
    ceiling = timing.sgemm_ceiling()
    if ceiling is not None:
        rows.append(ceiling)
    errors = trig_errors(n_trig)
    shown = ", ".join(f"{name}: {err:.1e}" for name, err in errors.items())
    print(f"largest |error| of float32 sin/cos against float64, angles up to {ARG_MAX:.1f}: {shown}")
    tpb = 256
    for label, opts in (("", None), (" (fastmath)", {"fastmath": True})):
        # the derived bound, with the trig error measured above in place of 2 eps per term
        trig = errors["math.sin/cos" if opts is None else "fastmath"]
        atol = m * EPS32 * m * 2 * MU_MAX + m * 2 * MU_MAX * (EPS32 * ANGLE_ROUNDINGS * ARG_MAX + trig)
        gather = specialize(fhd_gather, jit_options=opts)

        def run_gather(gather=gather):
            gather[math.ceil(n / tpb), tpb](r, i, d_k, d_mu, d_pos)

        run_gather()
        got = np.stack([r.copy_to_host()[:checked], i.copy_to_host()[:checked]])
        timing.validate("ch17_fhd_gather" + label, got, want, rtol=1e-4, atol=atol)
        rows.append(timing.Measurement("ch17_fhd_gather" + label, timing.time_gpu(run_gather), flops=flops))

        # one kernel per chunk, its trajectory compiled into constant memory (what cudaMemcpyToSymbol
        # does between launches in CUDA C); each launch adds its chunk to the sums
        kernels = []
        for c0 in range(0, m, chunk):
            part = k[c0 : c0 + chunk]
            kernels.append(
                specialize(
                    fhd_const,
                    jit_options=opts,
                    K_TRAJ=np.ascontiguousarray(part),
                    M_TRAJ=len(part),
                    CHUNK=chunk,
                )
            )
        mus = [cuda.to_device(np.ascontiguousarray(mu[c0 : c0 + chunk])) for c0 in range(0, m, chunk)]

        def run_const(kernels=kernels, mus=mus):
            r.copy_to_device(zero)  # the chunks add up: start from 0 every run
            i.copy_to_device(zero)
            for kern, d_part in zip(kernels, mus):
                kern[math.ceil(n / tpb), tpb](r, i, d_part, d_pos, 0)

        run_const()
        got = np.stack([r.copy_to_host()[:checked], i.copy_to_host()[:checked]])
        timing.validate("ch17_fhd_const" + label, got, want, rtol=1e-4, atol=atol)
        rows.append(timing.Measurement("ch17_fhd_const" + label, timing.time_gpu(run_const), flops=flops))
    return rows
