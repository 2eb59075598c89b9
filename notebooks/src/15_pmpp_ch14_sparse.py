# %% [markdown]
# # PMPP chapter 14: sparse matrix computation
#
# Most matrices that come out of science and engineering are **sparse**: nearly all their
# elements are zero. A 2-D Poisson problem on a 1000 x 1000 grid has a million unknowns, so its
# matrix has 10^12 elements, of which five million are nonzero. Storing and multiplying the zeros
# is out of the question; the question is how to store the nonzeros so that a GPU can work on them.
#
# The chapter's computation is **SpMV**, `y = A @ x` with `A` sparse: the inner loop of iterative
# solvers such as conjugate gradient. It does two flops per stored nonzero and reads at least 8
# bytes for it (value and column index), so it is **memory bound**: what matters is how well the
# format lets neighbouring threads read neighbouring addresses, and how evenly it spreads the work.
#
# The ladder, in the book's order:
#
# 1. **COO**: a thread per nonzero, atomics to add into `y`;
# 2. **CSR**: a thread per row (no atomics, but uncoalesced and unbalanced), then a **warp per row**;
# 3. **ELL**: pad every row to the same length, store column-major: coalesced;
# 4. **hybrid ELL + COO**: pad to a modest width, send long rows' overflow to COO;
# 5. **JDS**: sort rows by length and store "jagged diagonals": ELL's coalescing without its padding.
#
# Formats are converted on the host with NumPy (`ch14.to_csr`, `to_ell`, `to_hybrid`, `to_jds`).
# Every check runs one matrix per case, drawn from the seed: a 2-D Poisson matrix, a power-law
# matrix (a few very long rows, many empty ones), a banded matrix, one with many empty rows, and
# the shapes 1x1, 1xN and Nx1.

# %% setup

# %%
import numba  # noqa: F401 (the kernel cells use numba.float32)
import numpy as np
from numba import cuda

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, WrongAnswer, expect_failure
from puzzles.pmpp import ch14_sparse as ch14
from puzzles.pmpp.ch14_sparse import *  # its constants: TPB, VEC_TPB, FULL_MASK, LANES

# TPB: 32 threads per block in the thread-per-row puzzles (one warp); VEC_TPB: 64 threads (two warps)
# per block in the warp-per-row puzzle

# %% [markdown]
# ## Five formats of one small matrix
#
# A 4 x 5 matrix with an empty row (row 2) and rows of different lengths, in each format:

# %%
a = np.array([[1.5, 0, 0, -2.0, 0], [0, 0.5, 0, 0, 0], [0, 0, 0, 0, 0], [3.0, 0, -1.0, 0, 2.5]], np.float32)
row, col = (x.astype(np.int32) for x in np.nonzero(a))
val = a[row, col]
n_rows = a.shape[0]
print("COO   row", row, " col", col, " val", val)
row_ptr, c, v = ch14.to_csr(n_rows, row, col, val)
print("CSR   row_ptr", row_ptr, " col", c, " val", v)
row_len, ell_col, ell_val, width = ch14.to_ell(n_rows, row, col, val)
print(f"ELL   width {width}, row_len", row_len)
print("      ell_col as stored (slot 0 of rows 0..3, then slot 1 of rows 0..3, ...)", ell_col)
print("      the same as a", (width, n_rows), "array, one line per slot:\n", ell_val.reshape(width, n_rows))
perm, jd_ptr, jd_col, jd_val = ch14.to_jds(n_rows, row, col, val)
print("JDS   perm", perm, " jd_ptr", jd_ptr, " jd_col", jd_col, " jd_val", jd_val)

# %% [markdown]
# ## COO: a thread per nonzero
#
# COO keeps a (row, column, value) triple per nonzero, in any order. The kernel is one line: thread
# `i` multiplies nonzero `i` by its `x` element and adds it into `y[row[i]]`. Nonzeros of one row
# belong to different threads, so the adds must be **atomic**. Work is perfectly balanced (one
# nonzero per thread) and the loads are coalesced; the price is the atomics and 12 bytes per
# nonzero instead of 8.

# %% [markdown] statement:ch14_spmv_coo

# %% kernel:ch14_spmv_coo

# %%
puzzles.check("ch14_spmv_coo", spmv_coo)


# %% [markdown]
# With a plain `+=` two threads of one row read the same old `y[row]`, and one update is lost. On
# a GPU that is a wrong answer only sometimes; the simulator reports the race every time:


# %%
@cuda.jit
def spmv_coo_plain_add(y, row, col, val, x, nnz, n_rows):
    i = cuda.grid(1)
    if i < nnz:
        y[row[i]] += val[i] * x[col[i]]


expect_failure(KernelDiagnosed, puzzles.check, "ch14_spmv_coo", spmv_coo_plain_add)

