"""Chapter 18's GPU benchmark: gather, coarsened (IEEE, fastmath, rsqrtf) and cutoff, against FP32 SGEMM."""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .common import CUTOFF, coulomb_tolerance, make_atoms, potential
from .cutoff import bin_atoms, dcs_cutoff
from .dcs import dcs_coarsened, dcs_coarsened_rsqrt, dcs_gather

FLOPS_PER_PAIR = 11  # 3 differences, 3 squares, 2 adds, sqrt, divide, accumulate (sqrt, divide: 1 each)


GOAL = {"ceiling": "sgemm", "fraction": 0.6, "best": "ch18_dcs_coarsened (rsqrtf)"}


def benchmark(scale: float = 1.0, *, size: tuple = (512, 4000), rsqrt: bool = True):
    """A 512 x 512 slice of 4000 atoms: gather, coarsened (IEEE and fastmath), cutoff; GFLOP/s counted
    as FLOPS_PER_PAIR per (point, atom) pair of the direct sum, against FP32 SGEMM. `size` = (points
    per side, atoms) (smaller for a dry run); `rsqrt=False` leaves out the libdevice kernel (not on the
    simulator)."""
    from helpers import timing
    from helpers.timing import specialize

    rng = np.random.default_rng(18)
    side, n_atoms = size
    nx = ny = max(min(side, 64), int(side * math.sqrt(scale)))
    n = max(min(n_atoms, 100), int(n_atoms * scale))
    z = np.float32(0.3)
    atoms = make_atoms(rng, n, nx, ny, z)
    # validation against float64 on a few rows (the whole map in float64 is slow on the host)
    rows_checked = min(8, ny)
    want = potential(atoms, z, nx, rows_checked).astype(np.float32)
    tol = dict(rtol=1e-4, atol=coulomb_tolerance(n))
    d_atoms = cuda.to_device(atoms)
    energy = cuda.device_array((ny, nx), np.float32)
    flops = FLOPS_PER_PAIR * nx * ny * n
    out = []
    ceiling = timing.sgemm_ceiling()
    if ceiling is not None:  # None: timing.sgemm_ceiling says why
        out.append(ceiling)

    tx, ty, coarsen = 128, 2, 8
    gather = specialize(dcs_gather)
    variants = {
        "ch18_dcs_gather": (gather, (math.ceil(nx / tx), math.ceil(ny / ty))),
        "ch18_dcs_coarsened": (
            specialize(dcs_coarsened, COARSEN=coarsen),
            (math.ceil(nx / (tx * coarsen)), math.ceil(ny / ty)),
        ),
        "ch18_dcs_coarsened (fastmath)": (
            specialize(dcs_coarsened, COARSEN=coarsen, jit_options={"fastmath": True}),
            (math.ceil(nx / (tx * coarsen)), math.ceil(ny / ty)),
        ),
    }
    if rsqrt:
        variants["ch18_dcs_coarsened (rsqrtf)"] = (
            specialize(dcs_coarsened_rsqrt, COARSEN=coarsen),
            (math.ceil(nx / (tx * coarsen)), math.ceil(ny / ty)),
        )
    for name, (kern, grid) in variants.items():

        def run(kern=kern, grid=grid):
            kern[grid, (tx, ty)](energy, d_atoms, z, nx, ny)

        run()
        timing.validate(name, energy.copy_to_host()[:rows_checked], want, **tol)
        out.append(timing.Measurement(name, timing.time_gpu(run), flops=flops))

    # cutoff: fewer pairs, a different (approximate) answer; FLOPs counted as the direct sum's, so the
    # row shows the speed-up as if it were a faster direct sum, and its error against the full sum
    bins = cuda.to_device(bin_atoms(atoms, nx, ny))
    cut = specialize(dcs_cutoff)
    grid = (math.ceil(nx / tx), math.ceil(ny / ty))

    def run_cut():
        cut[grid, (tx, ty)](energy, bins, z, nx, ny)

    run_cut()
    want_cut = potential(atoms, z, nx, rows_checked, CUTOFF).astype(np.float32)
    timing.validate("ch18_dcs_cutoff", energy.copy_to_host()[:rows_checked], want_cut, **tol)
    full = potential(atoms, z, nx, rows_checked)
    err = np.abs(want_cut - full).max() / np.abs(full).max()
    out.append(
        timing.Measurement("ch18_dcs_cutoff (direct-sum FLOPs)", timing.time_gpu(run_cut), flops=flops)
    )
    print(f"cutoff {float(CUTOFF)}: largest error against the full sum {err:.1%} of the largest |potential|")
    return out
