"""PMPP chapter 10: reduction (sum).

sum.py     the ladder: a simple tree in one block, the convergent tree, the first step while
           loading, any length (one segment and one atomic per block), thread coarsening, warp
           shuffles with a grid-stride loop
bench.py   benchmark() and GOAL: the any-length reductions on the GPU
"""

# the names notebooks, tests and tools reach as `ch10.<name>`
from .bench import GOAL, _peer_sum, benchmark  # noqa: F401 (re-exports)
from .sum import (  # noqa: F401 (re-exports)
    CHAPTER,
    COARSE,
    FULL_MASK,
    SEGMENT,
    TPB,
    reduce_coarsened,
    reduce_convergent,
    reduce_segmented,
    reduce_shared,
    reduce_shuffle,
    reduce_simple,
    sum_spec,
)

# what `from puzzles.pmpp.ch10_reduction import *` gives a notebook: constants only, never a kernel
__all__ = ["TPB", "SEGMENT", "COARSE", "FULL_MASK"]
