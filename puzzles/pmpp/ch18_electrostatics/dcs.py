"""Direct Coulomb summation: every atom adds to every grid point.

Rungs:
    ch18_dcs_scatter      one thread per atom, atomics into every grid point (worked)
    ch18_dcs_gather       one thread per grid point, a loop over the atoms, no atomics (exercise)
    ch18_dcs_coarsened    COARSEN points per thread, blockDim.x apart (coalesced writes), the terms they
                          share (dy^2 + dz^2, the charge) read and computed once per atom (exercise)
GPU only (the benchmark): dcs_coarsened_rsqrt, the coarsened kernel with libdevice's rsqrtf.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32
from numba.cuda import libdevice

from helpers.puzzle import Budget, Case, Puzzle

from .common import (
    _MAP,
    _ROWS,
    _RTOL,
    CHAPTER,
    COARSEN,
    SPACING,
    TPB,
    TX,
    TY,
    _z,
    coulomb_tolerance,
    make_atoms,
    potential,
)


def spec_dcs(atoms, z, nx, ny):
    return potential(atoms, z, nx, ny).astype(np.float32)


# (nx, ny, atoms): one point, rows shorter than a warp, a row of exactly one and several blocks
SIZES = [(37, 3, 12), (1, 1, 5), (70, 2, 9), (TX * COARSEN + 1, 1, 7), (13, 5, 16)]


N_ATOMS_MAX = 16


DCS_ATOL = coulomb_tolerance(N_ATOMS_MAX)


def _args(rng, nx, ny, n):
    z = _z(rng)
    return dict(energy=np.empty((ny, nx), np.float32), atoms=make_atoms(rng, n, nx, ny, z), z=z, nx=nx, ny=ny)


def cases_scatter(rng):
    return [Case(math.ceil(n / TPB), TPB, _args(rng, nx, ny, n)) for nx, ny, n in SIZES]


def cases_gather(rng):
    return [
        Case((math.ceil(nx / TX), math.ceil(ny / TY)), (TX, TY), _args(rng, nx, ny, n)) for nx, ny, n in SIZES
    ]


def cases_coarsened(rng):
    return [
        Case((math.ceil(nx / (TX * COARSEN)), math.ceil(ny / TY)), (TX, TY), _args(rng, nx, ny, n))
        for nx, ny, n in SIZES
    ]


@cuda.jit
def dcs_scatter(energy, atoms, z, nx, ny):
    a = cuda.grid(1)
    if a < atoms.shape[0]:
        ax = atoms[a, 0]
        ay = atoms[a, 1]
        dz = z - atoms[a, 2]
        q = atoms[a, 3]
        dz2 = dz * dz
        for j in range(ny):
            dy = float32(j) * SPACING - ay
            dyz2 = dy * dy + dz2
            for i in range(nx):
                dx = float32(i) * SPACING - ax
                # every atom adds into every point: the same address from all threads, hence atomics
                cuda.atomic.add(energy, (j, i), q / math.sqrt(dx * dx + dyz2))


DCS_SCATTER = Puzzle(
    name="ch18_dcs_scatter",
    title="Direct Coulomb summation, scatter",
    statement=f"""{_MAP}

One thread per atom (blocks of `TPB = {TPB}`): each adds its contribution to every grid point with
`cuda.atomic.add`. `energy` starts at zero.""",
    outputs=("energy",),
    spec=spec_dcs,
    cases=cases_scatter,
    reference=dcs_scatter,
    zeroed=("energy",),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=DCS_ATOL,
)


@cuda.jit
def dcs_gather(energy, atoms, z, nx, ny):
    i, j = cuda.grid(2)
    ### BEGIN SOLUTION
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        acc = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = x - atoms[a, 0]
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
        energy[j, i] = acc
    ### END SOLUTION


DCS_GATHER = Puzzle(
    name="ch18_dcs_gather",
    title="Direct Coulomb summation, gather",
    statement=f"""{_MAP}

