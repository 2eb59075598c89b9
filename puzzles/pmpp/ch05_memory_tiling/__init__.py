"""PMPP chapter 5, memory architecture and data locality: tiled matrix multiplication.

Ladder: naive (chapter 3) -> shared-memory tiles with boundary checks (exercise) -> the tile size
chosen at launch with dynamic shared memory (exercise) -> thread coarsening and 1-D register tiling
(exercises) -> register tiling, each thread computing a TM x TN block of outputs from a BM x BN
block tile (worked) -> the same with the next tiles prefetched into registers and 16-byte shared
reads (worked; the SGEMM that reaches 40% of cuBLAS). One op ladder per file:
- tiled.py: ch05_matmul_tiled, ch05_matmul_dynamic.
- coarsening.py: ch05_matmul_coarse, ch05_matmul_rows.
- regtile.py: ch05_matmul_regtile, ch05_matmul_prefetch.
- sgemm_fast.py: the benchmark's two-stage SGEMM (no exercise; a candidate of the search).
- sgemm_v4.py: the same with 16-byte global loads and stores (no exercise; a candidate of the search).
- vec4.py: the 16-byte load and store intrinsics sgemm_v4.py uses (Python on the simulator).
- common.py: the chapter tag, TILE, the spec and the operands the cases share.
- bench.py: the benchmark and its GOAL.
"""

from helpers.timing import specialize  # noqa: F401  (notebooks call ch05.specialize)
from puzzles.pmpp.ch03_grids.matmul import matmul_kernel  # noqa: F401  (the naive rung, as before)

from .bench import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    BEST,
    GOAL,
    INTENSITY,
    PREFETCH_GRID,
    _peer_matmul,
    benchmark,
    intensity,
    prefetch_launcher,
)
from .coarsening import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    COARSE,
    RM,
    cases_coarse,
    cases_rows,
    coarse_matmul_kernel,
    rows_matmul_kernel,
)
from .common import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    CHAPTER,
    SHAPES,
    TILE,
    spec,
    spec_matmul,
)
from .regtile import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    A_LOADS,
    B_LOADS,
    BK,
    BM,
    BM_PAD,
    BN,
    M_TILE,
    N_TILE,
    NT,
    PAD,
    TM,
    TN,
    TX,
    TY,
    cases_regtile,
    prefetch_matmul_kernel,
    regtile_constants,
    regtile_matmul_kernel,
)
from .tiled import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    cases_dynamic,
    cases_tiled,
    dynamic_tiled_matmul_kernel,
    tiled_matmul_kernel,
)

__all__ = [
    "TILE",
    "COARSE",
    "RM",
    "BM",
    "BN",
    "BK",
    "TM",
    "TN",
    "TX",
    "TY",
    "NT",
    "A_LOADS",
    "B_LOADS",
    "PAD",
    "BM_PAD",
    "M_TILE",
    "N_TILE",
]
