"""PMPP chapter 9, histogram: atomics, privatisation, coarsening, aggregation.

atomics.py     ch09_hist_atomic, ch09_hist_private_global, ch09_hist_private_shared:
               where the counters live (global atomics, a private copy per block in global
               memory, then in shared memory)
coarsened.py   ch09_hist_coarse_contiguous, ch09_hist_coarse_interleaved, ch09_hist_aggregated,
               ch09_hist_unrolled: fewer threads, each counting many elements
common.py      the constants, the NumPy truth, the data and the cases both ladders share
bench.py       benchmark() and GOAL: every kernel at GPU sizes (and the GPU-only hist_unsigned)
"""

# the names notebooks, tests and tools reach as `ch09.<name>`
from .atomics import (  # noqa: F401 (re-exports)
    hist_atomic,
    hist_private_global,
    hist_private_shared,
)
from .bench import (  # noqa: F401 (re-exports)
    GOAL,
    _peer_cupy_histogram,
    benchmark,
    hist_unsigned,
    unrolled_launcher,
    validate_variants,
    variants,
)
from .coarsened import (  # noqa: F401 (re-exports)
    hist_aggregated,
    hist_coarse_contiguous,
    hist_coarse_interleaved,
    hist_unrolled,
)
from .common import (  # noqa: F401 (re-exports)
    BIN_WIDTH,
    CFACTOR,
    CHAPTER,
    MAX_VALUE,
    NUM_BINS,
    UNROLL,
    histogram,
    spec,
)

# what `from puzzles.pmpp.ch09_histogram import *` gives a notebook: constants only, never a kernel
__all__ = ["NUM_BINS", "BIN_WIDTH", "CFACTOR", "UNROLL"]
