"""Mutants and variants of puzzles/pmpp/ch18_electrostatics/dcs.py; format: mutants/common.py."""

import math

from numba import cuda, float32

from mutants.common import OOB, RACE, UNINIT, WRONG, over
from puzzles.pmpp.ch18_electrostatics import COARSEN, SPACING


@cuda.jit
def scatter_plain_add(energy, atoms, z, nx, ny):
    a = cuda.grid(1)
    if a < atoms.shape[0]:
        dz = z - atoms[a, 2]
        for j in range(ny):
            dy = float32(j) * SPACING - atoms[a, 1]
            for i in range(nx):
                dx = float32(i) * SPACING - atoms[a, 0]
                energy[j, i] += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)  # lost updates


@cuda.jit
def gather_no_guard(energy, atoms, z, nx, ny):
    i, j = cuda.grid(2)
    x = float32(i) * SPACING
    y = float32(j) * SPACING
    acc = float32(0.0)
    for a in range(atoms.shape[0]):
        dx = x - atoms[a, 0]
        dy = y - atoms[a, 1]
        dz = z - atoms[a, 2]
        acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
    energy[j, i] = acc


@cuda.jit
def gather_with_atomics(energy, atoms, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        energy[j, i] = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = float32(i) * SPACING - atoms[a, 0]
            dy = float32(j) * SPACING - atoms[a, 1]
            dz = z - atoms[a, 2]
            # scatter habits: right answer, an atomic per atom where one owner needs none
            cuda.atomic.add(energy, (j, i), atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz))


