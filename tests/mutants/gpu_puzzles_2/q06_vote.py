"""Known-wrong and known-right kernels for Puzzles II.6 (vote, early exit)."""

from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds, WarpDivergence

FULL_MASK = 0xFFFFFFFF
ROWS = 2


@cuda.jit
def scans_whole_row(out, a, thresh, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows:
        found = False
        for start in range(0, cols, 32):  # right answer, every chunk read
            c = start + lane
            hit = c < cols and a[r, c] > thresh
            found = cuda.any_sync(FULL_MASK, hit) or found
        if lane == 0:
            out[r] = 1 if found else 0


@cuda.jit
def lane_breaks_alone(out, a, thresh, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows:
        found = False
        start = 0
        while start < cols:
            c = start + lane
            if c < cols and a[r, c] > thresh:
                break  # this lane leaves; the others vote without it
            found = cuda.any_sync(FULL_MASK, False)
            start += 32
        found = start < cols
        if lane == 0:
            out[r] = 1 if found else 0


@cuda.jit
def every_lane_writes(out, a, thresh, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows:
        found = False
        start = 0
        while start < cols and not found:
            c = start + lane
            found = cuda.any_sync(FULL_MASK, c < cols and a[r, c] > thresh)
            start += 32
        out[r] = 1 if found else 0


@cuda.jit
def writes_only_hits(out, a, thresh, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows:
        found = False
        start = 0
        while start < cols and not found:
            c = start + lane
            found = cuda.any_sync(FULL_MASK, c < cols and a[r, c] > thresh)
            start += 32
        if lane == 0 and found:  # rows with no hit keep whatever was there
            out[r] = 1


@cuda.jit
def all_instead_of_any(out, a, thresh, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows:
        found = False
        start = 0
        while start < cols and not found:
            c = start + lane
            found = cuda.all_sync(FULL_MASK, c < cols and a[r, c] > thresh)
            start += 32
        if lane == 0:
            out[r] = 1 if found else 0


@cuda.jit
def no_row_guard(out, a, thresh, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    found = False
    start = 0
    while start < cols and not found:
        c = start + lane
        found = cuda.any_sync(FULL_MASK, c < cols and a[r, c] > thresh)
        start += 32
    if lane == 0:
        out[r] = 1 if found else 0


@cuda.jit
def all_sync_of_misses(out, a, thresh, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r >= rows:
        return
    start = 0
    clear = True
    while clear and start < cols:
        c = start + lane
        miss = c >= cols or a[r, c] <= thresh
        clear = cuda.all_sync(FULL_MASK, miss)
        start += 32
    if lane == 0:
        out[r] = 0 if clear else 1


@cuda.jit
def ballot_for_loop(out, a, thresh, rows, cols):
    lane = cuda.laneid
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    if r < rows:
        hits = 0
        for start in range(0, cols, 32):
            c = start + lane
            hits = cuda.ballot_sync(FULL_MASK, c < cols and a[r, c] > thresh)
            if hits != 0:
                break
        if lane == 0:
            out[r] = hits != 0


MUTANTS = {
    "vote": [
        ("scans_whole_row", scans_whole_row, OverBudget, "global_reads"),
        ("lane_breaks_alone", lane_breaks_alone, KernelDiagnosed, WarpDivergence),
        ("every_lane_writes", every_lane_writes, KernelDiagnosed, DataRace),
        ("writes_only_hits", writes_only_hits, WrongAnswer, None),
        ("all_instead_of_any", all_instead_of_any, WrongAnswer, None),
        ("no_row_guard", no_row_guard, KernelDiagnosed, OutOfBounds),
    ]
}
VARIANTS = {"vote": [("all_sync_of_misses", all_sync_of_misses), ("ballot_for_loop", ballot_for_loop)]}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
