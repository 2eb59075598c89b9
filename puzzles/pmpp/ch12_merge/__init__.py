"""PMPP chapter 12: merge. Co-rank, a basic merge, a tiled merge, a circular-buffer merge.

co_rank.py   ch12_co_rank: for an output position k, how many elements of A the first k outputs use
merge.py     the merge ladder: basic, tiled (shared-memory rounds), circular buffers
common.py    the constants, the inputs, and the co_rank device function both ladders use
bench.py     benchmark() and GOAL (and the GPU-only partitioned merge)
partitioned32.py  GPU-only: the partitioned merge with 32-bit indices (searched by the benchmark)
"""

# the names notebooks, tests and tools reach as `ch12.<name>`
from .bench import (  # noqa: F401 (re-exports)
    GOAL,
    _merge_inputs,
    _partitioned_kernels,
    _peer_merge,
    benchmark,
    merge_partition,
    merge_partitioned,
    partitioned_merge,
)
from .co_rank import co_rank_kernel, co_rank_spec  # noqa: F401 (re-exports)
from .common import CHAPTER, TILE, TPB, co_rank  # noqa: F401 (re-exports)
from .merge import (  # noqa: F401 (re-exports)
    co_rank_circular,
    merge_basic,
    merge_circular,
    merge_sequential,
    merge_sequential_circular,
    merge_spec,
    merge_tiled,
)

# what `from puzzles.pmpp.ch12_merge import *` gives a notebook: constants only, never a kernel
__all__ = ["TPB", "TILE"]
