"""Histogram ladder 1, atomics and privatisation: where the counters live.

    ch09_hist_atomic              one element per thread, one global atomic each
    ch09_hist_private_global      a private copy per block in global memory, merged at the end
    ch09_hist_private_shared      the private copy in shared memory: at most NUM_BINS global
                                  atomics per block

The book counts letters of a text; here the data are int32 values in [0, MAX_VALUE)
and bin b counts the values in [b * BIN_WIDTH, (b + 1) * BIN_WIDTH). Four-byte
elements let a simple kernel keep enough bytes in flight to stream at full speed.
The spec, the data and the cases are in common.py (the coarsened ladder shares them).
"""

import numpy as np
from numba import cuda, int32

from helpers.puzzle import Budget, Puzzle

from .common import BIN_WIDTH, CHAPTER, COMMON, FLUSH, NUM_BINS, PRIVATE, cases_one_each, spec

# ---------------------------------------------------------------------------- rung 1: global atomics


@cuda.jit
def hist_atomic(hist, data, n):
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.add(hist, data[i] // BIN_WIDTH, 1)


ATOMIC = (
    """\
One thread per element, each adding 1 to its element's bin in global memory. The add must be
**atomic**: `hist[b] += 1` is a read, an add and a write, and two threads doing it at once lose
one count. `cuda.atomic.add(hist, b, 1)` does all three as one indivisible step. Correct, but all
threads of the grid queue on the same `NUM_BINS` counters."""
    + COMMON
)

HIST_ATOMIC = Puzzle(
    name="ch09_hist_atomic",
    title="Histogram, global atomics",
    statement=ATOMIC,
    outputs=("hist",),
    spec=spec,
    cases=cases_one_each,
    reference=hist_atomic,
    accumulate=("hist",),
    budget=Budget(global_reads=1),
    chapter=CHAPTER,
)


# ---------------------------------------------------------------------------- rung 2: private, global


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


def cases_private_global(rng):
    out = []
    for c in cases_one_each(rng):
        hist, data, n = c.args["hist"], c.args["data"], c.args["n"]
        c.args = {"hist": hist, "priv": np.zeros((c.grid, NUM_BINS), np.int32), "data": data, "n": n}
        out.append(c)
    return out


def spec_private_global(hist, priv, data, n):
    """The counts added to `hist`, and the scratch handed back zeroed as the statement asks."""
    return {"hist": spec(hist, data, n), "priv": np.zeros_like(priv)}


PRIVATE_GLOBAL = (
    """\
**Privatisation.** Give every block its own copy of the histogram, row `blockIdx.x` of the scratch
array `priv` (zero at the start), so that only the threads of one block contend for a counter.
After a barrier the block adds its row into `hist`, one atomic per non-zero bin, and sets the row
back to zero so the scratch is ready for the next launch without a separate clearing step (the
check compares `priv` too: it must end all zero)."""
    + COMMON
)

HIST_PRIVATE_GLOBAL = Puzzle(
    name="ch09_hist_private_global",
    title="Histogram, privatised in global memory",
    statement=PRIVATE_GLOBAL,
    outputs=("hist", "priv"),
    spec=spec_private_global,
    cases=cases_private_global,
    reference=hist_private_global,
    accumulate=("hist", "priv"),
    chapter=CHAPTER,
)


# ---------------------------------------------------------------------------- rung 3: private, shared


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


PRIVATE_SHARED = (
    """\
**Privatisation in shared memory.** The block's private histogram now lives in a shared array
`hist_s`: shared atomics are far cheaper than global ones and the private copy never leaves the
SM. Three phases with a barrier between each: the block's threads zero `hist_s` (a loop, since
there may be fewer threads than bins), every thread adds its element into `hist_s` atomically,
then the block flushes `hist_s` into `hist`."""
    + COMMON
    + FLUSH
)

HIST_PRIVATE_SHARED = Puzzle(
    name="ch09_hist_private_shared",
    title="Histogram, privatised in shared memory",
    statement=PRIVATE_SHARED,
    outputs=("hist",),
    spec=spec,
    cases=cases_one_each,
    reference=hist_private_shared,
    accumulate=("hist",),
    budget=PRIVATE,
    chapter=CHAPTER,
    hints=(
        "Zero hist_s with `for b in range(t, NUM_BINS, cuda.blockDim.x)`.",
        "A barrier after zeroing, and another before the flush.",
        "The flush reads hist_s[b] and adds it to hist[b] with cuda.atomic.add: other blocks "
        "add to the same bins.",
    ),
)

PUZZLES = [HIST_ATOMIC, HIST_PRIVATE_GLOBAL, HIST_PRIVATE_SHARED]
