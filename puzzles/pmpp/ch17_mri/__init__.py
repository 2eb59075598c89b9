"""PMPP chapter 17, iterative MRI reconstruction: computing F^H D.

    ch17_mu          mu[m] = conj(phi[m]) * d[m], one thread per k-space sample (worked; loop fission)
    ch17_fhd_scatter the loop as written: one thread per k-space sample, atomics into every voxel (worked)
    ch17_fhd_gather  loop interchange: one thread per voxel, registers for its position and sums (exercise)
    ch17_fhd_const   the k-space trajectory in constant memory, one chunk per launch (exercise)

F^H D at voxel n: sum over samples m of mu[m] * exp(i * 2 pi * k[m] . pos[n]), split into real and
imaginary parts as in the book (r_fhd, i_fhd). Complex numbers are (real, imag) pairs: phi[m, 0..1],
d[m, 0..1], mu[m, 0..1].

The ladder, one op per file:
    common.py    constants, the derived tolerance, the NumPy truth, the cases' builders
    mu.py        ch17_mu
    fhd.py       ch17_fhd_scatter, ch17_fhd_gather
    const.py     ch17_fhd_const
    bench.py     benchmark(), GOAL, FLOPS_PER_PAIR, trig_errors()
"""

# ruff: noqa: F401  (re-exports: notebooks and tests read these as `ch17.<name>`; `import *` gives __all__)
from .bench import FLOPS_PER_PAIR, GOAL, benchmark, trig_errors
from .common import (
    ANGLE_ROUNDINGS,
    ARG_MAX,
    CHAPTER,
    CHUNK,
    CONST_ATOL,
    CONST_BYTES,
    EPS32,
    FHD_ATOL,
    K_MAX,
    K_TRAJ,
    M_MAX,
    M_TRAJ,
    MU_MAX,
    SIZES,
    TPB,
    TWO_PI,
    X_MAX,
    fhd_ref,
    fhd_tolerance,
)
from .const import cases_const, fhd_const, spec_const
from .fhd import cases_gather, cases_scatter, fhd_gather, fhd_scatter, spec_fhd
from .mu import cases_mu, mri_mu, spec_mu

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
