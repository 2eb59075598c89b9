# %% [markdown]
# # The machine: what a GPU is, and when it pays
#
# The puzzles treated the GPU as a pile of threads. This notebook looks at the machine under them,
# in your own device's numbers: how many streaming multiprocessors it has and what each one holds,
# how fast its memory is (measured, not quoted), what it costs to move data between the CPU's
# memory and the GPU's, how streams let copies and kernels overlap, what a kernel launch costs, and
# finally the question that decides whether to use a GPU at all: **from what size on is it faster
# than the CPU?** The CPU side is measured on every machine; the GPU measurements run where there
# is a GPU and print one line and skip where there is not.

# %% setup

# %%

from numba import cuda

import puzzles
from helpers import timing
from helpers.check import WrongAnswer, expect_failure
from puzzles.machine import measure

GPU = timing.skip_reason() is None

# %% [markdown]
# ## What a GPU is
#
# A GPU is a few dozen **streaming multiprocessors** (SMs) sharing one large memory (global memory,
# DRAM) through an L2 cache. Each SM runs many threads at once in groups of 32, the **warps**: all
# lanes of a warp execute the same instruction (SIMT, single instruction multiple threads), and an
# SM keeps many warps *resident* so that when one waits for memory (hundreds of cycles) another is
# ready to run. What a resident warp needs, the SM provides from fixed pools: registers, shared
# memory, block and thread slots. A kernel's grid of blocks is spread over the SMs; a block stays
# on one SM until it finishes. (PMPP chapter 4; the CUDA C++ Programming Guide's "Hardware
# Implementation" and compute-capability tables.)
#
# Your device, as its driver reports it:

# %%
if GPU:
    measure.print_table(measure.device_query())
else:
    print(timing.skip_reason(), "For reference, the T4 that Colab lends (from its datasheet):")
    measure.print_table(measure.T4)

# %% [markdown]
# A few numbers follow from these. The GPU keeps `SMs x max threads per SM` threads resident at
# once (40,960 on a T4): a kernel needs at least that many threads, and in practice several times
# more, to keep every SM busy. A T4 SM has 65,536 registers for up to 1,024 threads, 64 per thread
# at full occupancy: a kernel that needs more registers per thread fits fewer warps (puzzle II.14
# did the same sum for shared memory).
#
# The CPU that runs the other half of this notebook:

# %%
measure.print_table(measure.cpu_info())

# %% [markdown]
# ## Memory bandwidth, measured
#
# Most kernels in this course do little arithmetic per byte, so they run at the speed of memory.
# The datasheet gives a peak; a copy measures what a kernel can actually get (every byte read once
# and written once). On the CPU, the same with NumPy:

# %%
print(f"CPU: NumPy copy of 64 MiB: {measure.cpu_copy_bandwidth(1 << 26):.1f} GB/s")
if GPU:
    q = measure.device_query()
    print(
        f"GPU: device-to-device copy of 256 MiB: {measure.measured_bandwidth():.0f} GB/s "
        f"(peak from the clock and bus width: {q.get('peak memory bandwidth (GB/s)', '?')} GB/s)"
    )
else:
    print(timing.skip_reason())

# %% [markdown]
# ## Host and device: the transfers
#
# The GPU computes on its own memory; your arrays live in the CPU's. `cuda.to_device(a)` and
# `d.copy_to_host()` cross the PCIe bus (or NVLink), an order of magnitude slower than either
# memory. There are two kinds of host memory. Ordinary (**pageable**) memory may be swapped out by
# the operating system, so the driver first copies it into a **pinned** (page-locked) staging
# buffer and then lets the GPU's copy engine read that by DMA. Memory allocated pinned from the
# start, `cuda.pinned_array(shape, dtype)`, skips the staging copy, and only pinned memory can be
# copied asynchronously, overlapping with other work. Bandwidth by direction, size and kind:

# %%
if GPU:
    measure.print_transfers(measure.transfer_table())
else:
    print(timing.skip_reason())

# %% [markdown]
# Small copies are dominated by a fixed cost (tens of microseconds); large ones approach the bus's
# bandwidth, and pinned memory gets closer to it. The lesson for the rest of the notebook: data
# that has to cross the bus for one cheap operation is rarely worth sending.

# %% [markdown]
# ## The vector op, any size, any grid
#
# The timings below launch a SAXPY (`out = alpha * x + y`) on vectors of up to 10^8 elements with
# a grid sized for the GPU, a few blocks per SM, not one thread per element. Write that kernel.

# %% [markdown] statement:machine_saxpy

# %%
TPB = 32

# %% kernel:machine_saxpy

# %%
puzzles.show("machine_saxpy", saxpy_kernel)

# %%
puzzles.check("machine_saxpy", saxpy_kernel)

# %% [markdown]
# One element per thread, with the usual guard, is right only when the grid covers the data; here
# it does not, and the elements past the grid are never written:


# %%
@cuda.jit
def saxpy_one_each(out, x, y, alpha, size):
    i = cuda.grid(1)
    if i < size:
        out[i] = alpha * x[i] + y[i]


expect_failure(WrongAnswer, puzzles.check, "machine_saxpy", saxpy_one_each)

# %%
puzzles.hint("machine_saxpy", 1)

