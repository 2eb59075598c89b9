"""Mutants of puzzles/pmpp/ch08_stencil/march.py."""

from numba import cuda, float32

from helpers.check import KernelDiagnosed, OverBudget
from helpers.sim.errors import DataRace
from puzzles.pmpp import ch08_stencil as ch08
from puzzles.pmpp.ch08_stencil import C0, CXM, CXP, CYM, CYP, CZM, CZP, Z_STEPS
from puzzles.pmpp.ch08_stencil import IN_TILE as S_IN
from puzzles.pmpp.ch08_stencil import OUT_TILE as S_OUT


@cuda.jit
def stencil_register_one_barrier(out, a, nz, ny, nx):
    here_s = cuda.shared.array((S_IN, S_IN), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * S_OUT + tx - 1
    y = cuda.blockIdx.y * S_OUT + ty - 1
    z0 = cuda.blockIdx.z * Z_STEPS
    in_plane = 0 <= y < ny and 0 <= x < nx
    owner = 1 <= tx <= S_OUT and 1 <= ty <= S_OUT and y < ny and x < nx
    below = float32(0.0)
    here = float32(0.0)
    above = float32(0.0)
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
        below = here  # no barrier: the next plane overwrites here_s under the readers
        here = above
        if in_plane and z + 1 < nz:
            here_s[ty, tx] = here


MUTANTS = {
    "ch08_stencil_register": [
        ("stencil_register_one_barrier", stencil_register_one_barrier, KernelDiagnosed, DataRace),
        ("stencil_coarse", ch08.stencil_coarse, OverBudget, "shared_reads"),
    ],
}
VARIANTS: dict = {}
SEEDS = {
    "ch08_stencil_register": (5,),
}
