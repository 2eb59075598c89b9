"""PMPP chapter 11: prefix sum (scan). (Over 500 lines: one chapter, one module, as its notebook.)

The ladder: Kogge-Stone (inclusive, exclusive, double-buffered) and Brent-Kung scan one section
per block; the coarsened three-phase scan gives each thread several elements; the hierarchical
scan chains three launches to scan any length; the single-pass scans (domino, then decoupled
look-back) do it in one launch, blocks handing their running totals to their successors.

Inclusive scan: out[i] = a[0] + ... + a[i]. Exclusive: out[i] = a[0] + ... + a[i - 1], out[0] = 0.
A *section* scan restarts at every section boundary (section = the elements one block owns).
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle, edge_sizes

TPB = 16  # threads per block; a Kogge-Stone section is TPB elements
COARSE = 4  # three-phase: elements per thread, section = COARSE * TPB
LB_TPB = 64  # decoupled look-back: threads per block (whole warps: it shuffles)
ITEMS = 2  # decoupled look-back: rows of 32 per warp, tile = ITEMS * LB_TPB elements
BK_SECTION = 2 * TPB  # (shared array shapes must be plain constants, not expressions)
THREE_SECTION = COARSE * TPB
LB_TILE = ITEMS * LB_TPB
RAKED_BUF = LB_TILE + LB_TILE // 32  # raked look-back: the tile in shared memory, one pad per 32
FULL_MASK = 0xFFFFFFFF

# what `from puzzles.pmpp.ch11_scan import *` gives a notebook: constants only, never a kernel
__all__ = ["TPB", "BK_SECTION", "COARSE", "THREE_SECTION", "ITEMS", "LB_TILE", "FULL_MASK"]
CHAPTER = "pmpp-11"


# ------------------------------------------------------------------ section scans


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


# ------------------------------------------------------------------ hierarchical scan, any length


@cuda.jit
def scan_blocks(out, sums, a, n):
    xy = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    xy[t] = a[i] if i < n else 0.0
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
    # the section's total, for the next level
    if t == cuda.blockDim.x - 1:
        sums[cuda.blockIdx.x] = xy[t]


@cuda.jit
def add_block_sums(out, partial, prefix, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    ### BEGIN SOLUTION
    if i < n:
        if cuda.blockIdx.x > 0:
            out[i] = partial[i] + prefix[cuda.blockIdx.x - 1]
        else:
            out[i] = partial[i]
    ### END SOLUTION


def hierarchical_plan(n, scan_kernel=scan_blocks, add_kernel=add_block_sums, section=TPB):
    """Allocate every level's buffers once; return run(d_a) -> device array holding the inclusive scan.

    Level 1 scans sections of `a` and collects their totals; the totals are scanned the same way
    (recursively, until one section holds them all); then each section gets the total before it.
    """
    blocks = (n + section - 1) // section
    partial = cuda.device_array(n, np.float32)
    sums = cuda.device_array(blocks, np.float32)
    if blocks == 1:

        def run_one(d_a):
            scan_kernel[1, section](partial, sums, d_a, n)
            return partial

        return run_one
    inner = hierarchical_plan(blocks, scan_kernel, add_kernel, section)
    out = cuda.device_array(n, np.float32)

    def run(d_a):
        scan_kernel[blocks, section](partial, sums, d_a, n)
        prefix = inner(sums)
        add_kernel[blocks, section](out, partial, prefix, n)
        return out

    return run


def hierarchical_scan(a, scan_kernel=scan_blocks, add_kernel=add_block_sums, section=TPB):
    """Inclusive scan of any length with three launches per level; `a` is a NumPy or device array.

    Returns a device array. Runs on whichever engine launches run on (GPU or simulator).
    """
    d_a = cuda.to_device(a) if isinstance(a, np.ndarray) else a
    return hierarchical_plan(d_a.shape[0], scan_kernel, add_kernel, section)(d_a)


# ------------------------------------------------------------------ single pass


@cuda.jit
def domino_scan(out, flags, carries, counter, a, n):
    xy = cuda.shared.array(TPB, numba.float32)
    ticket = cuda.shared.array(1, numba.int32)
    carry_in = cuda.shared.array(1, numba.float32)
    t = cuda.threadIdx.x
    # blocks take section numbers in the order they start: every section's predecessor has started
    if t == 0:
        ticket[0] = cuda.atomic.add(counter, 0, 1)
    cuda.syncthreads()
    sec = ticket[0]
    i = sec * cuda.blockDim.x + t
    xy[t] = a[i] if i < n else 0.0
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            tmp = xy[t] + xy[t - stride]
        cuda.syncthreads()
        if t >= stride:
            xy[t] = tmp
        stride *= 2
    if t == cuda.blockDim.x - 1:
        prev = 0.0
        if sec > 0:
            # wait for the predecessor's running total; atomics read L2, never a stale L1 line
            while cuda.atomic.add(flags, sec - 1, 0) == 0:
                pass
            cuda.threadfence()
            prev = cuda.atomic.add(carries, sec - 1, 0.0)
        carries[sec] = prev + xy[t]
        # the total must be visible before the flag that says it is there
        cuda.threadfence()
        cuda.atomic.exch(flags, sec, 1)
        carry_in[0] = prev
    cuda.syncthreads()
    if i < n:
        out[i] = xy[t] + carry_in[0]


@cuda.jit(device=True)
def look_back(flags, sums, tile, total, lane):
    """Run by one whole warp: publish this tile's own total (flag 1), add up the totals of the tiles
    before it (decoupled look-back), publish its running total (flag 2). Returns the sum of every
    element before the tile. sums[tile, 0]: the tile's own total; sums[tile, 1]: total up to its end."""
    prev = np.float32(0.0)
    if tile == 0:
        if lane == 0:
            sums[0, 1] = total
            cuda.threadfence()
            cuda.atomic.exch(flags, 0, 2)
    else:
        # publish this tile's own total at once: successors can add it without waiting for us
        if lane == 0:
            sums[tile, 0] = total
            cuda.threadfence()
            cuda.atomic.exch(flags, tile, 1)
        # look back 32 tiles at a time, lane k at tile - 1 - k (before tile 0: flag 2, total 0)
        j = tile - 1 - lane
        while True:
            f = 2
            if j >= 0:
                f = cuda.atomic.add(flags, j, 0)
            if cuda.any_sync(FULL_MASK, f == 0):
                continue  # a tile in the window has published nothing yet
            hit = cuda.ballot_sync(FULL_MASK, f == 2)
            cuda.threadfence()
            mine = np.float32(0.0)
            # tiles up to the nearest flag-2 one count (flag 1: own total, flag 2: running total)
            if (hit & ((1 << lane) - 1)) == 0 and j >= 0:
                mine = cuda.atomic.add(sums, (j, f - 1), np.float32(0.0))
            d = 16
            while d > 0:
                mine += cuda.shfl_xor_sync(FULL_MASK, mine, d)
                d //= 2
            prev += mine
            if hit != 0:
                break
            j -= 32
        if lane == 0:
            sums[tile, 1] = prev + total
            cuda.threadfence()
            cuda.atomic.exch(flags, tile, 2)
    return prev


