# %% [markdown]
# # Transformer kernels 3: attention, from naive to FlashAttention
#
# Self-attention is the one operation of a transformer that mixes tokens. For one head, with the
# queries, keys and values of `T` tokens as rows of `Q`, `K`, `V` (each `T x d`, `d` the head
# dimension):
#
# $$\mathrm{out} = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt d}\right) V .$$
#
# Row `i` of the score matrix `S = Q K^T / sqrt(d)` says how well query `i` matches each key; the
# softmax turns the row into weights that are positive and sum to 1; the output row `i` is the
# weighted average of the value rows. In a GPT the model may not look ahead: query `i` sees only the
# keys `j <= i` (the **causal mask**), done by setting the hidden scores to `-inf`, whose weight is
# exactly `exp(-inf) = 0`. Why divide by `sqrt(d)`: a dot product of `d` terms of unit size grows like
# `sqrt(d)`, and without the scale a large head dimension pushes the softmax towards a one-hot row.
#
# Every array here is `(BH, T, d)`: batch times heads, each head on its own. The ladder:
#
# 1. **naive**, as three kernels through global memory: scores, softmax, weights times values. The
#    `T x T` matrices `S` and `P` are written and read back;
# 2. **fused per query row**: one thread per query runs the **online softmax** over the keys, and no
#    `T x T` matrix exists at all;
# 3. **FlashAttention-style**: a block of queries loads `K` and `V` in tiles into shared memory once,
#    for all its queries, and applies the online softmax tile by tile (Dao et al., 2022).
#
# Softmax itself, fast, is the subject of *Transformer kernels 1*; here the softmax kernel is the
# simplest one that is right, because the lesson is what happens around it.

# %% setup

# %%
import math

import numba
import numpy as np
from numba import cuda

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, WrongAnswer, expect_failure
from puzzles.llm import attention as la
from puzzles.llm.attention import *  # its constants (the tiled kernel's are explained below):

# TPB = 8: naive kernels, threads per block along each axis; BR = 8: FlashAttention-style, queries
# per block (one thread each); BC = 4: keys per tile of K and V in shared memory; MAX_D = 16: the
# largest head dimension in the puzzles (local and shared arrays); NEG_INF: the score of a hidden key;
# DB = 8: the decode kernel's threads per block

# %% [markdown]
# ## Naive attention: three kernels
#
# The direct translation of the formula: one kernel per operation, each reading its input from
# global memory and writing its result back.
#
# **Scores.** One thread per entry of `S`: a dot product of a query row and a key row, scaled, or
# `-inf` above the diagonal when the mask is on. The grid is three-dimensional: keys along `x`,
# queries along `y`, one head per `blockIdx.z`.

# %% [markdown] statement:llm3_attn_scores

# %% kernel:llm3_attn_scores

# %%
puzzles.check("llm3_attn_scores", attn_scores)

# %% [markdown]
# The most common mistake with the mask is its edge: `j >= i` hides the diagonal, so a token cannot
# attend to itself, and the first query (which sees only itself) is left with nothing. The check
# compares against NumPy on cases with and without the mask, including a single token:


# %%
@cuda.jit
def scores_hide_diagonal(s, q, k, causal):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    b = cuda.blockIdx.z
    if i < q.shape[1] and j < q.shape[1]:
        if causal and j >= i:
            s[b, i, j] = NEG_INF
        else:
            acc = np.float32(0.0)
            for c in range(q.shape[2]):
                acc += q[b, i, c] * k[b, j, c]
            s[b, i, j] = acc / math.sqrt(q.shape[2])


expect_failure(WrongAnswer, puzzles.check, "llm3_attn_scores", scores_hide_diagonal)

# %% [markdown]
# **Softmax**, one thread per row, in three passes: the maximum, the sum of `exp(s - max)`, and the
# weights. Subtracting the maximum changes nothing mathematically (it cancels between numerator and
# denominator) and everything numerically: `exp(89)` is already infinite in float32, and the cases
# here have scores of up to 100. A row whose keys are all hidden would give `0 / 0`; with the
# causal mask every row keeps at least its diagonal.

# %% [markdown] statement:llm3_attn_softmax

