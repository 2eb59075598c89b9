# %% [markdown]
# # GPU Puzzles in CUDA C++
#
# The fourteen puzzles of the first notebook again, written in CUDA C++: the language of NVIDIA's
# documentation, of *Programming Massively Parallel Processors*, and of most GPU code you will read.
# Numba and CUDA C++ describe the same machine with different spellings, so each puzzle here is one
# you have already solved; the work is the translation.
#
# Each exercise is a C++ source string in a cell, followed by its check. NVRTC, NVIDIA's runtime
# compiler (installed with numba-cuda), compiles it for the T4 (sm_75) whether or not there is a GPU;
# a compile error names the line of the cell. On a GPU the kernel then runs on the same random cases
# as its Numba twin and is compared with the same NumPy spec; compute-sanitizer, where installed,
# looks for out-of-bounds accesses and shared-memory races. Without a GPU the check says plainly that
# the kernel was compiled but not run: the strict simulator runs Numba kernels only, so check the
# Numba twin there.

# %% setup

# %%
import puzzles
from helpers.check import CompileRejected, expect_failure
from puzzles import cpp

# %% [markdown] cpp-names
# Two habits of C++ matter from the first puzzle on. A kernel's parameters carry their types, and the
# checker reads them: an array of float32 is `float*` (`const float*` for an input), a size is `int`.
# And C++ encodes those types into a function's name unless the kernel is declared `extern "C"`; the
# checker finds your kernel by its plain name (the Numba kernel's name), so keep `extern "C"`.

# %% [markdown]
# ## What a compile error looks like
#
# NVRTC's message names the line of the cell, and the checker repeats that line. Here Numba's
# spelling slipped into C++:

# %%
wrong = r"""
extern "C" __global__ void map_kernel(float* out, const float* a) {
    int i = cuda.threadIdx.x;
    out[i] = a[i] + 10.0f;
}
"""
expect_failure(CompileRejected, cpp.check, "map", wrong)

# %% [markdown]
# And without `extern "C"` the kernel compiles under a C++ name that encodes its parameter types:

# %%
expect_failure(CompileRejected, cpp.check, "map", wrong.replace('extern "C" ', "").replace("cuda.", ""))

# %% [markdown] statement:map
#
# In C++: `out` and `a` are `float*`; `10.0f` is a float32 constant (`10.0` would be a double).

# %% cpp:map

# %% [markdown] statement:zip

# %% cpp:zip

# %% [markdown] statement:guard

# %% cpp:guard

# %% [markdown] statement:map_2d
#
# In C++ there is no `a[i, j]`: the matrix arrives as one flat array, row after row, so element
# `(i, j)` is `a[i * size + j]`. (`a[i, j]` does compile: C++ reads it as `a[j]`, the comma operator.)

# %% cpp:map_2d

# %% [markdown] statement:broadcast
#
# In C++: `a` is `size x 1` and `b` is `1 x size`, so `a[i, 0]` is `a[i]` and `b[0, j]` is `b[j]`.

# %% cpp:broadcast

# %% [markdown] statement:blocks

# %% cpp:blocks

# %% [markdown] statement:blocks_2d

# %% cpp:blocks_2d

# %% [markdown] statement:shared
#
# In C++ the shared array is a declaration, `__shared__ float cache[TPB];`, with `TPB` a `#define`.

# %% cpp:shared

# %% [markdown] statement:pool

# %% cpp:pool

# %% [markdown] statement:dot

# %% cpp:dot

# %% [markdown] statement:conv

# %% cpp:conv

# %% [markdown] statement:prefix_sum

# %% cpp:prefix_sum

# %% [markdown] statement:axis_sum
#
# In C++: `a` is `rows x size`, flat, so row `row` starts at `a[row * size]`; `out` is `rows x 1`, so
# `out[row, 0]` is `out[row]`.

# %% cpp:axis_sum

# %% [markdown] statement:matmul

# %% cpp:matmul

# %% [markdown]
# ## Done
#
# Every puzzle in both spellings. The chapter notebooks' solution versions show the C++ twin of
# their central kernel (vector add, tiled matrix multiply, the shuffle reduction, the Kogge-Stone
# scan, the warp softmax and the FlashAttention forward) after the Numba one, checked the same way.

# %% [markdown]
# ## What you proved
#
# The C++ twins this session checked: passed on a GPU, or (without one) compiled for the T4 only.

# %%
puzzles.summary("puzzles", cpp=True)
