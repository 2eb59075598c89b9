# %% [markdown]
# # Tensor cores, half precision and int8
#
# Every kernel so far computed in float32, one multiply-add per thread per instruction. Since Volta,
# NVIDIA GPUs also have **tensor cores**: units that multiply small matrices in one instruction, issued
# by a whole warp at once, on narrower numbers (fp16, bf16, TF32, int8, fp8). They are why cuBLAS runs
# a half-precision matrix product many times faster than an FP32 one, and why training and inference
# moved to mixed precision. Narrow numbers also help where no tensor core is involved: a memory-bound
# kernel that reads fp16 or int8 instead of float32 moves half or a quarter of the bytes.
#
# This notebook does it by hand, in Numba:
#
# 1. **fp16 storage, fp32 arithmetic**: what half precision holds, what it saves, what it costs;
# 2. **one warp, one `mma.sync`**: a 16x8 tile from the lanes' *fragments*, the layout drawn lane by lane;
# 3. **a block of warps** tiling a matrix product, its slices staged in shared memory, then
#    **register tiling**: each warp four mma tiles, its fragments reused from registers;
# 4. **int8 with `dp4a`**: a quantized matrix-vector and matrix-matrix product, scales and error;
# 5. the same tensor cores through CUDA C++'s `wmma`, linked into a Numba kernel; and the speed.
#
# numba-cuda has no tensor-core API, so the course provides two intrinsics (`helpers.tensor_cores`):
# `mma_m16n8k8` and `dp4a`, each one PTX instruction on a GPU (the T4 has both), and on the simulator
# a warp-wide operation that checks how the lanes use it.

# %% setup

# %%
import numpy as np
from numba import cuda, float32, int32
from numba.types import float16

import puzzles
from helpers import sim, timing
from helpers.check import WrongAnswer, expect_failure
from helpers.sim.errors import KernelException
from helpers.tensor_cores import dp4a, mma_m16n8k8
from puzzles import tensor_cores as tc
from puzzles.tensor_cores import *  # its constants:

# WARP = 32 lanes; FULL_MASK: every lane of the warp; ROWS_PER_BLOCK = 4 warps (rows) per block in the
# matrix-vector kernels; BM x BN = 32 x 16: a block's tile of C in tc_mma_gemm, BK = 8 the K per
# step, THREADS = 128 (4 warps); TM x TN = 2 x 2 = TILES mma tiles a warp in tc_mma_reg_gemm
# (WM x WN = 32 x 16 of C), RM x RN = 64 x 32 its block's tile, RK = 8, REG_THREADS = 128; QT = 16
# (tc_int8_gemm's 16 x 16 block and tile), QW = 16 words of k a step
from puzzles.tensor_cores import int8_matvec, layout, wmma
from puzzles.tensor_cores.common import half

# %% [markdown]
# ## Half precision: 16 bits
#
# An fp16 number has 1 sign bit, 5 exponent bits and 10 stored significand bits (11 with the hidden
# one). So it keeps about 3.3 decimal digits (its unit roundoff is `2**-11`, 4.9e-4, against
# float32's `2**-24`, 6e-8), and its largest finite value is **65504**: beyond that, inf. bfloat16
# keeps float32's 8 exponent bits (range to 3e38) and only 8 significant bits; a GPU computes with it
# from sm_80 on (A100, H100), **not on a T4** (sm_75), so this notebook stays with fp16.
#
# Every fp16 operation rounds its result to 11 bits (to nearest, ties to even), on a GPU as in NumPy,
# and the simulator computes fp16 arithmetic with NumPy's float16, so it rounds the same way.

# %%
info = np.finfo(np.float16)
print(f"fp16: max {info.max}, smallest normal {info.tiny}, unit roundoff {info.eps / 2}")
print("1 + 2**-11 in fp16:", np.float16(1) + np.float16(2**-11), "(rounded to even: 1.0)")
print("2048 + 1 in fp16:", np.float16(2048) + np.float16(1), "(integers past 2048 are not all there)")
x = np.float32(70000.0)
print("70000 as fp16:", np.float32(x).astype(np.float16), "| bytes for 10^6 values: fp32 4 MB, fp16 2 MB")
try:
    half(np.array([1.0, 70000.0]), "x")