# %% kernel:llm3_attn_softmax

# %%
puzzles.check("llm3_attn_softmax", attn_softmax)

# %% [markdown]
# **Weights times values**: a small matrix product, one thread per output element.

# %% [markdown] statement:llm3_attn_pv

# %% kernel:llm3_attn_pv

# %%
puzzles.check("llm3_attn_pv", attn_pv)

# %% [markdown]
# Chained, the three kernels compute attention. `la.attention_naive` launches the course's three
# reference kernels (the same code as above) on a causal example with large scores:

# %%
rng = np.random.default_rng(0)
q, k, v = la._qkv(rng, 2, 13, 5, big=True)
out = np.zeros_like(q)
inter = la.attention_naive(out, q, k, v, 1)
print("largest error vs NumPy (float64):", np.abs(out - la.attention_spec(q, k, v, 1)).max())
print("intermediate arrays:", {name: a.shape for name, a in inter.items()})

# %% [markdown]
# ## What the naive version costs
#
# Count what the threads read and write in global memory. At GPT-2 small's shapes (12 heads, head
# dimension 64) with a batch of 8 and a 1024-token context, `S` and `P` are each
# `96 x 1024 x 1024` floats: 384 MiB apiece, allocated, written once and read back (the softmax
# reads its row three times). The work itself, `Q`, `K`, `V` and `O`, is 96 MiB in all.
# `la.traffic` computes the accesses each version's threads request; the simulator's trace counts
# them, and the two agree (on a small head, `T = 32`, `d = 8`):

# %%
counted = la.counted_accesses(t=32, d=8)
for version, (reads, writes) in counted.items():
    f = la.traffic(1, 32, 8, version)
    print(
        f"{version:6s} trace: {reads:6d} reads {writes:5d} writes    formula: {f['reads']:6d} reads "
        f"{f['writes']:5d} writes"
    )

# %%
shape = dict(bh=96, t=1024, d=64)
print(f"{'version':8s} {'requested':>12s} {'extra memory':>14s}")
for version in ("naive", "row", "flash"):
    f = la.traffic(**shape, version=version, br=64)
    print(f"{version:8s} {f['bytes'] / 2**30:9.2f} GiB {f['extra'] / 2**20:10.0f} MiB")

# %% [markdown]
# Two things stand out. The naive version needs 768 MiB of scratch memory that grows with `T^2` (at
# `T = 8192` it would be 48 GiB). And the fused-per-row version in the middle *requests* the most:
# every query's thread reads all of `K` and `V`. On a GPU the L2 cache absorbs much of that repeated
# reading, but nothing guarantees it; the FlashAttention-style kernel makes the reuse explicit by
# loading each tile of `K` and `V` into shared memory once per block of 64 queries.
#
# ## The online softmax
#
# To fuse the three kernels, a thread must produce `out_i` while walking the keys once, without
# storing the row of scores. The obstacle is the softmax's normaliser: it needs the maximum and the
# sum over *all* keys before any weight is known. The online softmax (Milakov and Gimelshein, 2018)
# keeps three running quantities after keys `1..j`:
#
# $$m_j = \max_{j' \le j} x_{j'}, \qquad \ell_j = \sum_{j' \le j} e^{x_{j'} - m_j}, \qquad
#   a_j = \sum_{j' \le j} e^{x_{j'} - m_j}\, v_{j'} .$$
#
# A new score $x_{j+1}$ raises the maximum to $m_{j+1} = \max(m_j, x_{j+1})$. Every term summed so
# far was taken relative to the old maximum; multiplying by $\alpha = e^{m_j - m_{j+1}}$ moves it to
# the new one, since $e^{x - m_j} e^{m_j - m_{j+1}} = e^{x - m_{j+1}}$:
#
# $$\ell_{j+1} = \alpha\, \ell_j + e^{x_{j+1} - m_{j+1}}, \qquad
#   a_{j+1} = \alpha\, a_j + e^{x_{j+1} - m_{j+1}}\, v_{j+1} .$$
#
# After the last key, $a_T / \ell_T$ is exactly the softmax-weighted average (the common factor
# $e^{-m_T}$ cancels). Every exponent is $\le 0$, so nothing overflows, and $\alpha \le 1$. Start from
# $m_0 = -\infty$, $\ell_0 = 0$: at the first key $\alpha = e^{-\infty} = 0$ multiplies nothing that
# matters. In code `lsum` is $\ell$ and `acc` is $a$.
#
# ## Fused: one thread per query row

