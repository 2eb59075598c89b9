# %% [markdown]
# # Triton beside Numba: the same kernels, one level up
#
# Every kernel of this course so far was written per **thread**: `cuda.threadIdx.x` says which one,
# and the kernel says what that one thread does. [Triton](https://triton-lang.org) writes the same
# kernels per **block**: a Triton *program* is what a CUDA block is, and its code works on whole
# vectors and tiles of values at once (`tl.arange(0, BLOCK)` is every thread's index together). The
# compiler decides how the threads split the work, where the tiles live (registers, shared memory),
# how loads are coalesced and how reductions are done. PyTorch's compiler writes Triton.
#
# This notebook takes five kernels you wrote in Numba and writes them again in Triton: vector add
# (PMPP 2), a row softmax (Transformer kernels 1), the tiled matrix product (PMPP 5), the residual add
# fused with LayerNorm (Transformer kernels 4) and FlashAttention's forward pass (Transformer kernels
# 3). Each Triton kernel is checked against the **same NumPy spec on the same cases** as its Numba
# twin (sizes that are not multiples of the block, masked rows, logits near 100), by `tri.check`,
# which answers with the course's verdicts. Two of them are exercises.
#
# Where it runs:
#
# - **on a GPU** (Colab's T4) Triton compiles each kernel; the last sections time Numba, Triton and
#   PyTorch side by side and look at what PyTorch's profiler and `torch.compile` make of a GPT-2 block;
# - **on a CPU** Triton's *interpreter* runs each program with NumPy (`TRITON_INTERPRET=1`, set by
#   the course before Triton is imported), a few milliseconds per program: the checks use small sizes;
# - **without Triton or PyTorch** (`pip install torch triton`; Linux only) every Triton cell says so in
#   one line and the notebook still runs.

# %% setup

# %%
import numpy as np

import puzzles
from helpers import timing
from helpers.check import WrongAnswer, expect_failure
from puzzles.triton import (
    bench,
    flash_attention,
    lang,
    layernorm,
    matmul,
    sanitize,
    torch_profile,
    vector_add,
)
from puzzles.triton import check as tri
from puzzles.triton.show import beside

# Triton itself where it can run (on a CPU the course sets TRITON_INTERPRET=1 first); otherwise
# stand-ins, so that the cells below still define their kernels and the checks skip in one line
triton, tl = lang.modules()
print(lang.versions())

# %% [markdown]
# ## The mapping
#
# | Numba CUDA | Triton |
# |---|---|
# | a block of threads, `kernel[blocks, threads](...)` | a program, `kernel[(programs,)](..., BLOCK=...)` |
# | `cuda.blockIdx.x` | `tl.program_id(0)` |
# | `cuda.threadIdx.x` (one per thread) | `tl.arange(0, BLOCK)` (every thread's, as one vector) |
# | `cuda.blockDim.x` | `BLOCK: tl.constexpr`, a power of two fixed when the kernel compiles |
# | the guard `if i < n:` | `mask = i < n` on `tl.load` and `tl.store` (masked lanes neither read nor write) |
# | `a[i]` on a device array | `tl.load(a_ptr + i, mask=...)`: a pointer plus a vector of offsets |
# | `cuda.shared.array` tiles, `cuda.syncthreads()` | a tile from one `tl.load`; the compiler places it |
# | a loop of products over a shared tile | `tl.dot(a, b)` (tensor cores where the types allow) |
# | shuffle butterflies, shared-memory trees | `tl.sum(x, axis=0)`, `tl.max(x, axis=0)` |
# | NumPy arrays, `cuda.to_device` | torch tensors (Triton reads `data_ptr()`); on a CPU, CPU tensors |
#
# What Triton takes away is also what it hides: which thread does what, and whether two of them touch
# the same bank. What it keeps is the algorithm: the tiles, the passes over memory, the masks.

# %% [markdown]
# ## 1. Vector add: program, lanes, mask
#
# The Numba kernel of PMPP chapter 2 on the left, its Triton spelling on the right. `i` is the same
# formula; in Triton it is a vector of `BLOCK` indices, and the guard became a mask.

# %%
beside(vector_add.numba_kernel, vector_add.add_kernel)

# %% [markdown]
# Both are checked against the chapter's spec on the chapter's cases (sizes 1, a block minus one, a
# block, a block plus one, many blocks): the Numba kernel by the simulator, the Triton one by Triton
# (compiled on a GPU, interpreted on a CPU).

# %%
puzzles.check("ch02_vecadd", vector_add.numba_kernel)

# %%
tri.check("triton_vector_add", vector_add.add_kernel)

# %% [markdown]
# Triton kernels take torch tensors, not NumPy arrays: a pointer argument is read with `data_ptr()`.
# The course's `lang.launch(kernel, grid, *args)` checks the arguments first and names the one at fault:

