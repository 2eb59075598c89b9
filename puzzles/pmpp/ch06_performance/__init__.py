"""PMPP chapter 6, performance: coalescing, corner turning, thread coarsening.

The ladder is a matrix transpose (one op file):
- transpose.py: ch06_transpose_naive (worked) -> ch06_transpose_tiled (exercise) ->
  ch06_transpose_coarse (exercise).
- bench.py: the GPU variants (`variants`, `validate_variants`), the benchmark and its GOAL.
"""

from .bench import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    GOAL,
    GPU_ROWS,
    GPU_TILE,
    TUNE_GRID,
    TUNED,
    _peer_transpose,
    benchmark,
    transpose_batched,
    validate_variants,
    variants,
)
from .transpose import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    CHAPTER,
    COALESCED,
    CONFLICT_FREE,
    ROWS,
    SHAPES,
    TILE,
    TILE_P,
    cases_coarse,
    cases_tile,
    spec,
    transpose_coarse,
    transpose_naive,
    transpose_tiled,
)

__all__ = ["TILE", "TILE_P", "ROWS"]  # what a star import gives: the constants
