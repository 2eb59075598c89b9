"""PMPP chapter 13: sorting. Radix sort (split, bucket counts, scan, coalesced scatter, coarsening),
float keys, and merge sort built on the chapter 12 co-rank.

Radix sort, least significant digit first: each pass sorts the keys by one digit of RADIX_BITS bits,
*stably*, so the order the earlier (lower) digits left among keys with equal digits survives. After
32 / RADIX_BITS passes the keys are sorted. One pass is three launches (four on a big table):

1. count: each block counts its tile's keys per bucket (digit value) into `counts[d * tiles + tile]`;
2. scan: an exclusive scan of that bucket-major table gives, for every (bucket, tile), where the tile's
   keys of that bucket start in the output (all of bucket 0 first, tile by tile, then bucket 1, ...);
   a big table is scanned in chunks, one per block, after a launch that totals each chunk;
3. scatter: each block sorts its tile by the digit in shared memory (a few stable splits), then
   writes it out: neighbouring threads write neighbouring addresses within each bucket.

Merge sort: passes of width 1, 2, 4, ...; each merges pairs of neighbouring sorted runs with co-rank.
Both are stable; the puzzles check it with key-value pairs whose values are all distinct.

    split.py          ch13_split: a stable split by one bit within a block
    radix_count.py    ch13_radix_count, ch13_radix_count_coarse: bucket counts per tile
    radix_scan.py     ch13_chunk_sums, ch13_scan_counts: the count table's exclusive scan, in chunks
    radix_scatter.py  ch13_radix_scatter_direct, ch13_radix_scatter, ch13_radix_scatter_coarse
    float_keys.py     ch13_float_to_key, ch13_key_to_float: float bits as sortable keys and back
    merge_sort.py     ch13_merge_pass: one pass of merge sort by co-rank
    common.py         the constants, shared device functions, keys and values, radix helpers
    pipelines.py      whole sorts from the kernels: radix_sort, radix_sort_keys_plan, sort_floats, merge_sort
    bench.py          benchmark() and GOAL: the sorts at GPU shapes against cupy.sort
"""

# the names notebooks, tests and tools reach as `ch13.<name>`
from numba import cuda  # noqa: F401 (ch13.cuda: the tests' device arrays)

from .bench import GOAL, GPU, GPU_PLAIN, SCAN_BLOCKS, benchmark, gpu_kernels, gpu_plans  # noqa: F401
from .common import (  # noqa: F401 (re-exports)
    BUCKETS,
    C_TILE,
    C_TPB,
    CHAPTER,
    COARSE,
    FULL_MASK,
    KINDS,
    MAX_KEY,
    R_TPB,
    RADIX_BITS,
    S_ITEMS,
    SIGN,
    SPLIT_BITS,
    TPB,
    WAYS,
    block_exclusive_scan,
    digit,
    make_keys,
    make_vals,
)
from .float_keys import float_cases, float_to_key, key_to_float, make_floats  # noqa: F401
from .merge_sort import co_rank_runs, merge_pass, merge_pass_cases  # noqa: F401
from .pipelines import merge_sort, radix_sort, radix_sort_keys_plan, sort_floats  # noqa: F401
from .radix_count import radix_count, radix_count_coarse  # noqa: F401
from .radix_scan import chunk_sums, scan_cases, scan_counts  # noqa: F401
from .radix_scatter import (  # noqa: F401 (re-exports)
    radix_scatter,
    radix_scatter_coarse,
    radix_scatter_direct,
    scatter_cases,
    split_shared,
)
from .split import split_cases, split_kernel  # noqa: F401

# what `from puzzles.pmpp.ch13_sorting import *` gives a notebook: constants only, never a kernel
__all__ = [
    "TPB",
    "R_TPB",
    "RADIX_BITS",
    "BUCKETS",
    "C_TPB",
    "COARSE",
    "C_TILE",
    "SPLIT_BITS",
    "WAYS",
    "S_ITEMS",
    "MAX_KEY",
    "SIGN",
    "FULL_MASK",
]
