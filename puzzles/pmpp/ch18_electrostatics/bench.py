"""Chapter 18's GPU benchmark: gather, coarsened (IEEE, fastmath, rsqrtf) and cutoff, against FP32 SGEMM."""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .common import CUTOFF, coulomb_tolerance, make_atoms, potential
from .cutoff import bin_atoms, dcs_cutoff
from .dcs import dcs_coarsened, dcs_coarsened_rsqrt, dcs_gather
from .dcs_fast import dcs_split_kernel, fast_constants, rsqrt_fma

FLOPS_PER_PAIR = 11  # 3 differences, 3 squares, 2 adds, sqrt, divide, accumulate (sqrt, divide: 1 each)


GOAL = {"ceiling": "sgemm", "fraction": 0.6, "best": "ch18_dcs_coarsened (rsqrtf)"}


def fit_coarsening(nx: int, tx: int, coarsen: int) -> int:
    """The largest coarsening (halving from `coarsen`) whose block row, tx * coarsen points, fits in
    the map's nx points: a wider row computes points past the edge that are never stored."""
    while coarsen > 1 and tx * coarsen > nx:
        coarsen //= 2
    return coarsen


def rsqrt_grid(nx: int) -> dict:
    """The rsqrtf kernel's launch shapes searched (tx, ty, coarsening), all fitting nx; the first is
    the default."""
    shapes = [(128, 2, 4), (64, 4, 8), (128, 1, 4), (64, 2, 4), (32, 4, 8), (128, 2, 2), (256, 1, 2)]
    fitted = dict.fromkeys((tx, ty, fit_coarsening(nx, tx, c)) for tx, ty, c in shapes)  # ordered, unique
    return {f"{tx} x {ty}, coarsening {c}": (tx, ty, c) for tx, ty, c in fitted}


def split_grid(nx: int) -> dict:
    """dcs_fast.py's launch shapes searched (threads along x, atom slices, points per thread, points
    on the FMA pipe), the points per thread halved until a block's points fit nx."""
    shapes = [
        (32, 8, 8, 0),
        (32, 4, 8, 0),
        (64, 4, 4, 0),
        (32, 8, 4, 0),
        (128, 2, 4, 0),
        (32, 8, 8, 1),
        (32, 4, 8, 1),
    ]
    fitted = {}
    for tx, s, c, soft in shapes:
        c = fit_coarsening(nx, tx, c)
        fitted.setdefault((tx, s, c, min(soft, c - 1)), None)
    return {
        f"atoms split: {tx} x {s}, {c} points/thread ({soft} on the FMA pipe), rsqrt.approx.ftz": (
            tx,
            s,
            c,
            soft,
        )
        for tx, s, c, soft in fitted
    }


def benchmark(scale: float = 1.0, *, size: tuple = (512, 4000), rsqrt: bool = True):
    """A 512 x 512 slice of 4000 atoms: gather, coarsened (IEEE and fastmath), cutoff; GFLOP/s counted
    as FLOPS_PER_PAIR per (point, atom) pair of the direct sum, against FP32 SGEMM. `size` = (points
    per side, atoms) (smaller for a dry run); `rsqrt=False` leaves out the libdevice kernel (not on the
    simulator)."""
    from helpers import timing, tuning
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

    # a block row covers tx * coarsen points: more than the map's nx computes points nobody stores
    # (the first launch, 128 x 8 on 512 points, spent half its time so)
    tx, ty, coarsen = 128, 2, fit_coarsening(nx, 128, 8)
    gather = specialize(dcs_gather)

    def coarse(kern, tx, ty, c, **jit):
        k = specialize(kern, COARSEN=c, jit_options=jit or None)
        return k, (math.ceil(nx / (tx * c)), math.ceil(ny / ty)), (tx, ty)

    variants = {
        "ch18_dcs_gather": (gather, (math.ceil(nx / tx), math.ceil(ny / ty)), (tx, ty)),
        "ch18_dcs_coarsened": coarse(dcs_coarsened, tx, ty, coarsen),
        "ch18_dcs_coarsened (fastmath)": coarse(dcs_coarsened, tx, ty, coarsen, fastmath=True),
    }
    if rsqrt:
        variants["ch18_dcs_coarsened (rsqrtf, the first launch: 128 x 2, coarsening 8)"] = coarse(
            dcs_coarsened_rsqrt, 128, 2, 8
        )
    for name, (kern, grid, block) in variants.items():

        def run(kern=kern, grid=grid, block=block):
            kern[grid, block](energy, d_atoms, z, nx, ny)

        run()
        timing.validate(name, energy.copy_to_host()[:rows_checked], want, **tol)
        out.append(timing.Measurement(name, timing.time_gpu(run), flops=flops))
    # the goal's row: a search over launch shapes of the rsqrtf kernel (IEEE denormals, and fastmath:
    # flushed, one MUFU.RSQ) and of dcs_fast.py's kernel (atoms split over threadIdx.y, which also
    # runs on the simulator); every candidate validated first
    launches = {}
    if rsqrt:
        for label, cfg in rsqrt_grid(nx).items():
            launches[label] = coarse(dcs_coarsened_rsqrt, *cfg)
        for label, cfg in rsqrt_grid(nx).items():
            launches[f"{label}, fastmath"] = coarse(dcs_coarsened_rsqrt, *cfg, fastmath=True)
    flat_atoms = d_atoms.reshape(d_atoms.size)
    for label, (txf, split, cf, soft) in split_grid(nx).items():
        k = specialize(dcs_split_kernel, (rsqrt_fma,), **fast_constants(txf, split, cf, soft))
        launches[label] = (k, (math.ceil(nx / (txf * cf)), ny), (txf, split), flat_atoms)
    for label, (kern, grid, block, *flat) in launches.items():
        energy.copy_to_device(np.full((ny, nx), np.nan, np.float32))  # a launch that skips rows fails
        kern[grid, block](energy, flat[0] if flat else d_atoms, z, nx, ny)
        timing.validate(f"{GOAL['best']} {label}", energy.copy_to_host()[:rows_checked], want, **tol)

    def measure(label):
        kern, grid, block, *flat = launches[label]
        a = flat[0] if flat else d_atoms
        return timing.time_gpu(lambda: kern[grid, block](energy, a, z, nx, ny))

    if rsqrt:  # a GPU: the search (the dry run on the simulator stops at the validation)
        choice, seconds = tuning.tuned_time(GOAL["best"], {k: k for k in launches}, measure)
        out.append(timing.Measurement(GOAL["best"], seconds, flops=flops, config=choice.label))

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