One thread per grid point (`i, j = cuda.grid(2)`): it loops over all atoms and writes its point once.
No atomics (enforced). {_ROWS}""",
    outputs=("energy",),
    spec=spec_dcs,
    cases=cases_gather,
    reference=dcs_gather,
    budget=Budget(global_atomics_per_block=0, global_writes=1),
    hints=(
        "Grid point (i, j) sits at x = i * SPACING, y = j * SPACING.",
        "float32(i) * SPACING stays in float32; a Python float would make it float64.",
        "Threads past nx or ny must not write.",
    ),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=DCS_ATOL,
)


@cuda.jit
def dcs_coarsened(energy, atoms, z, nx, ny):
    bd = cuda.blockDim.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    # this thread's points: i0, i0 + bd, ..., i0 + (COARSEN - 1) * bd
    i0 = cuda.blockIdx.x * bd * COARSEN + cuda.threadIdx.x
    acc = cuda.local.array(COARSEN, float32)
    ### BEGIN SOLUTION
    for u in range(COARSEN):
        acc[u] = float32(0.0)
    if j < ny:
        y = float32(j) * SPACING
        for a in range(atoms.shape[0]):
            ax = atoms[a, 0]
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            q = atoms[a, 3]
            dyz2 = dy * dy + dz * dz  # the same for all COARSEN points of the row
            for u in range(COARSEN):
                dx = float32(i0 + u * bd) * SPACING - ax
                acc[u] += q / math.sqrt(dx * dx + dyz2)
        for u in range(COARSEN):
            i = i0 + u * bd
            if i < nx:
                energy[j, i] = acc[u]  # a warp writes 32 neighbours: coalesced
    ### END SOLUTION


DCS_COARSENED = Puzzle(
    name="ch18_dcs_coarsened",
    title="Thread coarsening along a row, coalesced",
    statement=f"""{_MAP}

Each thread computes `COARSEN = {COARSEN}` points of row `j`: `i0, i0 + blockDim.x, ...` (given), so
that at every step a warp's 32 threads write 32 neighbouring points (coalesced, enforced). Per atom, a
thread reads the atom once (4 global reads per atom per thread, enforced) and computes
`dy * dy + dz * dz` once for its `COARSEN` points, which share `y` and `z` (the saving coarsening buys;
arithmetic is not checked, memory traffic is). {_ROWS}""",
    outputs=("energy",),
    spec=spec_dcs,
    cases=cases_coarsened,
    reference=dcs_coarsened,
    budget=Budget(
        global_atomics_per_block=0,
        global_reads=lambda case: 4 * case.args["atoms"].shape[0],
        global_writes=COARSEN,
        min_coalescing=0.6,  # rows that start mid-sector cost a sector or two more
    ),
    hints=(
        "Read the atom's four values into registers before the loop over your COARSEN points.",
        "Point u of the thread is i0 + u * blockDim.x: skip the write when it is past nx.",
        "A point past nx is harmless to compute (no memory is touched), only its write is not.",
    ),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=DCS_ATOL,
)


@cuda.jit
def dcs_coarsened_rsqrt(energy, atoms, z, nx, ny):
    # GPU only (the simulator has no libdevice): the coarsened kernel with the book's rsqrtf, one
    # special-function instruction per term where q / sqrt(r2) costs a square root and a division
    bd = cuda.blockDim.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    i0 = cuda.blockIdx.x * bd * COARSEN + cuda.threadIdx.x
    acc = cuda.local.array(COARSEN, float32)
    for u in range(COARSEN):
        acc[u] = float32(0.0)
    if j < ny:
        y = float32(j) * SPACING
        for a in range(atoms.shape[0]):
            ax = atoms[a, 0]
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            q = atoms[a, 3]
            dyz2 = dy * dy + dz * dz
            for u in range(COARSEN):
                dx = float32(i0 + u * bd) * SPACING - ax
                acc[u] += q * libdevice.rsqrtf(dx * dx + dyz2)
        for u in range(COARSEN):
            i = i0 + u * bd
            if i < nx:
                energy[j, i] = acc[u]


PUZZLES = [DCS_SCATTER, DCS_GATHER, DCS_COARSENED]
