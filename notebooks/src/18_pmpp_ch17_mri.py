# %% [markdown]
# # PMPP chapter 17: iterative MRI reconstruction
#
# An MRI scanner does not photograph the body: it samples the Fourier transform of the image, in
# "k-space". When the samples lie on a Cartesian grid, one inverse FFT gives the image. Faster and
# safer scans sample along spirals or radial lines instead, and then the image is found
# iteratively, by solving `(F^H F + lambda W^H W) rho = F^H D` (F the Fourier matrix of the sample
# positions, D the data). The costly quantity the book parallelises is **F^H D**: for every voxel
# `n`, a sum over every k-space sample `m`,
#
#     F^H D[n] = sum over m of mu[m] * exp(i * 2 pi * k[m] . pos[n]),   mu[m] = conj(phi[m]) * d[m]
#
# With `M` samples and `N` voxels that is `M x N` terms, each a dot product, a cosine, a sine and a
# few multiply-adds: compute-bound, with a lot of trigonometry. The ladder, in the book's order:
#
# 1. **loop fission**: the `mu` computation split into its own kernel;
# 2. the computation **as written**, one thread per k-space sample: every thread adds into every
#    voxel, so the updates need atomics;
# 3. **loop interchange**: one thread per voxel, no atomics, the voxel's position and sums in
#    **registers**;
# 4. the k-space trajectory in **constant memory**, in chunks because constant memory is 64 KB;
# 5. **fast trigonometry**, and what it costs in accuracy.
#
# Complex numbers are `(real, imag)` pairs here (`mu[m, 0]`, `mu[m, 1]`), and the outputs are the
# real and imaginary parts `r_fhd`, `i_fhd`, as in the book.
#
# **Tolerance.** A float32 sum of `n` terms is within `n * eps * sum|terms|` of the exact sum
# (`eps = 2^-24`), and here each term carries one more error: its angle `2 pi k . pos`, up to
# `ARG_MAX` in size, is rounded a few times in float32 (we allow 6 roundings, `6 * eps * ARG_MAX`),
# and a cosine passes an error in its argument straight through (its slope is at most 1). So the
# bound per output is `n * eps * n * 2 MU_MAX + n * 2 MU_MAX * eps * (6 * ARG_MAX + 2)`, the last `2`
# for the cosine's own rounding; `fhd_tolerance(n)` computes it.

# %% setup

# %%
import math

import numpy as np
from numba import cuda, float32

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer, expect_failure
from puzzles.pmpp import ch17_mri as ch17
from puzzles.pmpp.ch17_mri import *  # TPB, TWO_PI, K_MAX, X_MAX, ARG_MAX, MU_MAX, M_TRAJ, CHUNK, K_TRAJ, ...

print(f"largest angle ARG_MAX = {ARG_MAX:.1f}; gather atol (24 samples) = {ch17.FHD_ATOL:.2e}")

# %% [markdown]
# ## Loop fission: mu first
#
# The book's sequential code computes `mu[m]` inside the loop over samples, then loops over voxels.
# The `mu` part does not depend on the voxel, so it moves to a loop (and a kernel) of its own: one
# thread per sample, a complex product with a conjugate.

# %% [markdown] statement:ch17_mu

# %% kernel:ch17_mu

# %%
puzzles.check("ch17_mu", mri_mu)

# %% [markdown]
# ## As written: one thread per k-space sample
#
# Parallelising the outer loop (samples) is the direct translation: thread `m` adds its sample's
# term to all `N` voxels. All threads update the same `N` outputs, so every update is an atomic, and
# at each step all threads of a warp hit the *same* voxel: the atomics serialise completely.

# %% [markdown] statement:ch17_fhd_scatter

# %% kernel:ch17_fhd_scatter

# %%
puzzles.check("ch17_fhd_scatter", fhd_scatter)

# %% [markdown]
# Without atomics the read-modify-writes of different samples interleave and lose terms:


# %%
@cuda.jit
def scatter_plain_add(r_fhd, i_fhd, k, mu, pos):
    m = cuda.grid(1)
    if m < k.shape[0]:
        for n in range(pos.shape[0]):
            arg = TWO_PI * (k[m, 0] * pos[n, 0] + k[m, 1] * pos[n, 1] + k[m, 2] * pos[n, 2])
            r_fhd[n] += mu[m, 0] * math.cos(arg) - mu[m, 1] * math.sin(arg)
            i_fhd[n] += mu[m, 1] * math.cos(arg) + mu[m, 0] * math.sin(arg)


expect_failure(KernelDiagnosed, puzzles.check, "ch17_fhd_scatter", scatter_plain_add)

# %% [markdown]
# ## Loop interchange: one thread per voxel
#
# With `mu` computed beforehand, the two remaining loops are perfectly nested and can be swapped:
# voxels outside, samples inside. Now one thread per voxel loops over all samples and owns its
# output: no atomics. The values it reuses go in **registers**: its position (read once, used `M`
# times) and its two running sums (written once, at the end). Each sample's `mu` is used twice (real
# and imaginary sums): one load each. The budget counts it: 3 reads for the position, 5 per sample,
# 2 writes.

# %% [markdown] statement:ch17_fhd_gather

# %% kernel:ch17_fhd_gather

# %%
puzzles.show("ch17_fhd_gather", fhd_gather, view="counts")

# %%
puzzles.check("ch17_fhd_gather", fhd_gather)

# %% [markdown]
# Keeping the running sums in global memory gives the same numbers, at a read and a write per
# sample:


