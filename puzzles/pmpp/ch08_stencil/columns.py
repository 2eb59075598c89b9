"""GPU-only column marches (no puzzle): one thread per (x, y) column walking Z_STEPS planes, BATCH
planes' loads in flight; and what the one-thread-per-point kernel and the flat march ask of memory
per point, from the simulator's trace (`requests_per_point`, the notebook's table).
"""

import math

import numpy as np
from numba import cuda, float32, uint64

from helpers.timing import specialize

from .basic import stencil_basic
from .common import C0, CXM, CXP, CYM, CYP, CZM, CZP, Z_STEPS

BATCH = 4  # march: planes whose loads a thread issues together before computing any of them


@cuda.jit
def stencil_march(out, a, nz, ny, nx):
    # One thread per (y, x) column, marching Z_STEPS planes: the planes below and above stay in
    # registers, the in-plane neighbours come from global memory (the L1 cache catches them, so
    # no shared tile, no halo threads, no barrier). Loads are clamped into the grid, so a batch of
    # BATCH planes' loads has no branch between them and all are in flight together.
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    z0 = cuda.blockIdx.z * Z_STEPS
    if x >= nx or y >= ny or z0 >= nz:
        return
    z_end = min(z0 + Z_STEPS, nz)
    xw, xe = max(x - 1, 0), min(x + 1, nx - 1)
    ys, yn = max(y - 1, 0), min(y + 1, ny - 1)
    edge = x == 0 or x == nx - 1 or y == 0 or y == ny - 1
    up = cuda.local.array(BATCH, float32)  # the plane above each of the batch's planes
    west = cuda.local.array(BATCH, float32)
    east = cuda.local.array(BATCH, float32)
    south = cuda.local.array(BATCH, float32)
    north = cuda.local.array(BATCH, float32)
    below = a[max(z0 - 1, 0), y, x]
    here = a[z0, y, x]
    for zb in range(z0, z_end, BATCH):
        for k in range(BATCH):
            z = min(zb + k, nz - 1)
            up[k] = a[min(z + 1, nz - 1), y, x]
            west[k] = a[z, y, xw]
            east[k] = a[z, y, xe]
            south[k] = a[z, ys, x]
            north[k] = a[z, yn, x]
        for k in range(BATCH):
            z = zb + k
            above = up[k]
            if z < z_end:
                if edge or z == 0 or z == nz - 1:
                    out[z, y, x] = here
                else:
                    out[z, y, x] = (
                        C0 * here
                        + CXM * west[k]
                        + CXP * east[k]
                        + CYM * south[k]
                        + CYP * north[k]
                        + CZM * below
                        + CZP * above
                    )
            below = here
            here = above


@cuda.jit
def stencil_march_flat(out, a, nz, ny, nx):
    # stencil_march on the grids flattened (C order, passed as 1-D arrays): one index per access
    # instead of three, and each neighbour a fixed offset from it. The profiler shows the 3-D
    # march issue-bound on integer index arithmetic, not waiting on DRAM: this cuts that work.
    # Indices are cast to uint64: Numba wraps a signed index that could be negative (a[-1] is the
    # last element, as in Python) with a few integer instructions per access; an unsigned one cannot.
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    z0 = cuda.blockIdx.z * Z_STEPS
    if x >= nx or y >= ny or z0 >= nz:
        return
    z_end = min(z0 + Z_STEPS, nz)
    plane = ny * nx
    # offsets to the in-plane neighbours, 0 on a face (face points keep their input anyway)
    dw = -1 if x > 0 else 0
    de = 1 if x < nx - 1 else 0
    ds = -nx if y > 0 else 0
    dn = nx if y < ny - 1 else 0
    edge = dw == 0 or de == 0 or ds == 0 or dn == 0
    p = (z0 * ny + y) * nx + x
    last = p + (nz - 1 - z0) * plane  # this column's point in the top plane: loads clamp to it
    up = cuda.local.array(BATCH, float32)
    west = cuda.local.array(BATCH, float32)
    east = cuda.local.array(BATCH, float32)
    south = cuda.local.array(BATCH, float32)
    north = cuda.local.array(BATCH, float32)
    below = a[uint64(p - plane)] if z0 > 0 else a[uint64(p)]
    here = a[uint64(p)]
    for zb in range(z0, z_end, BATCH):
        for k in range(BATCH):
            q = min(p + k * plane, last)
            up[k] = a[uint64(min(q + plane, last))]
            west[k] = a[uint64(q + dw)]
            east[k] = a[uint64(q + de)]
            south[k] = a[uint64(q + ds)]
            north[k] = a[uint64(q + dn)]
        for k in range(BATCH):
            z = zb + k
            above = up[k]
            if z < z_end:
                if edge or z == 0 or z == nz - 1:
                    out[uint64(p + k * plane)] = here
                else:
                    out[uint64(p + k * plane)] = (
                        C0 * here
                        + CXM * west[k]
                        + CXP * east[k]
                        + CYM * south[k]
                        + CYP * north[k]
                        + CZM * below
                        + CZP * above
                    )
            below = here
            here = above
        p += BATCH * plane


# ---------------------------------------------------------------------------- loads per point


def requests_per_point(shape=(16, 24, 64)) -> list[tuple[str, float, float]]:
    """[(variant, global loads per output point, 32-byte sectors per warp-level load)] from the
    simulator's trace of the one-thread-per-point kernel and the flat column march on a small grid:
    what each kernel asks of memory. (A profiler counts what of that reached DRAM.)"""
    from helpers import metrics, sim
    from helpers.sim.trace import READ

    nz, ny, nx = shape
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = np.zeros_like(a)
    flat = specialize(stencil_march_flat, Z_STEPS=8, BATCH=4)  # a grid this small: 8 planes a thread
    runs = {
        "ch08_stencil_basic": (
            stencil_basic,
            (math.ceil(nx / 32), math.ceil(ny / 4), nz),
            (32, 4, 1),
            (out, a),
        ),
        "ch08_stencil_march_flat": (
            flat,
            (math.ceil(nx / 32), math.ceil(ny / 4), math.ceil(nz / 8)),
            (32, 4),
            (out.reshape(-1), a.reshape(-1)),
        ),
    }
    rows = []
    for name, (kernel, grid, block, arrays) in runs.items():
        trace = sim.launch(kernel, grid, block, (*arrays, nz, ny, nx), roles={"out": "out", "a": "in"}).trace
        loads = [c for c in metrics.coalescing(trace) if c.access.kind == READ]
        per_point = sum(len(c.access.indices) for c in loads) / a.size
        rows.append((name, per_point, sum(c.sectors for c in loads) / len(loads)))
    return rows
