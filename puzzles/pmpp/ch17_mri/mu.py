"""Loop fission: the first loop of the book's code on its own.

Rungs:
    ch17_mu    mu[m] = conj(phi[m]) * d[m], one thread per k-space sample (worked)
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import _RTOL, CHAPTER, EPS32, TPB, _blocks


def spec_mu(phi, d):
    p = phi[:, 0].astype(np.float64) - 1j * phi[:, 1]
    q = d[:, 0].astype(np.float64) + 1j * d[:, 1]
    mu = p * q
    return np.stack([mu.real, mu.imag], axis=1).astype(np.float32)


def cases_mu(rng):
    out = []
    for m in (33, 1, TPB - 1, 70):
        phi = rng.uniform(-1, 1, (m, 2)).astype(np.float32)
        d = rng.uniform(-1, 1, (m, 2)).astype(np.float32)
        out.append(Case(_blocks(m), TPB, dict(mu=np.empty((m, 2), np.float32), phi=phi, d=d)))
    return out


@cuda.jit
def mri_mu(mu, phi, d):
    m = cuda.grid(1)
    if m < mu.shape[0]:
        # conj(phi) * d
        mu[m, 0] = phi[m, 0] * d[m, 0] + phi[m, 1] * d[m, 1]
        mu[m, 1] = phi[m, 0] * d[m, 1] - phi[m, 1] * d[m, 0]


MU = Puzzle(
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
)


PUZZLES = [MU]