@cuda.jit
def gather_transposed_output(energy, atoms, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        acc = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = float32(i) * SPACING - atoms[a, 0]
            dy = float32(j) * SPACING - atoms[a, 1]
            dz = z - atoms[a, 2]
            acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
        energy[i, j] = acc


@cuda.jit
def gather_no_dz(energy, atoms, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        acc = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = float32(i) * SPACING - atoms[a, 0]
            dy = float32(j) * SPACING - atoms[a, 1]
            acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy)  # the atoms are not in the slice's plane
        energy[j, i] = acc


@cuda.jit
def gather_no_sqrt(energy, atoms, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        acc = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = float32(i) * SPACING - atoms[a, 0]
            dy = float32(j) * SPACING - atoms[a, 1]
            dz = z - atoms[a, 2]
            acc += atoms[a, 3] / (dx * dx + dy * dy + dz * dz)  # q / r^2 is a field strength, not a potential
        energy[j, i] = acc


@cuda.jit
def gather_xy_swapped(energy, atoms, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        acc = float32(0.0)
        for a in range(atoms.shape[0]):
            dx = float32(j) * SPACING - atoms[a, 0]  # the row index as x
            dy = float32(i) * SPACING - atoms[a, 1]
            dz = z - atoms[a, 2]
            acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
        energy[j, i] = acc


@cuda.jit
def gather_early_return(energy, atoms, z, nx, ny):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if i >= nx or j >= ny:
        return
    acc = float32(0.0)
    for a in range(atoms.shape[0]):
        ax, ay, az, q = atoms[a, 0], atoms[a, 1], atoms[a, 2], atoms[a, 3]
        r = math.sqrt((float32(i) * SPACING - ax) ** 2 + (float32(j) * SPACING - ay) ** 2 + (z - az) ** 2)
        acc += q / r
    energy[j, i] = acc


@cuda.jit
def gather_reverse_atoms(energy, atoms, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        acc = float32(0.0)
        for a in range(atoms.shape[0] - 1, -1, -1):  # another order of summation: within the tolerance
            dz = z - atoms[a, 2]
            dy = y - atoms[a, 1]
            dx = x - atoms[a, 0]
            acc += atoms[a, 3] * (float32(1.0) / math.sqrt(dz * dz + dy * dy + dx * dx))
        energy[j, i] = acc


@cuda.jit
def coarsened_consecutive(energy, atoms, z, nx, ny):
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    # COARSEN neighbouring points per thread: a warp's writes are COARSEN floats apart
    i0 = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * COARSEN
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
                dx = float32(i0 + u) * SPACING - ax
                acc[u] += q / math.sqrt(dx * dx + dyz2)
        for u in range(COARSEN):
            if i0 + u < nx:
                energy[j, i0 + u] = acc[u]


@cuda.jit
def coarsened_rereads_atoms(energy, atoms, z, nx, ny):
    bd = cuda.blockDim.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    i0 = cuda.blockIdx.x * bd * COARSEN + cuda.threadIdx.x
    if j < ny:
        for u in range(COARSEN):  # COARSEN separate gathers: every atom read COARSEN times
            i = i0 + u * bd
            acc = float32(0.0)
            for a in range(atoms.shape[0]):
                dx = float32(i) * SPACING - atoms[a, 0]
                dy = float32(j) * SPACING - atoms[a, 1]
                dz = z - atoms[a, 2]
                acc += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
            if i < nx:
                energy[j, i] = acc


@cuda.jit
def coarsened_no_write_guard(energy, atoms, z, nx, ny):
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
                acc[u] += q / math.sqrt(dx * dx + dyz2)
        for u in range(COARSEN):
            energy[j, i0 + u * bd] = acc[u]


@cuda.jit
def coarsened_unit_step(energy, atoms, z, nx, ny):
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
                dx = float32(i0 + u) * SPACING - ax
                acc[u] += q / math.sqrt(dx * dx + dyz2)
        for u in range(COARSEN):
            if i0 + u < nx:
                energy[j, i0 + u] = acc[u]  # i0 + u: the next thread writes the same points


@cuda.jit
def coarsened_no_reset(energy, atoms, z, nx, ny):
    bd = cuda.blockDim.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    i0 = cuda.blockIdx.x * bd * COARSEN + cuda.threadIdx.x
    acc = cuda.local.array(COARSEN, float32)  # local arrays start with garbage
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
                acc[u] += q / math.sqrt(dx * dx + dyz2)
        for u in range(COARSEN):
            if i0 + u * bd < nx:
                energy[j, i0 + u * bd] = acc[u]


@cuda.jit
def coarsened_shared_dx(energy, atoms, z, nx, ny):
    bd = cuda.blockDim.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    i0 = cuda.blockIdx.x * bd * COARSEN + cuda.threadIdx.x
    acc = cuda.local.array(COARSEN, float32)
    for u in range(COARSEN):
        acc[u] = float32(0.0)
    if j < ny:
        y = float32(j) * SPACING
        for a in range(atoms.shape[0]):
            dx = float32(i0) * SPACING - atoms[a, 0]  # shared too eagerly: dx differs per point
            dy = y - atoms[a, 1]
            dz = z - atoms[a, 2]
            term = atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
            for u in range(COARSEN):
                acc[u] += term
        for u in range(COARSEN):
            if i0 + u * bd < nx:
                energy[j, i0 + u * bd] = acc[u]


@cuda.jit
def coarsened_four_registers(energy, atoms, z, nx, ny):
    # COARSEN == 4 written out: four scalars, no local array
    bd = cuda.blockDim.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    i0 = cuda.blockIdx.x * bd * 4 + cuda.threadIdx.x
    if j >= ny:
        return
    x0 = float32(i0) * SPACING
    step = float32(bd) * SPACING
    e0 = e1 = e2 = e3 = float32(0.0)
    for a in range(atoms.shape[0]):
        ax, ay, az, q = atoms[a, 0], atoms[a, 1], atoms[a, 2], atoms[a, 3]
        dyz2 = (float32(j) * SPACING - ay) ** 2 + (z - az) ** 2
        dx = x0 - ax
        e0 += q / math.sqrt(dx * dx + dyz2)
        dx += step
        e1 += q / math.sqrt(dx * dx + dyz2)
        dx += step
        e2 += q / math.sqrt(dx * dx + dyz2)
        dx += step
        e3 += q / math.sqrt(dx * dx + dyz2)
    if i0 < nx:
        energy[j, i0] = e0
    if i0 + bd < nx:
        energy[j, i0 + bd] = e1
    if i0 + 2 * bd < nx:
        energy[j, i0 + 2 * bd] = e2
    if i0 + 3 * bd < nx:
        energy[j, i0 + 3 * bd] = e3


@cuda.jit
def coarsened_positions_first(energy, atoms, z, nx, ny):
    bd = cuda.blockDim.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    i0 = cuda.blockIdx.x * bd * COARSEN + cuda.threadIdx.x
    xs = cuda.local.array(COARSEN, float32)
    acc = cuda.local.array(COARSEN, float32)
    for u in range(COARSEN):
        xs[u] = float32(i0 + u * bd) * SPACING
        acc[u] = float32(0.0)
    y = float32(j) * SPACING
    n = atoms.shape[0] if j < ny else 0
    for a in range(n):
        ax = atoms[a, 0]
        dy = y - atoms[a, 1]
        dz = z - atoms[a, 2]
        q = atoms[a, 3]
        dyz2 = dz * dz + dy * dy
        for u in range(COARSEN):
            d = xs[u] - ax
            acc[u] += q * (float32(1.0) / math.sqrt(d * d + dyz2))
    for u in range(COARSEN):
        if j < ny and i0 + u * bd < nx:
            energy[j, i0 + u * bd] = acc[u]


MUTANTS = {
    "ch18_dcs_scatter": [
        ("scatter_plain_add", scatter_plain_add, *RACE),
    ],
    "ch18_dcs_gather": [
        ("gather_no_guard", gather_no_guard, *OOB),
        ("gather_with_atomics", gather_with_atomics, *over("global_atomics_per_block")),
        ("gather_transposed_output", gather_transposed_output, *OOB),
        ("gather_no_dz", gather_no_dz, *WRONG),
        ("gather_no_sqrt", gather_no_sqrt, *WRONG),
        ("gather_xy_swapped", gather_xy_swapped, *WRONG),
    ],
    "ch18_dcs_coarsened": [
        ("coarsened_consecutive", coarsened_consecutive, *over("min_coalescing")),
        ("coarsened_rereads_atoms", coarsened_rereads_atoms, *over("global_reads")),
        ("coarsened_no_write_guard", coarsened_no_write_guard, *OOB),
        ("coarsened_unit_step", coarsened_unit_step, *RACE),
        ("coarsened_no_reset", coarsened_no_reset, *UNINIT),
        ("coarsened_shared_dx", coarsened_shared_dx, *WRONG),
    ],
}

VARIANTS = {
    "ch18_dcs_gather": [
        ("gather_early_return", gather_early_return),
        ("gather_reverse_atoms", gather_reverse_atoms),
    ],
    "ch18_dcs_coarsened": [
        ("coarsened_four_registers", coarsened_four_registers),
        ("coarsened_positions_first", coarsened_positions_first),
    ],
}

SEEDS = {name: (0, 1, 2) for name in MUTANTS}
