# %% [markdown]
# # PMPP chapter 13: sorting
#
# Comparison sorts (quicksort, merge sort) spend `n log n` comparisons. **Radix sort** compares
# nothing: it looks at the keys a few bits at a time, the *digit*, and distributes them into buckets
# by that digit. Least significant digit first, one pass per digit; each pass must be **stable**
# (keys with equal digits keep the order the earlier passes gave them), and after the last pass the
# keys are sorted. For 32-bit keys and 4-bit digits that is 8 passes, each a pure data movement: just
# what GPUs are good at.
#
# The ladder follows the chapter:
#
# 1. one bit: a stable **split**, where each key's destination comes from an exclusive scan;
# 2. one digit: per-block **bucket counts**, a **scan** of the count table, and a **scatter**, first
#    straight to global memory, then made coalesced by **sorting each tile locally** first;
# 3. **thread coarsening**: fewer, bigger tiles, one scan serving many keys;
# 4. **float keys**: a bit trick turns float order into unsigned-integer order;
# 5. **merge sort**, built on chapter 12's co-rank.
#
# Keys are `uint32`. Where the algorithm promises stability we check it with key-value pairs whose
# values are all different: a reordering of equal keys shows up in the values.

# %% setup

# %%
import inspect

import numba  # noqa: F401 (the kernel cells use numba.int32 and numba.uint32)
import numpy as np
from numba import cuda

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, WrongAnswer, expect_failure
from puzzles.pmpp import ch13_sorting as ch13
from puzzles.pmpp.ch13_sorting import *  # its constants: TPB, R_TPB, RADIX_BITS, BUCKETS, MAX_KEY, ...

# TPB: 8 threads per block in the split and merge puzzles; R_TPB: 64 threads (two warps) per tile in
# the radix passes; RADIX_BITS: 2-bit digits in the puzzles (the GPU benchmark uses 4), BUCKETS =
# 1 << RADIX_BITS; MAX_KEY: padding, sorts after every real key of its bucket; SIGN = 0x80000000.
digit = ch13.digit  # a device function: (key >> shift) & (BUCKETS - 1)

# %% [markdown]
# ## One bit: the split
#
# Sort by one bit `b` and keep the order otherwise: the keys whose bit is 0 go to the front, in their
# order, then the keys whose bit is 1, in theirs. Where does key `i` go?
#
# * if its bit is 0: to `i` minus the number of 1s before it (the 0s before it, that is);
# * if its bit is 1: after all `zeros` zeros, plus the number of 1s before it.
#
# "The number of 1s before `i`" for every `i` at once is an **exclusive scan** of the bits: chapter 11.
# The book scans the bits of the whole array; here each block splits its own section of `TPB` keys,
# with a Kogge-Stone scan in shared memory. (Kogge-Stone is inclusive: subtract the key's own bit.)

# %% [markdown] statement:ch13_split

# %% kernel:ch13_split

# %%
puzzles.show("ch13_split", split_kernel)

# %%
puzzles.check("ch13_split", split_kernel)

# %% [markdown]
# Stability is the point. Fill the 1s in from the back of the section instead (`valid - 1 - before`):
# the section is still partitioned by the bit, but the 1s come out reversed. The keys alone might
# even look right where they are equal; the values give it away.


