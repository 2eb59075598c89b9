"""The seven-point stencil marching along z: 2-D blocks, Z_STEPS planes each.

Rungs:
- ch08_stencil_coarse (worked): three planes (below, here, above) in shared memory, one new plane
  loaded per step: the halo paid once per column instead of once per cube.
- ch08_stencil_register (exercise): only `here` shared; `below` and `above` in each thread's
  registers (a third of the shared memory, fewer shared loads).
"""

import math

from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import (
    _COMMON,
    C0,
    CHAPTER,
    CXM,
    CXP,
    CYM,
    CYP,
    CZM,
    CZP,
    IN_TILE,
    OUT_TILE,
    Z_STEPS,
    _args,
    _shapes,
    spec,
)

# ---------------------------------------------------------------------------- cases


def cases_march(rng):
    return [
        Case(
            grid=(math.ceil(nx / OUT_TILE), math.ceil(ny / OUT_TILE), math.ceil(nz / Z_STEPS)),
            block=(IN_TILE, IN_TILE),
            args=_args(rng, (nz, ny, nx)),
        )
        for nz, ny, nx in _shapes(rng, OUT_TILE, OUT_TILE, Z_STEPS)
    ]


# ---------------------------------------------------------------------------- three shared planes


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


CH08_STENCIL_COARSE = Puzzle(
    name="ch08_stencil_coarse",
    title="3-D stencil, coarsened along z",
    statement=COARSE,
    outputs=("out",),
    spec=spec,
    cases=cases_march,
    reference=stencil_coarse,
    budget=Budget(global_reads=Z_STEPS + 2, global_writes=Z_STEPS, shared_bytes=3 * IN_TILE * IN_TILE * 4),
    chapter=CHAPTER,
)


# ------------------------------------------------------------------------- one shared plane, two in registers


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


CH08_STENCIL_REGISTER = Puzzle(
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
    chapter=CHAPTER,
    hints=(
        "Start from the coarsened kernel; replace the shared planes `below` and `above` "
        "by the scalar variables.",
        "`here` is needed both as a register (your own value) and in `here_s` (for the neighbours).",
        "After the second barrier: below = here, here = above, and store the new `here` in `here_s`.",
    ),
)


PUZZLES = [CH08_STENCIL_COARSE, CH08_STENCIL_REGISTER]