@cuda.jit
def lookback_scan(out, flags, sums, counter, a, n):
    # sums[tile, 0]: the tile's own total (flag 1); sums[tile, 1]: total up to its end (flag 2)
    warp_tot = cuda.shared.array(32, numba.float32)
    ticket = cuda.shared.array(1, numba.int32)
    carry_in = cuda.shared.array(1, numba.float32)
    x = cuda.local.array(ITEMS, numba.float32)  # registers: the loops over ITEMS unroll
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    lane = t % 32
    warp = t // 32
    nwarps = bd // 32
    if t == 0:
        ticket[0] = cuda.atomic.add(counter, 0, 1)
    cuda.syncthreads()
    tile = ticket[0]
    # warp w owns ITEMS rows of 32 consecutive elements: loads stay coalesced, no barrier until the end
    first = tile * ITEMS * bd + warp * ITEMS * 32 + lane
    full = tile * ITEMS * bd + ITEMS * bd <= n
    if full:
        for r in range(ITEMS):
            x[r] = a[first + r * 32]  # no bounds test: all ITEMS loads in flight together
    else:
        for r in range(ITEMS):
            x[r] = a[first + r * 32] if first + r * 32 < n else np.float32(0.0)
    # scan each row with shuffles, carrying the running total of the warp's rows in `carry`
    carry = np.float32(0.0)
    for r in range(ITEMS):
        v = x[r]
        d = 1
        while d < 32:
            y = cuda.shfl_up_sync(FULL_MASK, v, d)
            if lane >= d:
                v += y
            d *= 2
        v += carry
        carry = cuda.shfl_sync(FULL_MASK, v, 31)
        x[r] = v
    if lane == 31:
        warp_tot[warp] = carry
    cuda.syncthreads()
    if warp == 0:
        w = warp_tot[lane] if lane < nwarps else np.float32(0.0)
        d = 1
        while d < 32:
            y = cuda.shfl_up_sync(FULL_MASK, w, d)
            if lane >= d:
                w += y
            d *= 2
        if lane < nwarps:
            warp_tot[lane] = w
        total = cuda.shfl_sync(FULL_MASK, w, 31)
        prev = look_back(flags, sums, tile, total, lane)
        if lane == 0:
            carry_in[0] = prev
    cuda.syncthreads()
    add = carry_in[0]
    if warp > 0:
        add += warp_tot[warp - 1]
    for r in range(ITEMS):
        if full or first + r * 32 < n:
            out[first + r * 32] = x[r] + add