# %%
@cuda.jit
def split_unstable(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    before = ones[t] - b
    if i < n:
        dst = t - before if b == 0 else valid - 1 - before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


expect_failure(WrongAnswer, puzzles.check, "ch13_split", split_unstable)

# %% [markdown]
# ## One digit: count, scan, scatter
#
# A pass over `RADIX_BITS` bits at once sorts into `BUCKETS = 2 ** RADIX_BITS` buckets. The output is
# all of bucket 0, then all of bucket 1, and so on; inside a bucket, the keys in their input order. So
# a key's destination is: (keys in smaller buckets) + (keys of its own bucket that come before it).
# Each block owns a **tile** of the input, and one pass is three launches:
#
# 1. **count**: each tile counts its keys per bucket, into a table laid out *bucket-major*:
#    `counts[d * tiles + b]`;
# 2. **scan**: an exclusive scan of that table. Bucket-major order is exactly output order (bucket 0 of
#    tile 0, of tile 1, ..., then bucket 1 of tile 0, ...), so `offsets[d * tiles + b]` is where tile
#    `b`'s keys of bucket `d` start;
# 3. **scatter**: each key goes to its tile's offset for its bucket plus its rank among the tile's
#    keys of that bucket.
#
# The count privatises the histogram in shared memory (chapter 9) and writes one entry per bucket.

# %% [markdown] statement:ch13_radix_count

# %% kernel:ch13_radix_count

# %%
puzzles.check("ch13_radix_count", radix_count)

# %% [markdown]
# The count table has `BUCKETS` entries per tile: far fewer than keys, but with 8-bit digits and
# 2^26 keys still millions. Its scan is chapter 11's hierarchical scan, reduce-then-scan: split the
# table into chunks, one per block; each block adds up its chunk; then each block scans its chunk,
# starting from the sum of the chunk totals before it. Inside a block, each thread handles `S_ITEMS`
# consecutive entries itself and the block scans the threads' totals with warp shuffles (chapter 11's
# fast scan, as a device function). A small table needs one chunk, one block, and no totals.

# %%
block_exclusive_scan = ch13.block_exclusive_scan
print(inspect.getsource(block_exclusive_scan.py_func))

# %% [markdown] statement:ch13_chunk_sums

# %% kernel:ch13_chunk_sums

# %%
puzzles.check("ch13_chunk_sums", chunk_sums)

# %% [markdown] statement:ch13_scan_counts

# %% kernel:ch13_scan_counts

# %%
puzzles.check("ch13_scan_counts", scan_counts)

# %% [markdown]
# ### The scatter, straight to global memory
#
# The direct way: each thread counts the earlier keys of its tile that share its bucket (a loop over
# up to `blockDim` shared entries: fine for a lesson, too slow for big tiles), and writes. It is
# correct. Now look at the addresses one warp writes: its 32 keys fall into every bucket, so one store
# instruction of the warp lands in up to `BUCKETS` separate places of the output, a few keys in each,
# and each place costs at least one 32-byte sector. Here there are 4 buckets; with 4-bit digits a
# warp's store would be cut into 16 pieces of about two keys.

# %% [markdown] statement:ch13_radix_scatter_direct

# %% kernel:ch13_radix_scatter_direct

# %%
puzzles.show("ch13_radix_scatter_direct", radix_scatter_direct, view="coalescing")

# %%
puzzles.check("ch13_radix_scatter_direct", radix_scatter_direct)

# %% [markdown]
# ### Sort the tile first, then scatter
#
# The fix of section 13.3: sort the tile by the digit **in shared memory** first (`RADIX_BITS` stable
# splits, lowest bit first, each one the split above as a device function). Then the tile's keys of
# each bucket sit together, and sorted position `t` goes to `offsets[d * tiles + b] + (t - start of
# bucket d in the tile)`. Neighbouring threads now hold neighbouring keys of the same bucket, and a
# warp's store lands in one or two runs of neighbouring addresses. Compare the sectors moved on the
# `keys_out` store line with the direct scatter's above: the same keys to the same places, fewer
# sectors.

# %%
split_shared = ch13.split_shared
print(inspect.getsource(split_shared.py_func))

# %% [markdown] statement:ch13_radix_scatter

# %% kernel:ch13_radix_scatter

# %%
puzzles.show("ch13_radix_scatter", radix_scatter, view="coalescing")

# %%
puzzles.check("ch13_radix_scatter", radix_scatter)

# %% [markdown]
# Every tile has its own offset per bucket. Use tile 0's offsets for every tile and two tiles write
# the same places of the output: the checker sees two blocks write one element.


# %%
@cuda.jit
def scatter_tile0_offsets(keys_out, vals_out, keys, vals, offsets, shift, n):
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    ones = cuda.shared.array(R_TPB, numba.int32)
    first = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.blockIdx.x * bd + t
    k_s[t] = keys[i] if i < n else np.uint32(MAX_KEY)
    v_s[t] = vals[i] if i < n else 0
    for b in range(RADIX_BITS):
        split_shared(k_s, v_s, ones, shift + b, t, bd)
    d = digit(k_s[t], shift)
    if t == 0 or digit(k_s[t - 1], shift) != d:
        first[d] = t
    cuda.syncthreads()
    if i < n:
        dst = offsets[d * cuda.gridDim.x] + t - first[d]
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]


