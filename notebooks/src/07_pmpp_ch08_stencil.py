# %% [markdown]
# # PMPP chapter 8: stencil
#
# A stencil updates every point of a grid from a fixed pattern of neighbours: the discrete form of
# the derivatives in a partial differential equation (heat flow, waves, fluid dynamics). It looks
# like a convolution with a sparse filter, and it differs from one in ways that change the
# optimisation: grids are 3-D, the pattern has few points (here seven: the point and its six face
# neighbours), and so each input is reused only a few times. A 3-D tile with its halo is mostly
# halo, and a 3-D block runs out of threads long before the tile is large.
#
# The ladder: a basic kernel; a 3-D shared-memory tile; **thread coarsening** along z, where 2-D
# blocks march through the grid plane by plane; and **register tiling**, which keeps the planes
# that only the thread itself needs in registers. The shared tile and register tiling are your
# exercises.

# %% setup

# %%
import numpy as np
from numba import cuda, float32  # noqa: F401  (float32: the shared arrays in the kernel cells)

import puzzles
from helpers import timing
from helpers.check import OverBudget, expect_failure
from puzzles.pmpp import ch08_stencil as ch08
from puzzles.pmpp.ch08_stencil import *  # its constants: C0, CXM, ..., CZP, IN_TILE, OUT_TILE, Z_STEPS

# %% [markdown]
# ## The basic kernel

# %% [markdown] statement:ch08_stencil_basic

# %%
print(f"IN_TILE = {IN_TILE}, OUT_TILE = {OUT_TILE}, Z_STEPS = {Z_STEPS}")
print(COEFFS)  # C0, CXM, CXP, CYM, CYP, CZM, CZP: float32 module constants

# %% kernel:ch08_stencil_basic

# %%
puzzles.check("ch08_stencil_basic", stencil_basic)

# %% [markdown]
# ## Shared-memory tiling
#
# Same idea as the input-tiled convolution: blocks as large as the input tile, one load per
# thread, the inner threads compute. Count what it buys. An `IN^3` tile reads `IN^3` values to
# produce `(IN-2)^3` outputs, and each output needs 7 values, so the reuse per global read is
# `7 (IN-2)^3 / IN^3`:

# %%
for t in (6, 8, 10):
    print(
        f"IN_TILE {t:2d}: {t**3:4d} threads, reuse {7 * (t - 2) ** 3 / t**3:.2f} "
        f"uses per global read (the basic kernel: 1)"
    )

# %% [markdown]
# A block holds at most 1024 threads, so `IN_TILE <= 10`, and the reuse stays below 3.6 (the
# ideal is 7). The halo share is what hurts.

# %% [markdown] statement:ch08_stencil_shared

# %% kernel:ch08_stencil_shared

# %%
puzzles.show("ch08_stencil_shared", stencil_shared, view="counts")

# %%
puzzles.check("ch08_stencil_shared", stencil_shared)

# %% [markdown]
# The basic kernel, launched with this puzzle's blocks, happens to compute the right answer, but it
# reads seven values per thread where one will do:

# %%
expect_failure(OverBudget, puzzles.check, "ch08_stencil_shared", ch08.stencil_basic)

# %% [markdown]
# ## Thread coarsening along z
#
# Let a 2-D block of `IN_TILE x IN_TILE` threads handle a whole column of `Z_STEPS` planes. At each
# step the block needs three planes (z-1, z, z+1); moving to z+1 drops the oldest and loads just
# one new plane. The halo is now only around the sides of a long column, and the tile can be
# `32 x 32` on a GPU (1024 threads, 30 x 30 outputs per plane), where a 3-D tile stops at `10^3`
# threads with `8^3` outputs (`8^3` and `6^3` here).

# %% [markdown] statement:ch08_stencil_coarse

# %% kernel:ch08_stencil_coarse

# %%
puzzles.show("ch08_stencil_coarse", stencil_coarse, view="access")

# %%
puzzles.check("ch08_stencil_coarse", stencil_coarse)

# %% [markdown]
# ## Register tiling
#
# Look at who reads what in the coarsened kernel. `here` is read at `[ty, tx±1]` and `[ty±1, tx]`,
# by the neighbours. `below` and `above` are read only at `[ty, tx]`, by the thread that loaded
# them. Values only one thread needs belong in that thread's registers; shared memory is for
# values threads exchange. Moving them cuts shared memory to a third (more blocks fit on an SM)
# and removes two shared loads per output.

# %% [markdown] statement:ch08_stencil_register

# %% kernel:ch08_stencil_register

# %%
puzzles.show("ch08_stencil_register", stencil_register, view="counts")

# %%
puzzles.check("ch08_stencil_register", stencil_register)

# %% [markdown]
# The coarsened kernel computes the same thing, but with three shared planes; the budget of this
# exercise is one plane:

# %%
expect_failure(OverBudget, puzzles.check, "ch08_stencil_register", ch08.stencil_coarse)