@cuda.jit
def lookback_raked(out, flags, sums, counter, a, n):
    # lookback_scan with the work inside a tile moved from shuffles to registers ("raking"): each
    # thread scans ITEMS consecutive elements one after another, so a warp runs one 5-step shuffle
    # scan per 32 * ITEMS elements instead of one per 32. Loads and stores stay coalesced: a warp
    # moves rows of 32 through shared memory, turning them into runs of ITEMS per thread and back.
    # One padding word per 32 keeps both directions free of bank conflicts; with ITEMS a power of
    # two up to 32, each direction's shared index is a per-thread base plus a constant.
    buf = cuda.shared.array(RAKED_BUF, numba.float32)
    warp_tot = cuda.shared.array(32, numba.float32)
    ticket = cuda.shared.array(1, numba.int32)
    carry_in = cuda.shared.array(1, numba.float32)
    x = cuda.local.array(ITEMS, numba.float32)
    t = cuda.threadIdx.x
    lane = t % 32
    warp = t // 32
    nwarps = cuda.blockDim.x // 32
    if t == 0:
        ticket[0] = cuda.atomic.add(counter, 0, 1)
    cuda.syncthreads()
    tile = ticket[0]
    section = warp * ITEMS * 32  # this warp's ITEMS rows of 32, within the tile
    first = tile * LB_TILE + section + lane  # global index of this thread's element in row 0
    rows_at = section + section // 32 + lane  # shared index of that element; row r: + 33 r
    runs_at = rows_at - lane + lane * ITEMS + lane * ITEMS // 32  # this thread's run; item r: + r
    full = tile * LB_TILE + LB_TILE <= n
    for r in range(ITEMS):
        if full or first + r * 32 < n:
            buf[rows_at + r * 33] = a[first + r * 32]
        else:
            buf[rows_at + r * 33] = np.float32(0.0)
    cuda.syncwarp()
    total = np.float32(0.0)
    for r in range(ITEMS):
        total += buf[runs_at + r]
        x[r] = total
    v = total
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, v, d)
        if lane >= d:
            v += y
        d *= 2
    if lane == 31:
        warp_tot[warp] = v
    cuda.syncthreads()
    if warp == 0:
        w = warp_tot[lane] if lane < nwarps else np.float32(0.0)
        d = 1
        while d < 32:
            y = cuda.shfl_up_sync(FULL_MASK, w, d)
            if lane >= d:
                w += y
            d *= 2
        if lane < nwarps:
            warp_tot[lane] = w
        prev = look_back(flags, sums, tile, cuda.shfl_sync(FULL_MASK, w, 31), lane)
        if lane == 0:
            carry_in[0] = prev
    cuda.syncthreads()
    add = carry_in[0] + v - total  # before this tile, this warp, this thread
    if warp > 0:
        add += warp_tot[warp - 1]
    for r in range(ITEMS):
        buf[runs_at + r] = x[r] + add
    cuda.syncwarp()
    for r in range(ITEMS):
        if full or first + r * 32 < n:
            out[first + r * 32] = buf[rows_at + r * 33]


# ------------------------------------------------------------------ specs and cases


def _values(rng, n):
    return rng.uniform(-2, 2, n).astype(np.float32)


def _section_scan(a, section, exclusive=False):
    out = np.empty(len(a), np.float64)
    for s in range(0, len(a), section):
        part = a[s : s + section].astype(np.float64)
        c = np.cumsum(part)
        out[s : s + section] = c - part if exclusive else c
    return out.astype(np.float32)


def inclusive_spec(section):
    return lambda a, n: _section_scan(a, section)


def exclusive_spec(a, n):
    return _section_scan(a, TPB, exclusive=True)


def scan_blocks_spec(a, n):
    totals = [a[s : s + TPB].astype(np.float64).sum() for s in range(0, n, TPB)]
    return {"out": _section_scan(a, TPB), "sums": np.array(totals, np.float32)}


