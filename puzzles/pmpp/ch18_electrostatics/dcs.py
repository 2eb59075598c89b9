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

Tolerance: a float32 sum of n terms is within n * eps * sum|terms| of the exact sum (eps = 2^-24);
each term itself carries a few roundings (three differences, squares and sums, the square root, the
division: at most TERM_ROUNDINGS * eps relative), so the bound is (n + TERM_ROUNDINGS) * eps *
n * term_max, with term_max = Q_MAX / Z_GAP.
"""

import math

import numpy as np
from numba import cuda, float32
from numba.cuda import libdevice

from helpers.puzzle import Budget, Case, Puzzle

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

# what `from puzzles.pmpp.ch18_electrostatics import *` gives a notebook: constants only, never a kernel
__all__ = ["SPACING", "TX", "TY", "COARSEN", "TPB", "CUTOFF", "CUTOFF2", "FAR", "Z_GAP", "Q_MAX", "EPS32"]
CHAPTER = "pmpp-18"


def coulomb_tolerance(n_atoms: int) -> float:
    """The worst-case float32 error of a potential summed over n_atoms: (n + 8) * eps * n * Q_MAX / Z_GAP."""
    return (n_atoms + TERM_ROUNDINGS) * EPS32 * n_atoms * Q_MAX / Z_GAP


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


@cuda.jit
def dcs_coarsened(energy, atoms, z, nx, ny):
    bd = cuda.blockDim.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    # this thread's points: i0, i0 + bd, ..., i0 + (COARSEN - 1) * bd
    i0 = cuda.blockIdx.x * bd * COARSEN + cuda.threadIdx.x
    acc = cuda.local.array(COARSEN, float32)
    ### BEGIN SOLUTION
    for u in range(COARSEN):
        acc[u] = 0.0
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


# ------------------------------------------------------------------ NumPy truth


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


def spec_dcs(atoms, z, nx, ny):
    return potential(atoms, z, nx, ny).astype(np.float32)


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


# ------------------------------------------------------------------ cases

# (nx, ny, atoms): one point, rows shorter than a warp, a row of exactly one and several blocks
SIZES = [(37, 3, 12), (1, 1, 5), (70, 2, 9), (TX * COARSEN + 1, 1, 7), (13, 5, 16)]
N_ATOMS_MAX = 16


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


# cutoff cases: slices several bins wide and tall, atoms dense enough that every bin has neighbours
CUTOFF_SIZES = [(21, 13, 24), (9, 3, 8), (34, 6, 24), (5, 17, 10)]


def cases_cutoff(rng):
    out = []
    for nx, ny, n in CUTOFF_SIZES:
        z = _z(rng)
        bins = bin_atoms(make_atoms(rng, n, nx, ny, z), nx, ny)
        args = dict(energy=np.empty((ny, nx), np.float32), bins=bins, z=z, nx=nx, ny=ny)
        out.append(Case((math.ceil(nx / TX), math.ceil(ny / TY)), (TX, TY), args))
    return out


DCS_ATOL = coulomb_tolerance(N_ATOMS_MAX)
CUTOFF_ATOL = coulomb_tolerance(24)
_RTOL = 2 * EPS32

_MAP = f"""`energy[j, i]` is the potential at the grid point `(i * SPACING, j * SPACING, z)`
(`SPACING = {SPACING}`) of the atoms `atoms[a] = (x, y, z, charge)`: the sum over atoms of
`charge / r`, `r` the distance from the atom to the point (`math.sqrt`)."""

_ROWS = f"Blocks of `TX x TY = {TX} x {TY}` threads: `x` runs along a row `i`, `y` over the rows `j`."

PUZZLES = [
    Puzzle(
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
    ),
    Puzzle(
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
    ),
    Puzzle(
        name="ch18_dcs_coarsened",
        title="Thread coarsening along a row, coalesced",
        statement=f"""{_MAP}

Each thread computes `COARSEN = {COARSEN}` points of row `j`: `i0, i0 + blockDim.x, ...` (given), so
that at every step a warp's 32 threads write 32 neighbouring points (coalesced, enforced). Per atom, a
thread reads the atom once (4 global reads per atom per thread, enforced) and computes
`dy * dy + dz * dz` once for its `COARSEN` points, which share `y` and `z`. {_ROWS}""",
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
    ),
    Puzzle(
        name="ch18_dcs_cutoff",
        title="Cutoff summation with binned atoms",
        statement=f"""Far atoms matter little to a point's potential, and in a large system nearly all
atoms are far. Keep only the atoms within `CUTOFF = {CUTOFF}` of the point, each term switched off smoothly:
`charge / r * (1 - r^2 / CUTOFF^2)^2` for `r^2 < CUTOFF2`, nothing beyond. The host sorted the atoms
into square bins of side `CUTOFF` (`bins[by, bx, slot] = (x, y, z, charge)`; slots a bin does not
need hold charge-0 atoms at `FAR`, far past any cutoff). The point `(x, y)` lies in bin
`(int(y / CUTOFF), int(x / CUTOFF))`; every atom within `CUTOFF` of it is in that bin or one of its
8 neighbours (those inside the grid of bins). One thread per point, as in the gather. {_ROWS}""",
        outputs=("energy",),
        spec=spec_cutoff,
        cases=cases_cutoff,
        reference=dcs_cutoff,
        budget=Budget(global_atomics_per_block=0, global_writes=1),
        hints=(
            "Bin rows max(by - 1, 0) to min(by + 1, nby - 1), inclusive, and the same for the columns.",
            "Test r2 < CUTOFF2 before adding: a bin's corner lies further than CUTOFF from the point.",
        ),
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=CUTOFF_ATOL,
    ),
]


# ------------------------------------------------------------------ GPU benchmark


@cuda.jit
def dcs_coarsened_rsqrt(energy, atoms, z, nx, ny):
    # GPU only (the simulator has no libdevice): the coarsened kernel with the book's rsqrtf, one
    # special-function instruction per term where q / sqrt(r2) costs a square root and a division
    bd = cuda.blockDim.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    i0 = cuda.blockIdx.x * bd * COARSEN + cuda.threadIdx.x
    acc = cuda.local.array(COARSEN, float32)
    for u in range(COARSEN):
        acc[u] = 0.0
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


FLOPS_PER_PAIR = 11  # 3 differences, 3 squares, 2 adds, sqrt, divide, accumulate (sqrt, divide: 1 each)
GOAL = {"ceiling": "sgemm", "fraction": 0.6, "best": "ch18_dcs_coarsened (rsqrtf)"}


def _sgemm_ceiling(timing):
    row = timing.sgemm_ceiling()
    if row is not None:
        return row
    try:
        import torch
    except ImportError:
        return None
    torch.backends.cuda.matmul.allow_tf32 = False  # true FP32, as the kernels
    n = 8192
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    seconds = timing.time_gpu(lambda: torch.matmul(a, b), batch=2, reps=5)
    return timing.Measurement("torch SGEMM (ceiling)", seconds, flops=2 * n**3, ceiling=True)


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
    ceiling = _sgemm_ceiling(timing)
    if ceiling is None:
        print("neither CuPy nor torch: no SGEMM ceiling row")
    else:
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