# %% [markdown]
# ## Measure it
#
# On a GPU: the four kernels above and two written for the GPU only, on a 256 MiB grid, against a
# device copy of the same size and `cupyx.scipy.ndimage.correlate` with the stencil as a 3 x 3 x 3
# filter (the peer), both measured in the same run. A seven-point stencil does 13 flops per 8 bytes
# it must move: memory-bound, so the copy is the ceiling. Each kernel's knobs (block shape, tile,
# planes per block, planes in flight) are searched on your GPU and the winners shown in brackets.
#
# The two GPU-only kernels march a column of points up the z axis like the register kernel, but
# with no shared tile: the in-plane neighbours come straight from global memory (the L1 cache
# serves them), so there are no halo threads and no barrier, and each thread issues the loads of
# several planes before it computes any of them:
#
# - `ch08_stencil_march` indexes the grid as `a[z, y, x]`;
# - `ch08_stencil_march_flat` is the same kernel on the grid seen as one long array, with unsigned
#   indices;
# - `ch08_stencil_march_u32` (`columns32.py`) is the flat march with 32-bit indices, and one or two
#   columns per thread (searched). The goal is judged on it.
#
# **What the profiler found** (Nsight Compute on an H100, 408 x 408 x 416 floats):
#
# | kernel | time | DRAM read | issue slots used | what stalls it |
# |---|---|---|---|---|
# | `ch08_stencil_basic` | 333 us | 277 MB | 76% | waiting on loads (7.5 cycles per instruction) |
# | `ch08_stencil_register` | 359 us | 278 MB | 77% | loads and barriers (6.2 + 5.6) |
# | `ch08_stencil_march` | 302 us | 277 MB | 77%, integer pipe 56% | instruction issue |
# | `ch08_stencil_march_flat` | 240 us | 277 MB | 63% | waiting on loads (6.3) |
#
# The grid is 277 MB, and every kernel reads exactly that from DRAM: the suspected re-reading of
# planes does not happen (the 50 MB L2 cache holds the neighbouring planes). What separates the
# kernels is instructions. The 3-D march spends its issue slots on index arithmetic: three indices
# per access, and for each signed index a few instructions that wrap a negative value (`a[-1]` is
# the last element in Numba, as in Python). The flat kernel computes one unsigned index per access:
# 27% fewer instructions (PTX, 415 -> 302 per thread), and it is then limited by loads in flight
# again. The simulator's trace shows the other half of the story on any machine: what each kernel
# asks of memory.
#
# On an H200 (4.1 TB/s from the same 132 SMs) the flat march takes 209 us against 240 us on the
# H100, while the copy drops from 183 to 130 us. There its integer pipe is 74% busy and 74% of the
# issue slots are used: the stencil is bound by instructions, not memory, and would need fewer of
# them per point to reach the copy. Vector loads of neighbouring points would be one way; Numba
# does not emit them (an array of `cuda.float32x4` still compiles to four 4-byte loads). Narrower
# indices are another: Numba computes indices in 64 bits, two instructions per add. In the H100's
# machine code (`python -m tools.ptx_count ch08`) the flat march issues about 66 instructions per
# point; `ch08_stencil_march_u32` issues 38 with one column a thread and 37 with two, and needs
# 40 registers instead of 64 with one. It also fixes what the compiler did to the batch: the first
# plane's four in-plane loads were used only inside the branch that computes the point, so the
# compiler moved them there, after the batch's other loads, and a warp waited for memory twice per
# batch. The 32-bit march computes every point of a whole batch and picks the stored value with a
# select, so all its loads are issued together.
#
# **Measured on an H100** (driver 580, numba-cuda 0.30.4; `python -m tools.bench --only ch08 --json
# b08.json`): `ch08_stencil_march_u32` (block 64 x 4, 32 planes, batch 4, one column a thread) moves
# 2324 GB/s against the copy's 2959: **78.5%, the 80% goal is not met**. `python -m tools.ncu_summary
# ch08` says why: the 32-bit march is no longer bound by instructions (issue slots 38% busy, 1.26 warp
# instructions per point against the flat march's 2.23) but by memory latency: DRAM 72% busy, and
# each issued instruction waits 22 cycles on loads (`long_scoreboard`) with one column a thread (71%
# occupancy), 13 with two (47%). The last 1.5 points need more bytes in flight per SM, not fewer
# instructions: 16-byte loads of four neighbouring columns (an intrinsic like chapter 5's `vec4.py`),
# so each load brings four times the data for the same registers, or the next planes fetched into
# shared memory with `cp.async` while the current ones compute (sm_80 and newer: not on a T4).
# **On a T4** (`python -m tools.bench --assume t4 --from b08.json`, scaled by memory bandwidth): about
# 222 GB/s against a 283 GB/s copy, 2.5 ms for the 256 MiB grid.

# %%
print("variant                    loads per point  sectors per warp load (32 B)")
for name, per_point, sectors in ch08.requests_per_point():
    print(f"{name:26s} {per_point:15.2f}  {sectors:.2f}")

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch08.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="3-D seven-point stencil")

# %% [markdown]
# Your own run: a random grid, launched directly (GPU if present, else the simulator), compared
# with the NumPy version.

# %%
g = np.random.default_rng(3).uniform(-1, 1, (6, 9, 11)).astype(np.float32)
d_out = cuda.device_array(g.shape, np.float32)
grid = (-(-11 // OUT_TILE), -(-9 // OUT_TILE), -(-6 // Z_STEPS))
stencil_coarse[grid, (IN_TILE, IN_TILE)](d_out, cuda.to_device(g), *g.shape)
print("max difference from NumPy:", float(np.abs(d_out.copy_to_host() - ch08.stencil(g)).max()))

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-08")