def add_sums_spec(partial, prefix, n):
    blk = np.arange(n) // TPB
    add = np.where(blk > 0, prefix[np.maximum(blk - 1, 0)], 0).astype(np.float64)
    return (partial.astype(np.float64) + add).astype(np.float32)


def full_scan_spec(a, n):
    return np.cumsum(a.astype(np.float64)).astype(np.float32)


def _blocks(n, section):
    return (n + section - 1) // section


# case 0's size (the notebook's); the others are drawn per seed (edge_sizes): 1, a section - 1, a
# section, a section + 1, a few sections, and more sections than the statement's examples ever had
SIZES = (50, 7, 100, 33, 81)


def _sizes(rng, typical, section, old_most):
    """Case 0 `typical`, then the edges around one section and a largest of 1 to 2 sections more
    than the `old_most` sections the fixed sizes once reached."""
    return edge_sizes(rng, typical, section, (old_most * section + 1, (old_most + 2) * section))


def section_cases(section, typical=SIZES[0], tpb=TPB, old_most=7):
    def cases(rng):
        return [
            Case(_blocks(n, section), tpb, dict(out=np.zeros(n, np.float32), a=_values(rng, n), n=n))
            for n in _sizes(rng, typical, section, old_most)
        ]

    return cases


def scan_blocks_cases(rng):
    return [
        Case(
            _blocks(n, TPB),
            TPB,
            dict(
                out=np.zeros(n, np.float32),
                sums=np.zeros(_blocks(n, TPB), np.float32),
                a=_values(rng, n),
                n=n,
            ),
        )
        for n in _sizes(rng, SIZES[0], TPB, 7)
    ]


def add_sums_cases(rng):
    cases = []
    for n in _sizes(rng, SIZES[0], TPB, 7):
        nb = _blocks(n, TPB)
        cases.append(
            Case(
                nb,
                TPB,
                dict(
                    out=np.zeros(n, np.float32),
                    partial=_values(rng, n),
                    prefix=rng.uniform(-20, 20, nb).astype(np.float32),
                    n=n,
                ),
            )
        )
    return cases


def domino_cases(rng):
    cases = []
    for n in _sizes(rng, SIZES[0], TPB, 7):
        nb = _blocks(n, TPB)
        cases.append(
            Case(
                nb,
                TPB,
                dict(
                    out=np.zeros(n, np.float32),
                    flags=np.zeros(nb, np.int32),
                    carries=np.zeros(nb, np.float32),
                    counter=np.zeros(1, np.int32),
                    a=_values(rng, n),
                    n=n,
                ),
            )
        )
    return cases


def lookback_cases(rng):
    cases = []
    for n in _sizes(rng, 300, ITEMS * LB_TPB, 6):
        nb = _blocks(n, ITEMS * LB_TPB)
        cases.append(
            Case(
                nb,
                LB_TPB,
                dict(
                    out=np.zeros(n, np.float32),
                    flags=np.zeros(nb, np.int32),
                    sums=np.zeros((nb, 2), np.float32),
                    counter=np.zeros(1, np.int32),
                    a=_values(rng, n),
                    n=n,
                ),
            )
        )
    return cases


_TOL = dict(rtol=1e-5, atol=1e-4)  # float32 sums in another order than NumPy's

