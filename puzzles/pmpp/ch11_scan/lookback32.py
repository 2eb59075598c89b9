"""GPU-only look-back scans for the benchmark's search (no puzzle):

lookback_u32      single_pass.lookback_scan with 32-bit unsigned indices. Numba keeps every index in
                  int64 (two registers each, two instructions per add); uint32 halves the machine
                  code per element (`python -m tools.ptx_count ch11`).
lookback_overlap  the same, reordered so that warp 0's look-back overlaps the other warps' scan work
                  (reduce, then scan). The profiler found lookback_scan waiting at its barrier while
                  warp 0 looks back, with two thirds of the issue slots unused.

Indices fit while n < 2^32 - one tile.
"""

import numba
import numpy as np
from numba import cuda, uint32

from .common import FULL_MASK, ITEMS
from .single_pass import look_back


@cuda.jit
def lookback_u32(out, flags, sums, counter, a, n):
    warp_tot = cuda.shared.array(32, numba.float32)
    ticket = cuda.shared.array(1, numba.int32)
    carry_in = cuda.shared.array(1, numba.float32)
    x = cuda.local.array(ITEMS, numba.float32)
    t = uint32(cuda.threadIdx.x)
    bd = uint32(cuda.blockDim.x)
    lane = t & uint32(31)
    warp = t >> uint32(5)
    nwarps = bd >> uint32(5)
    un = uint32(n)
    if t == 0:
        ticket[0] = cuda.atomic.add(counter, 0, 1)
    cuda.syncthreads()
    tile = ticket[0]
    tile_start = uint32(uint32(tile) * uint32(ITEMS) * bd)
    first = uint32(tile_start + warp * uint32(ITEMS * 32) + lane)
    full = uint32(tile_start + uint32(ITEMS) * bd) <= un
    if full:
        for r in range(ITEMS):
            x[r] = a[uint32(first + uint32(r * 32))]
    else:
        for r in range(ITEMS):
            i = uint32(first + uint32(r * 32))
            x[r] = a[i] if i < un else np.float32(0.0)
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
        prev = look_back(flags, sums, tile, total, numba.int64(lane))  # typed as in lookback_scan
        if lane == 0:
            carry_in[0] = prev
    cuda.syncthreads()
    add = carry_in[0]
    if warp > 0:
        add += warp_tot[uint32(warp - uint32(1))]
    for r in range(ITEMS):
        i = uint32(first + uint32(r * 32))
        if full or i < un:
            out[i] = x[r] + add


@cuda.jit
def lookback_overlap(out, flags, sums, counter, a, n):
    # lookback_u32 reordered so that the look-back overlaps the tile's scan work (reduce, then
    # scan): each warp first only adds up its elements (one 5-step shuffle reduction), so the tile's
    # total is known after one barrier; warp 0 then looks back while the other warps scan their rows,
    # and warp 0 scans its own rows after. lookback_u32 makes every warp wait at the barrier for the
    # look-back, which the profiler found to be where its time goes.
    warp_tot = cuda.shared.array(32, numba.float32)
    ticket = cuda.shared.array(1, numba.int32)
    carry_in = cuda.shared.array(1, numba.float32)
    x = cuda.local.array(ITEMS, numba.float32)
    t = uint32(cuda.threadIdx.x)
    bd = uint32(cuda.blockDim.x)
    lane = t & uint32(31)
    warp = t >> uint32(5)
    nwarps = bd >> uint32(5)
    un = uint32(n)
    if t == 0:
        ticket[0] = cuda.atomic.add(counter, 0, 1)
    cuda.syncthreads()
    tile = ticket[0]
    tile_start = uint32(uint32(tile) * uint32(ITEMS) * bd)
    first = uint32(tile_start + warp * uint32(ITEMS * 32) + lane)
    full = uint32(tile_start + uint32(ITEMS) * bd) <= un
    if full:
        for r in range(ITEMS):
            x[r] = a[uint32(first + uint32(r * 32))]
    else:
        for r in range(ITEMS):
            i = uint32(first + uint32(r * 32))
            x[r] = a[i] if i < un else np.float32(0.0)
    own = np.float32(0.0)
    for r in range(ITEMS):
        own += x[r]
    d = 16
    while d > 0:  # every lane ends with the warp's total
        own += cuda.shfl_xor_sync(FULL_MASK, own, d)
        d //= 2
    if lane == 0:
        warp_tot[warp] = own
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
            warp_tot[lane] = w  # read after the second barrier only
        total = cuda.shfl_sync(FULL_MASK, w, 31)
        prev = look_back(flags, sums, tile, total, numba.int64(lane))
        if lane == 0:
            carry_in[0] = prev
    # every warp (warp 0 after its look-back): scan its rows, the warp's own running total carried
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
    cuda.syncthreads()
    add = carry_in[0]
    if warp > 0:
        add += warp_tot[uint32(warp - uint32(1))]
    for r in range(ITEMS):
        i = uint32(first + uint32(r * 32))
        if full or i < un:
            out[i] = x[r] + add
