"""PMPP chapter 17, iterative MRI reconstruction: computing F^H D.

    ch17_mu          mu[m] = conj(phi[m]) * d[m], one thread per k-space sample (worked; loop fission)
    ch17_fhd_scatter the loop as written: one thread per k-space sample, atomics into every voxel (worked)
    ch17_fhd_gather  loop interchange: one thread per voxel, registers for its position and sums (exercise)
    ch17_fhd_const   the k-space trajectory in constant memory, one chunk per launch (exercise)

F^H D at voxel n: sum over samples m of mu[m] * exp(i * 2 pi * k[m] . pos[n]), split into real and
imaginary parts as in the book (r_fhd, i_fhd). Complex numbers are (real, imag) pairs: phi[m, 0..1],
d[m, 0..1], mu[m, 0..1].

Tolerance: a float32 sum of n terms is within n * eps * sum|terms| (eps = 2^-24). Each term also
carries its angle's rounding: the float32 angle 2 pi k . pos, of size up to ARG_MAX, is off by a few
eps * ARG_MAX (ANGLE_ROUNDINGS of them), and cos/sin pass an absolute error in their argument straight
through (|derivative| <= 1), plus their own correctly-rounded-ish 2 eps. With |mu| <= MU_MAX the
bound per output is n * (n * eps * 2 MU_MAX) + n * 2 MU_MAX * eps * (ANGLE_ROUNDINGS * ARG_MAX + 2).
"""

import math

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

TPB = 32  # voxels (or samples) per block
TWO_PI = np.float32(2 * math.pi)
K_MAX, X_MAX = 0.5, 4.0  # |k| components <= K_MAX, |position| components <= X_MAX
ARG_MAX = 2 * math.pi * 3 * K_MAX * X_MAX  # the largest angle: 37.7
MU_MAX = 2.0  # |phi|, |d| components < 1, so |mu| components < 2
EPS32 = 2.0**-24
ANGLE_ROUNDINGS = 6  # three products, two sums, the factor 2 pi

# The k-space trajectory of the constant-memory puzzle: fixed by the scan protocol, so it can be
# compiled into the kernel (Numba fills constant memory at compile time). M_TRAJ samples in chunks of
# CHUNK; a real trajectory is larger than the 64 KB of constant memory, hence the chunks.
M_TRAJ = 40
CHUNK = 16
K_TRAJ = np.random.default_rng(17).uniform(-K_MAX, K_MAX, (M_TRAJ, 3)).astype(np.float32)
CONST_BYTES = 64 * 1024

# what `from puzzles.pmpp.ch17_mri import *` gives a notebook: constants only, never a kernel
__all__ = [
    "TPB",
    "TWO_PI",
    "K_MAX",
    "X_MAX",
    "ARG_MAX",
    "MU_MAX",
    "EPS32",
    "M_TRAJ",
    "CHUNK",
    "K_TRAJ",
    "CONST_BYTES",
]
CHAPTER = "pmpp-17"


def fhd_tolerance(n_terms: int) -> float:
    """The derived worst case of one output: summation error plus every term's angle error."""
    term_max = 2 * MU_MAX
    return n_terms * EPS32 * n_terms * term_max + n_terms * term_max * EPS32 * (ANGLE_ROUNDINGS * ARG_MAX + 2)


@cuda.jit
def mri_mu(mu, phi, d):
    m = cuda.grid(1)
    if m < mu.shape[0]:
        # conj(phi) * d
        mu[m, 0] = phi[m, 0] * d[m, 0] + phi[m, 1] * d[m, 1]
        mu[m, 1] = phi[m, 0] * d[m, 1] - phi[m, 1] * d[m, 0]


@cuda.jit
def fhd_scatter(r_fhd, i_fhd, k, mu, pos):
    m = cuda.grid(1)
    if m < k.shape[0]:
        r_mu = mu[m, 0]
        i_mu = mu[m, 1]
        for n in range(pos.shape[0]):
            arg = TWO_PI * (k[m, 0] * pos[n, 0] + k[m, 1] * pos[n, 1] + k[m, 2] * pos[n, 2])
            c = math.cos(arg)
            s = math.sin(arg)
            # every sample adds into every voxel: atomics, and all threads on the same voxel at once
            cuda.atomic.add(r_fhd, n, r_mu * c - i_mu * s)
            cuda.atomic.add(i_fhd, n, i_mu * c + r_mu * s)


@cuda.jit
def fhd_gather(r_fhd, i_fhd, k, mu, pos):
    n = cuda.grid(1)
    ### BEGIN SOLUTION
    if n < pos.shape[0]:
        # the voxel's position and both sums live in registers for the whole loop
        x = pos[n, 0]
        y = pos[n, 1]
        z = pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        for m in range(k.shape[0]):
            arg = TWO_PI * (k[m, 0] * x + k[m, 1] * y + k[m, 2] * z)
            c = math.cos(arg)
            s = math.sin(arg)
            r_mu = mu[m, 0]  # each used twice: one load each
            i_mu = mu[m, 1]
            r_acc += r_mu * c - i_mu * s
            i_acc += i_mu * c + r_mu * s
        r_fhd[n] = r_acc
        i_fhd[n] = i_acc
    ### END SOLUTION


