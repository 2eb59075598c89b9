"""Chapter 18's shared pieces: constants, the derived tolerance, the NumPy truth (the potential map in
float64) and the atoms every case draws.

Tolerance: a float32 sum of n terms is within n * eps * sum|terms| of the exact sum (eps = 2^-24);
each term itself carries a few roundings (three differences, squares and sums, the square root, the
division: at most TERM_ROUNDINGS * eps relative), so the bound is (n + TERM_ROUNDINGS) * eps *
n * term_max, with term_max = Q_MAX / Z_GAP.
"""

from __future__ import annotations

import numpy as np

SPACING = np.float32(0.5)  # grid spacing (exact in float32: grid coordinates are exact)


TX, TY = 32, 2  # block shape of the gather kernels: one warp per row of a block


COARSEN = 4  # grid points per thread in the coarsened kernel


TPB = 32  # scatter: atoms per block


CUTOFF = np.float32(2.0)  # cutoff radius = bin side


CUTOFF2 = np.float32(4.0)


Z_GAP, Z_SPAN, Q_MAX = 0.5, 2.0, 1.0  # atoms 0.5 to 2.0 off the slice, |charge| <= 1


FAR = np.float32(1.0e4)  # where the empty slots of a bin sit (charge 0, beyond any cutoff)


EPS32 = 2.0**-24


TERM_ROUNDINGS = 8


CHAPTER = "pmpp-18"


def coulomb_tolerance(n_atoms: int) -> float:
    """The worst-case float32 error of a potential summed over n_atoms: (n + 8) * eps * n * Q_MAX / Z_GAP."""
    return (n_atoms + TERM_ROUNDINGS) * EPS32 * n_atoms * Q_MAX / Z_GAP


def potential(atoms, z, nx, ny, cutoff=None):
    """The map in float64: the sum of q / r, or with a cutoff c, of q / r * (1 - r^2 / c^2)^2 for r < c."""
    a = atoms.astype(np.float64)
    x = np.arange(nx) * float(SPACING)
    y = np.arange(ny) * float(SPACING)
    dx = x[None, None, :] - a[:, 0, None, None]
    dy = y[None, :, None] - a[:, 1, None, None]
    dz = float(z) - a[:, 2, None, None]
    r2 = dx * dx + dy * dy + dz * dz
    terms = a[:, 3, None, None] / np.sqrt(r2)
    if cutoff is not None:
        c2 = float(cutoff) ** 2
        terms = np.where(r2 < c2, terms * (1 - r2 / c2) ** 2, 0.0)
    return terms.sum(axis=0)


def make_atoms(rng, n, nx, ny, z):
    """Atoms over the slice's extent, Z_GAP to Z_SPAN above or below it, charges of both signs."""
    atoms = np.empty((n, 4), np.float32)
    atoms[:, 0] = rng.uniform(0, nx * float(SPACING), n)
    atoms[:, 1] = rng.uniform(0, ny * float(SPACING), n)
    atoms[:, 2] = z + rng.choice([-1, 1], n) * rng.uniform(Z_GAP, Z_SPAN, n)
    atoms[:, 3] = rng.choice([-1, 1], n) * rng.uniform(0.1, Q_MAX, n)
    return atoms


def _z(rng):
    return np.float32(rng.uniform(-1, 1))


_MAP = f"""`energy[j, i]` is the potential at the grid point `(i * SPACING, j * SPACING, z)`
(`SPACING = {SPACING}`) of the atoms `atoms[a] = (x, y, z, charge)`: the sum over atoms of
`charge / r`, `r` the distance from the atom to the point (`math.sqrt`)."""


_ROWS = f"Blocks of `TX x TY = {TX} x {TY}` threads: `x` runs along a row `i`, `y` over the rows `j`."


_RTOL = 2 * EPS32
