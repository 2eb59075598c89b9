"""PMPP chapter 8, stencil: a 3-D seven-point stencil, four ways.

    ch08_stencil_basic     one thread per grid point, seven global reads each
    ch08_stencil_shared    3-D blocks load an input tile (with a one-point halo) into shared memory
    ch08_stencil_coarse    2-D blocks march along z, keeping three planes in shared memory
    ch08_stencil_register  the same march with only the current plane shared: the planes below
                           and above live in each thread's registers

Arrays are indexed a[z, y, x] (x fastest); interior points get
out = C0*a + CXM*west + CXP*east + CYM*south + CYP*north + CZM*below + CZP*above,
boundary points keep their input value (a fixed boundary condition).
"""

import math

import numpy as np
from numba import cuda, float32, uint64

from helpers import timing, tuning
from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.timing import specialize

# Seven distinct coefficients, so a neighbour taken from the wrong side shows up.
# float32 so the kernel computes in float32 (a Python float would promote every term to float64).
__all__ = ["C0", "CXM", "CXP", "CYM", "CYP", "CZM", "CZP", "COEFFS", "IN_TILE", "OUT_TILE", "Z_STEPS"]

C0 = np.float32(0.5)
CXM, CXP = np.float32(0.0625), np.float32(-0.125)
CYM, CYP = np.float32(0.1875), np.float32(-0.25)
CZM, CZP = np.float32(0.3125), np.float32(-0.375)
COEFFS = (C0, CXM, CXP, CYM, CYP, CZM, CZP)
IN_TILE = 6  # shared: IN_TILE^3 threads per block; coarse/register: IN_TILE^2 (32 on a GPU)
OUT_TILE = IN_TILE - 2  # outputs per block along each tiled axis
Z_STEPS = 4  # coarse/register: z planes each block computes


@cuda.jit
def stencil_basic(out, a, nz, ny, nx):
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    z = cuda.blockIdx.z * cuda.blockDim.z + cuda.threadIdx.z
    if z < nz and y < ny and x < nx:
        if 1 <= z < nz - 1 and 1 <= y < ny - 1 and 1 <= x < nx - 1:
            out[z, y, x] = (
                C0 * a[z, y, x]
                + CXM * a[z, y, x - 1]
                + CXP * a[z, y, x + 1]
                + CYM * a[z, y - 1, x]
                + CYP * a[z, y + 1, x]
                + CZM * a[z - 1, y, x]
                + CZP * a[z + 1, y, x]
            )
        else:
            out[z, y, x] = a[z, y, x]