expect_failure(KernelDiagnosed, puzzles.check, "ch13_radix_scatter", scatter_tile0_offsets)

# %% [markdown]
# ### The whole sort
#
# Chain the three launches, one pass per digit, from the lowest digit up, swapping input and output
# buffers between passes. (This cell uses the module's reference scatter so that it runs before you
# have solved the exercise; put your `radix_scatter` in its place once it passes.)

# %%
rng = np.random.default_rng(0)
n = 150
keys = ch13.make_keys(rng, n, "dups")  # three distinct keys: stability matters
vals = ch13.make_vals(rng, n)
tiles = (n + R_TPB - 1) // R_TPB
k_in, v_in = keys.copy(), vals.copy()
k_out, v_out = np.zeros(n, np.uint32), np.zeros(n, np.int32)
counts = np.zeros(BUCKETS * tiles, np.int32)
offsets = np.zeros(BUCKETS * tiles, np.int32)
sums = np.zeros(1, np.int32)  # one chunk: the scan needs no chunk totals
for shift in range(0, 32, RADIX_BITS):
    radix_count[tiles, R_TPB](counts, k_in, shift, n)
    scan_counts[1, 32](offsets, counts, sums, counts.size, counts.size)
    ch13.radix_scatter[tiles, R_TPB](k_out, v_out, k_in, v_in, offsets, shift, n)
    k_in, k_out, v_in, v_out = k_out, k_in, v_out, v_in
order = np.argsort(keys, kind="stable")
print("sorted:", np.array_equal(k_in, keys[order]), " stable:", np.array_equal(v_in, vals[order]))

# %% [markdown]
# ## Choosing the radix
#
# More bits per pass means fewer passes (each reads and writes every key), but more buckets: a bigger
# count table to scan, more runs per tile, and more splits (or a wider split) in the local sort.
# 1 bit: 32 passes; 4 bits: 8 passes and 16 buckets; 8 bits: 4 passes, but 256 buckets per tile. The
# GPU benchmark below uses 4 for the plain sort and 8 for the coarsened one, whose bigger tiles keep
# the table small enough.
#
# ## Thread coarsening
#
# The count table has `BUCKETS` entries per tile and every tile pays for its own barriers and scans.
# Give each thread `COARSE` keys and the tiles grow `COARSE` times: fewer tiles, a smaller table, and
# one block scan now serves `COARSE` keys. In the coarsened local sort each thread owns `COARSE`
# *consecutive* slots of the tile (so its keys keep their order), counts them, and one scan tells it
# where they all go. It also splits on `SPLIT_BITS = 2` bits at a time: a 4-way split counts each way
# in its own 16-bit field of one int64, so one scan serves all four (the 1-bit split is the 2-way
# case). Loads and stores still stride by `blockDim`, so they stay coalesced.

# %% [markdown] statement:ch13_radix_count_coarse

# %% kernel:ch13_radix_count_coarse

# %%
puzzles.check("ch13_radix_count_coarse", radix_count_coarse)

# %% [markdown] statement:ch13_radix_scatter_coarse

# %% kernel:ch13_radix_scatter_coarse

# %%
puzzles.show("ch13_radix_scatter_coarse", radix_scatter_coarse, view="coalescing")

# %%
puzzles.check("ch13_radix_scatter_coarse", radix_scatter_coarse)

