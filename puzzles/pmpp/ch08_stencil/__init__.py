"""PMPP chapter 8, stencil: a 3-D seven-point stencil, four ways. One op ladder per file:
- basic.py: ch08_stencil_basic (worked), one thread per grid point, seven global reads each.
- shared.py: ch08_stencil_shared (exercise), 3-D blocks load an input tile (with a one-point halo).
- march.py: ch08_stencil_coarse (worked), 2-D blocks march along z keeping three planes in shared
  memory -> ch08_stencil_register (exercise), only the current plane shared, the planes below and
  above in each thread's registers.
- columns.py: the GPU-only column marches and the loads per point they ask (`requests_per_point`).
- columns32.py: GPU-only, the flat column march with 32-bit indices and several columns a thread.
- common.py: the coefficients, the tile geometry, the NumPy truth (`stencil`), the shapes.
- bench.py: the GPU variants and launchers, the benchmark and its GOAL.

Arrays are indexed a[z, y, x] (x fastest); interior points get
out = C0*a + CXM*west + CXP*east + CYM*south + CYP*north + CZM*below + CZP*above,
boundary points keep their input value (a fixed boundary condition).
"""

from .basic import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    cases_basic,
    stencil_basic,
)
from .bench import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    BASIC_GRID,
    COLUMN_GRID,
    FLAT_GRID,
    GOAL,
    GPU_PLANE_TILE,
    GPU_SHARED_TILE,
    GPU_Z_STEPS,
    GRIDS,
    MARCH_GRID,
    TUNE_CHECK_SHAPE,
    _peer_cupy_correlate,
    _peer_torch_conv3d,
    basic_launcher,
    benchmark,
    column_launcher,
    march_launcher,
    stencil_weights,
    validate_variants,
    variants,
)
from .columns import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    BATCH,
    requests_per_point,
    stencil_march,
    stencil_march_flat,
)
from .common import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    C0,
    CHAPTER,
    COEFFS,
    CXM,
    CXP,
    CYM,
    CYP,
    CZM,
    CZP,
    IN_TILE,
    OUT_TILE,
    SHAPES,
    Z_STEPS,
    spec,
    stencil,
)
from .march import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    cases_march,
    stencil_coarse,
    stencil_register,
)
from .shared import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    cases_shared,
    stencil_shared,
)

# what a star import gives: the constants
__all__ = [
    "C0",
    "CXM",
    "CXP",
    "CYM",
    "CYP",
    "CZM",
    "CZP",
    "COEFFS",
    "IN_TILE",
    "OUT_TILE",
    "Z_STEPS",
]
