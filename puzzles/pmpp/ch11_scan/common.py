"""What the scan ladders share: the constants, the values scanned, the NumPy section scan and the
sizes drawn per seed.

Inclusive scan: out[i] = a[0] + ... + a[i]. Exclusive: out[i] = a[0] + ... + a[i - 1], out[0] = 0.
A *section* scan restarts at every section boundary (section = the elements one block owns).
"""

import numpy as np

from helpers.puzzle import edge_sizes

TPB = 16  # threads per block; a Kogge-Stone section is TPB elements
COARSE = 4  # three-phase: elements per thread, section = COARSE * TPB
LB_TPB = 64  # decoupled look-back: threads per block (whole warps: it shuffles)
ITEMS = 2  # decoupled look-back: rows of 32 per warp, tile = ITEMS * LB_TPB elements
BK_SECTION = 2 * TPB  # (shared array shapes must be plain constants, not expressions)
THREE_SECTION = COARSE * TPB
LB_TILE = ITEMS * LB_TPB
RAKED_BUF = LB_TILE + LB_TILE // 32  # raked look-back: the tile in shared memory, one pad per 32
FULL_MASK = 0xFFFFFFFF
CHAPTER = "pmpp-11"
TOL = dict(rtol=1e-5, atol=1e-4)  # float32 sums in another order than NumPy's


def _values(rng, n):
    return rng.uniform(-2, 2, n).astype(np.float32)


def _section_scan(a, section, exclusive=False):
    out = np.empty(len(a), np.float64)
    for s in range(0, len(a), section):
        part = a[s : s + section].astype(np.float64)
        c = np.cumsum(part)
        out[s : s + section] = c - part if exclusive else c
    return out.astype(np.float32)


def blocks_of(n, section):
    return (n + section - 1) // section


# case 0's size (the notebook's); the others are drawn per seed (edge_sizes): 1, a section - 1, a
# section, a section + 1, a few sections, and more sections than the statement's examples ever had
SIZES = (50, 7, 100, 33, 81)


def sizes(rng, typical, section, old_most):
    """Case 0 `typical`, then the edges around one section and a largest of 1 to 2 sections more
    than the `old_most` sections the fixed sizes once reached."""
    return edge_sizes(rng, typical, section, (old_most * section + 1, (old_most + 2) * section))