PUZZLES = [
    Puzzle(
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
        **_TOL,
    ),
    Puzzle(
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
        **_TOL,
    ),
    Puzzle(
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
        **_TOL,
    ),
    Puzzle(
        name="ch11_brent_kung",
        title="Brent-Kung scan",
        statement=f"""Each block of `TPB = {TPB}` threads scans a section of `2 * TPB` elements (inclusive).
Up-sweep: a reduction tree in place, with strides 1, 2, ..., TPB; thread `t` updates position
`(t + 1) * 2 * stride - 1`. Down-sweep: strides TPB/2, ..., 1 add each partial sum into the position
`stride` to its right. Far fewer additions than Kogge-Stone.""",
        outputs=("out",),
        spec=inclusive_spec(2 * TPB),
        cases=section_cases(2 * TPB, old_most=5),
        reference=brent_kung_scan,
        hints=(
            "Each thread loads two elements: i and i + blockDim.",
            "Up-sweep, stride s: xy[idx] += xy[idx - s] with idx = (t + 1) * 2 * s - 1 < 2 * blockDim.",
            "Down-sweep, stride s from blockDim // 2 down: xy[idx + s] += xy[idx] with the same idx, "
            "while idx + s < 2 * blockDim. A barrier before every step.",
        ),
        chapter=CHAPTER,
        **_TOL,
    ),
    Puzzle(
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
        **_TOL,
    ),
    Puzzle(
        name="ch11_scan_blocks",
        title="Hierarchical scan, step 1: section scans and their totals",
        statement="""Kogge-Stone section scan, and the last thread of each block also writes the section's
total to `sums[blockIdx.x]`.""",
        outputs=("out", "sums"),
        spec=scan_blocks_spec,
        cases=scan_blocks_cases,
        reference=scan_blocks,
        chapter=CHAPTER,
        **_TOL,
    ),
    Puzzle(
        name="ch11_add_sums",
        title="Hierarchical scan, step 3: add the block totals back",
        statement=f"""`partial` holds section scans (sections of `TPB = {TPB}`); `prefix[b]` is the inclusive
scan of the section totals, so `prefix[b - 1]` is the sum of everything before section `b`. Write the
full scan: `out[i] = partial[i] + prefix[b - 1]` for `i` in section `b > 0`, and `partial[i]` in
section 0.""",
        outputs=("out",),
        spec=add_sums_spec,
        cases=add_sums_cases,
        reference=add_block_sums,
        hints=("Section 0 has nothing before it: prefix[-1] would silently read the last total.",),
        chapter=CHAPTER,
        **_TOL,
    ),
    Puzzle(
        name="ch11_domino",
        title="Single-pass scan: domino",
        statement="""One launch scans everything. Each block scans its section, then waits until its
predecessor has published the running total up to the predecessor's end (`flags[s - 1] == 1`), adds
its own total, publishes `carries[s]` and sets `flags[s]`. Blocks take section numbers from an atomic
counter in the order they start, so a block never waits for a section that no running block owns.""",
        outputs=("out",),
        spec=full_scan_spec,
        cases=domino_cases,
        reference=domino_scan,
        scratch=("flags", "carries", "counter"),
        cross_block_races=False,
        chapter=CHAPTER,
        **_TOL,
    ),
    Puzzle(
        name="ch11_lookback",
        title="Single-pass scan: decoupled look-back",
        statement=f"""As the domino scan, but a tile (`ITEMS * blockDim = {ITEMS * LB_TPB}` elements here)
publishes its own total (`flags = 1`) as soon as it knows it, before it knows what comes before it. A
successor walks back: it adds own totals of flag-1 tiles until it meets a tile with flag 2 (its full
running total is there), so no block waits on a whole chain of predecessors.""",
        outputs=("out",),
        spec=full_scan_spec,
        cases=lookback_cases,
        reference=lookback_scan,
        scratch=("flags", "sums", "counter"),
        cross_block_races=False,
        chapter=CHAPTER,
        **_TOL,
    ),
]


# ------------------------------------------------------------------ GPU benchmark

# "peer": 1.0 -- the look-back scan must also be at least as fast as the library's cumsum in the same run
GOAL = {"ceiling": "copy", "fraction": 0.85, "best": "ch11_lookback", "peer": 1.0}
# the look-back scan's block shapes searched on the GPU at hand: (threads, items per thread)
LOOKBACK_GRID = ((512, 16), (768, 16), (512, 24), (256, 32), (256, 48), (128, 64), (384, 32))
RAKED_GRID = ((256, 16), (256, 32), (512, 16), (512, 8), (128, 32), (1024, 8))  # ITEMS: powers of 2


def _bench_data(rng, n):
    # small integers as floats: every partial sum is exact in float32, so any order of summation agrees
    return rng.integers(-8, 9, n).astype(np.float32)


@cuda.jit
def reset_scan_state(flags, counter):
    """Zero the flags and the ticket counter of a single-pass scan: a tiny kernel, so the reset
    stays on the GPU's queue (two host-issued copies cost far more than the bytes they move)."""
    i = cuda.grid(1)
    if i < flags.shape[0]:
        flags[i] = 0
    if i == 0:
        counter[0] = 0


