"""PMPP chapter 9, histogram: atomics, privatisation, coarsening, aggregation. (Just over 500 lines:
one chapter, one module, as its notebook.)

    ch09_hist_atomic              one element per thread, one global atomic each
    ch09_hist_private_global      a private copy per block in global memory, merged at the end
    ch09_hist_private_shared      the private copy in shared memory: at most NUM_BINS global
                                  atomics per block
    ch09_hist_coarse_contiguous   each thread counts CFACTOR neighbouring elements
    ch09_hist_coarse_interleaved  grid-stride: the threads of a warp read neighbouring elements
    ch09_hist_aggregated          runs of equal bins counted in a register, one atomic per run
    ch09_hist_unrolled            interleaved, four loads issued before any atomic (for the GPU)

The book counts letters of a text; here the data are int32 values in [0, MAX_VALUE)
and bin b counts the values in [b * BIN_WIDTH, (b + 1) * BIN_WIDTH). Four-byte
elements let a simple kernel keep enough bytes in flight to stream at full speed.
"""

import math

import numpy as np
from numba import cuda, int32, uint32
from numba import uint64 as u

from helpers import timing, tuning
from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.rules import min_coalescing
from helpers.timing import specialize

# what `from puzzles.pmpp.ch09_histogram import *` gives a notebook: constants only, never a kernel
__all__ = ["NUM_BINS", "BIN_WIDTH", "CFACTOR", "UNROLL"]
NUM_BINS = 64
BIN_WIDTH = 16
MAX_VALUE = NUM_BINS * BIN_WIDTH
CFACTOR = 4  # contiguous coarsening: elements per thread
UNROLL = 4  # unrolled: loads in flight per thread per trip


