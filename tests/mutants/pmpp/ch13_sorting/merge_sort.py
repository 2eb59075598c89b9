"""Mutants of puzzles/pmpp/ch13_sorting/merge_sort.py; format: mutants/common.py."""

from numba import cuda

from mutants.common import OOB, RACE, WRONG
from puzzles.pmpp.ch13_sorting import co_rank_runs
from puzzles.pmpp.ch13_sorting.merge_sort import PUZZLES


@cuda.jit
def merge_ties_to_b(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] < keys[mid + j]):  # B wins ties: unstable
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


@cuda.jit
def merge_unclipped(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = lo + width  # the last pair may be short: mid and hi can pass n
        hi = lo + 2 * width
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


@cuda.jit
def merge_pair_by_width(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % width  # pairs start every width, not every 2 * width
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


@cuda.jit
def merge_b_exhausted_unchecked(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if i < m and keys[lo + i] <= keys[mid + j]:  # B may be used up: keys[mid + j] is past it
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


@cuda.jit
def merge_local_output(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k - lo] = keys[src]  # the index within the pair: every pair writes the same slots
        vals_out[k - lo] = vals[src]


@cuda.jit
def merge_values_left_behind(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[k]  # the value stays where it was


@cuda.jit
def merge_by_counting(keys_out, vals_out, keys, vals, width, n):
    # variant: no co-rank. Each input element finds its own output slot: its index in its run plus the
    # number of the other run's keys that precede it (A: those < it; B: those <= it, ties to A)
    x = cuda.grid(1)
    if x < n:
        lo = x - x % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        key = keys[x]
        if x < mid:
            a = mid
            lo_s, hi_s = mid, hi
            while lo_s < hi_s:  # first B key >= key
                h = (lo_s + hi_s) // 2
                if keys[h] < key:
                    lo_s = h + 1
                else:
                    hi_s = h
            dst = x + (lo_s - a)
        else:
            a = lo
            lo_s, hi_s = lo, mid
            while lo_s < hi_s:  # first A key > key
                h = (lo_s + hi_s) // 2
                if keys[h] <= key:
                    lo_s = h + 1
                else:
                    hi_s = h
            dst = lo + (x - mid) + (lo_s - a)
        keys_out[dst] = key
        vals_out[dst] = vals[x]


@cuda.jit
def merge_sequential_search(keys_out, vals_out, keys, vals, width, n):
    # variant: co-rank by a linear walk instead of a binary search (slow, but right)
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        i = 0
        j = 0
        while i + j < k - lo:
            if j >= hi - mid or (i < mid - lo and keys[lo + i] <= keys[mid + j]):
                i += 1
            else:
                j += 1
        if j >= hi - mid or (i < mid - lo and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


MUTANTS = {
    "ch13_merge_pass": [
        ("ties_to_b", merge_ties_to_b, *WRONG),
        ("last_pair_unclipped", merge_unclipped, *OOB),
        ("pairs_every_width", merge_pair_by_width, *WRONG),
        ("b_exhausted_unchecked", merge_b_exhausted_unchecked, *OOB),
        ("output_index_in_pair", merge_local_output, *RACE),
        ("values_left_behind", merge_values_left_behind, *WRONG),
    ],
}

VARIANTS = {
    "ch13_merge_pass": [("by_counting", merge_by_counting), ("sequential_search", merge_sequential_search)],
}

# exercises on three seeds, the worked kernels on two (as the chapter's tests ran them)
SEEDS = {p.name: (0, 1, 2) if p.name in MUTANTS else (0, 1) for p in PUZZLES}