@cuda.jit
def fhd_const(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    ### BEGIN SOLUTION
    if n < pos.shape[0]:
        x = pos[n, 0]
        y = pos[n, 1]
        z = pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        start = chunk * CHUNK
        # the last chunk may be short: stop at the end of the trajectory
        for m in range(start, min(start + CHUNK, M_TRAJ)):
            # every thread of the warp reads the same sample: a constant-cache broadcast
            arg = TWO_PI * (traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z)
            c = math.cos(arg)
            s = math.sin(arg)
            r_mu = mu[m, 0]  # each used twice: one load each
            i_mu = mu[m, 1]
            r_acc += r_mu * c - i_mu * s
            i_acc += i_mu * c + r_mu * s
        # launches add up chunk by chunk; each voxel has one owner thread, so no atomics
        r_fhd[n] += r_acc
        i_fhd[n] += i_acc
    ### END SOLUTION


# ------------------------------------------------------------------ NumPy truth


def fhd_ref(k, mu, pos):
    """(r_fhd, i_fhd) in float64."""
    arg = 2 * np.pi * (pos.astype(np.float64) @ k.astype(np.float64).T)  # (N, M)
    c, s = np.cos(arg), np.sin(arg)
    r_mu, i_mu = mu[:, 0].astype(np.float64), mu[:, 1].astype(np.float64)
    return c @ r_mu - s @ i_mu, c @ i_mu + s @ r_mu


def spec_mu(phi, d):
    p = phi[:, 0].astype(np.float64) - 1j * phi[:, 1]
    q = d[:, 0].astype(np.float64) + 1j * d[:, 1]
    mu = p * q
    return np.stack([mu.real, mu.imag], axis=1).astype(np.float32)


def spec_fhd(k, mu, pos):
    r, i = fhd_ref(k, mu, pos)
    return {"r_fhd": r.astype(np.float32), "i_fhd": i.astype(np.float32)}


def spec_const(mu, pos, chunk):
    lo, hi = chunk * CHUNK, min((chunk + 1) * CHUNK, M_TRAJ)
    r, i = fhd_ref(K_TRAJ[lo:hi], mu[lo:hi], pos)
    return {"r_fhd": r.astype(np.float32), "i_fhd": i.astype(np.float32)}


# ------------------------------------------------------------------ cases

# (voxels, samples): one voxel, one sample, a block's worth minus one, plus one, several blocks
SIZES = [(33, 17), (1, 5), (TPB - 1, 24), (70, 1), (TPB, 9)]
M_MAX = 24


def _pos(rng, n):
    return rng.uniform(-X_MAX, X_MAX, (n, 3)).astype(np.float32)


def _k(rng, m):
    return rng.uniform(-K_MAX, K_MAX, (m, 3)).astype(np.float32)


def _mu(rng, m):
    return rng.uniform(-MU_MAX, MU_MAX, (m, 2)).astype(np.float32)


def _blocks(n):
    return math.ceil(n / TPB)


def cases_mu(rng):
    out = []
    for m in (33, 1, TPB - 1, 70):
        phi = rng.uniform(-1, 1, (m, 2)).astype(np.float32)
        d = rng.uniform(-1, 1, (m, 2)).astype(np.float32)
        out.append(Case(_blocks(m), TPB, dict(mu=np.empty((m, 2), np.float32), phi=phi, d=d)))
    return out


def _fhd_args(rng, n, m):
    return dict(
        r_fhd=np.empty(n, np.float32),
        i_fhd=np.empty(n, np.float32),
        k=_k(rng, m),
        mu=_mu(rng, m),
        pos=_pos(rng, n),
    )


def cases_scatter(rng):
    return [Case(_blocks(m), TPB, _fhd_args(rng, n, m)) for n, m in SIZES]


def cases_gather(rng):
    return [Case(_blocks(n), TPB, _fhd_args(rng, n, m)) for n, m in SIZES]


def cases_const(rng):
    # every chunk of the trajectory: the first, a middle one, and the short last one (40 = 16 + 16 + 8)
    out = []
    for n, chunk in [(33, 1), (1, 2), (TPB - 1, 0), (70, 2), (TPB, 1)]:
        args = dict(
            r_fhd=np.zeros(n, np.float32),
            i_fhd=np.zeros(n, np.float32),
            mu=_mu(rng, M_TRAJ),
            pos=_pos(rng, n),
        )
        args["chunk"] = chunk
        out.append(Case(_blocks(n), TPB, args))
    return out


FHD_ATOL = fhd_tolerance(M_MAX)
CONST_ATOL = fhd_tolerance(CHUNK)
_RTOL = 2 * EPS32

_FHD = """`r_fhd[n] + i * i_fhd[n]` = sum over k-space samples m of `mu[m] * exp(i * arg)`, with
`arg = TWO_PI * (k[m, 0] * pos[n, 0] + k[m, 1] * pos[n, 1] + k[m, 2] * pos[n, 2])`; in real arithmetic
`r_fhd[n] = sum of mu[m, 0] * cos(arg) - mu[m, 1] * sin(arg)` and
`i_fhd[n] = sum of mu[m, 1] * cos(arg) + mu[m, 0] * sin(arg)` (`math.cos`, `math.sin`)."""


def _gather_reads(case):
    return 3 + 5 * case.args["k"].shape[0]


def _const_reads(case):
    lo = case.args["chunk"] * CHUNK
    return 3 + 2 * (min(lo + CHUNK, M_TRAJ) - lo) + 2  # position, the chunk's mu, the two running sums


PUZZLES = [
    Puzzle(
        name="ch17_mu",
        title="Loop fission: mu = conj(phi) * d",
        statement=f"""The first loop of the book's code, split off: for each k-space sample,
`mu[m] = conj(phi[m]) * d[m]` with complex numbers as `(real, imag)` pairs, so
`mu[m, 0] = phi[m, 0] * d[m, 0] + phi[m, 1] * d[m, 1]` and
`mu[m, 1] = phi[m, 0] * d[m, 1] - phi[m, 1] * d[m, 0]`. One thread per sample, blocks of `TPB = {TPB}`.""",
        outputs=("mu",),
        spec=spec_mu,
        cases=cases_mu,
        reference=mri_mu,
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=2 * EPS32 * 2,
    ),
    Puzzle(
        name="ch17_fhd_scatter",
        title="F^H D as written: one thread per k-space sample",
        statement=f"""{_FHD}

The loop as the sequential code writes it, parallelised over samples: thread `m` (blocks of
`TPB = {TPB}`) adds its sample's contribution to every voxel with `cuda.atomic.add`. The outputs start
at zero.""",
        outputs=("r_fhd", "i_fhd"),
        spec=spec_fhd,
        cases=cases_scatter,
        reference=fhd_scatter,
        zeroed=("r_fhd", "i_fhd"),
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=FHD_ATOL,
    ),
    Puzzle(
        name="ch17_fhd_gather",
        title="Loop interchange: one thread per voxel",
        statement=f"""{_FHD}

One thread per voxel `n` (blocks of `TPB = {TPB}`) loops over all samples: no atomics (enforced). Keep
the voxel's position and both running sums in registers: the budget is 3 global reads for the
position, 5 per sample (`k[m, 0..2]`, `mu[m, 0..1]`) and one write per output.""",
        outputs=("r_fhd", "i_fhd"),
        spec=spec_fhd,
        cases=cases_gather,
        reference=fhd_gather,
        budget=Budget(global_atomics_per_block=0, global_reads=_gather_reads, global_writes=2),
        hints=(
            "Read pos[n, 0..2] once, before the loop over m, into three local variables.",
            "Accumulate in two float32 locals and write r_fhd[n], i_fhd[n] once, after the loop.",
            "Threads past the last voxel must do nothing.",
        ),
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=FHD_ATOL,
    ),
    Puzzle(
        name="ch17_fhd_const",
        title="The trajectory in constant memory, chunk by chunk",
        statement=f"""The same sums, with the k-space trajectory in constant memory: `traj` holds the
`M_TRAJ = {M_TRAJ}` samples' `(kx, ky, kz)` (`K_TRAJ`, compiled in), read by every thread of a warp at
the same moment: a broadcast. A real trajectory is larger than the {CONST_BYTES // 1024} KB of constant
memory, so the host launches the kernel once per chunk of `CHUNK = {CHUNK}` samples: this launch
handles chunk `chunk`, samples `chunk * CHUNK` up to (not including) `min((chunk + 1) * CHUNK, M_TRAJ)`,
and **adds** its partial sums to `r_fhd[n]`, `i_fhd[n]` (zero before the first chunk). `mu` is the
whole trajectory's, in global memory. One thread per voxel, registers as in the gather; no atomics.""",
        outputs=("r_fhd", "i_fhd"),
        spec=spec_const,
        cases=cases_const,
        reference=fhd_const,
        zeroed=("r_fhd", "i_fhd"),
        budget=Budget(global_atomics_per_block=0, global_reads=_const_reads, global_writes=2),
        hints=(
            "Sample m of chunk c is m = c * CHUNK + s, s = 0 .. CHUNK - 1; the last chunk is shorter.",
            "mu is indexed by the sample m, not by its place s in the chunk.",
            "Add to r_fhd[n] (+=): the chunks before this one left their sums there.",
        ),
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=CONST_ATOL,
    ),
]


# ------------------------------------------------------------------ GPU benchmark

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
    from puzzles.pmpp.ch18_electrostatics import _sgemm_ceiling

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
    ceiling = _sgemm_ceiling(timing)
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
