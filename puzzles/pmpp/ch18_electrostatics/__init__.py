"""PMPP chapter 18, electrostatic potential map: direct Coulomb summation and cutoff binning.

    ch18_dcs_scatter    one thread per atom, atomics into every grid point (worked)
    ch18_dcs_gather     one thread per grid point, a loop over the atoms, no atomics (exercise)
    ch18_dcs_coarsened  COARSEN points per thread, blockDim.x apart (coalesced writes), the terms they
                        share (dy^2 + dz^2, the charge) read and computed once per atom (exercise)
    ch18_dcs_cutoff     atoms sorted into bins of side CUTOFF; each point visits the 3 x 3 bins around
                        its own and adds the atoms within CUTOFF, smoothly switched off (exercise)

The map is one z-slice: energy[j, i] is the potential at (i * SPACING, j * SPACING, z) of the atoms
atoms[a] = (x, y, z, charge): sum over atoms of q / r. Every atom sits at least Z_GAP above or below
the slice, so r >= Z_GAP and no term is singular.

The ladder, one op per file:
    common.py    constants, the derived tolerance, the NumPy truth, the atoms
    dcs.py       ch18_dcs_scatter, ch18_dcs_gather, ch18_dcs_coarsened; dcs_coarsened_rsqrt (GPU only)
    cutoff.py    ch18_dcs_cutoff and its binning (bin_atoms)
    dcs_fast.py  the benchmark's split-atoms kernel with rsqrt.approx.ftz (no exercise; searched)
    bench.py     benchmark(), GOAL, FLOPS_PER_PAIR
"""

# ruff: noqa: F401  (re-exports: notebooks and tests read these as `ch18.<name>`; `import *` gives __all__)
from .bench import FLOPS_PER_PAIR, GOAL, benchmark
from .common import (
    CHAPTER,
    COARSEN,
    CUTOFF,
    CUTOFF2,
    EPS32,
    FAR,
    Q_MAX,
    SPACING,
    TERM_ROUNDINGS,
    TPB,
    TX,
    TY,
    Z_GAP,
    Z_SPAN,
    coulomb_tolerance,
    make_atoms,
    potential,
)
from .cutoff import CUTOFF_ATOL, CUTOFF_SIZES, bin_atoms, cases_cutoff, dcs_cutoff, spec_cutoff
from .dcs import (
    DCS_ATOL,
    N_ATOMS_MAX,
    SIZES,
    cases_coarsened,
    cases_gather,
    cases_scatter,
    dcs_coarsened,
    dcs_coarsened_rsqrt,
    dcs_gather,
    dcs_scatter,
    spec_dcs,
)

# what `from puzzles.pmpp.ch18_electrostatics import *` gives a notebook: constants only, never a kernel
__all__ = ["SPACING", "TX", "TY", "COARSEN", "TPB", "CUTOFF", "CUTOFF2", "FAR", "Z_GAP", "Q_MAX", "EPS32"]
