"""Section scans (PMPP 11.2-11.5): each block scans the elements it owns, restarting at its section's
start.

    ch11_kogge_stone            inclusive Kogge-Stone over TPB elements: two barriers per step
    ch11_kogge_stone_exclusive  the same, exclusive: the section shifted right by one as it is loaded
    ch11_kogge_stone_double     two shared buffers: one barrier per step
    ch11_brent_kung             up-sweep and down-sweep over 2 * TPB elements: far fewer additions
    ch11_three_phase            coarsened: COARSE elements per thread, scanned sequentially first
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from helpers.rules import max_shared_writes_per_block

from .common import (
    BK_SECTION,
    CHAPTER,
    COARSE,
    SIZES,
    THREE_SECTION,
    TOL,
    TPB,
    _section_scan,
    _values,
    blocks_of,
    sizes,
)

# ------------------------------------------------------------------ specs


def inclusive_spec(section):
    return lambda a, n: _section_scan(a, section)


def exclusive_spec(a, n):
    return _section_scan(a, TPB, exclusive=True)


# ------------------------------------------------------------------ cases


def section_cases(section, typical=SIZES[0], tpb=TPB, old_most=7):
    def cases(rng):
        return [
            Case(blocks_of(n, section), tpb, dict(out=np.zeros(n, np.float32), a=_values(rng, n), n=n))
            for n in sizes(rng, typical, section, old_most)
        ]

    return cases


# ------------------------------------------------------------------ rung 1: Kogge-Stone


@cuda.jit
def kogge_stone_scan(out, a, n):
    xy = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    ### BEGIN SOLUTION
    xy[t] = a[i] if i < n else 0.0
    stride = 1
    while stride < cuda.blockDim.x:
        # read everything this step needs before anyone overwrites it
        cuda.syncthreads()
        if t >= stride:
            tmp = xy[t] + xy[t - stride]
        cuda.syncthreads()
        if t >= stride:
            xy[t] = tmp
        stride *= 2
    if i < n:
        out[i] = xy[t]
    ### END SOLUTION


KOGGE_STONE = Puzzle(
    name="ch11_kogge_stone",
    title="Kogge-Stone scan",
    statement=f"""Each block scans its own section of `TPB = {TPB}` elements (inclusive):
`out[i]` is the sum of `a[s..i]`, where `s` is the first index of `i`'s block. Load the section into
shared memory, then in steps with `stride = 1, 2, 4, ...` every thread `t >= stride` adds the element
`stride` places to its left. Elements past `n` count as 0.""",
    outputs=("out",),
    spec=inclusive_spec(TPB),
    cases=section_cases(TPB),
    reference=kogge_stone_scan,
    hints=(
        "After step `stride`, xy[t] holds the sum of the (up to) 2*stride elements ending at t.",
        "Thread t reads xy[t - stride] while thread t - stride may be updating it: read into a "
        "temporary, barrier, then write.",
        "That is two barriers per step: one before the reads, one between reads and writes.",
    ),
    chapter=CHAPTER,
    **TOL,
)


# ------------------------------------------------------------------ rung 2: exclusive


@cuda.jit
def kogge_stone_exclusive(out, a, n):
    xy = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    # shift right by one while loading: then an inclusive scan gives the exclusive one
    xy[t] = a[i - 1] if t > 0 and i - 1 < n else 0.0
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            tmp = xy[t] + xy[t - stride]
        cuda.syncthreads()
        if t >= stride:
            xy[t] = tmp
        stride *= 2
    if i < n:
        out[i] = xy[t]


KOGGE_STONE_EXCLUSIVE = Puzzle(
    name="ch11_kogge_stone_exclusive",
    title="Exclusive Kogge-Stone scan",
    statement="""As Kogge-Stone, but exclusive: `out[i]` is the sum of the section's elements *before*
`i` (0 for the first element of each section). Shifting the section right by one as it is loaded turns
the inclusive scan into the exclusive one.""",
    outputs=("out",),
    spec=exclusive_spec,
    cases=section_cases(TPB),
    reference=kogge_stone_exclusive,
    chapter=CHAPTER,
    **TOL,
)


# ------------------------------------------------------------------ rung 3: double-buffered


@cuda.jit
def kogge_stone_double(out, a, n):
    # two buffers: each step reads one and writes the other, so one barrier per step is enough
    buf = cuda.shared.array((2, TPB), numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    src = 0
    buf[src, t] = a[i] if i < n else 0.0
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            buf[1 - src, t] = buf[src, t] + buf[src, t - stride]
        else:
            buf[1 - src, t] = buf[src, t]
        src = 1 - src
        stride *= 2
    if i < n:
        out[i] = buf[src, t]


KOGGE_STONE_DOUBLE = Puzzle(
    name="ch11_kogge_stone_double",
    title="Double-buffered Kogge-Stone scan",
    statement="""The same section scan with two shared buffers: each step reads one and writes the