except ValueError as e:
    print("puzzles.tensor_cores.common.half refuses it:", e)

# %% [markdown]
# The same in a kernel: a store that turns a finite value into inf in a float16 array. A GPU does it
# without a word; the simulator names it.


# %%
@cuda.jit
def to_half(y, x):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = x[i] * float32(2.0)


y16, x32 = np.zeros(32, np.float16), np.full(32, 40000.0, np.float32)
expect_failure(KernelException, sim.launch, to_half, 1, 32, (y16, x32))

# %% [markdown]
# ## fp16 storage, fp32 arithmetic
#
# The rule of mixed precision: **store** narrow, **compute** wide. fp16 x fp16 fits exactly in fp32
# (11 + 11 significant bits out of 24), so widening both values before multiplying loses nothing,
# and the sum then rounds to 24 bits each step, not 11. The tolerance of the check below is derived
# from that (the op file's docstring has the sums).

# %% [markdown] statement:tc_half_matvec

# %% kernel:tc_half_matvec

# %%
puzzles.check("tc_half_matvec", half_matvec)

# %% [markdown]
# Keep the running sum in fp16 and the error grows with every add (each partial sum rounded to 11
# bits): about 8000 times fp32's per rounding, far outside the tolerance.


# %%
@cuda.jit
def half_matvec_fp16_sum(y, w, x, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * ROWS_PER_BLOCK + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    acc = float32(0.0)
    for j in range(lane, cols, WARP):
        acc = float32(np.float16(acc + float32(w[r, j]) * float32(x[j])))  # the sum rounded to fp16
    for offset in (16, 8, 4, 2, 1):
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, offset)
    if lane == 0:
        y[r] = acc


expect_failure(WrongAnswer, puzzles.check, "tc_half_matvec", half_matvec_fp16_sum, seed=0)

# %% [markdown]
# ### bfloat16: the other 16 bits
#
# bf16 splits the same 16 bits the other way: 1 sign bit, **8 exponent bits** (float32's) and 7
# stored significand bits (8 significant). So its range is float32's (largest finite about 3.4e38,
# smallest normal 1.2e-38): nothing overflows at 65504, which is why training in bf16 needs no loss
# scaling, and converting a float32 to bf16 is keeping its top 16 bits (rounded). The price is
# precision: its unit roundoff is `2**-8` (3.9e-3), 8 times fp16's, so about 2.4 decimal digits. Its
# products still fit float32 exactly (8 + 8 significant bits out of 24): the rule "store narrow,
# compute wide" carries over unchanged. What it needs is hardware: bf16 arithmetic and the bf16
# tensor-core `mma` arrived with compute capability 8.0 (A100, and the H100 after it); the T4 that
# Colab gives is sm_75, so a `numba.cuda.bf16` kernel does not run there, and this notebook's 16-bit
# format is fp16.

# %% [markdown]
# ## Tensor cores: one warp, one instruction
#
# `mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32` (PTX; sm_75 and newer) computes `D = A @ B + C`
# for a 16x8 fp16 `A`, an 8x8 fp16 `B` and a 16x8 fp32 `C`: 2,048 multiply-adds, issued once by the 32
# lanes of a warp together. No lane holds a matrix: each holds a few elements of each, its
# **fragments**, in registers, at positions fixed by the hardware (the PTX ISA's "matrix fragments for
# mma.m16n8k8"). With `g = lane >> 2` (the lane's group, 0 to 7) and `t = lane & 3` (its place in the
# group): a lane holds two neighbouring elements in row `g` and two in row `g + 8` of A and of C, and
# two elements down column `g` of B. Each cell below is labelled with the lane that holds it and the
# index in that lane's fragment:

# %%
fig = layout.draw_fragments()

# %% [markdown] statement:tc_mma_tile

