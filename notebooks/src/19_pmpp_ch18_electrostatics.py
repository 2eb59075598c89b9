# %% [markdown]
# # PMPP chapter 18: electrostatic potential map
#
# Molecular dynamics and visualisation tools (VMD in the book) need the electrostatic potential
# around a molecule on a regular grid: at every grid point, the sum over all atoms of
# `charge / distance`. Direct Coulomb summation (DCS) is `points x atoms` terms, each a few
# multiplies, a square root and a division, and nothing else: the purest compute-bound kernel of the
# book, and a lesson in how the *arrangement* of the same arithmetic decides its speed.
#
# We compute one z-slice of the map, `energy[j, i]` at `(i * SPACING, j * SPACING, z)`, from
# `atoms[a] = (x, y, z, charge)`. The ladder:
#
# 1. **scatter**: one thread per atom, adding into every grid point (atomics);
# 2. **gather**: one thread per grid point, looping over the atoms (no atomics);
# 3. **thread coarsening** along a row: the terms the points of a row share are computed once, in
#    registers; the points a thread owns are spaced so that a warp's writes stay **coalesced**;
# 4. **cutoff binning**: atoms sorted into spatial bins, each point visiting only the nearby bins:
#    the sum changes from `O(points x atoms)` to `O(points)`, at a cost in accuracy we measure.
#
# **Tolerance.** Every atom sits at least `Z_GAP = 0.5` off the slice, so each term is at most
# `Q_MAX / Z_GAP = 2`. A float32 sum of `n` terms is within `n * eps * sum|terms|` of the exact sum
# (`eps = 2^-24`), and computing a term costs a few roundings of its own (differences, squares, the
# square root, the division: we allow 8 `eps`), so the puzzles' `atol` is
# `(n + 8) * eps * n * 2` for the largest `n` of their cases, against a float64 reference.

# %% setup

# %%
import math

import numpy as np
from numba import cuda, float32

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer, expect_failure
from puzzles.pmpp import ch18_electrostatics as ch18
from puzzles.pmpp.ch18_electrostatics import *  # SPACING, TX, TY, COARSEN, TPB, CUTOFF, CUTOFF2, ...

print(
    f"gather/coarsened atol: {ch18.DCS_ATOL:.2e} (16 atoms)   cutoff atol: {ch18.CUTOFF_ATOL:.2e} (24 atoms)"
)

# %% [markdown]
# ## Scatter: one thread per atom
#
# The sequential code loops over atoms, and inside, over grid points. Parallelising the outer loop
# gives one thread per atom. It is natural, and it is the wrong way round for a GPU: every thread
# writes every grid point, so every write must be an atomic, and the atomics to one point from all
# the atoms are serialised.
#
# Numba turns a Python float in a kernel into a float64, which a GPU computes many times slower
# than float32. `float32(i) * SPACING` (with `SPACING` a `np.float32`) keeps the arithmetic in
# float32.

# %% [markdown] statement:ch18_dcs_scatter

# %% kernel:ch18_dcs_scatter

# %%
puzzles.check("ch18_dcs_scatter", dcs_scatter)

# %% [markdown]
# Without atomics, two atoms' threads read the same point's old value, each adds its own term, and
# one of the two updates is lost:


# %%
@cuda.jit
def scatter_plain_add(energy, atoms, z, nx, ny):
    a = cuda.grid(1)
    if a < atoms.shape[0]:
        dz = z - atoms[a, 2]
        for j in range(ny):
            dy = float32(j) * SPACING - atoms[a, 1]
            for i in range(nx):
                dx = float32(i) * SPACING - atoms[a, 0]
                energy[j, i] += atoms[a, 3] / math.sqrt(dx * dx + dy * dy + dz * dz)


expect_failure(KernelDiagnosed, puzzles.check, "ch18_dcs_scatter", scatter_plain_add)

# %% [markdown]
# ## Gather: one thread per grid point
#
# Interchange the loops: one thread per grid point, looping over all atoms. The thread owns its
# point, accumulates in a register, and writes it once: no atomics. Every thread of a warp reads the
# same atom at the same time (a broadcast, served by one transaction, or by constant memory as in the
# book's version), and the warp's writes go to neighbouring points of a row.

# %% [markdown] statement:ch18_dcs_gather

# %% kernel:ch18_dcs_gather

# %%
puzzles.show("ch18_dcs_gather", dcs_gather, view="coalescing")