# %%
@cuda.jit
def gather_sums_in_global(r_fhd, i_fhd, k, mu, pos):
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x = pos[n, 0]
        y = pos[n, 1]
        z = pos[n, 2]
        r_fhd[n] = float32(0.0)
        i_fhd[n] = float32(0.0)
        for m in range(k.shape[0]):
            arg = TWO_PI * (k[m, 0] * x + k[m, 1] * y + k[m, 2] * z)
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_fhd[n] += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_fhd[n] += i_mu * math.cos(arg) + r_mu * math.sin(arg)


expect_failure(OverBudget, puzzles.check, "ch17_fhd_gather", gather_sums_in_global)

# %% [markdown]
# ## The trajectory in constant memory, in chunks
#
# In the gather, at every step all threads of a warp read the *same* sample `k[m]`: the access
# pattern constant memory is built for (one read, broadcast to the warp, from a cache next to the
# cores). But constant memory is only 64 KB, and a trajectory of `M = 100,000` samples of 3 floats
# is 1.2 MB. The book's host code therefore copies the trajectory one chunk at a time into a
# constant buffer (`cudaMemcpyToSymbol`) and launches the kernel once per chunk; each launch adds
# its chunk's terms to the sums.
#
# Numba fills constant memory when it compiles the kernel (`cuda.const.array_like`), from a global
# array. A trajectory is fixed by the scan protocol, so it can be compiled in: here the whole
# `M_TRAJ = 40`-sample `K_TRAJ` fits, and each launch handles chunk `chunk` of it. (The GPU benchmark
# below compiles one kernel per 4096-sample chunk of a real-sized trajectory: 48 KB each.) The chunk
# arithmetic is where the bugs live: the last chunk is short, and `mu` is indexed by the sample,
# not by its place in the chunk.

# %% [markdown] statement:ch17_fhd_const

# %% kernel:ch17_fhd_const

# %%
puzzles.check("ch17_fhd_const", fhd_const)

# %% [markdown]
# Running every chunk in turn, as the host does, gives the whole sum:

# %%
rng = np.random.default_rng(0)
pos = rng.uniform(-X_MAX, X_MAX, (50, 3)).astype(np.float32)
mu = rng.uniform(-MU_MAX, MU_MAX, (M_TRAJ, 2)).astype(np.float32)
r = np.zeros(50, np.float32)
i = np.zeros(50, np.float32)
for chunk in range(math.ceil(M_TRAJ / CHUNK)):
    fhd_const[2, TPB](r, i, mu, pos, chunk)
want_r, want_i = ch17.fhd_ref(K_TRAJ, mu, pos)
print("largest error over all chunks:", max(np.abs(r - want_r).max(), np.abs(i - want_i).max()))

# %% [markdown]
# A chunk one sample too long adds the first sample of the next chunk twice (once in each launch):


# %%
@cuda.jit
def const_chunk_one_too_long(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x, y, z = pos[n, 0], pos[n, 1], pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        start = chunk * CHUNK
        for m in range(start, min(start + CHUNK + 1, M_TRAJ)):
            arg = TWO_PI * (traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z)
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
        r_fhd[n] += r_acc
        i_fhd[n] += i_acc


expect_failure(WrongAnswer, puzzles.check, "ch17_fhd_const", const_chunk_one_too_long)

# %% [markdown]
# ## Fast trigonometry and its accuracy
#
# `math.sin` and `math.cos` in a Numba kernel compile to CUDA's `sinf`/`cosf`: accurate to about 2
# ulps over the whole range, at the price of a careful range reduction (tens of instructions). With
# `fastmath=True` (`@cuda.jit(fastmath=True)`, the book's `__sinf`/`__cosf` or `-use_fast_math`),
# they become the hardware's special-function unit instructions: a few cycles, with an absolute
# error of about `2^-21` on `[-pi, pi]`, growing with the size of the angle outside it.
#
# The simulator computes `math.sin` in double precision and rounds, so it cannot show either GPU
# error; what it can show is the error every float32 version shares: **the angle itself** is a
# float32, rounded to a relative `2^-24`, so an angle near 37 is off by up to about `2e-6` before
# any sine is taken, and the sine passes that on unchanged. This is why the tolerance grows with
# `ARG_MAX`, and why the book scales the k-space coordinates to keep the angles small:

# %%
rng = np.random.default_rng(1)
for size in (1.0, 4.0, ARG_MAX, 1000.0):
    angle = rng.uniform(-size, size, 100_000)
    err = np.abs(np.sin(angle.astype(np.float32).astype(np.float64)) - np.sin(angle)).max()
    print(f"angles up to {size:7.1f}: sine of the float32 angle off by up to {err:.1e}")

# %% [markdown]
# ## Measure it
#
# On a GPU: `N = 32,768` voxels and `M = 16,384` samples. First the largest error of float32 sine
# and cosine against float64 on the GPU, for angles up to `ARG_MAX`, with `math.sin` and with
# fastmath. Then the gather (k-space in global memory) and the chunked constant-memory kernel (one
# compiled kernel per 4096-sample chunk, 48 KB of constant memory each), each with IEEE and with
# fast trigonometry, validated against float64 on 256 voxels with the derived bound (the measured
# trig error in place of the 2 ulps for fastmath). GFLOP/s count `FLOPS_PER_PAIR = 16` per (voxel,
# sample) pair (the angle 6, cos and sin 1 each, the two complex accumulations 4 each) against
# cuBLAS SGEMM measured in the same run: the sine and cosine cost far more than one FLOP each, which
# is what fastmath buys back. On a CPU machine this cell says so and does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch17.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="F^H D, 32768 voxels x 16384 samples")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-17")
