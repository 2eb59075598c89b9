"""Co-rank (PMPP 12.3-12.4): where output element k of a merge comes from.

    ch12_co_rank  one thread per output position k: a binary search for how many elements of A the
                  first k outputs use

The device function `co_rank` (common.py) is the solution the merge kernels call.
"""

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle, edge_sizes

from .common import CHAPTER, TPB, sorted_pair, split_total

# ------------------------------------------------------------------ spec


def co_rank_spec(a, b, m, n):
    order = np.argsort(np.concatenate([a, b]), kind="stable")  # stable: A before B on ties
    from_a = np.concatenate([[0], np.cumsum(order < m)])
    return from_a.astype(np.int32)


# ------------------------------------------------------------------ cases


def _co_rank_case(rng, m, n, grid):
    a, b = sorted_pair(rng, m, n)
    return Case(grid, TPB, dict(out=np.zeros(m + n + 1, np.int32), a=a, b=b, m=m, n=n))


def co_rank_cases(rng):
    # case 0 the notebook's; then m + n per seed: the edges around one block (2, TPB-1, TPB, TPB+1),
    # a few blocks and more outputs than the old largest (81), one thread per output k in 0..m+n
    cases = [_co_rank_case(rng, 13, 21, 5)]
    for total in edge_sizes(rng, 34, TPB, (82, 120), smallest=2)[1:]:
        grid = (total + 1 + TPB - 1) // TPB + int(rng.integers(0, 2))
        cases.append(_co_rank_case(rng, *split_total(rng, total), grid))
    return cases


# ------------------------------------------------------------------ rung 1: co-rank


@cuda.jit
def co_rank_kernel(out, a, b, m, n):
    k = cuda.grid(1)
    if k <= m + n:
        ### BEGIN SOLUTION
        i = min(k, m)
        j = k - i
        i_low = max(0, k - n)
        j_low = max(0, k - m)
        while True:
            if i > 0 and j < n and a[i - 1] > b[j]:
                delta = (i - i_low + 1) // 2
                j_low = j
                i -= delta
                j += delta
            elif j > 0 and i < m and b[j - 1] >= a[i]:
                delta = (j - j_low + 1) // 2
                i_low = i
                i += delta
                j -= delta
            else:
                break
        out[k] = i
        ### END SOLUTION


CO_RANK = Puzzle(
    name="ch12_co_rank",
    title="Co-rank",
    statement="""Thread `k` (for every `k` from 0 to `m + n`, inclusive) writes `out[k]`: how many
elements of `a` the first `k` outputs of the merge of `a` and `b` use. Find it by binary search: start from
`i = min(k, m)`, `j = k - i`; if `a[i-1] > b[j]` then `i` is too large, if `b[j-1] >= a[i]` then `j`
is too large; halve the distance to the last bound that was known to be safe each step.""",
    outputs=("out",),
    spec=co_rank_spec,
    cases=co_rank_cases,
    reference=co_rank_kernel,
    hints=(
        "The search range for i is [max(0, k - n), min(k, m)]; j = k - i always.",
        "Keep i_low and j_low: the smallest i and j that are still possible. When i is too large, "
        "the current j becomes the new j_low, and vice versa.",
        "Step by delta = ceil((i - i_low) / 2) (or (j - j_low)) so the search always moves.",
    ),
    chapter=CHAPTER,
)


PUZZLES = [CO_RANK]
