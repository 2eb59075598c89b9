"""PMPP chapter 2, data-parallel computing: vector addition, and when the GPU is worth the trip.

Ladder (one op file):
- vecadd.py: one element per thread (worked) -> grid-stride loop (exercise) -> grid-stride loop with
  four loads of each operand in flight (worked; the one that should reach 80% of copy bandwidth).
- transfer.py: copies to and from the device against NumPy on the CPU (GPU only).
- bench.py: the benchmark and its GOAL.
"""

from .bench import BEST, GOAL, benchmark, copy_kernel, numba_copy_rows
from .bench import _peer_add as _peer_add  # tests/test_peers.py
from .transfer import transfer_study, transfer_table
from .vecadd import (
    CHAPTER,
    COALESCED,
    cases_grid_stride,
    cases_one_per_thread,
    spec,
    vecadd_grid_stride_kernel,
    vecadd_kernel,
    vecadd_x4_kernel,
)

# the old module had no __all__: a star import still gives every public name it gave
__all__ = [
    "BEST",
    "CHAPTER",
    "COALESCED",
    "GOAL",
    "benchmark",
    "cases_grid_stride",
    "cases_one_per_thread",
    "copy_kernel",
    "numba_copy_rows",
    "spec",
    "transfer_study",
    "transfer_table",
    "vecadd_grid_stride_kernel",
    "vecadd_kernel",
    "vecadd_x4_kernel",
]
