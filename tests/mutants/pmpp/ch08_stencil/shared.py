"""Mutants of puzzles/pmpp/ch08_stencil/shared.py."""

from numba import cuda, float32

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace
from puzzles.pmpp import ch08_stencil as ch08
from puzzles.pmpp.ch08_stencil import C0, CXM, CXP, CYM, CYP, CZM, CZP
from puzzles.pmpp.ch08_stencil import IN_TILE as S_IN
from puzzles.pmpp.ch08_stencil import OUT_TILE as S_OUT


@cuda.jit
def stencil_shared_no_barrier(out, a, nz, ny, nx):
    tile = cuda.shared.array((S_IN, S_IN, S_IN), float32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    x = cuda.blockIdx.x * S_OUT + tx - 1
    y = cuda.blockIdx.y * S_OUT + ty - 1
    z = cuda.blockIdx.z * S_OUT + tz - 1
    if 0 <= z < nz and 0 <= y < ny and 0 <= x < nx:
        tile[tz, ty, tx] = a[z, y, x]
    inner = 1 <= tx <= S_OUT and 1 <= ty <= S_OUT and 1 <= tz <= S_OUT
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


@cuda.jit
def stencil_shared_interior_only(out, a, nz, ny, nx):
    tile = cuda.shared.array((S_IN, S_IN, S_IN), float32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    x = cuda.blockIdx.x * S_OUT + tx - 1
    y = cuda.blockIdx.y * S_OUT + ty - 1
    z = cuda.blockIdx.z * S_OUT + tz - 1
    if 0 <= z < nz and 0 <= y < ny and 0 <= x < nx:
        tile[tz, ty, tx] = a[z, y, x]
    cuda.syncthreads()
    inner = 1 <= tx <= S_OUT and 1 <= ty <= S_OUT and 1 <= tz <= S_OUT
    if inner and 1 <= z < nz - 1 and 1 <= y < ny - 1 and 1 <= x < nx - 1:
        out[z, y, x] = (
            C0 * tile[tz, ty, tx]
            + CXM * tile[tz, ty, tx - 1]
            + CXP * tile[tz, ty, tx + 1]
            + CYM * tile[tz, ty - 1, tx]
            + CYP * tile[tz, ty + 1, tx]
            + CZM * tile[tz - 1, ty, tx]
            + CZP * tile[tz + 1, ty, tx]
        )


@cuda.jit
def stencil_shared_widest_example(out, a, nz, ny, nx):
    # outputs bounded by the widest example grid (13 points along x) as well as by nx
    tile = cuda.shared.array((S_IN, S_IN, S_IN), float32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    x = cuda.blockIdx.x * S_OUT + tx - 1
    y = cuda.blockIdx.y * S_OUT + ty - 1
    z = cuda.blockIdx.z * S_OUT + tz - 1
    if 0 <= z < nz and 0 <= y < ny and 0 <= x < nx:
        tile[tz, ty, tx] = a[z, y, x]
    cuda.syncthreads()
    inner = 1 <= tx <= S_OUT and 1 <= ty <= S_OUT and 1 <= tz <= S_OUT
    if inner and z < nz and y < ny and x < min(nx, 13):
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


MUTANTS = {
    "ch08_stencil_shared": [
        ("stencil_shared_no_barrier", stencil_shared_no_barrier, KernelDiagnosed, DataRace),
        ("stencil_shared_interior_only", stencil_shared_interior_only, WrongAnswer, None),
        ("stencil_shared_widest_example", stencil_shared_widest_example, WrongAnswer, None),
        ("stencil_basic", ch08.stencil_basic, OverBudget, "global_reads"),
    ],
}
VARIANTS: dict = {}
SEEDS = {
    "ch08_stencil_shared": (5,),
}