# %% [markdown]
# ## CSR: a thread per row
#
# CSR sorts the nonzeros by row and replaces the row indices by `row_ptr`: row `r`'s nonzeros are
# entries `row_ptr[r]` to `row_ptr[r + 1] - 1`. An empty row has `row_ptr[r] == row_ptr[r + 1]`.
# One thread per row adds up its row in a register and writes `y[r]` once: no atomics.
#
# Two problems. **Imbalance**: a thread's work is its row's length, and a warp waits for its longest
# row (on the power-law matrix one thread loops over dozens of entries while its neighbours have none).
# **Coalescing**: at iteration `k` the 32 threads of a warp read `val[row_ptr[r] + k]` for 32
# consecutive rows, addresses a whole row apart.

# %% [markdown] statement:ch14_spmv_csr

# %% kernel:ch14_spmv_csr

# %%
puzzles.check("ch14_spmv_csr", spmv_csr)

# %%
puzzles.show("ch14_spmv_csr", spmv_csr, view="coalescing")

# %% [markdown]
# On the Poisson matrix of this view (a 7 x 8 grid: 56 rows, 250 nonzeros, rows of 3 to 5 entries),
# the warps' loads of `val` move **148** 32-byte sectors where **33** would hold the same
# elements: 22% of what memory delivers is used (the same for `col`). Each load instruction of a
# warp touches up to 32 sectors, one per thread.

# %% [markdown]
# ## CSR: a warp per row
#
# Give each row a whole warp: lane `l` takes entries `row_ptr[r] + l`, `+ 32`, ..., so the 32 lanes
# read 32 consecutive entries of one row, and a long row is split 32 ways. The lanes' partial sums
# are combined with a shuffle tree (chapter 10) and lane 0 writes `y[r]`.
#
# A warp per row pays off for long rows. For rows of 5 entries 27 lanes idle: the GPU benchmark
# below therefore also runs `ch14.spmv_csr_lanes`, the same kernel with `LANES` lanes per row
# (CUSP's rule: a power of two near the mean row length).

# %% [markdown] statement:ch14_spmv_csr_vector

# %% kernel:ch14_spmv_csr_vector

# %%
puzzles.check("ch14_spmv_csr_vector", spmv_csr_vector)


# %% [markdown]
# A tree that starts at offset 8 adds only lanes 0 to 15 into lane 0: right on the Poisson matrix
# (no row has more than 16 entries), wrong on the power-law matrix's long rows.


