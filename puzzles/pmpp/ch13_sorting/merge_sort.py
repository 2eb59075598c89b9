"""Merge sort (PMPP 13.8): passes of width 1, 2, 4, ...; each merges pairs of neighbouring sorted
runs with chapter 12's co-rank.

    ch13_merge_pass  one pass: output k finds its pair of runs and, by co-rank, its source
"""

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import CHAPTER, TPB, blocks_of, key_vals

# ------------------------------------------------------------------ spec


def merge_pass_spec(keys, vals, width, n):
    order = np.concatenate(
        [lo + np.argsort(keys[lo : lo + 2 * width], kind="stable") for lo in range(0, n, 2 * width)]
    )
    return {"keys_out": keys[order], "vals_out": vals[order]}


# ------------------------------------------------------------------ cases


def merge_pass_cases(rng):
    # widths 1, 2, a non-power of two, a short last pair, one run longer than n (nothing to merge)
    shapes = [
        (int(rng.integers(30, 45)), 4),
        (int(rng.integers(20, 30)), 1),
        (1, 1),
        (int(rng.integers(17, 29)), 3),
        (int(rng.integers(25, 40)), 16),
        (TPB + 1, 2),
        (11, 16),
    ]
    cases = []
    for (n, width), kind in zip(
        shapes, ("random", "dups", "random", "equal", "dups", "reversed", "sorted"), strict=True
    ):
        keys, vals = key_vals(rng, n, kind)
        # each run of `width` arrives sorted (stably, values following keys)
        for lo in range(0, n, width):
            o = np.argsort(keys[lo : lo + width], kind="stable")
            keys[lo : lo + width] = keys[lo : lo + width][o]
            vals[lo : lo + width] = vals[lo : lo + width][o]
        cases.append(
            Case(
                blocks_of(n, TPB),
                TPB,
                dict(
                    keys_out=np.zeros(n, np.uint32),
                    vals_out=np.zeros(n, np.int32),
                    keys=keys,
                    vals=vals,
                    width=width,
                    n=n,
                ),
            )
        )
    return cases


# ------------------------------------------------------------------ co-rank on two runs (device function)


@cuda.jit(device=True)
def co_rank_runs(k, keys, a0, m, b0, n):
    """Chapter 12's co-rank on two runs of one array: A = keys[a0:a0 + m], B = keys[b0:b0 + n].

    The i such that the first k outputs of the merge are A's first i and B's first k - i (ties: A first).
    """
    i = min(k, m)
    j = k - i
    i_low = max(0, k - n)
    j_low = max(0, k - m)
    while True:
        if i > 0 and j < n and keys[a0 + i - 1] > keys[b0 + j]:
            delta = (i - i_low + 1) // 2
            j_low = j
            i -= delta
            j += delta
        elif j > 0 and i < m and keys[b0 + j - 1] >= keys[a0 + i]:
            delta = (j - j_low + 1) // 2
            i_low = i
            i += delta
            j -= delta
        else:
            return i


# ------------------------------------------------------------------ rung 1: one merge pass


@cuda.jit
def merge_pass(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        ### BEGIN SOLUTION
        # k's pair of runs: A = [lo, mid), B = [mid, hi), both clipped at n
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        # output k is the smaller of the next element of A and of B (A on a tie: stable)
        if j >= hi - mid or (i < m and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]
        ### END SOLUTION


MERGE_PASS = Puzzle(
    name="ch13_merge_pass",
    title="Merge sort: one pass",
    statement="""`keys` is made of sorted runs of length `width` (the last one shorter). Merge each
pair of neighbouring runs, `[lo, lo + width)` and `[lo + width, lo + 2 * width)` with `lo` a multiple of
`2 * width` (clipped at `n`), stably: on a tie the key of the first run comes first; values travel with their
keys. Thread `k` writes output `k`: co-rank (`co_rank_runs`) says how many elements of each run come before
it; it is the smaller of the next one of each.""",
    outputs=("keys_out", "vals_out"),
    spec=merge_pass_spec,
    cases=merge_pass_cases,
    reference=merge_pass,
    hints=(
        "lo = k - k % (2 * width); mid = min(lo + width, n); hi = min(lo + 2 * width, n).",
        "i = co_rank_runs(k - lo, keys, lo, mid - lo, mid, hi - mid); j = k - lo - i.",
        "Take A's next (keys[lo + i]) if B is used up or A's is <= B's next, else B's: <= keeps ties stable.",
    ),
    chapter=CHAPTER,
)


PUZZLES = [MERGE_PASS]
