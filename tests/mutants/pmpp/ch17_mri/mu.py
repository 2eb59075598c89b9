"""Mutants and variants of puzzles/pmpp/ch17_mri/mu.py; format: mutants/common.py."""

from numba import cuda

from mutants.common import WRONG


@cuda.jit
def mu_no_conjugate(mu, phi, d):
    m = cuda.grid(1)
    if m < mu.shape[0]:
        mu[m, 0] = phi[m, 0] * d[m, 0] - phi[m, 1] * d[m, 1]  # phi * d: the conjugate forgotten
        mu[m, 1] = phi[m, 0] * d[m, 1] + phi[m, 1] * d[m, 0]


MUTANTS = {
    "ch17_mu": [
        ("mu_no_conjugate", mu_no_conjugate, *WRONG),
    ],
}

VARIANTS = {}

SEEDS = {name: (0, 1, 2) for name in MUTANTS}
