"""Chapter 15's shared pieces: launch constants, the NumPy truth of a level step and the statement every
level step shares.
"""

from __future__ import annotations

import numpy as np

TPB = 32  # threads per block in the puzzles


LOCAL_CAP = 8  # slots of the block-private frontier queue (small, so the overflow path runs too)


MAX_N = 128  # vertices a one-block BFS holds in its shared-memory queues


BLOCK_TPB = 64  # threads of the one-block BFS


CHAPTER = "pmpp-15"


def discovered(level, src, dst, cur):
    """found[v] = 1 where v is unreached and has an in-edge from a vertex of level cur."""
    found = np.zeros(level.size, np.int32)
    hit = (level[src] == cur) & (level[dst] == -1)
    found[dst[hit]] = 1
    return found


_FOUND = """Mark in `found` (zero to begin with) every vertex this step discovers: `found[u] = 1` for
each `u` with `level[u] == -1` that has an edge from a vertex of level `cur`. `level` is read-only."""
