"""Single-pass scans (PMPP 11.7): one launch for any length, blocks handing running totals on.

ch11_domino    each block waits for its predecessor's running total (a chain)
ch11_lookback  decoupled look-back: a tile publishes its own total at once; a successor adds
               totals walking back until it meets a running total
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import CHAPTER, FULL_MASK, ITEMS, LB_TPB, SIZES, TOL, TPB, _values, blocks_of, sizes

# ------------------------------------------------------------------ spec


def full_scan_spec(a, n):
    return np.cumsum(a.astype(np.float64)).astype(np.float32)


def domino_spec(a, n):
    """The scan, and what every section publishes: `carries[s]`, the total up to its end, and
    `flags[s] == 1` (the last section's too: the statement asks every block to publish)."""
    scan = np.cumsum(a.astype(np.float64))
    ends = np.minimum(np.arange(1, blocks_of(n, TPB) + 1) * TPB, n) - 1
    return {
        "out": scan.astype(np.float32),
        "flags": np.ones(ends.size, np.int32),
        "carries": scan[ends].astype(np.float32),
    }


def lookback_spec(a, n):
    """The scan, and every tile's flag ending at 2 (its running total published)."""
    return {
        "out": full_scan_spec(a, n),
        "flags": np.full(blocks_of(n, ITEMS * LB_TPB), 2, np.int32),
    }


# ------------------------------------------------------------------ cases


def domino_cases(rng):
    cases = []
    for n in sizes(rng, SIZES[0], TPB, 7):
        nb = blocks_of(n, TPB)
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
    for n in sizes(rng, 300, ITEMS * LB_TPB, 6):
        nb = blocks_of(n, ITEMS * LB_TPB)
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


# ------------------------------------------------------------------ rung 1: domino


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
        prev = numba.float32(0.0)
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


DOMINO = Puzzle(
    name="ch11_domino",
    title="Single-pass scan: domino",
    statement="""One launch scans everything. Each block scans its section, then waits until its
predecessor has published the running total up to the predecessor's end (`flags[s - 1] == 1`), adds
its own total, publishes `carries[s]` and sets `flags[s]`. Blocks take section numbers from an atomic
counter in the order they start, so a block never waits for a section that no running block owns.
`flags` and `carries` start at zero and are checked too: every section publishes, the last one included.""",
    outputs=("out", "flags", "carries"),
    spec=domino_spec,
    cases=domino_cases,
    reference=domino_scan,
    zeroed=("flags", "carries", "counter"),
    scratch=("counter",),
    cross_block_races=False,
    chapter=CHAPTER,
    **TOL,
)


# ------------------------------------------------------------------ rung 2: decoupled look-back


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


LOOKBACK = Puzzle(
    name="ch11_lookback",
    title="Single-pass scan: decoupled look-back",
    statement=f"""As the domino scan, but a tile (`ITEMS * blockDim = {ITEMS * LB_TPB}` elements here)
publishes its own total (`flags = 1`) as soon as it knows it, before it knows what comes before it. A
successor walks back: it adds own totals of flag-1 tiles until it meets a tile with flag 2 (its full
running total is there), so no block waits on a whole chain of predecessors. `flags` starts at zero
and is checked too: every tile ends at flag 2, the last one included.""",
    outputs=("out", "flags"),
    spec=lookback_spec,
    cases=lookback_cases,
    reference=lookback_scan,
    zeroed=("flags", "counter"),
    scratch=("sums", "counter"),
    cross_block_races=False,
    chapter=CHAPTER,
    **TOL,
)


PUZZLES = [DOMINO, LOOKBACK]