# %% kernel:tc_mma_tile

# %%
puzzles.check("tc_mma_tile", mma_tile)

# %% [markdown]
# The simulator runs the mma as one operation of the whole warp, like a shuffle: it waits for all 32
# lanes, gathers their fragments into A, B and C, multiplies, and hands each lane its part of D. A
# lane that does not get there is named (a real GPU hangs or computes garbage), and so is a fragment
# of the wrong type, an accumulator never set, or a block that is not a whole number of warps. Mix up
# the lane mapping (group and place from the wrong bits) and the values land in the wrong cells:


# %%
@cuda.jit
def mma_tile_wrong_lanes(c, a, b):
    lane = cuda.threadIdx.x
    fa = cuda.local.array(4, float16)
    fb = cuda.local.array(2, float16)
    fc = cuda.local.array(4, float32)
    group, t = lane & 7, lane >> 3  # the low three bits as the group: not the hardware's layout
    for i in range(4):
        fa[i] = a[group + 8 * (i >> 1), 2 * t + (i & 1)]
        fc[i] = 0.0
    for i in range(2):
        fb[i] = b[2 * t + i, group]
    mma_m16n8k8(fa, fb, fc)
    for i in range(4):
        c[group + 8 * (i >> 1), 2 * t + (i & 1)] = fc[i]


expect_failure(WrongAnswer, puzzles.check, "tc_mma_tile", mma_tile_wrong_lanes, seed=0)

# %% [markdown]
# ## A block of warps: a matrix product
#
# A matrix product is many tiles. A block of 4 warps owns a 32x16 tile of C, walks K eight at a time,
# and stages each step's slices of A and B in shared memory, where every warp finds its fragments: the
# tiled matmul of PMPP chapter 5, with a warp's mma in place of a thread's loop of multiply-adds.

# %% [markdown] statement:tc_mma_gemm

# %% kernel:tc_mma_gemm

# %%
puzzles.check("tc_mma_gemm", mma_gemm)

# %% [markdown]
# ## Register tiling: one warp, four tiles
#
# Count what one lane of `tc_mma_gemm` does per step: 4 shared-memory reads for its A fragment and 2
# for its B fragment, for one mma. The fragments are used once and thrown away, although a warp next
# door loads the very same A fragment (the warp beside it in the block's tile row) or B fragment.
# Chapter 5 fixed the same waste for FP32 by giving each thread a grid of outputs, so that one value
# loaded into a register meets several others. Here it is one level up: each warp computes a **2 x 2
# grid of 16x8 mma tiles**, loads the A fragment of each tile row and the B fragment of each tile
# column once per step, and runs the four mma from registers.
#
# Per lane and step that is 2 x 4 + 2 x 2 = **12 shared reads for 4 mma**, 3 per mma instead of 6:
# half the shared-memory traffic per unit of tensor-core work. The block's tile grows to 64x32, so
# each value staged from global memory serves twice as many products too (per step 768 values for 16
# mma, against 384 for 4). What it costs is registers: 16 fp32 accumulators and 12 fp16 fragment
# values per lane where `tc_mma_gemm` held 4 and 6. The check holds the kernel to the 12 reads (its
# `shared_reads` budget): a kernel that loads the fragments again inside the tile loop computes the
# right numbers and is still rejected.

# %%
fig = layout.draw_register_tiles()

# %% [markdown] statement:tc_mma_reg_gemm

# %% kernel:tc_mma_reg_gemm

# %%
puzzles.check("tc_mma_reg_gemm", mma_reg_gemm)

# %% [markdown]
# ## int8: a quarter of the bytes
#
# Quantization stores a row of weights as int8 values `q` and one float `scale` per row, with
# `w ~ scale * q` (symmetric: `scale = max|w| / 127`); the vector the same way with one scale.
# Then `y[r] = w_scale[r] * x_scale * sum_j q_w[r, j] * q_x[j]`: the sum is exact in int32, and
# `dp4a` (sm_61 and newer) does four of its multiply-adds in one instruction, on four int8 packed in
# each of two int32 words. What quantization costs is the rounding of every value to 1/254 of its
# row's range; on Gaussian data:

# %%
rng = np.random.default_rng(0)
w_demo = rng.standard_normal((64, 1024)).astype(np.float32)
x_demo = rng.standard_normal(1024).astype(np.float32)
_, err = int8_matvec.quantization_error(w_demo, x_demo)
print(f"int8: max |y - W x| / max |W x| = {err:.2%} (weights 1 byte each instead of 4)")

# %% [markdown] statement:tc_int8_matvec

# %% kernel:tc_int8_matvec

# %%
puzzles.check("tc_int8_matvec", int8_matvec)

# %% [markdown]
# Dequantize with the row's scale only and every output is off by the vector's scale:


# %%
@cuda.jit
def int8_matvec_one_scale(y, wq, xq, w_scale, x_scale, rows, words):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * ROWS_PER_BLOCK + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    acc = int32(0)
    for j in range(lane, words, WARP):
        acc = dp4a(wq[r, j], xq[j], acc)
    for offset in (16, 8, 4, 2, 1):
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, offset)
    if lane == 0:
        y[r] = float32(acc) * w_scale[r]


expect_failure(WrongAnswer, puzzles.check, "tc_int8_matvec", int8_matvec_one_scale, seed=0)

# %% [markdown]
# ## int8 matrix products
#
# The same arithmetic for `C = A @ B`: A quantized per **row** (each row of C gets its row's scale),
# B per **column**, so `C[i, j] = a_scale[i] * b_scale[j] * sum_k qA[i, k] qB[k, j]`, and both scales
# come out of the sum. What int8 saves: A and B take 1 byte a value against fp16's 2 and float32's 4,
# so at 4096 x 4096 each matrix is 16 MiB instead of 32 or 64, and a `dp4a` does four multiply-adds
# where an FP32 instruction does one. What it costs: every value is rounded to half a step of its
# row's (or column's) scale, an error of a fraction of a percent of the largest value; the sum itself
# is exact, so the check compares the int32 sums to the last bit. Why the scales are per row, not one
# for the whole matrix: a row of small values would otherwise use only a few of its 255 levels.

# %%
a_demo = rng.standard_normal((64, 256)) * rng.uniform(0.02, 3.0, (64, 1))  # rows of different sizes
b_demo = rng.standard_normal((256, 48))
exact = a_demo @ b_demo
c_row, _ = tc.int8_gemm.quantization_error(a_demo, b_demo)
aq_t, a_s = tc.int8_matvec.quantize(a_demo)  # one scale for all of A
bq_t, b_s = tc.int8_matvec.quantize(b_demo, axis=0)
c_tensor = (aq_t.astype(np.int64) @ bq_t.astype(np.int64)) * a_s * b_s[None, :]
for label, c_q in (("per-row scales", c_row), ("one scale for A", c_tensor)):
    worst = (np.abs(c_q - exact).max(axis=1) / np.abs(exact).max(axis=1)).max()
    print(f"{label:16s}: worst row's error max|C - AB| / max|AB| = {worst:.2%}")
four = np.array([127 * 127 * 4], np.int32)  # one dp4a of the largest bytes
print(f"one dp4a can add {four[0]}; in int16 that is {four.astype(np.int16)[0]}: the sum must be int32")

# %% [markdown] statement:tc_int8_gemm

# %% kernel:tc_int8_gemm

# %%
puzzles.check("tc_int8_gemm", int8_gemm)

# %% [markdown]
# ## The same tensor cores from CUDA C++: `wmma`
#
# CUDA C++ has a warp-level matrix API, `nvcuda::wmma` (`<mma.h>`): fragments are opaque objects that
# `load_matrix_sync` fills from memory, so their layout is the compiler's business. Numba can call a
# C++ device function compiled by NVRTC: `cuda.declare_device("wmma_tile", signature,
# link="wmma_tile.cu")` declares it, and the kernel passes its arrays' data pointers (a five-line
# intrinsic in `puzzles/tensor_cores/wmma.py`, so no cffi). That file's source computes one 16x16x16
# tile. The simulator cannot run C++, so without a GPU we compile it for the T4 and look for the
# instruction (where the CUDA headers are missing, the cell says so in one line and goes on):