# %% [markdown]
# ## Streams: copies and kernels at the same time
#
# Work given to the GPU goes into a **stream**, a queue that runs in order. Work in *different*
# streams may run at the same time: a copy engine can move chunk 2 in while the SMs compute on
# chunk 1 and the other copy engine moves chunk 0 out. With `cuda.stream()` you make a stream, and
# pass it to copies (`d.copy_to_device(h, stream=s)`, from pinned memory) and launches
# (`kernel[grid, block, s](...)`). **Events** (`cuda.event()`, `e.record(s)`) mark points in a
# stream, and `cuda.event_elapsed_time(a, b)` gives the milliseconds between two of them, measured
# on the GPU. Below, eight chunks go through copy in, kernel, copy out, over three streams, with an
# event between stages; the timeline draws them.
#
# On the simulator the same code runs (its streams and events exist so that host code runs
# unchanged), but every call completes before the next starts: the timeline is a staircase with
# no overlap, and its times are the simulator's, not a GPU's.

# %%
if GPU:
    rows = measure.overlap_timeline(n=1 << 24, chunks=8, streams=3, reps=200)
    title = "8 chunks on 3 streams (GPU)"
else:
    rows = measure.overlap_timeline(n=8 * 32, chunks=8, streams=3, reps=2, threads=32)
    title = "8 chunks on 3 streams (simulator: synchronous, no overlap)"
measure.plot_timeline(rows, title)

# %% [markdown]
# With overlap, the total is close to the longest of the three kinds of work rather than their
# sum. Overlap needs pinned host memory, independent streams, and work big enough to hide.

# %% [markdown]
# ## The cost of a launch
#
# Every launch costs time before any thread runs: Python and Numba prepare the arguments, the
# driver queues the launch, the GPU schedules the grid. An empty kernel measures it, three ways:
# queued back to back (the host's cost per launch), on the GPU's own clock (the GPU's cost), and
# launched then waited for, one at a time (what a program that synchronises after every kernel pays).

# %%
if GPU:
    measure.print_table(measure.launch_overhead())
else:
    print(timing.skip_reason())

# %% [markdown]
# ## When does the GPU pay?
#
# The same three computations, at sizes from 10^3 to 10^8 elements (a matmul from 16 x 16 up):
#
# - on the CPU with NumPy (vectorised C, SIMD; matmul through a BLAS library, multithreaded);
# - on the CPU with Numba `@njit(parallel=True)`: a plain loop compiled with `prange`, spread over
#   all cores, its inner loop vectorised for the CPU's SIMD units;
# - on the GPU with the data already there (launch and synchronise included), and with the copies
#   in and out included.
#
# Every variant is checked against NumPy before it is timed. Under `CI` the sizes stop at 10^5 so
# that automated runs stay fast; without a GPU they stop at 10^7.

# %%
results, crossings = {}, {}
for op, sizes in (
    (measure.OPS[0], measure.vector_sizes()),
    (measure.OPS[1], measure.vector_sizes()),
    (measure.OPS[2], measure.matmul_sizes()),
):
    series = measure.cpu_timings(op, sizes)
    if GPU:
        gpu = measure.gpu_timings(op, sizes)
        series.update(gpu)
        cpu = {k: series[k] for k in ("NumPy", "Numba parallel")}
        crossings[op] = measure.crossover(sizes, cpu, gpu)
    results[op] = (sizes, series)
if not GPU:
    print(timing.skip_reason(), "The CPU curves are measured; the GPU's are not drawn.")
measure.plot_sizes(results, "Seconds per call, CPU and GPU" if GPU else "Seconds per call, CPU")

# %% [markdown]
# Where the GPU (data on the device) first beats the best CPU time and stays ahead, and how long
# the CPU took at that size: that is how much work a kernel must replace before a GPU pays.

# %%
if GPU:
    for op, cross in crossings.items():
        if cross is None:
            print(f"{op}: the GPU did not stay ahead of the CPU at these sizes")
        else:
            size, cpu_s = cross
            print(f"{op}: the GPU wins from n = {size:,}, where the best CPU time is {cpu_s * 1e6:.0f} us")
else:
    print(timing.skip_reason())

# %% [markdown]
# The rule of thumb you may have heard, that a GPU kernel should replace at least 50-100
# microseconds of CPU work, is the launch-and-synchronise cost measured above plus the GPU's
# ramp-up to a full machine; the crossover sizes measure it for your CPU and GPU. With the copies
# included, the vector op and the reduction (one or two flops per element crossing the bus) may
# never pay: the GPU wins when data stays on it across many kernels, or when there are many flops
# per byte moved, as in the matmul.
#
# ## Done
#
# The numbers to carry away: SMs x resident threads is how much parallelism a kernel must expose;
# memory bandwidth, not arithmetic, bounds most kernels; the bus is an order of magnitude slower
# still; a launch costs microseconds; streams hide copies behind compute. The next notebooks
# return to PMPP's patterns with these costs in mind.

# %% [markdown]
# ## What you proved
#
# Once every check above passes, this cell sums up what the checker now vouches for: the puzzles
# passed in this session, and the known-wrong kernels (from the course's tests) it rejects for them.

# %%
puzzles.summary("machine")
