"""PMPP chapter 11: prefix sum (scan).

sections.py      Kogge-Stone (inclusive, exclusive, double-buffered), Brent-Kung and the
                 coarsened three-phase scan: one section per block
hierarchical.py  any length in three launches per level: section scans, their totals scanned,
                 added back (and the host pipeline that chains them)
single_pass.py   one launch: the domino scan, then the decoupled look-back
common.py        the constants, values, NumPy section scan and sizes the ladders share
bench.py         benchmark() and GOAL (and the GPU-only raked look-back)
lookback32.py    GPU-only: the look-back scan with 32-bit indices, and with its look-back overlapped
                 with the scan work (both searched by the benchmark)
"""

# the names notebooks, tests and tools reach as `ch11.<name>`
from .bench import GOAL, _peer_cumsum, _single_pass, benchmark, lookback_raked, reset_scan_state  # noqa: F401 (re-exports)
from .common import (  # noqa: F401 (re-exports)
    BK_SECTION,
    CHAPTER,
    COARSE,
    FULL_MASK,
    ITEMS,
    LB_TILE,
    LB_TPB,
    RAKED_BUF,
    THREE_SECTION,
    TPB,
)
from .hierarchical import add_block_sums, hierarchical_plan, hierarchical_scan, scan_blocks  # noqa: F401 (re-exports)
from .sections import (  # noqa: F401 (re-exports)
    brent_kung_scan,
    kogge_stone_double,
    kogge_stone_exclusive,
    kogge_stone_scan,
    three_phase_scan,
)
from .single_pass import domino_scan, look_back, lookback_scan  # noqa: F401 (re-exports)

# what `from puzzles.pmpp.ch11_scan import *` gives a notebook: constants only, never a kernel
__all__ = ["TPB", "BK_SECTION", "COARSE", "THREE_SECTION", "ITEMS", "LB_TILE", "FULL_MASK"]