# %%
print(wmma.SOURCE)
try:
    ptx = wmma.compile_check((7, 5))
    print([line.strip()[:70] + " ..." for line in ptx.splitlines() if "wmma.mma.sync" in line])
except (FileNotFoundError, RuntimeError) as err:  # no mma.h / crt/mma.h here: said, not fatal
    ptx = None
    print("wmma skipped:", str(err).splitlines()[0])
if ptx and not timing.skip_reason():
    a16 = rng.standard_normal((16, 16)).astype(np.float16)
    b16 = rng.standard_normal((16, 16)).astype(np.float16)
    c32 = cuda.device_array(256, np.float32)
    # linking C++ depends on this machine's CUDA headers: a failure is said here, and
    # tests/tc_parity.py fails on it
    try:
        wmma.kernel()[1, 32](cuda.to_device(a16.ravel()), cuda.to_device(b16.T.ravel()), c32)
        got = c32.copy_to_host().reshape(16, 16)
        err = np.abs(got - a16.astype(np.float64) @ b16.astype(np.float64)).max()
        print("wmma on the GPU: max error", err)
    except Exception as exc:  # one line instead of a dead notebook
        print(f"wmma on the GPU did not run: {type(exc).__name__}: {(str(exc) or ' ').splitlines()[0]}")

