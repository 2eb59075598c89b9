"""Cutoff summation over bins: only the atoms near a point count.

Rungs:
    ch18_dcs_cutoff    atoms sorted into bins of side CUTOFF; each point visits the 3 x 3 bins around its
                       own and adds the atoms within CUTOFF, smoothly switched off (exercise)
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle
from helpers.rules import reads_of

from .common import (
    _ROWS,
    _RTOL,
    CHAPTER,
    CUTOFF,
    CUTOFF2,
    FAR,
    SPACING,
    TX,
    TY,
    _z,
    coulomb_tolerance,
    make_atoms,
    potential,
)


def spec_cutoff(bins, z, nx, ny):
    atoms = bins.reshape(-1, 4)
    atoms = atoms[atoms[:, 3] != 0]
    return potential(atoms, z, nx, ny, CUTOFF).astype(np.float32)


def bin_atoms(atoms: np.ndarray, nx: int, ny: int) -> np.ndarray:
    """Atoms sorted into bins of side CUTOFF over the slice: bins[by, bx, slot] = (x, y, z, q), the
    slots each bin does not need filled with charge-0 atoms at FAR (capacity: the fullest bin)."""
    nbx = math.ceil(nx * float(SPACING) / float(CUTOFF))
    nby = math.ceil(ny * float(SPACING) / float(CUTOFF))
    bx = np.minimum((atoms[:, 0] / CUTOFF).astype(int), nbx - 1)
    by = np.minimum((atoms[:, 1] / CUTOFF).astype(int), nby - 1)
    counts = np.zeros((nby, nbx), int)
    np.add.at(counts, (by, bx), 1)
    bins = np.zeros((nby, nbx, max(1, counts.max()), 4), np.float32)
    bins[..., :3] = FAR
    fill = np.zeros((nby, nbx), int)
    for a in np.argsort(by * nbx + bx, kind="stable"):
        bins[by[a], bx[a], fill[by[a], bx[a]]] = atoms[a]
        fill[by[a], bx[a]] += 1
    return bins


# cutoff cases: slices several bins wide and tall, atoms dense enough that every bin has neighbours
CUTOFF_SIZES = [(21, 13, 24), (9, 3, 8), (34, 6, 24), (5, 17, 10)]


CUTOFF_ATOL = coulomb_tolerance(24)


def cases_cutoff(rng):
    out = []
    for nx, ny, n in CUTOFF_SIZES:
        z = _z(rng)
        bins = bin_atoms(make_atoms(rng, n, nx, ny, z), nx, ny)
        args = dict(energy=np.empty((ny, nx), np.float32), bins=bins, z=z, nx=nx, ny=ny)
        out.append(Case((math.ceil(nx / TX), math.ceil(ny / TY)), (TX, TY), args))
    return out


def cutoff_reads(case) -> int:
    """Reads of `bins` the cutoff technique needs: every point reads the 4 fields of each slot of the
    (up to) 3 x 3 bins around its own, clipped at the grid of bins."""
    a = case.args
    nby, nbx, cap = a["bins"].shape[:3]

    def near(count, n):  # per point index: how many bins of the 3 around its own exist
        own = (np.arange(n) * float(SPACING) / float(CUTOFF)).astype(int)
        return np.minimum(own + 2, count) - np.maximum(own - 1, 0)

    return int(near(nbx, a["nx"]).sum() * near(nby, a["ny"]).sum()) * cap * 4


@cuda.jit
def dcs_cutoff(energy, bins, z, nx, ny):
    i, j = cuda.grid(2)
    nby, nbx, cap = bins.shape[0], bins.shape[1], bins.shape[2]
    ### BEGIN SOLUTION
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        bx = int(x / CUTOFF)  # bins are CUTOFF wide: every atom within CUTOFF is in the 3 x 3 around
        by = int(y / CUTOFF)
        acc = float32(0.0)
        for b in range(max(by - 1, 0), min(by + 2, nby)):
            for c in range(max(bx - 1, 0), min(bx + 2, nbx)):
                for s in range(cap):
                    dx = x - bins[b, c, s, 0]
                    dy = y - bins[b, c, s, 1]
                    dz = z - bins[b, c, s, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 < CUTOFF2:
                        sw = float32(1.0) - r2 / CUTOFF2  # switching: the term fades to 0 at CUTOFF
                        acc += bins[b, c, s, 3] / math.sqrt(r2) * sw * sw
        energy[j, i] = acc
    ### END SOLUTION


DCS_CUTOFF = Puzzle(
    name="ch18_dcs_cutoff",
    title="Cutoff summation with binned atoms",
    statement=f"""Far atoms matter little to a point's potential, and in a large system nearly all
atoms are far. Keep only the atoms within `CUTOFF = {CUTOFF}` of the point, each term switched off smoothly:
`charge / r * (1 - r^2 / CUTOFF^2)^2` for `r^2 < CUTOFF2`, nothing beyond. The host sorted the atoms
into square bins of side `CUTOFF` (`bins[by, bx, slot] = (x, y, z, charge)`; slots a bin does not
need hold charge-0 atoms at `FAR`, far past any cutoff). The point `(x, y)` lies in bin
`(int(y / CUTOFF), int(x / CUTOFF))`; every atom within `CUTOFF` of it is in that bin or one of its
8 neighbours (those inside the grid of bins). One thread per point, as in the gather. {_ROWS}
Enforced: a point reads only the bins around its own.""",
    outputs=("energy",),
    spec=spec_cutoff,
    cases=cases_cutoff,
    reference=dcs_cutoff,
    budget=Budget(global_atomics_per_block=0, global_writes=1),
    rules=(
        reads_of(
            "bins",
            cutoff_reads,
            "Visit only the 3 x 3 bins around the point's own bin: every atom within CUTOFF is there, "
            "and skipping the others is what the binning is for.",
        ),
    ),
    hints=(
        "Bin rows max(by - 1, 0) to min(by + 1, nby - 1), inclusive, and the same for the columns.",
        "Test r2 < CUTOFF2 before adding: a bin's corner lies further than CUTOFF from the point.",
    ),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=CUTOFF_ATOL,
)


PUZZLES = [DCS_CUTOFF]
