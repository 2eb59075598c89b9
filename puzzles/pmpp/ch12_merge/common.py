"""What the co-rank and merge ladders share: the constants, the sorted inputs, the split of an
output length between A and B, and the co-rank device function itself.

Ties go to A (an element of A equal to one of B comes first), so the merge is stable; the co-rank
puzzle's answer depends on that rule.
"""

import numpy as np
from numba import cuda

TPB = 8  # threads per block in the puzzles
TILE = 16  # elements of A and of B held in shared memory per block (tiled and circular)
CHAPTER = "pmpp-12"


def sorted_pair(rng, m, n):
    # quarter-steps from a small range: non-integers, negatives, and many ties between A and B
    a = np.sort(rng.integers(-40, 40, m) / 4).astype(np.float32)
    b = np.sort(rng.integers(-40, 40, n) / 4).astype(np.float32)
    return a, b


def split_total(rng, total):
    # m + n = total, both at least 1, drawn per case: uneven splits and near-even ones
    m = int(rng.integers(1, total))
    return m, total - m


# ------------------------------------------------------------------ the co-rank device function


@cuda.jit(device=True)
def co_rank(k, a, m, b, n):
    """The i such that the first k outputs of merge(a[:m], b[:n]) are merge(a[:i], b[:k - i])."""
    i = min(k, m)
    j = k - i
    i_low = max(0, k - n)
    j_low = max(0, k - m)
    while True:
        if i > 0 and j < n and a[i - 1] > b[j]:
            # i is too big: a[i - 1] would come after b[j]
            delta = (i - i_low + 1) // 2
            j_low = j
            i -= delta
            j += delta
        elif j > 0 and i < m and b[j - 1] >= a[i]:
            # j is too big (>=: on a tie A goes first)
            delta = (j - j_low + 1) // 2
            i_low = i
            i += delta
            j -= delta
        else:
            return i