# %% [markdown]
# ## Measure it
#
# On a GPU this runs `tc.benchmark()`: every variant validated against NumPy, then timed in one run.
# The GEMM at 4096^3: the course's tensor-core kernel (`fast_gemm.py`: 128x128 tiles of C per block,
# 4x4 mma tiles per warp, slices of A and B staged as 32-bit words), the exercise's kernel, cuBLAS's
# HGEMM (fp16 in, fp32 accumulate: the ceiling), chapter 5's best FP32 SGEMM, and cuBLAS FP32 and
# TF32 through PyTorch; the matrix-vector product (memory-bound) in int8, fp16 and FP32 against a
# copy. The goal, 50% of cuBLAS HGEMM, is judged on the fastest tensor-core GEMM that validated in
# the run (the row "tensor-core GEMM (fastest validated)", which one in brackets): the 128x128 kernel
# or one of the pipelined candidates (`fast_gemm_pipe.py`: `cp.async` copies in 2 or 3 stages and
# `ldmatrix` fragment loads, through inline PTX; sm_80 and newer). It is a hard goal for `mma.sync`:
# cuBLAS on an H100 uses Hopper's `wgmma` and the tensor memory accelerator. `python -m
# tools.ncu_summary tc` shows where each kernel's time goes. On a CPU machine this cell says so and
# does nothing.
#
# **Measured on an H100** (driver 580, numba-cuda 0.30.4, CUDA 13, 4096^3; every GEMM alone against
# cuBLAS in one process: `python -m puzzles.tensor_cores.gemm_race`):
#
# | kernel | registers | ms | TFLOP/s | of cuBLAS |
# |---|---|---|---|---|
# | `mma.sync` m16n8k16 alone, registers only (the ceiling of this route) | - | - | 532.8 | - |
# | 128x128 tiles, m16n8k8 | 167 | 2.547 | 54.0 | 10.5% |
# | 128x128 tiles, m16n8k16 | 167 | 2.470 | 55.6 | 10.8% |
# | the same, <= 128 registers: 2 blocks/SM | 128 | 2.045 | 67.2 | 13.1% |
# | cp.async 3 stages + ldmatrix, 8 warps of 64x32 | 128 | 0.456 | 301.4 | 58.6% |
# | the same, <= 128 registers | 128 | 0.485 | 283.4 | 55.1% |
# | **cp.async 3 stages + ldmatrix, 4 warps of 64x64** | 255 | 0.429 | **320.6** | **62.3%** |
# | the same, <= 168 registers | 168 | 0.556 | 247.3 | 48.1% |
# | cp.async 2 stages + ldmatrix, 8 warps of 64x64, 128x256 tiles | 255 | 0.526 | 261.3 | 50.8% |
# | cuBLAS HGEMM (fp16 in, fp32 accumulate) | - | 0.267 | 514.3 | 100% |
#
# The goal's row is the pipelined kernel with 4 warps of 64x64: **62.3% of cuBLAS HGEMM, the 50%
# goal is met** (`python -m tools.bench --only tc` judges it by name). The 128x128 kernel stays at
# 11%: every fragment element comes from a 32-bit shared load, copies do not overlap the mma, and 1
# block of 256 threads fits an SM (12.5% occupancy). `ldmatrix` (one instruction loads a warp's
# fragments) and `cp.async` (the next slices copied while the mma works on these) made it 5.8x
# faster. **Where the rest goes** (ncu on the 4-warp kernel, `ncu --section Occupancy --section
# WarpStateStats -k regex:fast_gemm_pipe_4w python -m puzzles.tensor_cores.gemm_race 4096 "4 warps
# of 64x64"`): 255 registers a thread and 49 KB of shared memory a block allow 2 blocks per SM, 12.5%
# occupancy; 4096^3 in 128x128 tiles makes 1024 blocks, 3.88 waves over 132 SMs x 2, so the last
# wave runs a quarter full; and a warp waits 2.0 of the 5.1 cycles between its instructions (39%) on
# a fixed-latency dependency, with too few warps to cover it. A register-only `mma.sync` loop reaches 533
# TFLOP/s, so the route itself allows more than cuBLAS's 514; what lifts a kernel past this one on
# Hopper is `wgmma` (a warpgroup's asynchronous mma reading shared memory directly) fed by the tensor
# memory accelerator (TMA), and Numba emits neither (inline PTX for them needs register and barrier
# handling this course does not teach).
#
# **On a T4** (sm_75): `cp.async` and m16n8k16 arrive with sm_80, so the pipelined candidates are left
# out there and the goal judges the 128x128 kernel on m16n8k8. `python -m tools.bench --assume t4
# --from tc.json` scales its 55.3 TFLOP/s by the FP32 rates (to 6.7 TFLOP/s); by the tensor
# datasheets (65 against 989 TFLOP/s) the same fraction would be about 3.6 TFLOP/s of a T4's 65. On a
# T4 `mma.sync` is the tensor core's native instruction, so expect the kernel nearer its cuBLAS
# than on an H100 (not measured here).
#
# What the datasheets promise (dense, no sparsity), for scale:
#
# | GPU | fp16 tensor, fp32 accumulate | TF32 tensor | FP32 (no tensor core) | int8 tensor | memory |
# |---|---|---|---|---|---|
# | T4 (Colab, sm_75) | 65 TFLOP/s | - | 8.1 TFLOP/s | 130 TOP/s | 320 GB/s |
# | H100 SXM (sm_90) | 989 TFLOP/s | 495 TFLOP/s | 67 TFLOP/s | 1979 TOP/s | 3.35 TB/s |
# | H200 (sm_90) | as the H100 | as the H100 | as the H100 | as the H100 | 4.8 TB/s |
#
# `dp4a` runs on the ordinary integer units, not on the tensor cores (the int8 column is `mma` with
# int8 fragments). The int8 matrix-vector product above is memory-bound anyway: its gain is the bytes
# (a quarter of FP32's), not the arithmetic.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = tc.benchmark()
    print(timing.table(rows))
    for name, against, ratio, need, met in timing.goal_rows(rows, tc.bench.GOALS):
        verdict = "missing" if ratio is None else f"{ratio:.2f} (goal {need}): {met}"
        print(f"{name} vs {against}: {verdict}")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this sums up what the checker vouches for: the puzzles passed in
# this session and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("tensor-cores")