other, so no thread ever writes what another is reading in the same step, and one barrier per step
suffices.""",
    outputs=("out",),
    spec=inclusive_spec(TPB),
    cases=section_cases(TPB),
    reference=kogge_stone_double,
    chapter=CHAPTER,
    **TOL,
)


# ------------------------------------------------------------------ rung 4: Brent-Kung


@cuda.jit
def brent_kung_scan(out, a, n):
    xy = cuda.shared.array(BK_SECTION, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = 2 * cuda.blockIdx.x * bd + t
    ### BEGIN SOLUTION
    xy[t] = a[i] if i < n else 0.0
    xy[t + bd] = a[i + bd] if i + bd < n else 0.0
    # up-sweep: a reduction tree leaves partial sums at positions 2^k * (j + 1) - 1
    stride = 1
    while stride <= bd:
        cuda.syncthreads()
        idx = (t + 1) * 2 * stride - 1
        if idx < 2 * bd:
            xy[idx] += xy[idx - stride]
        stride *= 2
    # down-sweep: push each partial sum to the positions between it and the next one
    stride = bd // 2
    while stride > 0:
        cuda.syncthreads()
        idx = (t + 1) * 2 * stride - 1
        if idx + stride < 2 * bd:
            xy[idx + stride] += xy[idx]
        stride //= 2
    cuda.syncthreads()
    if i < n:
        out[i] = xy[t]
    if i + bd < n:
        out[i + bd] = xy[t + bd]
    ### END SOLUTION


TWO_SWEEPS = (
    "Brent-Kung writes each position about three times: the load, one up-sweep step, at most one "
    "down-sweep step. A Kogge-Stone step rewrites nearly every position."
)

BRENT_KUNG = Puzzle(
    name="ch11_brent_kung",
    title="Brent-Kung scan",
    statement=f"""Each block of `TPB = {TPB}` threads scans a section of `2 * TPB` elements (inclusive).
Up-sweep: a reduction tree in place, with strides 1, 2, ..., TPB; thread `t` updates position
`(t + 1) * 2 * stride - 1`. Down-sweep: strides TPB/2, ..., 1 add each partial sum into the position
`stride` to its right. Far fewer additions than Kogge-Stone (checked: at most `3 * 2 * TPB` shared
writes per block, loads included).""",
    outputs=("out",),
    spec=inclusive_spec(2 * TPB),
    cases=section_cases(2 * TPB, old_most=5),
    reference=brent_kung_scan,
    rules=(max_shared_writes_per_block(3 * BK_SECTION, TWO_SWEEPS),),
    hints=(
        "Each thread loads two elements: i and i + blockDim.",
        "Up-sweep, stride s: xy[idx] += xy[idx - s] with idx = (t + 1) * 2 * s - 1 < 2 * blockDim.",
        "Down-sweep, stride s from blockDim // 2 down: xy[idx + s] += xy[idx] with the same idx, "
        "while idx + s < 2 * blockDim. A barrier before every step.",
    ),
    chapter=CHAPTER,
    **TOL,
)


# ------------------------------------------------------------------ rung 5: coarsened three-phase


@cuda.jit
def three_phase_scan(out, a, n):
    sec = cuda.shared.array(THREE_SECTION, numba.float32)
    last = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    base = cuda.blockIdx.x * COARSE * bd
    # coalesced load: neighbouring threads, neighbouring elements
    for k in range(COARSE):
        idx = k * bd + t
        sec[idx] = a[base + idx] if base + idx < n else 0.0
    cuda.syncthreads()
    # phase 1: each thread scans its own COARSE consecutive elements, sequentially
    start = t * COARSE
    for k in range(1, COARSE):
        sec[start + k] += sec[start + k - 1]
    last[t] = sec[start + COARSE - 1]
    # phase 2: Kogge-Stone over the threads' totals
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        if t >= stride:
            tmp = last[t] + last[t - stride]
        cuda.syncthreads()
        if t >= stride:
            last[t] = tmp
        stride *= 2
    cuda.syncthreads()
    # phase 3: add the total of all earlier threads
    if t > 0:
        before = last[t - 1]
        for k in range(COARSE):
            sec[start + k] += before
    cuda.syncthreads()
    for k in range(COARSE):
        idx = k * bd + t
        if base + idx < n:
            out[base + idx] = sec[idx]


THREE_PHASE = Puzzle(
    name="ch11_three_phase",
    title="Coarsened three-phase scan",
    statement=f"""Each block scans a section of `COARSE * TPB = {COARSE * TPB}` elements. Load it into
shared memory coalesced; phase 1: every thread scans its `COARSE` consecutive elements sequentially;
phase 2: Kogge-Stone over the threads' last elements; phase 3: every thread adds the total of the
threads before it.""",
    outputs=("out",),
    spec=inclusive_spec(COARSE * TPB),
    cases=section_cases(COARSE * TPB, typical=150, old_most=4),
    reference=three_phase_scan,
    chapter=CHAPTER,
    **TOL,
)


PUZZLES = [KOGGE_STONE, KOGGE_STONE_EXCLUSIVE, KOGGE_STONE_DOUBLE, BRENT_KUNG, THREE_PHASE]