# %% [markdown]
# ## Float keys
#
# IEEE floats of the same sign are ordered like their bit patterns read as integers, with one twist:
# for negative floats a larger magnitude means *smaller*, yet its bits are larger. And the sign bit
# puts every negative float above every positive one as an unsigned integer. One flip fixes both:
# negative floats get all their bits flipped (now reversed, and below `0x80000000`), positive floats
# get the sign bit set (above every negative). Sort the keys, flip back, done. (NaNs have no place in
# an order; the flip puts positive NaNs after +inf and negative ones before -inf.)
#
# The kernels read the floats' bits as `uint32` arrays: `x.view(np.uint32)` on the host reinterprets
# the same bytes, no conversion.

# %% [markdown] statement:ch13_float_to_key

# %% kernel:ch13_float_to_key

# %%
puzzles.check("ch13_float_to_key", float_to_key)

# %% [markdown]
# Flipping the sign bit alone is the classic slip: the negatives now come first, but among them the
# largest magnitudes last, so -1.0 sorts before -2.0.


# %%
@cuda.jit
def float_sign_bit_only(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = bits[i] ^ np.uint32(SIGN)


expect_failure(WrongAnswer, puzzles.check, "ch13_float_to_key", float_sign_bit_only)

# %% [markdown] statement:ch13_key_to_float

# %% kernel:ch13_key_to_float

# %%
puzzles.check("ch13_key_to_float", key_to_float)

# %% [markdown]
# Flip, radix-sort the keys (the coarsened passes, keys only), flip back:

# %%
x = ch13.make_floats(np.random.default_rng(1), 100)
print("floats sorted like np.sort:", np.array_equal(ch13.sort_floats(x), np.sort(x)))

# %% [markdown]
# ## Merge sort
#
# Radix sort needs keys made of digits. Merge sort needs only a comparison, and it is stable too:
# start from runs of length 1 (trivially sorted), and merge neighbouring runs pairwise, doubling the
# run length each pass: `log2(n)` passes. Chapter 12's co-rank does the merging: the output position
# `k` inside a pair of runs determines, by binary search, how many elements of each run come before it.
# Here both runs live in one array, so the co-rank takes their offsets.

# %%
co_rank_runs = ch13.co_rank_runs
print(inspect.getsource(co_rank_runs.py_func))

# %% [markdown] statement:ch13_merge_pass

# %% kernel:ch13_merge_pass

# %%
puzzles.show("ch13_merge_pass", merge_pass)

# %%
puzzles.check("ch13_merge_pass", merge_pass)

# %% [markdown]
# The tie rule is the stability: take B's key on a tie (`<` for `<=`) and equal keys swap their order,
# which the values reveal.


# %%
@cuda.jit
def merge_ties_to_b(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] < keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


expect_failure(WrongAnswer, puzzles.check, "ch13_merge_pass", merge_ties_to_b)

# %% [markdown]
# The whole merge sort: passes of width 1, 2, 4, ... (the module's reference pass, for the same
# reason as above):

# %%
keys = ch13.make_keys(rng, 100, "dups")
vals = ch13.make_vals(rng, 100)
got_k, got_v = ch13.merge_sort(keys, vals)
order = np.argsort(keys, kind="stable")
print("sorted:", np.array_equal(got_k, keys[order]), " stable:", np.array_equal(got_v, vals[order]))

# %% [markdown]
# A pass of this merge sort makes every thread run its own binary search through global memory; the
# tiled and circular-buffer merges of chapter 12 are what a fast merge sort would use for the long
# passes, with a sort inside shared memory for the first ones.
#
# ## Measure it
#
# On a GPU: the full radix sort of 2^26 random `uint32` keys, coarsened (four 8-bit passes, tiles
# of 256 threads x 8 keys) and plain (eight 4-bit passes, 256 keys per tile, the key-value scatter
# carrying a scratch value), against
# `cupy.sort` (CUB's radix sort) and the device copy, all in the same run, after each is checked
# against NumPy on odd sizes and every kind of key (the key-value sorts for stability too). The bytes
# counted are the keys read once and written once, so the GB/s ratio of two sorts is their ratio in
# keys per second. The goal: 40% of `cupy.sort`. On a CPU machine this cell says so and does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    rows = ch13.benchmark()
    print(timing.table(rows))
    timing.bar_chart(rows, title="Sorting 2^26 uint32 keys")

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("pmpp-13")
