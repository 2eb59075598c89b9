"""Chapter 17's shared pieces: the constants (trajectory, sizes, value ranges), the derived tolerance,
the NumPy truth of F^H D and the cases' shared builders.

Tolerance: a float32 sum of n terms is within n * eps * sum|terms| (eps = 2^-24). Each term also
carries its angle's rounding: the float32 angle 2 pi k . pos, of size up to ARG_MAX, is off by a few
eps * ARG_MAX (ANGLE_ROUNDINGS of them), and cos/sin pass an absolute error in their argument straight
through (|derivative| <= 1), plus their own correctly-rounded-ish 2 eps. With |mu| <= MU_MAX the
bound per output is n * (n * eps * 2 MU_MAX) + n * 2 MU_MAX * eps * (ANGLE_ROUNDINGS * ARG_MAX + 2).
"""

from __future__ import annotations

import math

import numpy as np

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


CHAPTER = "pmpp-17"


def fhd_tolerance(n_terms: int) -> float:
    """The derived worst case of one output: summation error plus every term's angle error."""
    term_max = 2 * MU_MAX
    return n_terms * EPS32 * n_terms * term_max + n_terms * term_max * EPS32 * (ANGLE_ROUNDINGS * ARG_MAX + 2)


def fhd_ref(k, mu, pos):
    """(r_fhd, i_fhd) in float64."""
    arg = 2 * np.pi * (pos.astype(np.float64) @ k.astype(np.float64).T)  # (N, M)
    c, s = np.cos(arg), np.sin(arg)
    r_mu, i_mu = mu[:, 0].astype(np.float64), mu[:, 1].astype(np.float64)
    return c @ r_mu - s @ i_mu, c @ i_mu + s @ r_mu


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


def _fhd_args(rng, n, m):
    return dict(
        r_fhd=np.empty(n, np.float32),
        i_fhd=np.empty(n, np.float32),
        k=_k(rng, m),
        mu=_mu(rng, m),
        pos=_pos(rng, n),
    )


FHD_ATOL = fhd_tolerance(M_MAX)


CONST_ATOL = fhd_tolerance(CHUNK)


_RTOL = 2 * EPS32


_FHD = """`r_fhd[n] + i * i_fhd[n]` = sum over k-space samples m of `mu[m] * exp(i * arg)`, with
`arg = TWO_PI * (k[m, 0] * pos[n, 0] + k[m, 1] * pos[n, 1] + k[m, 2] * pos[n, 2])`; in real arithmetic
`r_fhd[n] = sum of mu[m, 0] * cos(arg) - mu[m, 1] * sin(arg)` and
`i_fhd[n] = sum of mu[m, 1] * cos(arg) + mu[m, 0] * sin(arg)` (`math.cos`, `math.sin`)."""
