"""The seven-point stencil, one thread per grid point.

Rungs:
- ch08_stencil_basic (worked): 3-D blocks and grid, seven global reads per interior point.
"""

import math

from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

from .common import _COMMON, C0, CHAPTER, CXM, CXP, CYM, CYP, CZM, CZP, _args, _shapes, spec

# ---------------------------------------------------------------------------- cases


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


# ---------------------------------------------------------------------------- one thread per point


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


BASIC = (
    """\
One thread per grid point, 3-D blocks and grid. Each interior thread reads its point and six
neighbours straight from global memory: seven loads for one multiply-add chain. Neighbouring
threads load the same values again; the caches absorb some of that, not all."""
    + _COMMON
)


CH08_STENCIL_BASIC = Puzzle(
    name="ch08_stencil_basic",
    title="3-D seven-point stencil, basic",
    statement=BASIC,
    outputs=("out",),
    spec=spec,
    cases=cases_basic,
    reference=stencil_basic,
    budget=Budget(global_reads=7, global_writes=1),
    chapter=CHAPTER,
)


PUZZLES = [CH08_STENCIL_BASIC]