@cuda.jit
def stencil_shared(out, a, nz, ny, nx):
    tile = cuda.shared.array((IN_TILE, IN_TILE, IN_TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tz = cuda.threadIdx.z
    # Blocks step by OUT_TILE; the outermost layer of threads loads the halo.
    x = cuda.blockIdx.x * OUT_TILE + tx - 1
    y = cuda.blockIdx.y * OUT_TILE + ty - 1
    z = cuda.blockIdx.z * OUT_TILE + tz - 1
    ### BEGIN SOLUTION
    if 0 <= z < nz and 0 <= y < ny and 0 <= x < nx:
        tile[tz, ty, tx] = a[z, y, x]
    cuda.syncthreads()
    inner = 1 <= tx <= OUT_TILE and 1 <= ty <= OUT_TILE and 1 <= tz <= OUT_TILE
    if inner and z < nz and y < ny and x < nx:
        if 1 <= z < nz - 1 and 1 <= y < ny - 1 and 1 <= x < nx - 1:
            out[z, y, x] = (
                C0 * tile[tz, ty, tx]
                + CXM * tile[tz, ty, tx - 1]
                + CXP * tile[tz, ty, tx + 1]
                + CYM * tile[tz, ty - 1, tx]
                + CYP * tile[tz, ty + 1, tx]
                + CZM * tile[tz - 1, ty, tx]
                + CZP * tile[tz + 1, ty, tx]
            )
        else:
            out[z, y, x] = tile[tz, ty, tx]
    ### END SOLUTION


@cuda.jit
def stencil_coarse(out, a, nz, ny, nx):
    below = cuda.shared.array((IN_TILE, IN_TILE), float32)
    here = cuda.shared.array((IN_TILE, IN_TILE), float32)
    above = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * OUT_TILE + tx - 1
    y = cuda.blockIdx.y * OUT_TILE + ty - 1
    z0 = cuda.blockIdx.z * Z_STEPS
    in_plane = 0 <= y < ny and 0 <= x < nx
    owner = 1 <= tx <= OUT_TILE and 1 <= ty <= OUT_TILE and y < ny and x < nx
    if in_plane and z0 >= 1:
        below[ty, tx] = a[z0 - 1, y, x]
    if in_plane:
        here[ty, tx] = a[z0, y, x]
    for z in range(z0, min(z0 + Z_STEPS, nz)):  # same trip count for the whole block
        if in_plane and z + 1 < nz:
            above[ty, tx] = a[z + 1, y, x]
        cuda.syncthreads()
        if owner:
            if 1 <= z < nz - 1 and 1 <= y < ny - 1 and 1 <= x < nx - 1:
                out[z, y, x] = (
                    C0 * here[ty, tx]
                    + CXM * here[ty, tx - 1]
                    + CXP * here[ty, tx + 1]
                    + CYM * here[ty - 1, tx]
                    + CYP * here[ty + 1, tx]
                    + CZM * below[ty, tx]
                    + CZP * above[ty, tx]
                )
            else:
                out[z, y, x] = here[ty, tx]
        cuda.syncthreads()  # everyone is done with the planes before they move down
        if in_plane and z + 1 < nz:
            below[ty, tx] = here[ty, tx]
            here[ty, tx] = above[ty, tx]


@cuda.jit
def stencil_register(out, a, nz, ny, nx):
    here_s = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * OUT_TILE + tx - 1
    y = cuda.blockIdx.y * OUT_TILE + ty - 1
    z0 = cuda.blockIdx.z * Z_STEPS
    in_plane = 0 <= y < ny and 0 <= x < nx
    owner = 1 <= tx <= OUT_TILE and 1 <= ty <= OUT_TILE and y < ny and x < nx
    below = float32(0.0)
    here = float32(0.0)
    above = float32(0.0)
    ### BEGIN SOLUTION
    if in_plane and z0 >= 1:
        below = a[z0 - 1, y, x]
    if in_plane:
        here = a[z0, y, x]
        here_s[ty, tx] = here
    for z in range(z0, min(z0 + Z_STEPS, nz)):
        if in_plane and z + 1 < nz:
            above = a[z + 1, y, x]
        cuda.syncthreads()
        if owner:
            if 1 <= z < nz - 1 and 1 <= y < ny - 1 and 1 <= x < nx - 1:
                out[z, y, x] = (
                    C0 * here
                    + CXM * here_s[ty, tx - 1]
                    + CXP * here_s[ty, tx + 1]
                    + CYM * here_s[ty - 1, tx]
                    + CYP * here_s[ty + 1, tx]
                    + CZM * below
                    + CZP * above
                )
            else:
                out[z, y, x] = here
        cuda.syncthreads()
        below = here
        here = above
        if in_plane and z + 1 < nz:
            here_s[ty, tx] = here
    ### END SOLUTION


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


def stencil(a):
    """NumPy truth (float64 inside, float32 out)."""
    a64 = a.astype(np.float64)
    C0, CXM, CXP, CYM, CYP, CZM, CZP = map(float, COEFFS)
    out = a64.copy()
    c = a64[1:-1, 1:-1, 1:-1]
    out[1:-1, 1:-1, 1:-1] = (
        C0 * c
        + CXM * a64[1:-1, 1:-1, :-2]
        + CXP * a64[1:-1, 1:-1, 2:]
        + CYM * a64[1:-1, :-2, 1:-1]
        + CYP * a64[1:-1, 2:, 1:-1]
        + CZM * a64[:-2, 1:-1, 1:-1]
        + CZP * a64[2:, 1:-1, 1:-1]
    )
    return out.astype(np.float32)


def spec(a, nz, ny, nx):
    return stencil(a)


SHAPES = ((5, 7, 10), (3, 4, 5), (9, 6, 5), (4, 9, 7), (7, 5, 13))  # (nz, ny, nx)


def _shapes(rng, bx, by, bz):
    """Case 0 the notebook's 5 x 7 x 10; then per seed, per axis, the edges around one block of
    `bx` x `by` x `bz` outputs (1, block-1, block, block+1, a few blocks) and a side longer than the old
    fixed shapes (x 14-17, y and z 10-12); x ascending against z descending keeps every volume small."""
    pair = rng.spawn(1)[0]  # its own stream: case 0's data stay what they were
    nz0, ny0, nx0 = SHAPES[0]
    xs = edge_sizes(rng, nx0, bx, (14, 17))[1:]
    ys = edge_sizes(rng, ny0, by, (10, 12))[1:]
    zs = edge_sizes(rng, nz0, bz, (10, 12))[1:]
    k = max(len(xs), len(ys), len(zs))
    xs = sorted(xs + [int(pair.integers(1, 2 * bx + 1)) for _ in range(k - len(xs))])
    ys = pair.permutation(ys + [int(pair.integers(1, 2 * by + 1)) for _ in range(k - len(ys))]).tolist()
    zs = sorted(zs + [int(pair.integers(1, 2 * bz + 1)) for _ in range(k - len(zs))], reverse=True)
    return [SHAPES[0], *zip(zs, ys, xs)]


def _args(rng, shape):
    nz, ny, nx = shape
    return {
        "out": np.empty(shape, np.float32),
        "a": rng.uniform(-10, 10, shape).astype(np.float32),
        "nz": nz,
        "ny": ny,
        "nx": nx,
    }


def cases_basic(rng):
    block = (8, 4, 2)
    return [
        Case(
            grid=(math.ceil(nx / 8), math.ceil(ny / 4), math.ceil(nz / 2)),
            block=block,
            args=_args(rng, (nz, ny, nx)),
        )
        for nz, ny, nx in _shapes(rng, *block)
    ]


def cases_shared(rng):
    return [
        Case(
            grid=(math.ceil(nx / OUT_TILE), math.ceil(ny / OUT_TILE), math.ceil(nz / OUT_TILE)),
            block=(IN_TILE, IN_TILE, IN_TILE),
            args=_args(rng, (nz, ny, nx)),
        )
        for nz, ny, nx in _shapes(rng, OUT_TILE, OUT_TILE, OUT_TILE)
    ]


def cases_march(rng):
    return [
        Case(
            grid=(math.ceil(nx / OUT_TILE), math.ceil(ny / OUT_TILE), math.ceil(nz / Z_STEPS)),
            block=(IN_TILE, IN_TILE),
            args=_args(rng, (nz, ny, nx)),
        )
        for nz, ny, nx in _shapes(rng, OUT_TILE, OUT_TILE, Z_STEPS)
    ]


_COMMON = """

`a` and `out` are `nz x ny x nx` float32 grids indexed `[z, y, x]`. An interior point
(`1 <= z < nz-1`, same for y and x) gets
`C0*a[z,y,x] + CXM*a[z,y,x-1] + CXP*a[z,y,x+1] + CYM*a[z,y-1,x] + CYP*a[z,y+1,x]
+ CZM*a[z-1,y,x] + CZP*a[z+1,y,x]`; a boundary point keeps its value: `out[z,y,x] = a[z,y,x]`.
The coefficients are module constants."""

BASIC = (
    """\
One thread per grid point, 3-D blocks and grid. Each interior thread reads its point and six
neighbours straight from global memory: seven loads for one multiply-add chain. Neighbouring
threads load the same values again; the caches absorb some of that, not all."""
    + _COMMON
)

SHARED = (
    f"""\
**Shared-memory tiling.** Blocks are `IN_TILE^3` threads (`IN_TILE = {IN_TILE}`) and step by
`OUT_TILE = IN_TILE - 2`: block `(bx, by, bz)` owns outputs from `x = bx*OUT_TILE` (and so on)
and its outermost layer of threads loads the one-point halo. Every thread loads at most one point
of `a` into the shared `tile` (points outside the grid are not needed by anyone); after a barrier,
the inner `OUT_TILE^3` threads compute their outputs from `tile` alone.

The catch, which the next two versions fix: with small 3-D tiles the halo is a large share of the
tile (here {IN_TILE**3 - OUT_TILE**3} of {IN_TILE**3} threads only load), and a 3-D tile
worth having needs more threads than a block may hold."""
    + _COMMON
    + """

Budget per thread: 1 global read, 7 shared reads."""
)

COARSE = (
    f"""\
**Thread coarsening along z.** Blocks are 2-D, `IN_TILE x IN_TILE` threads, and each block computes
`Z_STEPS = {Z_STEPS}` planes of its `OUT_TILE x OUT_TILE` column, starting at `z0 = bz * Z_STEPS`.
Three shared planes `below`, `here`, `above` hold z-1, z and z+1; each step loads only the new
`above` plane, computes plane z, and shifts the planes down. The halo is now paid once per
column of planes instead of once per small cube."""
    + _COMMON
    + f"""

Budget per thread: `Z_STEPS + 2 = {Z_STEPS + 2}` global reads."""
)

REGISTER = (
    f"""\
**Register tiling.** In the coarsened kernel, only the `here` plane is read by neighbouring
threads; `below[ty, tx]` and `above[ty, tx]` are read only by thread `(tx, ty)` itself. Keep those
two in registers (the scalars `below`, `above`) and only `here` in shared memory (`here_s`): a third
of the shared memory, and fewer shared loads. Same geometry as the coarsened kernel: `IN_TILE x
IN_TILE` threads per block, `Z_STEPS = {Z_STEPS}` planes per block from `z0 = bz * Z_STEPS`."""
    + _COMMON
    + f"""

Budget per thread: `Z_STEPS + 2 = {Z_STEPS + 2}` global reads, `4 * Z_STEPS` shared reads, one
`IN_TILE x IN_TILE` float32 plane of shared memory."""
)

PUZZLES = [
    Puzzle(
        name="ch08_stencil_basic",
        title="3-D seven-point stencil, basic",
        statement=BASIC,
        outputs=("out",),
        spec=spec,
        cases=cases_basic,
        reference=stencil_basic,
        budget=Budget(global_reads=7, global_writes=1),
        chapter="pmpp-08",
    ),
    Puzzle(
        name="ch08_stencil_shared",
        title="3-D stencil, shared-memory tiling",
        statement=SHARED,
        outputs=("out",),
        spec=spec,
        cases=cases_shared,
        reference=stencil_shared,
        budget=Budget(global_reads=1, global_writes=1, shared_reads=7, shared_bytes=IN_TILE**3 * 4),
        chapter="pmpp-08",
        hints=(
            "Load a[z, y, x] into tile[tz, ty, tx] when (z, y, x) is inside the grid.",
            "Only threads with 1 <= tx, ty, tz <= OUT_TILE write, and only points inside the grid.",
            "Neighbours are one step away in the tile too: tile[tz, ty, tx - 1] is the west one.",
            "A boundary point copies its own value, which is also in the tile.",
        ),
    ),
    Puzzle(
        name="ch08_stencil_coarse",
        title="3-D stencil, coarsened along z",
        statement=COARSE,
        outputs=("out",),
        spec=spec,
        cases=cases_march,
        reference=stencil_coarse,
        budget=Budget(
            global_reads=Z_STEPS + 2, global_writes=Z_STEPS, shared_bytes=3 * IN_TILE * IN_TILE * 4
        ),
        chapter="pmpp-08",
    ),
    Puzzle(
        name="ch08_stencil_register",
        title="3-D stencil, register tiling",
        statement=REGISTER,
        outputs=("out",),
        spec=spec,
        cases=cases_march,
        reference=stencil_register,
        budget=Budget(
            global_reads=Z_STEPS + 2,
            global_writes=Z_STEPS,
            shared_reads=4 * Z_STEPS,
            shared_bytes=IN_TILE * IN_TILE * 4,
        ),
        chapter="pmpp-08",
        hints=(
            "Start from the coarsened kernel; replace the shared planes `below` and `above` "
            "by the scalar variables.",
            "`here` is needed both as a register (your own value) and in `here_s` (for the neighbours).",
            "After the second barrier: below = here, here = above, and store the new `here` in `here_s`.",
        ),
    ),
]


# ---------------------------------------------------------------------------- GPU benchmark

GPU_SHARED_TILE = 8  # 8^3 = 512 threads: a 3-D tile cannot grow much more
GPU_PLANE_TILE, GPU_Z_STEPS = 32, 32  # coarse/register: 32 x 32 threads, 32 planes per block


def variants():
    """name -> launch(out, a): the four puzzle kernels and the two column marches, at GPU sizes."""
    shared = specialize(stencil_shared, IN_TILE=GPU_SHARED_TILE, OUT_TILE=GPU_SHARED_TILE - 2)

    def launch_shared(out, a):
        nz, ny, nx = a.shape
        o, t = GPU_SHARED_TILE - 2, GPU_SHARED_TILE
        shared[(math.ceil(nx / o), math.ceil(ny / o), math.ceil(nz / o)), (t, t, t)](out, a, nz, ny, nx)

    return {
        "ch08_stencil_basic": basic_launcher((32, 8)),
        "ch08_stencil_shared": launch_shared,
        "ch08_stencil_coarse": march_launcher(stencil_coarse, GPU_PLANE_TILE, GPU_Z_STEPS),
        "ch08_stencil_register": march_launcher(stencil_register, GPU_PLANE_TILE, GPU_Z_STEPS),
        "ch08_stencil_march": column_launcher((32, 8), GPU_Z_STEPS, BATCH),
        "ch08_stencil_march_flat": column_launcher((32, 8), GPU_Z_STEPS, BATCH, flat=True),
    }


def basic_launcher(block):
    """launch(out, a) for the one-thread-per-point kernel with `block` = (x, y) threads per block."""
    bx, by = block

    def launch(out, a):
        nz, ny, nx = a.shape
        stencil_basic[(math.ceil(nx / bx), math.ceil(ny / by), nz), (bx, by, 1)](out, a, nz, ny, nx)

    return launch


def march_launcher(kernel, tile, z_steps):
    """launch(out, a) for a plane-marching kernel: tile x tile threads, `z_steps` planes per block."""
    k = specialize(kernel, IN_TILE=tile, OUT_TILE=tile - 2, Z_STEPS=z_steps)

    def launch(out, a):
        nz, ny, nx = a.shape
        o = tile - 2
        k[(math.ceil(nx / o), math.ceil(ny / o), math.ceil(nz / z_steps)), (tile, tile)](out, a, nz, ny, nx)

    return launch


def column_launcher(block, z_steps, batch, flat=False, max_registers=None):
    """launch(out, a) for the column march: `block` = (x, y) threads, `z_steps` planes per thread,
    `batch` planes' loads in flight together; `flat`: the kernel on the grids seen as 1-D;
    `max_registers`: a cap, so that more threads fit on an SM."""
    options = {"max_registers": max_registers} if max_registers else None
    kernel = stencil_march_flat if flat else stencil_march
    k = specialize(kernel, jit_options=options, Z_STEPS=z_steps, BATCH=batch)
    bx, by = block

    def launch(out, a):
        nz, ny, nx = a.shape
        grid = (math.ceil(nx / bx), math.ceil(ny / by), math.ceil(nz / z_steps))
        if flat:
            k[grid, (bx, by)](out.reshape(out.size), a.reshape(a.size), nz, ny, nx)
        else:
            k[grid, (bx, by)](out, a, nz, ny, nx)

    return launch


TUNE_CHECK_SHAPE = (37, 45, 101)  # every candidate of a search is validated on a grid this size
# the knobs searched on the GPU at hand (winners cached per device): block shape; tile x planes
BASIC_GRID = {f"block {bx}x{by}": (bx, by) for bx, by in ((32, 8), (32, 4), (64, 4), (128, 2), (32, 16))}
MARCH_GRID = {f"tile {t}, {z} planes": (t, z) for t in (16, 32) for z in (8, 16, 32, 64)}
COLUMN_GRID = {
    f"block {bx}x{by}, {z} planes, batch {b}": ((bx, by), z, b)
    for bx, by in ((32, 4), (32, 8), (64, 4))
    for z in (16, 32, 64)
    for b in (4, 6, 8)
}
FLAT_GRID = {  # the flat march: also a register cap (more threads per SM against more in flight each)
    f"block {bx}x{by}, {z} planes, batch {b}, {cap or 'no'} register cap": ((bx, by), z, b, True, cap)
    for bx, by in ((32, 4), (32, 8))
    for z in (32, 64)
    for b in (4, 6, 8)
    for cap in (None, 40)
}
GRIDS = {  # variant -> the knobs searched for it
    "ch08_stencil_basic": BASIC_GRID,
    "ch08_stencil_coarse": MARCH_GRID,
    "ch08_stencil_register": MARCH_GRID,
    "ch08_stencil_march": COLUMN_GRID,
    "ch08_stencil_march_flat": FLAT_GRID,
}


def _tuned_rows(out, a, nbytes):
    """Validate every candidate of each search on a small grid, then tune and time the big one."""
    small = np.random.default_rng(3).standard_normal(TUNE_CHECK_SHAPE).astype(np.float32)
    want = stencil(small)
    d_small, d_out = cuda.to_device(small), cuda.device_array(small.shape, np.float32)
    searches = {
        "ch08_stencil_basic": {cfg: basic_launcher(cfg) for cfg in BASIC_GRID.values()},
        "ch08_stencil_coarse": {cfg: march_launcher(stencil_coarse, *cfg) for cfg in MARCH_GRID.values()},
        "ch08_stencil_register": {cfg: march_launcher(stencil_register, *cfg) for cfg in MARCH_GRID.values()},
        "ch08_stencil_march": {cfg: column_launcher(*cfg) for cfg in COLUMN_GRID.values()},
        "ch08_stencil_march_flat": {cfg: column_launcher(*cfg) for cfg in FLAT_GRID.values()},
    }
    rows = []
    for name, launchers in searches.items():
        for cfg, launch in launchers.items():
            launch(d_out, d_small)
            timing.validate(f"{name} {cfg}", d_out.copy_to_host(), want, rtol=1e-4, atol=1e-5)

        def measure(cfg, launchers=launchers):
            launch = launchers[cfg]
            return timing.time_gpu(lambda: launch(out, a))

        grid = GRIDS[name]
        choice, seconds = tuning.tuned_time(name, grid, measure)
        rows.append(timing.Measurement(name, seconds, bytes=2 * nbytes, config=choice.label))
    return rows


def validate_variants(shapes=((70, 45, 101), (5, 9, 40)), seed=1):
    rng = np.random.default_rng(seed)
    for name, launch in variants().items():
        for shape in shapes:
            a = rng.standard_normal(shape).astype(np.float32)
            d_out = cuda.device_array(shape, np.float32)
            launch(d_out, cuda.to_device(a))
            timing.validate(f"{name} {shape}", d_out.copy_to_host(), stencil(a), rtol=1e-4, atol=1e-5)


def benchmark(scale: float = 1.0):
    """The six kernels on a 256 MiB grid (at scale 1); bytes = grid read once + written once."""
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    validate_variants()
    n = max(16, round(408 * scale ** (1 / 3)))  # 408^3 floats x 4 bytes = 259 MiB
    shape = (n, n, n + 8)
    a = cuda.to_device(np.random.default_rng(2).standard_normal(shape).astype(np.float32))
    out = cuda.device_array(shape, np.float32)
    nbytes = int(np.prod(shape)) * 4
    launch_shared = variants()["ch08_stencil_shared"]
    shared = timing.Measurement(
        "ch08_stencil_shared", timing.time_gpu(lambda: launch_shared(out, a)), bytes=2 * nbytes
    )
    rows = _tuned_rows(out, a, nbytes)  # basic, coarse, register, march
    rows.insert(1, shared)
    # every variant writes the same (validated) answer into out: the peer must agree with it
    rows.append(timing.copy_ceiling(nbytes))
    ours = out.copy_to_host()[1:-1, 1:-1, 1:-1]
    d_w = cuda.to_device(stencil_weights())
    peer = timing.library_peer(
        "3-D stencil",
        [
            timing.via("cupy", "cupyx.scipy.ndimage.correlate", _peer_cupy_correlate, a, d_w),
            timing.via("torch", "torch conv3d", _peer_torch_conv3d, a, d_w),
        ],
        bytes=2 * nbytes,
        check=lambda got: timing.validate(
            "3-D stencil peer (interior)", got[1:-1, 1:-1, 1:-1], ours, rtol=1e-4, atol=1e-5
        ),
    )
    if peer is not None:
        rows.append(peer)
    return rows


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


def stencil_weights():
    """The seven-point stencil as a 3 x 3 x 3 correlation filter, axes (z, y, x) like the grid."""
    w = np.zeros((3, 3, 3), np.float32)
    w[1, 1, 1] = C0
    w[1, 1, 0], w[1, 1, 2] = CXM, CXP
    w[1, 0, 1], w[1, 2, 1] = CYM, CYP
    w[0, 1, 1], w[2, 1, 1] = CZM, CZP
    return w


def _peer_cupy_correlate(cp, a, w):
    """What a user would call instead (its 27-tap filter has 20 zeros; the interior is what matches:
    the chapter's boundary points keep their input value)."""
    from cupyx.scipy import ndimage

    return ndimage.correlate(a, w, mode="constant", cval=0.0)


def _peer_torch_conv3d(torch, a, w):
    torch.backends.cudnn.allow_tf32 = False  # FP32 like the kernels (cuDNN defaults to TF32)
    return torch.nn.functional.conv3d(a[None, None], w[None, None], padding=1)[0, 0]


GOAL = {"ceiling": "copy", "fraction": 0.8, "best": "ch08_stencil_march_flat"}