# %%
@cuda.jit
def spmv_csr_vector_half_tree(y, row_ptr, col, val, x, n_rows):
    lane = cuda.threadIdx.x % 32
    warp = cuda.grid(1) // 32
    for r in range(warp, n_rows, cuda.gridsize(1) // 32):
        s = numba.float32(0)
        for k in range(row_ptr[r] + lane, row_ptr[r + 1], 32):
            s += val[k] * x[col[k]]
        offset = 8
        while offset > 0:
            s += cuda.shfl_down_sync(FULL_MASK, s, offset)
            offset //= 2
        if lane == 0:
            y[r] = s


expect_failure(WrongAnswer, puzzles.check, "ch14_spmv_csr_vector", spmv_csr_vector_half_tree)

# %% [markdown]
# ## ELL: padded and column-major
#
# ELL pads every row to the length of the longest, `width` slots, and stores the slots
# **column-major**: slot `t` of every row, then slot `t + 1` of every row. Slot `t` of row `r` is
# element `t * n_rows + r`. Threads `r` and `r + 1` of a warp now read neighbouring elements at every
# iteration: the loads coalesce. Padding slots hold the value 0 in column 0, so a kernel may even
# loop over all `width` slots (the book's first ELL kernel); here `row_len[r]` says how many are real.

# %% [markdown] statement:ch14_spmv_ell

# %% kernel:ch14_spmv_ell

# %%
puzzles.check("ch14_spmv_ell", spmv_ell)

# %% [markdown]
# The same Poisson matrix, with the chapter's ELL kernel (the module's, so the picture does not
# depend on your solution): the loads of `ell_val` move **33** sectors where **33** would do, 100%,
# against 148 for CSR. The padding costs little here (width 5, 280 slots for 250 nonzeros);
# on the power-law matrix `width` is the longest row, and most of the array is padding.

# %%
puzzles.show("ch14_spmv_ell", ch14.spmv_ell, view="coalescing")

# %% [markdown]
# ## Hybrid ELL + COO
#
# One long row makes ELL's padding explode. The hybrid format keeps a modest `width` (here: the
# mean row length) in ELL and moves each longer row's surplus to COO. One launch does both: thread
# `i` adds ELL row `i` and COO entry `i`. Row `i`'s ELL sum and its overflow are added by different
# threads, so both go into `y` with atomics. (The book suggests the host or a second kernel for the
# COO part; this merged launch keeps it on the GPU in one go.)

# %% [markdown] statement:ch14_spmv_hybrid

# %% kernel:ch14_spmv_hybrid

# %%
puzzles.check("ch14_spmv_hybrid", spmv_hybrid)

# %% [markdown]
# ## JDS: jagged diagonals
#
# JDS sorts the rows longest first (`perm` remembers where each came from) and stores entry `d` of
# every row that has one as "jagged diagonal" `d`: `jd_val[jd_ptr[d] + r]` for sorted rows
# `r = 0, 1, ...`. Diagonal `d` is as long as the number of rows with more than `d` entries, so there
# is no padding, and thread `r` still reads element `jd_ptr[d] + r` next to thread `r + 1`'s.
# Sorting also groups rows of similar length into the same warp: less imbalance than CSR.

# %% [markdown] statement:ch14_spmv_jds

# %% kernel:ch14_spmv_jds

# %%
puzzles.check("ch14_spmv_jds", spmv_jds)

# %% [markdown]
# Launch it yourself on a matrix of your own:

# %%
rng = np.random.default_rng(7)
n_rows, n_cols, row, col, val = ch14.power_law(rng, 50, 60, 45)
x = rng.uniform(-1, 1, n_cols).astype(np.float32)
perm, jd_ptr, jd_col, jd_val = ch14.to_jds(n_rows, row, col, val)
y = np.zeros(n_rows, np.float32)
spmv_jds[-(-n_rows // TPB), TPB](y, perm, jd_ptr, jd_col, jd_val, x, n_rows, jd_ptr.size - 1)
print("max |y - A @ x|:", float(np.abs(y - ch14.dense(n_rows, n_cols, row, col, val) @ x).max()))

# %% [markdown]
# ## Measure it
#
# On a GPU: a Poisson matrix on a 2048 x 2048 grid (4.2 million rows, 21 million nonzeros) and a
# power-law matrix of 2^20 rows (mean 8 entries, rows up to 4096), every kernel checked against NumPy
# and then timed, with cuSPARSE's CSR SpMV (through CuPy's `cupyx.scipy.sparse`) and a device copy
# in the same run. Every variant is credited with the same bytes, the CSR arrays plus `x` and `y`
# once, so GB/s compare like times. ELL runs only on the Poisson matrix (on the power-law one its
# padding would be 4096 slots per row). On a CPU machine this cell says so and does nothing.
#
# The goal is about the CSR format: a kernel reading the same three CSR arrays at 80% of cuSPARSE on
# the Poisson matrix. It is judged on `ch14_spmv_csr_fast`, the fastest on your GPU (named in
# brackets) of the GPU-only kernels in `csr_fast.py`: a thread per row on 32-bit indices; 2, 4 or 8
# lanes per row; and CSR-Stream, where a block's threads compute the products of consecutive
# nonzeros into shared memory (coalesced, every lane busy) and then each thread adds up its own row
# there. Each is checked against NumPy before it is timed.
#
# Why the warp per row loses on Poisson: with 5 entries a row, 27 of 32 lanes idle, and the warp
# still issues the row's set-up, its loop and five shuffle steps. Counted in the machine code for an
# H100 (`python -m tools.ptx_count ch14`), a row of 5 takes it about 150 warp instructions, about
# 30 per nonzero, where a thread per row issues about one per nonzero. The kernel waits on instruction
# issue, not on memory: it cannot keep up with a kernel that waits only on memory.
#
# **Measured on an H100** (driver 580, numba-cuda 0.30.4; `python -m tools.bench --only ch14 --json
# b14.json`): on the Poisson matrix `ch14_spmv_csr_fast` picked the thread per row on 32-bit indices
# (`scalar32`): 88 us, 2485 GB/s, against cuSPARSE's 126 us, 1726 GB/s: **143.9% of cuSPARSE,
# the 80% goal is met** (on the power-law matrix it picked 8 lanes a row: 444 GB/s, 54% of cuSPARSE's 815).
# `python -m tools.ncu_summary ch14` measures the warp per row's loss: 54 warp instructions per
# nonzero against 0.68 for `scalar32`, 1.6 ms against 80 us; its issue slots are 66% busy and DRAM 4%,
# while `scalar32` waits on memory (DRAM 81%). **On a T4** (`python -m tools.bench --assume t4 --from
# b14.json`, scaled by memory bandwidth): about 237 GB/s, 0.92 ms per product, against cuSPARSE's
# scaled 165 GB/s (the ratio is that of the H100 run: a T4's cuSPARSE was not measured).

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch14.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="SpMV: Poisson 2048^2 and power-law 2^20")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-14")
