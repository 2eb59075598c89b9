"""PMPP chapter 4, compute architecture and scheduling: warps, control divergence, occupancy.

One op ladder per file:
- warp_lane.py: ch04_warp_lane (exercise), which warp and lane a thread of a 2-D block is.
- divergence.py: ch04_parity_branch (worked) -> ch04_warp_uniform (exercise), one path per warp.
- occupancy.py: the occupancy arithmetic and the device query (no puzzle).
- common.py: the chapter tag and the warp size.
- bench.py: the benchmark (no GOAL).
"""

from .bench import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    GOAL,
    benchmark,
)
from .common import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    CHAPTER,
    WARP,
)
from .divergence import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    cases_parity,
    lane_paths,
    parity_branch_kernel,
    paths_per_warp,
    spec_parity,
    warp_uniform_kernel,
)
from .occupancy import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    DEVICE_ATTRIBUTES,
    GPUS,
    device_query,
    occupancy,
    occupancy_table,
)
from .warp_lane import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    cases_warp_lane,
    spec_warp_lane,
    warp_lane_kernel,
)

# what `from puzzles.pmpp.ch04_architecture import *` gives a notebook: constants only, never a kernel
__all__ = ["WARP"]
