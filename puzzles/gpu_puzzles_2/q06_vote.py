"""Puzzles II.6, Vote: a warp searches a row and stops as one as soon as any lane finds a hit."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["FULL_MASK", "ROWS"]  # the notebook's constants
FULL_MASK = 0xFFFFFFFF
ROWS = 2  # rows per block: one warp per row, block = (32, ROWS)
CHAPTER = "puzzles-2"


@cuda.jit
def vote_kernel(out, a, thresh, rows, cols):
    lane = cuda.threadIdx.x
    r = cuda.blockIdx.x * ROWS + cuda.threadIdx.y
    ### BEGIN SOLUTION
    if r < rows:
        found = False
        start = 0
        while start < cols and not found:
            c = start + lane
            hit = c < cols and a[r, c] > thresh
            # the vote: the same answer in every lane, so the whole warp leaves the loop together
            found = cuda.any_sync(FULL_MASK, hit)
            start += 32
        if lane == 0:
            out[r] = 1 if found else 0
    ### END SOLUTION


def spec(a, thresh, rows, cols):
    return (a > thresh).any(axis=1).astype(np.int32)


def reads_needed(case) -> int:
    """Global reads per lane for a warp that stops at the first 32-wide chunk holding a hit."""
    a, t = case.args["a"], case.args["thresh"]
    chunks = (a.shape[1] + 31) // 32
    need = 1
    for row in a > t:
        hits = np.flatnonzero(row)
        need = max(need, hits[0] // 32 + 1 if hits.size else chunks)
    return int(need)


def cases(rng):
    out = []
    # (rows, cols, rows without a hit): case 0 has hits early in every row, so a full scan shows
    for rows, cols, misses in (
        (5, 160, 0),
        (1, 1, 0),
        (4, 31, 1),
        (3, 33, 1),
        (int(rng.integers(6, 9)), int(rng.integers(65, 130)), 2),
    ):
        a = rng.uniform(-1.0, 0.9, (rows, cols)).astype(np.float32)
        for r in range(rows - misses):
            c = int(rng.integers(0, min(cols, 64)))
            a[r, c] = rng.uniform(1.0, 2.0)
        a = a[rng.permutation(rows)]
        out.append(
            Case(
                grid=(rows + ROWS - 1) // ROWS,
                block=(32, ROWS),
                args={
                    "out": np.empty(rows, np.int32),
                    "a": a,
                    "thresh": np.float32(0.95),
                    "rows": rows,
                    "cols": cols,
                },
            )
        )
    return out


STATEMENT = f"""\
For each row of `a` (`rows x cols`, any `cols`), write `out[r] = 1` if some element of the row is
greater than `thresh`, else `0`. One warp per row: blocks of `(32, ROWS)` threads, `ROWS = {ROWS}`,
lane `threadIdx.x`, row `blockIdx.x * ROWS + threadIdx.y`.

The warp walks the row 32 columns at a time and must **stop at the first chunk that holds a hit**:
reading the rest of a long row is wasted bandwidth. A lane cannot just `break` on its own hit,
though: the warp must leave the loop together, or its lanes drift apart. Warp **votes** give every
lane the same answer: `cuda.any_sync(mask, p)` is true in every lane if `p` is true in any lane of
the mask, `cuda.all_sync(mask, p)` if it is true in all of them.

Budget per thread: one global read per chunk, up to and including the first chunk with a hit in
the row (all chunks for a row with no hit), 1 global write."""

PUZZLES = [
    Puzzle(
        name="vote",
        title="Puzzle II.6: Vote",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=vote_kernel,
        hints=(
            "Loop over chunks: in each, lane k looks at column start + k (if there is one).",
            "Decide whether to stop with a vote, so every lane decides the same thing at the same time.",
            "One lane writes the row's answer, 1 or 0, whether or not there was a hit.",
        ),
        budget=Budget(global_reads=reads_needed, global_writes=1, shared_bytes=0),
        chapter=CHAPTER,
    )
]
