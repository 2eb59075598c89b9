"""GPU-only: the flat column march (columns.py) with 32-bit unsigned indices and COLS columns per
thread, for the benchmark's search (no puzzle).

The profiler found the flat march issue-bound on integer work, not on DRAM. Two cuts:
- 32-bit indices: Numba computes indices in int64 (two instructions per add or compare, and 64-bit
  multiplies); a uint32 index fits any grid under 2^32 points (the benchmark's is 69 M) and the
  address is one 32x32->64 multiply-add. Offsets to the west/south neighbours wrap modulo 2^32
  (`uint32(q + dw)` with dw = 2^32 - 1 is q - 1).
- COLS columns per thread, blockDim.x apart (a warp's loads stay coalesced): the plane offset, the
  z clamp and the loop count are paid once for COLS points.
"""

from __future__ import annotations

from numba import cuda, float32, uint32

from .common import C0, CXM, CXP, CYM, CYP, CZM, CZP, Z_STEPS

BATCH = 4  # planes whose loads are issued together
COLS = 2  # columns per thread, blockDim.x apart


@cuda.jit
def stencil_march_u32(out, a, nz, ny, nx):
    bx = uint32(cuda.blockDim.x)
    x0 = uint32(uint32(cuda.blockIdx.x) * bx * uint32(COLS) + uint32(cuda.threadIdx.x))
    y = uint32(uint32(cuda.blockIdx.y) * uint32(cuda.blockDim.y) + uint32(cuda.threadIdx.y))
    z0 = uint32(uint32(cuda.blockIdx.z) * uint32(Z_STEPS))
    unx, uny, unz = uint32(nx), uint32(ny), uint32(nz)
    if x0 >= unx or y >= uny or z0 >= unz:
        return
    z_end = min(uint32(z0 + uint32(Z_STEPS)), unz)
    plane = uint32(uny * unx)
    minus1 = uint32(0xFFFFFFFF)  # adding it is subtracting one, modulo 2^32
    ds = uint32(uint32(0) - unx) if y > 0 else uint32(0)
    dn = unx if y < uny - uint32(1) else uint32(0)
    row = uint32(uint32(z0 * uny + y) * unx)  # the (z0, y) row's first point
    last_row = uint32(uint32((unz - uint32(1)) * uny + y) * unx)  # the row in the top plane
    # per column: its x (clamped into the grid: a column past the edge loads, never stores)
    xs = cuda.local.array(COLS, uint32)
    dws = cuda.local.array(COLS, uint32)
    des = cuda.local.array(COLS, uint32)
    stores = cuda.local.array(COLS, uint32)  # 1: interior column, 2: face column, 0: past the edge
    below = cuda.local.array(COLS, float32)
    here = cuda.local.array(COLS, float32)
    for c in range(COLS):
        x = uint32(x0 + uint32(c) * bx)
        inside = x < unx
        x = x if inside else unx - uint32(1)
        xs[c] = x
        dws[c] = minus1 if x > 0 else uint32(0)
        des[c] = uint32(1) if x < unx - uint32(1) else uint32(0)
        face = x == 0 or x == unx - uint32(1) or ds == 0 or dn == 0
        stores[c] = uint32(0) if not inside else (uint32(2) if face else uint32(1))
        p = uint32(row + x)
        below[c] = a[uint32(p - plane)] if z0 > 0 else a[p]
        here[c] = a[p]
    cols_in = uint32(x0 + uint32(COLS - 1) * bx) < unx  # every column of this thread inside the grid
    up = cuda.local.array((BATCH, COLS), float32)
    west = cuda.local.array((BATCH, COLS), float32)
    east = cuda.local.array((BATCH, COLS), float32)
    south = cuda.local.array((BATCH, COLS), float32)
    north = cuda.local.array((BATCH, COLS), float32)
    zb = z0
    while zb < z_end:  # a 32-bit counter (range() would count in int64)
        for k in range(BATCH):
            r = min(uint32(row + uint32(k) * plane), last_row)
            r_up = min(uint32(r + plane), last_row)
            for c in range(COLS):
                q = uint32(r + xs[c])
                up[k, c] = a[uint32(r_up + xs[c])]
                west[k, c] = a[uint32(q + dws[c])]
                east[k, c] = a[uint32(q + des[c])]
                south[k, c] = a[uint32(q + ds)]
                north[k, c] = a[uint32(q + dn)]
        # a whole batch inside the block's planes with every column inside the grid (most batches):
        # every point computed and stored, a select instead of a branch, so no load of the batch is
        # used on one path only (LLVM sinks such loads into their branch, after the batch's other
        # loads, and the warp then waits for memory twice per batch)
        whole = cols_in and uint32(zb + uint32(BATCH)) <= z_end
        for k in range(BATCH):
            z = uint32(zb + uint32(k))
            r = uint32(row + uint32(k) * plane)
            for c in range(COLS):
                above = up[k, c]
                value = (
                    C0 * here[c]
                    + CXM * west[k, c]
                    + CXP * east[k, c]
                    + CYM * south[k, c]
                    + CYP * north[k, c]
                    + CZM * below[c]
                    + CZP * above
                )
                keep = stores[c] == 2 or z == 0 or z == unz - uint32(1)  # a face keeps its input
                if whole or (z < z_end and stores[c] != 0):
                    out[uint32(r + xs[c])] = here[c] if keep else value
                below[c] = here[c]
                here[c] = above
        row = uint32(row + uint32(BATCH) * plane)
        zb = uint32(zb + uint32(BATCH))