# %% [markdown] statement:llm3_attn_row

# %% kernel:llm3_attn_row

# %%
puzzles.check("llm3_attn_row", attn_row)

# %% [markdown]
# Forget to rescale the accumulator and every value added before the maximum last grew keeps too
# large a weight. It only shows when the maximum changes after the first key, which random data
# does almost always, and the checker's several cases make sure of it:


# %%
@cuda.jit
def row_no_rescale(out, q, k, v, causal):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    b = cuda.blockIdx.y
    T = q.shape[1]
    d = q.shape[2]
    acc = cuda.local.array(MAX_D, numba.float32)
    if i < T:
        for c in range(d):
            acc[c] = 0.0
        m = NEG_INF
        lsum = np.float32(0.0)
        for j in range(i + 1 if causal else T):
            x = np.float32(0.0)
            for c in range(d):
                x += q[b, i, c] * k[b, j, c]
            x /= math.sqrt(np.float32(d))
            m_new = max(m, x)
            alpha = math.exp(m - m_new)
            p = math.exp(x - m_new)
            lsum = lsum * alpha + p
            for c in range(d):
                acc[c] = acc[c] + p * v[b, j, c]  # acc not multiplied by alpha
            m = m_new
        for c in range(d):
            out[b, i, c] = acc[c] / lsum


expect_failure(WrongAnswer, puzzles.check, "llm3_attn_row", row_no_rescale)

# %% [markdown]
# ## FlashAttention-style: tiles of K and V in shared memory
#
# In the fused kernel, the `BR` threads of a block all read the same key rows, each on its own. Load
# them once: the block copies a tile of `BC` rows of `K` and of `V` into shared memory, every thread
# uses the whole tile from there, and the block moves to the next tile. Global reads of `K` and `V`
# drop by the factor `BR` (64 on the GPU), as in the tiled matrix product of PMPP chapter 5.
#
# With a tile at a time, the online softmax also works a tile at a time: each thread scores its query
# against the tile's keys (kept in a small local array), takes the tile's maximum, rescales `lsum` and
# `acc` **once per tile**, and adds the tile's terms. This is the loop of FlashAttention; its second
# version (Dao, 2023) splits the queries across warps the same way.
#
# Details that make it right:
#
# - **two barriers per tile**: before loading (a slow thread may still be reading the previous
#   tile) and after (nobody reads a tile before it is complete). Every thread must reach both, even
#   threads whose query is past `T`; keep them outside `if i < T`;
# - **the last tile** may be partial: load only rows `k0 + r < T`, and score only those;
# - **causal**: a block needs no key past its last query, so the tile loop stops at
#   `min(T, q0 + BR)` (the same count for every thread, so the barriers match), and within a tile
#   thread `i` scores keys up to `i`.

# %% [markdown] statement:llm3_attn_flash

# %% kernel:llm3_attn_flash

# %%
puzzles.show("llm3_attn_flash", attn_flash)

# %%
puzzles.check("llm3_attn_flash", attn_flash)

# %% [markdown] solutions
# ### The same kernel in CUDA C++
#
# The solution above, spelled in CUDA C++ and checked on the same cases against the same spec
# (compiled for the T4 with NVRTC; run where there is a GPU).
# A pointer has no shape: `q.shape[1]` and `q.shape[2]` become the parameters `q_dim1` and `q_dim2`
# (the checker passes axis K of an array to a parameter named `ARRAY_dimK`). The local arrays are
# plain C arrays, and `causal` a `bool`.

# %% [markdown] cpp-names solutions

# %% cpp:llm3_attn_flash solutions

# %% [markdown]
# The barrier before loading is the one people drop: "the tile was loaded, synchronised, and used;
# why wait again?" Because a fast thread starts overwriting `kt` with the next tile while a slow one
# is still reading the current one. On a GPU that happens only sometimes; the simulator sees the
# overlap every time:


# %%
@cuda.jit
def flash_one_barrier(out, q, k, v, causal):
    kt = cuda.shared.array((BC, MAX_D), numba.float32)
    vt = cuda.shared.array((BC, MAX_D), numba.float32)
    qi = cuda.local.array(MAX_D, numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    t = cuda.threadIdx.x
    q0 = cuda.blockIdx.x * BR
    i = q0 + t
    b = cuda.blockIdx.y
    T = q.shape[1]
    d = q.shape[2]
    if i < T:
        for c in range(d):
            qi[c] = q[b, i, c] / math.sqrt(np.float32(d))
            acc[c] = 0.0
    m = NEG_INF
    lsum = np.float32(0.0)
    for k0 in range(0, min(T, q0 + BR) if causal else T, BC):
        for e in range(t, BC * d, BR):
            if k0 + e // d < T:
                kt[e // d, e % d] = k[b, k0 + e // d, e % d]
                vt[e // d, e % d] = v[b, k0 + e // d, e % d]
        cuda.syncthreads()  # only after loading: nothing before the next load
        if i < T:
            for r in range(min(BC, T - k0, i + 1 - k0) if causal else min(BC, T - k0)):
                x = np.float32(0.0)
                for c in range(d):
                    x += qi[c] * kt[r, c]
                m_new = max(m, x)
                alpha = math.exp(m - m_new)
                p = math.exp(x - m_new)
                lsum = lsum * alpha + p
                for c in range(d):
                    acc[c] = acc[c] * alpha + p * vt[r, c]
                m = m_new
    if i < T:
        for c in range(d):
            out[b, i, c] = acc[c] / lsum


expect_failure(KernelDiagnosed, puzzles.check, "llm3_attn_flash", flash_one_barrier)

# %% [markdown]
# And the partial last tile: load rows past the end of the sequence and a GPU reads whatever lies
# after `K` (another head's keys, or another array). Here, with `T` not a multiple of `BC`:


# %%
@cuda.jit
def flash_tile_past_end(out, q, k, v, causal):
    kt = cuda.shared.array((BC, MAX_D), numba.float32)
    vt = cuda.shared.array((BC, MAX_D), numba.float32)
    qi = cuda.local.array(MAX_D, numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    t = cuda.threadIdx.x
    q0 = cuda.blockIdx.x * BR
    i = q0 + t
    b = cuda.blockIdx.y
    T = q.shape[1]
    d = q.shape[2]
    if i < T:
        for c in range(d):
            qi[c] = q[b, i, c] / math.sqrt(np.float32(d))
            acc[c] = 0.0
    m = NEG_INF
    lsum = np.float32(0.0)
    for k0 in range(0, min(T, q0 + BR) if causal else T, BC):
        cuda.syncthreads()
        for e in range(t, BC * d, BR):
            kt[e // d, e % d] = k[b, k0 + e // d, e % d]  # no k0 + r < T test
            vt[e // d, e % d] = v[b, k0 + e // d, e % d]
        cuda.syncthreads()
        if i < T:
            for r in range(min(BC, T - k0, i + 1 - k0) if causal else min(BC, T - k0)):
                x = np.float32(0.0)
                for c in range(d):
                    x += qi[c] * kt[r, c]
                m_new = max(m, x)
                alpha = math.exp(m - m_new)
                p = math.exp(x - m_new)
                lsum = lsum * alpha + p
                for c in range(d):
                    acc[c] = acc[c] * alpha + p * vt[r, c]
                m = m_new
    if i < T:
        for c in range(d):
            out[b, i, c] = acc[c] / lsum


expect_failure(KernelDiagnosed, puzzles.check, "llm3_attn_flash", flash_tile_past_end)

# %% [markdown]
# ## What the GPU runs: register tiles and warp shuffles
#
# The kernel above is right and reads `K` and `V` `BR` times less often, but one thread per query
# does all of its query's arithmetic reading one shared value per multiply-add: on an H100 it runs
# at a few percent of the chip. The fix is the one that makes a matrix product fast (PMPP chapter
# 6, thread coarsening): give each thread a small **patch** of the score tile, `RM` queries by `RN`
# keys, so that each value it loads from shared memory serves several multiply-adds from registers.
#
# A row's scores now live in `TX` threads (consecutive lanes of one warp), so the row's maximum and
# sum are combined with `shfl_xor_sync`, which leaves the result in every lane of the row. The
# weights go through shared memory once more (`ps`) for the `P V` product, where each thread owns
# an `RM x RD` patch of the output. `Q` is loaded once, transposed and scaled. Three details are
# about the compiler, not the algorithm, and each one was worth a factor on the H100:
#
# - every loop that indexes the small per-thread arrays has a constant trip count, so Numba's
#   compiler unrolls it and keeps the arrays in registers (one variable index sends them all to
#   slow local memory);
# - float32 constants (`NEG_INF32`, `ZERO32`): a Python float literal makes the arithmetic float64;
# - Numba, like Python, wraps negative indices, which costs a test per access unless the compiler
#   can prove the index is not negative: the hot loops step flat offsets masked with `NONNEG`;
# - the tiles are loaded by element number `e`, row `e // MAX_D` and column `e % MAX_D`: dividing by
#   the constant `MAX_D` is a shift, dividing by the run-time `d` a 64-bit division of dozens of
#   instructions per element (this one change was worth 20%);
# - the `V` tile's columns past `d` are zeros, so the `P V` loop loads without a test.
#
# On an H100 the register patches took the one-thread-per-query kernel from 0.7 to 6 TFLOP/s, and
# these details to 13. It also takes the query blocks last-first: under the causal mask the last
# queries have the most keys, and starting the longest blocks first keeps the end of the grid short.

# %%
# the tiled kernel's block shape (small for the simulator) and the constants derived from it, which
# came with `from puzzles.llm.attention import *`
print(f"{TX} x {TY} threads, {RM} x {RN} scores each: {FB_R} queries a block, {FB_C} keys a tile")
print(f"{RD} output columns a thread; shared tiles of {QT_SIZE}, {KT_SIZE}, {VS_SIZE}, {PS_SIZE} floats")

# %% [markdown] statement:llm3_attn_flash_tiled

# %% kernel:llm3_attn_flash_tiled

# %%
puzzles.check("llm3_attn_flash_tiled", attn_flash_tiled)

# %% [markdown]
# ## Memory traffic, version by version
#
# The simulator counts every global access of the three versions on one causal head of 32 tokens
# (the puzzles' small tiles: `BR = 8`, `BC = 4`):

# %%
for version, (reads, writes) in la.counted_accesses(t=32, d=8, causal=1).items():
    print(f"{version:6s} {reads:6d} global reads  {writes:5d} global writes")

# %% [markdown]
# Per head and per query, the FlashAttention-style kernel reads `K` and `V` `T / BR` times in all
# instead of `T` times, never writes a score, and allocates nothing beyond its output: the memory it
# needs is independent of `T`. The forward pass pays nothing for this; in the backward pass
# FlashAttention recomputes the scores from `Q` and `K` instead of storing them, for the same reason.
#
# ## Decode: one new token over a KV cache
#
# Everything above is attention for a whole sequence at once, as training runs it. Generating text
# is different: each step adds **one** token, and its query must see every earlier token's key and
# value. Those never change (a token sees only the tokens before it), so a server keeps them: the
# **KV cache**, `(B, NH, TMAX, hs)` per layer for keys and as much for values. A step then computes the
# new token's `q`, `k`, `v`, appends `k` and `v` at its position `pos`, and computes one row of
# attention over rows `0 .. pos`: `O(pos hs)` work, where recomputing the whole prefix is `O(pos^2 hs)`.
#
# One query per head is little parallel work: `B * NH` rows in all. So a block of threads shares one
# head's row, each thread taking every `DB`-th cached key with its own online softmax, and the
# block **merges** the threads' partial states `(m, l, acc)` in shared memory: with `M` the largest
# `m`, `l = sum l_t exp(m_t - M)` and `acc = sum acc_t exp(m_t - M)`. The merge is exact, which is
# what flash-decoding builds on: for a long cache and few heads it splits the cache over **blocks**
# too and merges their states the same way, through global memory.
#
# What must be right: rows past `pos` are stale (left from an earlier, longer text) and must not be
# read; the new key goes to row `pos` before anyone reads it (a barrier); the head's slice of the
# QKV row is at `h * hs` in each of its three thirds.

# %% [markdown] statement:llm3_attn_decode

# %% kernel:llm3_attn_decode

# %%
puzzles.check("llm3_attn_decode", attn_decode)

# %% [markdown]
# Running one row too far reads a stale cache row into the softmax. The checker fills the rows past
# `pos` with junk, as a server's cache holds after a longer request:


# %%
@cuda.jit
def decode_one_row_too_far(y, k_cache, v_cache, qkv, pos):
    sm = cuda.shared.array(DB, numba.float32)
    sl = cuda.shared.array(DB, numba.float32)
    sacc = cuda.shared.array((DB, MAX_D), numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    h, b, t = cuda.blockIdx.x, cuda.blockIdx.y, cuda.threadIdx.x
    NH, hs = k_cache.shape[1], k_cache.shape[3]
    C = NH * hs
    for c in range(t, hs, DB):
        k_cache[b, h, pos, c] = qkv[b, C + h * hs + c]
        v_cache[b, h, pos, c] = qkv[b, 2 * C + h * hs + c]
    cuda.syncthreads()
    scale = np.float32(1.0) / math.sqrt(np.float32(hs))
    for c in range(hs):
        acc[c] = 0.0
    m = NEG_INF
    lsum = np.float32(0.0)
    for j in range(t, pos + 2, DB):  # pos + 1 is not this sequence's
        x = np.float32(0.0)
        for c in range(hs):
            x += qkv[b, h * hs + c] * scale * k_cache[b, h, j, c]
        m_new = max(m, x)
        alpha = math.exp(m - m_new)
        p = math.exp(x - m_new)
        lsum = lsum * alpha + p
        for c in range(hs):
            acc[c] = acc[c] * alpha + p * v_cache[b, h, j, c]
        m = m_new
    sm[t] = m
    sl[t] = lsum
    for c in range(hs):
        sacc[t, c] = acc[c]
    cuda.syncthreads()
    for c in range(t, hs, DB):
        mx = sm[0]
        for r in range(1, DB):
            mx = max(mx, sm[r])
        total = np.float32(0.0)
        o = np.float32(0.0)
        for r in range(DB):
            w = math.exp(sm[r] - mx)
            total += sl[r] * w
            o += sacc[r, c] * w
        y[b, h * hs + c] = o / total


expect_failure(WrongAnswer, puzzles.check, "llm3_attn_decode", decode_one_row_too_far, seed=0)

# %% [markdown]
# Notebook 25 generates text with this kernel: `puzzles/llm/training/kv_cache.py` runs the model one
# token at a time with a cache per layer and checks that it draws the same tokens as recomputing the
# whole prefix for every token.
#
# ## Measure it
#
# On a GPU: the naive pipeline and both FlashAttention-style kernels (the one-thread-per-query
# exercise and the register-tiled kernel, recompiled with `TX = 8, TY = 16, RM = 4, RN = 4`: 128
# threads, 64 queries a block, 32 keys a tile), all validated against NumPy first (at `T = 77`, then
# at full size on three heads), against PyTorch's
# `F.scaled_dot_product_attention` on the same data, all causal, in FP32, at GPT-2 small's attention
# shape with a 1024-token context (batch 8, 12 heads, head dimension 64). TF32 is kept off
# (`torch.backends.cuda.matmul.allow_tf32 = False`, `torch.backends.cudnn.allow_tf32 = False`), so
# torch multiplies in true FP32 as our kernels do. FLOP/s counts the `2 T^2 d` multiply-adds of the
# two products, halved by the mask. The benchmark also prints the memory each version allocates
# beyond `Q`, `K`, `V` and `O`. On a CPU machine this cell says so and does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = la.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Causal attention, FP32 (batch 8, 12 heads, T = 1024, d = 64)")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("llm-3")