@cuda.jit
def hist_atomic(hist, data, n):
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.add(hist, data[i] // BIN_WIDTH, 1)


@cuda.jit
def hist_private_global(hist, priv, data, n):
    # priv[b] is block b's own histogram: blocks no longer fight over the same counters.
    i = cuda.grid(1)
    blk = cuda.blockIdx.x
    if i < n:
        cuda.atomic.add(priv, (blk, data[i] // BIN_WIDTH), 1)
    cuda.syncthreads()
    for b in range(cuda.threadIdx.x, NUM_BINS, cuda.blockDim.x):
        count = priv[blk, b]
        if count > 0:
            cuda.atomic.add(hist, b, count)
        priv[blk, b] = 0  # hand the scratch back zeroed, ready for the next launch


@cuda.jit
def hist_private_shared(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    ### BEGIN SOLUTION
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    if i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)
    ### END SOLUTION


@cuda.jit
def hist_coarse_contiguous(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    start = cuda.grid(1) * CFACTOR
    for i in range(start, min(start + CFACTOR, n)):
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


@cuda.jit
def hist_coarse_interleaved(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    ### BEGIN SOLUTION
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    ### END SOLUTION
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


@cuda.jit
def hist_aggregated(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    ### BEGIN SOLUTION
    prev = -1  # the bin of the current run (none yet)
    run = 0  # its length so far
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        b = data[i] // BIN_WIDTH
        if b == prev:
            run += 1
        else:
            if run > 0:
                cuda.atomic.add(hist_s, prev, run)
            prev = b
            run = 1
    if run > 0:
        cuda.atomic.add(hist_s, prev, run)
    ### END SOLUTION
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


@cuda.jit
def hist_unrolled(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    v = cuda.local.array(UNROLL, int32)  # registers: the loops over UNROLL unroll
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    stride = cuda.gridsize(1)
    # UNROLL independent loads per trip, all issued before the first atomic waits on one:
    # UNROLL times the bytes in flight per thread of the plain grid-stride loop.
    for i in range(cuda.grid(1), n, UNROLL * stride):
        if i + (UNROLL - 1) * stride < n:
            for k in range(UNROLL):  # a whole trip: no bounds tests between the loads
                v[k] = data[i + k * stride]
            for k in range(UNROLL):
                cuda.atomic.add(hist_s, v[k] // BIN_WIDTH, 1)
        else:
            for k in range(UNROLL):
                if i + k * stride < n:
                    cuda.atomic.add(hist_s, data[i + k * stride] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


@cuda.jit
def hist_unsigned(hist, data, n):
    # hist_unrolled with unsigned arithmetic (u is uint64), for the GPU: `data` is passed viewed as
    # uint32 (the values are never negative), so a bin is a shift rather than Python's floor
    # division of a signed value, and indices that cannot be negative skip Numba's wrap-around of
    # negative ones (a[-1] is the last element, as in Python). The profiler finds hist_unrolled
    # limited by the integer pipe on an H200, not by memory.
    hist_s = cuda.shared.array(NUM_BINS, int32)
    v = cuda.local.array(UNROLL, uint32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    stride = u(cuda.gridsize(1))
    nn = u(n)
    width = u(BIN_WIDTH)
    i = u(cuda.grid(1))
    while i + u(UNROLL - 1) * stride < nn:
        for k in range(UNROLL):
            v[k] = data[i + u(k) * stride]
        for k in range(UNROLL):
            cuda.atomic.add(hist_s, v[k] // width, 1)
        i += u(UNROLL) * stride
    while i < nn:
        cuda.atomic.add(hist_s, data[i] // width, 1)
        i += stride
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


def histogram(data):
    """NumPy truth."""
    return np.bincount(data // BIN_WIDTH, minlength=NUM_BINS).astype(np.int32)


def spec(data, n):
    return histogram(data)


def _data(rng, n):
    """Half uniform values, half long runs of one value (what aggregation is for), shuffled in chunks."""
    k = n // 2
    uniform = rng.integers(0, MAX_VALUE, k)
    runs = np.repeat(rng.integers(0, MAX_VALUE, n), rng.integers(1, 200, n))[: n - k]
    return np.concatenate([runs, uniform]).astype(np.int32)


SIZES = (300, 45, 1000, 777, 130)  # case 0's size is SIZES[0]; the others are drawn per seed


def _cases(rng, grid_of, block=(64, 32, 64, 48, 32), per_thread=1):
    """Case 0 the notebook's (SIZES[0] elements, block[0] threads); then per seed one block size drawn
    from `block` and n at the edges around what one block covers (1, that - 1, that, that + 1), a few
    blocks, and more elements than the old fixed sizes (1153-1300: more than 6 trips round
    the largest interleaved grid)."""
    first = Case(
        grid=grid_of(SIZES[0], block[0]),
        block=block[0],
        args={"hist": np.empty(NUM_BINS, np.int32), "data": _data(rng, SIZES[0]), "n": SIZES[0]},
    )
    threads = int(rng.choice(block))
    sizes = edge_sizes(rng, SIZES[0], threads * per_thread, (1153, 1300))[1:]
    return [first] + [
        Case(
            grid=grid_of(n, threads),
            block=threads,
            args={"hist": np.empty(NUM_BINS, np.int32), "data": _data(rng, n), "n": n},
        )
        for n in sizes
    ]


def cases_one_each(rng):
    # Some blocks larger than NUM_BINS (one atomic per element would break the budget), some smaller
    # (zeroing and flushing need a loop).
    return _cases(rng, lambda n, b: math.ceil(n / b), block=(128, 32, 96, 80, 48))


def cases_contiguous(rng):
    return _cases(rng, lambda n, b: math.ceil(n / (b * CFACTOR)), per_thread=CFACTOR)


def cases_interleaved(rng):
    # Far fewer threads than elements, so every thread loops; never a single block unless tiny.
    return _cases(rng, lambda n, b: max(1, min(3, n // (4 * b))))


def cases_private_global(rng):
    out = []
    for c in cases_one_each(rng):
        hist, data, n = c.args["hist"], c.args["data"], c.args["n"]
        c.args = {"hist": hist, "priv": np.empty((c.grid, NUM_BINS), np.int32), "data": data, "n": n}
        out.append(c)
    return out


COALESCED = 0.5  # the interleaved loop is ~100%; a contiguous run per thread a fraction of that

_COMMON = f"""

`data` holds `n` int32 values in `[0, MAX_VALUE)`; bin `b` of `hist` (`NUM_BINS = {NUM_BINS}`
int32 counters, zero at the start) counts the values `v` with `v // BIN_WIDTH == b`
(`BIN_WIDTH = {BIN_WIDTH}`). Blocks are 1-D."""

_FLUSH = f"""
At the end each block adds its private counts into `hist` with at most one global atomic per
bin. Budget: at most `NUM_BINS = {NUM_BINS}` global atomics per block."""

ATOMIC = (
    """\
One thread per element, each adding 1 to its element's bin in global memory. The add must be
**atomic**: `hist[b] += 1` is a read, an add and a write, and two threads doing it at once lose
one count. `cuda.atomic.add(hist, b, 1)` does all three as one indivisible step. Correct, but all
threads of the grid queue on the same `NUM_BINS` counters."""
    + _COMMON
)

PRIVATE_GLOBAL = (
    """\
**Privatisation.** Give every block its own copy of the histogram, row `blockIdx.x` of the scratch
array `priv` (zero at the start), so that only the threads of one block contend for a counter.
After a barrier the block adds its row into `hist`, one atomic per non-zero bin, and sets the row
back to zero so the scratch is ready for the next launch without a separate clearing step."""
    + _COMMON
)

PRIVATE_SHARED = (
    """\
**Privatisation in shared memory.** The block's private histogram now lives in a shared array
`hist_s`: shared atomics are far cheaper than global ones and the private copy never leaves the
SM. Three phases with a barrier between each: the block's threads zero `hist_s` (a loop, since
there may be fewer threads than bins), every thread adds its element into `hist_s` atomically,
then the block flushes `hist_s` into `hist`."""
    + _COMMON
    + _FLUSH
)

CONTIGUOUS = (
    f"""\
**Coarsening, contiguous.** Fewer threads, each counting `CFACTOR = {CFACTOR}` neighbouring
elements `[i*CFACTOR, (i+1)*CFACTOR)` (with `i = cuda.grid(1)`): the private histogram is zeroed
and flushed once per `CFACTOR` times as many elements. But in each step the lanes of a warp read
addresses `CFACTOR` elements apart: on a GPU that wastes most of each memory transaction
(look at the coalescing view)."""
    + _COMMON
    + _FLUSH
)

INTERLEAVED = (
    f"""\
**Coarsening, interleaved.** Launch a fixed, modest number of blocks and let each thread walk the
data with a grid-stride loop: element `i`, `i + gridsize`, `i + 2*gridsize`... In each step the
lanes of a warp read neighbouring elements (coalesced), and the number of blocks no longer
depends on `n`. Fill in the counting loop; zeroing and flushing are given. A contiguous run of
elements per thread is rejected here: every line's reads of `data` must be at least
{COALESCED:.0%} coalesced."""
    + _COMMON
    + _FLUSH
)

AGGREGATED = (
    """\
**Aggregation.** When the data has long runs of values in the same bin (images with flat regions,
sorted data), a thread keeps adding 1 to the same shared counter, and the atomics on one address
serialise. Count the current run in a register instead: while the bin stays the same, `run += 1`;
when it changes (and once at the end), add the whole run with one atomic. Use the interleaved
loop."""
    + _COMMON
    + _FLUSH
)

UNROLLED = (
    """\
**Coarsening for memory-level parallelism** (a worked example, written for the GPU). In the
interleaved loop each thread loads one element and then waits for it before its atomic: one
element in flight per thread, too few bytes in flight to keep a modern GPU's memory busy. This
version loads `UNROLL = 4` elements (a whole trip of the loop, `stride` apart so each load stays
coalesced) before the first atomic needs any of them; only the last, partial trip tests each
index."""
    + _COMMON
    + _FLUSH
)

_PRIVATE = Budget(global_atomics_per_block=NUM_BINS, shared_bytes=NUM_BINS * 4)
# the reads of `data` must be coalesced (the flush's atomics skip empty bins: sparse by nature)
_INTERLEAVED = (min_coalescing(COALESCED, arrays=("data",)),)

PUZZLES = [
    Puzzle(
        name="ch09_hist_atomic",
        title="Histogram, global atomics",
        statement=ATOMIC,
        outputs=("hist",),
        spec=spec,
        cases=cases_one_each,
        reference=hist_atomic,
        zeroed=("hist",),
        budget=Budget(global_reads=1),
        chapter="pmpp-09",
    ),
    Puzzle(
        name="ch09_hist_private_global",
        title="Histogram, privatised in global memory",
        statement=PRIVATE_GLOBAL,
        outputs=("hist",),
        scratch=("priv",),
        spec=spec,
        cases=cases_private_global,
        reference=hist_private_global,
        zeroed=("hist",),
        chapter="pmpp-09",
    ),
    Puzzle(
        name="ch09_hist_private_shared",
        title="Histogram, privatised in shared memory",
        statement=PRIVATE_SHARED,
        outputs=("hist",),
        spec=spec,
        cases=cases_one_each,
        reference=hist_private_shared,
        zeroed=("hist",),
        budget=_PRIVATE,
        chapter="pmpp-09",
        hints=(
            "Zero hist_s with `for b in range(t, NUM_BINS, cuda.blockDim.x)`.",
            "A barrier after zeroing, and another before the flush.",
            "The flush reads hist_s[b] and adds it to hist[b] with cuda.atomic.add: other blocks "
            "add to the same bins.",
        ),
    ),
    Puzzle(
        name="ch09_hist_coarse_contiguous",
        title="Histogram, coarsened (contiguous)",
        statement=CONTIGUOUS,
        outputs=("hist",),
        spec=spec,
        cases=cases_contiguous,
        reference=hist_coarse_contiguous,
        zeroed=("hist",),
        budget=Budget(global_atomics_per_block=NUM_BINS, global_reads=CFACTOR),
        chapter="pmpp-09",
    ),
    Puzzle(
        name="ch09_hist_coarse_interleaved",
        title="Histogram, coarsened (interleaved)",
        statement=INTERLEAVED,
        outputs=("hist",),
        spec=spec,
        cases=cases_interleaved,
        reference=hist_coarse_interleaved,
        zeroed=("hist",),
        budget=_PRIVATE,
        rules=_INTERLEAVED,
        chapter="pmpp-09",
        hints=(
            "`for i in range(cuda.grid(1), n, cuda.gridsize(1)):`",
            "The body is the same shared atomic as in the privatised kernel.",
        ),
    ),
    Puzzle(
        name="ch09_hist_aggregated",
        title="Histogram, aggregated runs",
        statement=AGGREGATED,
        outputs=("hist",),
        spec=spec,
        cases=cases_interleaved,
        reference=hist_aggregated,
        zeroed=("hist",),
        budget=_PRIVATE,
        rules=_INTERLEAVED,
        chapter="pmpp-09",
        hints=(
            "Two registers: the bin of the current run (start with -1: no bin) and its length.",
            "On a change of bin, add the finished run (if any) and start a new one of length 1.",
            "After the loop the last run is still unflushed.",
        ),
    ),
    Puzzle(
        name="ch09_hist_unrolled",
        title="Histogram, UNROLL loads in flight",
        statement=UNROLLED,
        outputs=("hist",),
        spec=spec,
        cases=cases_interleaved,
        reference=hist_unrolled,
        zeroed=("hist",),
        budget=_PRIVATE,
        chapter="pmpp-09",
    ),
]


# ---------------------------------------------------------------------------- GPU benchmark

GPU_BLOCK = 256
GPU_CFACTOR = 32
GPU_UNROLL = 8  # unrolled: eight loads in flight per thread on the GPU
GPU_UNROLL_BLOCK = 1024  # ... in blocks of 1024, two per SM: a quarter of the blocks merging bins


def _blocks_to_fill():
    """Enough 256-thread blocks for every SM to hold eight (2048 threads), no more."""
    return cuda.get_current_device().MULTIPROCESSOR_COUNT * 8


def variants(block=GPU_BLOCK, blocks=None):
    """name -> (launch(hist, priv, data), slow): the kernels with GPU launch sizes.

    `blocks`: the grid of the grid-stride kernels (default: enough to fill the GPU)."""
    contiguous = specialize(hist_coarse_contiguous, CFACTOR=GPU_CFACTOR)
    unrolled = specialize(hist_unrolled, UNROLL=GPU_UNROLL)
    unsigned = specialize(hist_unsigned, UNROLL=GPU_UNROLL)

    def one_each(kernel):
        def launch(hist, priv, data):
            n = data.shape[0]
            kernel[math.ceil(n / block), block](hist, data, n)

        return launch

    def launch_global(hist, priv, data):
        n = data.shape[0]
        hist_private_global[priv.shape[0], block](hist, priv, data, n)

    def launch_contiguous(hist, priv, data):
        n = data.shape[0]
        contiguous[math.ceil(n / (block * GPU_CFACTOR)), block](hist, data, n)

    def strided(kernel):
        def launch(hist, priv, data):
            kernel[blocks or _blocks_to_fill(), block](hist, data, data.shape[0])

        return launch

    def launch_unrolled(hist, priv, data):
        # as many threads per SM as the 256-thread grids, in a quarter of the blocks
        grid = max(1, (blocks or _blocks_to_fill()) * block // GPU_UNROLL_BLOCK)
        unrolled[grid, GPU_UNROLL_BLOCK](hist, data, data.shape[0])

    def launch_unsigned(hist, priv, data):
        grid = max(1, (blocks or _blocks_to_fill()) * block // GPU_UNROLL_BLOCK)
        unsigned[grid, GPU_UNROLL_BLOCK](hist, data.view(np.uint32), data.shape[0])

    return {
        "ch09_hist_atomic": (one_each(hist_atomic), True),
        "ch09_hist_private_global": (launch_global, True),
        "ch09_hist_private_shared": (one_each(hist_private_shared), False),
        "ch09_hist_coarse_contiguous": (launch_contiguous, False),
        "ch09_hist_coarse_interleaved": (strided(hist_coarse_interleaved), False),
        "ch09_hist_aggregated": (strided(hist_aggregated), False),
        "ch09_hist_unrolled": (launch_unrolled, False),
        "ch09_hist_unsigned": (launch_unsigned, False),
    }


def validate_variants(sizes=(1_000_003, 4099), block=GPU_BLOCK, blocks=None, seed=1):
    """Every variant against NumPy on fresh data; raise naming the first wrong one."""
    rng = np.random.default_rng(seed)
    for n in sizes:
        data = _data(rng, n)
        d_data = cuda.to_device(data)
        priv = cuda.to_device(np.zeros((math.ceil(n / block), NUM_BINS), np.int32))
        for name, (launch, _) in variants(block, blocks).items():
            hist = cuda.to_device(np.zeros(NUM_BINS, np.int32))
            launch(hist, priv, d_data)
            timing.validate(f"{name} (n={n})", hist.copy_to_host(), histogram(data), rtol=0, atol=0)
            if not np.all(priv.copy_to_host() == 0):
                raise AssertionError(f"{name}: scratch `priv` not left zeroed")


# the unrolled kernel's knobs, searched on the GPU at hand: loads in flight x block x blocks per SM
UNROLLED_GRID = {
    f"UNROLL {u}, block {b}, {k} blocks/SM": (u, b, k)
    for u, b, k in ((4, 1024, 2), (8, 1024, 2), (16, 1024, 2), (8, 512, 4), (16, 512, 4), (8, 256, 8))
}


def unrolled_launcher(unroll, block, per_sm, unsigned=False):
    """launch(hist, data) for the unrolled kernel (`unsigned`: its GPU-only unsigned version, which
    reads the data as uint32) on `per_sm` blocks of `block` threads per SM."""
    kernel = specialize(hist_unsigned if unsigned else hist_unrolled, UNROLL=unroll)

    def launch(hist, data):
        view = data.view(np.uint32) if unsigned else data
        kernel[cuda.get_current_device().MULTIPROCESSOR_COUNT * per_sm, block](hist, view, data.shape[0])

    return launch


def _tuned_unrolled(hist, data, n):
    """Both unrolled kernels: validate every candidate (a ragged size), tune on the big input, time
    the winner."""
    small = np.random.default_rng(4).integers(0, MAX_VALUE, 100_003).astype(np.int32)
    d_small, want = cuda.to_device(small), histogram(small)
    rows = []
    for name, unsigned in (("ch09_hist_unrolled", False), ("ch09_hist_unsigned", True)):
        launchers = {cfg: unrolled_launcher(*cfg, unsigned=unsigned) for cfg in UNROLLED_GRID.values()}
        for label, cfg in UNROLLED_GRID.items():
            h = cuda.to_device(np.zeros(NUM_BINS, np.int32))
            launchers[cfg](h, d_small)
            timing.validate(f"{name} ({label})", h.copy_to_host(), want, rtol=0, atol=0)
        choice, seconds = tuning.tuned_time(
            name, UNROLLED_GRID, lambda cfg, ls=launchers: timing.time_gpu(lambda: ls[cfg](hist, data))
        )
        rows.append(timing.Measurement(name, seconds, bytes=n * 4 + NUM_BINS * 4, config=choice.label))
    return rows


def benchmark(scale: float = 1.0):
    """Every variant on 256 MiB of int32 data (at scale 1); bytes = data read once + bins written once."""
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    validate_variants()
    n = max(1 << 16, int((256 << 20) // 4 * scale)) + 3
    host = np.random.default_rng(2).integers(0, MAX_VALUE, n).astype(np.int32)
    data = cuda.to_device(host)
    hist = cuda.device_array(NUM_BINS, np.int32)
    priv = cuda.to_device(np.zeros((math.ceil(n / GPU_BLOCK), NUM_BINS), np.int32))
    rows = []
    for name, (launch, slow) in variants().items():
        if name in ("ch09_hist_unrolled", "ch09_hist_unsigned"):
            continue  # tuned below
        # hist accumulates (and wraps) over the timed launches: fine for timing; validation ran above.
        reps = dict(warmup=1, reps=5) if slow else {}
        seconds = timing.time_gpu(lambda launch=launch: launch(hist, priv, data), **reps)
        rows.append(timing.Measurement(name, seconds, bytes=n * 4 + NUM_BINS * 4))
    rows += _tuned_unrolled(hist, data, n)
    rows.append(timing.copy_ceiling(n * 4))
    want = histogram(host)
    peer = timing.library_peer(
        "histogram",
        [
            timing.via("cupy", "cupy.histogram", _peer_cupy_histogram, data),
            timing.via("torch", "torch.bincount", _peer_torch_bincount, data),
        ],
        bytes=n * 4 + NUM_BINS * 4,
        check=lambda got: timing.validate("histogram peer", got, want, rtol=0, atol=0),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_cupy_histogram(cp, data):
    """What a user would call instead: NUM_BINS equal bins over [0, MAX_VALUE), as the kernels count."""
    return cp.histogram(data, bins=NUM_BINS, range=(0, MAX_VALUE))[0]


def _peer_torch_bincount(torch, data):
    return torch.bincount(data // BIN_WIDTH, minlength=NUM_BINS)


GOAL = {"ceiling": "copy", "fraction": 0.9, "best": "ch09_hist_unsigned"}