def _single_pass(kernel, section, tpb, out, a, two_sums=False):
    """A launcher for a single-pass scan: resets flags and counter with a kernel, then launches."""
    n = a.shape[0]
    nb = (n + section - 1) // section
    flags = cuda.device_array(nb, np.int32)
    counter = cuda.device_array(1, np.int32)
    sums = cuda.device_array((nb, 2) if two_sums else nb, np.float32)

    def launch():
        reset_scan_state[(nb + 255) // 256, 256](flags, counter)
        kernel[nb, tpb](out, flags, sums, counter, a, n)

    return launch


def benchmark(scale: float = 1.0):
    """Validate, then time, the full-length scans. Bytes: input read once, output written once."""
    from helpers import timing, tuning
    from helpers.timing import specialize

    rng = np.random.default_rng(11)
    ks = specialize(scan_blocks, TPB=1024)
    add = specialize(add_block_sums, TPB=1024)
    domino = specialize(domino_scan, TPB=1024)
    lookback = {
        (tpb, items): specialize(lookback_scan, ITEMS=items, LB_TPB=tpb, LB_TILE=tpb * items)
        for tpb, items in LOOKBACK_GRID
    }
    raked = {
        (tpb, items): specialize(
            lookback_raked, ITEMS=items, LB_TPB=tpb, LB_TILE=tpb * items, RAKED_BUF=tpb * items * 33 // 32
        )
        for tpb, items in RAKED_GRID
    }
    single_pass = {"ch11_lookback": lookback, "ch11_lookback_raked": raked}

    # validation on fresh data, odd sizes, several block shapes, before any timing
    for n in (max(3001, int(1_000_003 * scale)), 4097):
        a = _bench_data(rng, n)
        expected = np.cumsum(a, dtype=np.float64).astype(np.float32)
        d_a = cuda.to_device(a)
        timing.validate(
            f"ch11_hierarchical (n={n})",
            hierarchical_scan(d_a, ks, add, 1024).copy_to_host(),
            expected,
            rtol=0,
            atol=0,
        )
        out = cuda.device_array(n, np.float32)
        _single_pass(domino, 1024, 1024, out, d_a)()
        timing.validate(f"ch11_domino (n={n})", out.copy_to_host(), expected, rtol=0, atol=0)
        for name, kernels in single_pass.items():
            for (tpb, items), kern in kernels.items():
                out = cuda.device_array(n, np.float32)
                _single_pass(kern, tpb * items, tpb, out, d_a, two_sums=True)()
                timing.validate(
                    f"{name} (n={n}, {tpb} threads x {items})", out.copy_to_host(), expected, rtol=0, atol=0
                )

    n = max(1 << 12, int((64 << 20) * scale))  # 256 MiB of float32 at scale 1
    a = _bench_data(rng, n)
    expected = np.cumsum(a, dtype=np.float64).astype(np.float32)
    d_a = cuda.to_device(a)
    out = cuda.device_array(n, np.float32)
    nbytes = 2 * n * 4
    rows = [timing.copy_ceiling(n * 4)]

    plan = hierarchical_plan(n, ks, add, 1024)  # buffers allocated once, outside the timing
    timing.validate("ch11_hierarchical", plan(d_a).copy_to_host(), expected, rtol=0, atol=0)
    seconds = timing.time_gpu(lambda: plan(d_a))
    rows.append(timing.Measurement("ch11_hierarchical", seconds, bytes=nbytes))
    # the reset kernel (flags and counter, a few KiB) is part of every single-pass launch
    launch = _single_pass(domino, 1024, 1024, out, d_a)
    launch()
    timing.validate("ch11_domino", out.copy_to_host(), expected, rtol=0, atol=0)
    rows.append(timing.Measurement("ch11_domino", timing.time_gpu(launch, reps=5), bytes=nbytes))
    for name, kernels in single_pass.items():
        grid = {}
        for (tpb, items), kern in kernels.items():
            launch = _single_pass(kern, tpb * items, tpb, out, d_a, two_sums=True)
            launch()
            timing.validate(f"{name} ({tpb} threads x {items})", out.copy_to_host(), expected, rtol=0, atol=0)
            grid[f"{tpb} threads x {items} items"] = launch
        # block shape searched on the GPU at hand, the winner cached per device
        choice, seconds = tuning.tuned_time(name, grid, lambda launch: timing.time_gpu(launch, reps=30))
        rows.append(timing.Measurement(name, seconds, bytes=nbytes, config=choice.label))
    peer = timing.library_peer(
        "scan",
        [
            timing.via("cupy", "cupy.cumsum", _peer_cumsum, d_a),
            timing.via("torch", "torch.cumsum", _peer_cumsum, d_a),
        ],
        bytes=nbytes,
        check=lambda got: timing.validate("scan peer", got, expected, rtol=0, atol=0),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_cumsum(xp, a):
    """What a user would call instead: the library's inclusive scan."""
    return xp.cumsum(a, 0)
