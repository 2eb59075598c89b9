"""PMPP chapter 7, convolution: a 2-D filter over an image, four ways. One op ladder per file:
- direct.py: ch07_conv2d_basic (worked), the filter in global memory -> ch07_conv2d_const (worked), the
  filter in constant memory.
- tiled.py: ch07_conv2d_tiled_in (exercise), blocks sized to the input tile -> ch07_conv2d_tiled_cached
  (exercise), blocks sized to the output tile, the halo from the cache.
- register.py: ch07_conv2d_register (worked), a 3x3 window of registers slid down ROWS rows.
- common.py: the filter, the NumPy truth (`conv2d`), the shapes the cases share.
- bench.py: the GPU variants (`variants`, `register_launcher`, `validate_variants`), the benchmark and
  its GOAL.

Pixels outside the image count as 0 ("ghost cells"). Like the book, "convolution" here means
out[r, c] = sum_ij f[i, j] * a[r - R + i, c - R + j] (no flip).
"""

from .bench import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    BATCH,
    BATCHED_GRID,
    GOAL,
    GPU_BATCH,
    GPU_BLOCK,
    GPU_ROWS,
    GPU_TILE,
    REGISTER_GRID,
    TUNE_CHECK_SHAPE,
    TUNED,
    _peer_cupy_correlate,
    _peer_torch_conv2d,
    benchmark,
    conv2d_register_batched,
    register_launcher,
    validate_variants,
    variants,
)
from .common import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    CHAPTER,
    FILTER,
    FW,
    SHAPES,
    R,
    conv2d,
    spec_const,
)
from .direct import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    cases_basic,
    cases_const,
    conv2d_basic,
    conv2d_const,
    spec_basic,
)
from .register import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    ROWS,
    cases_register,
    conv2d_register,
)
from .tiled import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    IN_TILE,
    OUT_TILE,
    TILE,
    cases_tiled_cached,
    cases_tiled_in,
    conv2d_tiled_cached,
    conv2d_tiled_in,
)

# what a star import gives: the constants
__all__ = ["R", "FW", "FILTER", "IN_TILE", "OUT_TILE", "TILE", "ROWS"]
