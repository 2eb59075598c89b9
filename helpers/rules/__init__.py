"""One table of rules: each a named check computed from a run's trace, with its limit (a number or a
function of the case), the message and advice a learner reads, and the view that shows it.

`core` holds the rule type, the standard rules a `Budget` builds (reads and writes per thread, shared
bytes, atomics, coalescing, divergence, bank conflicts, occupancy) and the order they are checked in;
`techniques` the rules particular exercises add for the technique they ask for. Import either from
`helpers.rules`.
"""

from .core import (  # noqa: F401
    Budget,
    Finding,
    Limit,
    Rule,
    first_broken,
    global_atomics_per_block,
    limits,
    max_bank_conflicts,
    max_paths_per_warp,
    min_coalescing,
    min_occupancy,
    min_shared_readers,
    outputs_via_shared,
    per_thread,
    shared_bytes_per_block,
)
from .techniques import (  # noqa: F401
    active_threads_packed,
    grid_stride_coalescing,
    holds_flagged,
    lanes_interleaved,
    max_shared_atomics,
    max_shared_writes_per_block,
    private_queue_atomics,
    reads_of,
    writes_in_thread_order,
)
