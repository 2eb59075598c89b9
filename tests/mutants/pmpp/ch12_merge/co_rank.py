"""Mutants of puzzles/pmpp/ch12_merge/co_rank.py; format: mutants/common.py."""

from numba import cuda

from helpers.check import KernelDiagnosed, WrongAnswer
from helpers.sim.errors import OutOfBounds


@cuda.jit
def co_rank_ties_to_b(out, a, b, m, n):
    k = cuda.grid(1)
    if k <= m + n:
        i = min(k, m)
        j = k - i
        i_low = max(0, k - n)
        j_low = max(0, k - m)
        while True:
            if i > 0 and j < n and a[i - 1] >= b[j]:  # on a tie B goes first: not stable
                delta = (i - i_low + 1) // 2
                j_low = j
                i -= delta
                j += delta
            elif j > 0 and i < m and b[j - 1] > a[i]:
                delta = (j - j_low + 1) // 2
                i_low = i
                i += delta
                j -= delta
            else:
                break
        out[k] = i


@cuda.jit
def co_rank_no_bounds(out, a, b, m, n):
    k = cuda.grid(1)
    if k <= m + n:
        i = min(k, m)
        j = k - i
        i_low = max(0, k - n)
        j_low = max(0, k - m)
        while True:
            if i > 0 and a[i - 1] > b[j]:  # j may be n
                delta = (i - i_low + 1) // 2
                j_low = j
                i -= delta
                j += delta
            elif j > 0 and b[j - 1] >= a[i]:  # i may be m
                delta = (j - j_low + 1) // 2
                i_low = i
                i += delta
                j -= delta
            else:
                break
        out[k] = i


MUTANTS = {
    "ch12_co_rank": [
        ("co_rank_ties_to_b", co_rank_ties_to_b, WrongAnswer, None),
        ("co_rank_no_bounds", co_rank_no_bounds, KernelDiagnosed, OutOfBounds),
    ],
}
VARIANTS: dict = {}
SEEDS = {"ch12_co_rank": (3,)}