# %%
x = np.zeros(100, np.float32)
expect_failure(TypeError, lang.launch, vector_add.add_kernel, (2,), x, x, x, 100, BLOCK=64)

# %% [markdown]
# ## 2. Row softmax: reductions over a block of values
#
# One program per row, as the Numba kernel `softmax_warp` gives each row a warp. The row is one block
# of `BLOCK` values, `BLOCK` the next power of two at or above `cols`; the lanes past the end load
# `-inf`, which wins no maximum and adds `exp(-inf) = 0` to the sum. `tl.max` and `tl.sum` are the
# shuffle butterflies of the Numba kernel. As in Transformer kernels 1, a row whose every entry is
# `-inf` (fully masked) gets zeros, not NaN.
#
# **Exercise**: load the row, subtract its maximum (0 for a fully masked row), exponentiate, divide
# by the sum (zeros where the sum is 0), store under the mask.


# %%
@triton.jit
def softmax_kernel(out_ptr, x_ptr, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    ### BEGIN SOLUTION
    x = tl.load(x_ptr + row * cols + c, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)  # a fully masked row: exp(-inf - 0) = 0, no NaN
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    y = tl.where(s > 0, e / s, 0.0)  # s == 0 only for a fully masked row: zeros
    tl.store(out_ptr + row * cols + c, y, mask=mask)
    ### END SOLUTION


# %%
tri.check("triton_softmax", softmax_kernel)

# %% [markdown]
# Load the padding as `0.0` instead of `-inf` and a row of negative logits gets a maximum of 0 and a
# sum with `BLOCK - cols` extra terms: the check names the case and the first wrong cells.


# %%
@triton.jit
def softmax_pad_zero(out_ptr, x_ptr, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    x = tl.load(x_ptr + row * cols + c, mask=mask, other=0.0)
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    tl.store(out_ptr + row * cols + c, tl.where(s > 0, e / s, 0.0), mask=mask)


tri.expect(WrongAnswer, "triton_softmax", softmax_pad_zero, seed=0)

# %% [markdown]
# ## 3. The tiled matrix product: shared tiles become `tl.dot`
#
# In PMPP chapter 5 a block of `TILE x TILE` threads walked along `inner`, each thread copying one
# element of each tile into shared memory, two barriers per step, then `TILE` products each. In
# Triton the program loads the two tiles as values (`BM x BK` and `BK x BN`, zeros past the edges
# through the masks' `other=0.0`) and `tl.dot` multiplies them; no barrier, no shared array in sight.
# `input_precision="ieee"` asks for true FP32 products like the Numba kernel's: by default Triton uses
# TF32 on tensor cores (10 bits of mantissa), which fails the chapter's tolerance. `tl.dot` takes
# tiles of at least 16 x 16.
#
# **Exercise**: the loop over `inner` in steps of `BK`: load the tile of `m` (rows `r`, columns `k`)
# and the tile of `n` (rows `k`, columns `c`), masked, and accumulate their product.


# %%
@triton.jit
def matmul_kernel(
    p_ptr, m_ptr, n_ptr, rows, inner, cols, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    r = tl.program_id(1) * BM + tl.arange(0, BM)  # the tile's rows (blockIdx.y * TILE + ty, every ty)
    c = tl.program_id(0) * BN + tl.arange(0, BN)  # its columns (blockIdx.x * TILE + tx, every tx)
    kk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    ### BEGIN SOLUTION
    for k0 in range(0, inner, BK):
        k = k0 + kk
        a_mask = (r[:, None] < rows) & (k[None, :] < inner)
        b_mask = (k[:, None] < inner) & (c[None, :] < cols)
        a = tl.load(m_ptr + r[:, None] * inner + k[None, :], mask=a_mask, other=0.0)
        b = tl.load(n_ptr + k[:, None] * cols + c[None, :], mask=b_mask, other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    ### END SOLUTION
    tl.store(p_ptr + r[:, None] * cols + c[None, :], acc, mask=(r[:, None] < rows) & (c[None, :] < cols))


# %%
tri.check("triton_matmul", matmul_kernel)

# %% [markdown]
# The Numba kernel it came from, checked on the same spec and cases by the course's simulator:

# %%
puzzles.check("ch05_matmul_tiled", matmul.numba_kernel)

# %% [markdown]
# Side by side:

# %%
beside(matmul.numba_kernel, matmul.matmul_kernel)

# %% [markdown]
# A note for CPU users: with Triton 3.6 (Colab's) and NumPy 2.4, the interpreter fails on a loop over
# a size known only at run time, `for k0 in range(0, inner, BK)`, with "only 0-dimensional arrays can
# be converted to Python scalars". The course patches that one conversion when it loads Triton on a
# CPU (`puzzles/triton/lang.py`); Triton 3.8 has the fix itself.

# %% [markdown]
# ## 4. Fused: the residual add and LayerNorm
#
# The GPT-2 block adds the attention's output to the residual stream and normalises the sum right
# away. The course's fused Numba kernel does both with one warp per row; the Triton kernel with one
# program per row. Both read `x` and `y` once and write `res` and `out` once, where the two separate
# kernels would write `res` and read it back. The `tl.where(mask, h - mean, 0.0)` matters: the lanes
# past the row's end hold 0, and `(0 - mean)^2` would join the variance.

# %%
beside(layernorm.numba_kernel, layernorm.residual_layernorm_kernel)

# %%
puzzles.check("llm4_residual_layernorm", layernorm.numba_kernel)

# %%
tri.check("triton_residual_layernorm", layernorm.residual_layernorm_kernel)

# %% [markdown]
# ## 5. FlashAttention forward
#
# The Numba kernel gives each query a thread and copies tiles of K and V into shared memory; the
# Triton kernel holds a tile of `BR` queries and streams `BC`-key tiles of K and V. The scores of a
# tile are one `tl.dot(q, tl.trans(k))`; the online softmax is the same algebra as in Transformer
# kernels 3 (a running maximum `m` and sum `lsum` per query, the accumulator rescaled by
# `exp(m_old - m_new)` per tile), on vectors. The causal mask and the keys past `T` are a
# `tl.where(..., s, -inf)`.

# %%
beside(flash_attention.numba_kernel, flash_attention.flash_kernel)

# %%
tri.check("triton_flash_attention", flash_attention.flash_kernel)

# %% [markdown]
# ## 6. Out of bounds: triton-viz's sanitizer
#
# The course's simulator flags a Numba thread that reads past an array. For Triton, the tool is
# [triton-viz](https://github.com/Deep-Learning-Profiling-Tools/triton-viz)'s sanitizer: it runs the
# kernel in the interpreter and checks every load and store against the tensors' memory. It reports
# and then calls `sys.exit(1)`; `sanitize.sanitize` catches that exit and says what was found. Here,
# the vector add without its mask, on 100 elements with blocks of 64:


# %%
@triton.jit
def add_no_mask(out_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(a_ptr + i) + tl.load(b_ptr + i))


if sanitize.why_not():
    print(sanitize.why_not())
else:
    torch = lang.load()[2]
    dev = lang.device()
    a, b, out = torch.randn(100, device=dev), torch.randn(100, device=dev), torch.empty(100, device=dev)
    try:
        sanitize.sanitize(add_no_mask, (2,), out, a, b, 100, BLOCK=64)
    except sanitize.OutOfBounds as e:
        print(f"OutOfBounds (as expected): {e}")

# %% [markdown]
# ## 7. Measure it: Numba, Triton and PyTorch
#
# On a GPU, each op at a size where it takes a while, validated against NumPy, then timed three ways
# in the same run: the course's Numba kernel, the Triton kernel, and the PyTorch call a user would
# make. Every tensor is a torch tensor; the Numba kernels read them through
# `__cuda_array_interface__` (`cuda.as_cuda_array(tensor)`: the same memory, no copy).
#
# First the two timers: the course's `helpers.timing.time_gpu` (CUDA events around batches of
# launches) and Triton's `triton.testing.do_bench` on the same launch. They must agree before either
# number means anything.

# %%
if bench.skip_reason():
    print(bench.skip_reason())
else:
    ours, theirs = bench.agreement()
    print(f"helpers.timing: {ours * 1e6:.1f} us, triton.testing.do_bench: {theirs * 1e6:.1f} us")
    results = bench.benchmark()
    print(bench.comparison(results))

# %% [markdown]
# ## 8. PyTorch's profiler and compiler
#
# The GPT-2 block of Transformer kernels 4, two ways: the course's fused plan of Numba launches inside
# a `torch.nn.Module` (its buffers are torch tensors, handed to the kernels without a copy), and the
# same block in PyTorch. `torch.profiler` records both; its table lists the GPU kernels by total time,
# and the timeline draws one forward of each. Then `torch.compile` compiles the PyTorch version:
# Inductor writes Triton kernels for what it fuses (the residual add with LayerNorm; the bias with
# GELU after cuBLAS's product), printed here and timed beside the course's fused kernels.
# (On a CPU, `torch.compile` writes C++ kernels, not Triton; this section needs a GPU.)

# %%
if torch_profile.skip_reason():
    print(torch_profile.skip_reason())
else:
    table, intervals, prof = torch_profile.profile_blocks()
    print(table)
    torch_profile.timeline(intervals)

# %%
if not torch_profile.skip_reason():
    rows, kernels = torch_profile.fused_comparison()
    print(timing.table(rows))
    for name, src in kernels.items():  # Inductor names each kernel after the ops it fused
        print(f"--- {name}, written by torch.compile ---\n{src}\n")

# %% [markdown]
# ## What you proved

# %%
tri.summary()
puzzles.summary()