# %%
puzzles.check("ch18_dcs_gather", dcs_gather)

# %% [markdown]
# ## Thread coarsening along a row
#
# The points of a row share `y` and `z`, so for one atom `dy * dy + dz * dz` is the same for all of
# them. Let each thread compute `COARSEN` points of its row: it reads each atom once, computes the
# shared part once into a register, and only `dx` differs per point. Fewer loads and fewer
# instructions per term.
#
# Which points? The obvious choice, `COARSEN` neighbours per thread, makes a warp's writes land
# `COARSEN` floats apart: every write instruction touches `COARSEN` times the sectors it needs.
# Spacing a thread's points `blockDim.x` apart keeps each write instruction on 32 neighbouring
# floats. The puzzle enforces both: 4 reads per atom per thread, and coalesced writes.

# %% [markdown] statement:ch18_dcs_coarsened

# %% kernel:ch18_dcs_coarsened

# %%
puzzles.show("ch18_dcs_coarsened", dcs_coarsened, view="coalescing")

# %%
puzzles.check("ch18_dcs_coarsened", dcs_coarsened)

# %% [markdown]
# The neighbouring-points version computes the right numbers, and the budget rejects it for its
# writes:


# %%
@cuda.jit
def coarsened_consecutive(energy, atoms, z, nx, ny):
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
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


expect_failure(OverBudget, puzzles.check, "ch18_dcs_coarsened", coarsened_consecutive)

# %% [markdown]
# In this kernel the writes are `COARSEN` per thread against thousands of multiply-adds, so their
# coalescing matters little to its speed on a GPU. It matters in a kernel that writes as much as it
# computes, and the habit costs nothing here.
#
# ## Cutoff binning
#
# DCS does `points x atoms` work: double the system's size in every direction and the work grows
# 64-fold. Yet far atoms matter little to a point, and in a large molecule nearly all atoms are
# far. The cutoff method keeps only the atoms within a radius `CUTOFF` of each point (here with a
# switching function, `(1 - r^2 / CUTOFF^2)^2`, that fades each term to zero at the cutoff instead of
# cutting it off sharply; real codes treat the far field separately).
#
# To find the near atoms without looking at all of them, the host sorts the atoms into **bins**:
# square cells of side `CUTOFF` over the slice. All atoms within `CUTOFF` of a point lie in the
# point's own bin or one of its 8 neighbours. Bins have a fixed capacity (the fullest bin's count;
# empty slots hold charge-0 atoms far away), so every thread runs the same loops. Each point now
# visits at most `9 x capacity` atoms, however large the system.

# %% [markdown] statement:ch18_dcs_cutoff

# %% kernel:ch18_dcs_cutoff

# %%
puzzles.check("ch18_dcs_cutoff", dcs_cutoff)

# %% [markdown]
# How the atoms land in bins, for the first case:

# %%
case = ch18.cases_cutoff(np.random.default_rng(0))[0]
bins = case.args["bins"]
print(f"{bins.shape[0]} x {bins.shape[1]} bins, capacity {bins.shape[2]}; atoms per bin:")
print((bins[..., 3] != 0).sum(axis=2))

# %% [markdown]
# **The trade-off.** The cutoff sum is a different quantity from the full sum. On a larger system
# (computed here in float64 with NumPy, no kernel needed), the error of the cutoff sum against the
# full sum shrinks as the cutoff grows, while the fraction of (point, atom) pairs visited, the work,
# grows with its square:

# %%
rng = np.random.default_rng(18)
nx = ny = 48
atoms = ch18.make_atoms(rng, 600, nx, ny, 0.0)
full = ch18.potential(atoms, 0.0, nx, ny)
print("cutoff   pairs visited   largest error / largest |potential|")
for c in (1.0, 2.0, 4.0, 8.0):
    approx = ch18.potential(atoms, 0.0, nx, ny, cutoff=c)
    # 3 x 3 bins of side c around each point, as a fraction of all atoms
    visited = min(1.0, (3 * c) ** 2 / (nx * ny * float(SPACING) ** 2))
    err = np.abs(approx - full).max() / np.abs(full).max()
    print(f"{c:6.1f}   {visited:13.1%}   {err:.3f}")

# %% [markdown]
# A neighbourhood one bin too small (only the point's own bin) drops atoms that are within the
# cutoff but just across a bin edge:


# %%
@cuda.jit
def cutoff_own_bin_only(energy, bins, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        b = int(y / CUTOFF)
        c = int(x / CUTOFF)
        acc = float32(0.0)
        for s in range(bins.shape[2]):
            dx = x - bins[b, c, s, 0]
            dy = y - bins[b, c, s, 1]
            dz = z - bins[b, c, s, 2]
            r2 = dx * dx + dy * dy + dz * dz
            if r2 < CUTOFF2:
                sw = float32(1.0) - r2 / CUTOFF2
                acc += bins[b, c, s, 3] / math.sqrt(r2) * sw * sw
        energy[j, i] = acc


expect_failure(WrongAnswer, puzzles.check, "ch18_dcs_cutoff", cutoff_own_bin_only)

# %% [markdown]
# ## Measure it
#
# On a GPU: a 512 x 512 slice of 4000 atoms. Each variant is checked first against a float64
# reference on its first rows, then timed; the FP32 ceiling is cuBLAS SGEMM (CuPy, or torch with
# TF32 off) measured in the same run. GFLOP/s count `FLOPS_PER_PAIR = 11` operations per (point,
# atom) pair of the direct sum (3 differences, 3 squares, 2 additions, the square root, the
# division, the accumulation; square root and division count one each, though each costs several
# instructions in IEEE float32). The coarsened kernel runs three ways: IEEE `math.sqrt` and
# division (`sqrt.rn`, `div.rn`: correctly rounded, several instructions each); with
# `fastmath=True`, which turns them into the approximate `sqrt.approx` and `div.approx` (a relative
# error of about `2^-22` each, within the derived tolerance) but still spends a square root and a
# division per term; and the book's choice, `q * rsqrtf(r2)` (`numba.cuda.libdevice.rsqrtf`: one
# special-function instruction per term; GPU only, as the simulator has no libdevice). The cutoff
# row is counted with the direct sum's FLOPs, so its rate reads as "how fast the same map came out";
# it prints its error against the full sum. Goal: the rsqrtf kernel at 60% of the SGEMM ceiling.
# The launch shape matters as much as the arithmetic: a block row of 128 threads coarsened by 8
# covers 1024 points, twice the map's 512, so the benchmark's first launch computed half its terms
# for points it never stored. The coarsening now fits the map, the goal's row searches the shape on
# your GPU (every candidate validated first), and the first launch stays as a row to compare.
#
# With `rsqrtf` a term is four instructions (`dx`, `r2 = dx * dx + dyz2`, the reciprocal square
# root, `acc += q * r`), one on the special-function unit (MUFU), which does 16 per clock per SM on
# an H100 against 128 FP32 lanes: the MUFU bounds the kernel, at about 16 terms per clock per SM.
# The goal's search also tries: the rsqrtf kernel with `fastmath=True` (flushed denormals: one
# MUFU instruction, without the fix-ups IEEE denormals need; the distances here are at least 0.5);
# and `dcs_fast.py` (benchmark only), which splits the atoms over `threadIdx.y` so the 512 x 512 map
# gives the GPU SPLIT times more threads, adds the slices' partial sums in shared memory in a fixed
# order, loads each atom with one 16-byte load, and can send one point in 8 to the idle FMA pipe
# (`rsqrt_fma`: a guess from the float's bits and two Newton steps, relative error below 5e-6). The
# FLOP count stays 11 per pair whatever the kernel computes. On a CPU machine this cell says so and
# does nothing.
#
# **Measured on an H100** (driver 580, numba-cuda 0.30.4; `python -m tools.bench --only ch05 --only ch18
# --json b0518.json`): the search picked `dcs_fast.py` with the atoms split 32 x 8, 8 points a thread
# and `rsqrt.approx.ftz`: 0.29 ms, 39.3 TFLOP/s counted at 11 FLOPs a pair, **76.8% of the SGEMM
# ceiling (51.1 TFLOP/s): the 60% goal is met** (the first launch's shape gave 10.9 TFLOP/s).
# `python -m tools.ncu_summary ch18` confirms the bound counted above: the special-function (xu) pipe
# is 88% busy at 76% occupancy. **On a T4** (`python -m tools.bench --assume t4 --from b0518.json`,
# scaled by FP32 rate): about 4.7 TFLOP/s and 2.4 ms, against a 6.2 TFLOP/s SGEMM ceiling.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch18.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Coulomb potential, 512 x 512 points, 4000 atoms")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-18")
