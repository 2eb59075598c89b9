"""Matrix multiplication, the naive way chapter 5 improves on.

Rungs:
- ch03_matmul (exercise): one output per thread, a float32 dot product of a row of m and a column of
  n; no two sizes equal, so swapped indices fail.
"""

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes

from .common import CHAPTER, _grid2d

# ---------------------------------------------------------------------------- spec


def spec_matmul(m, n, rows, inner, cols):
    return (m.astype(np.float64) @ n.astype(np.float64)).astype(np.float32)


# ---------------------------------------------------------------------------- cases


MATMUL_SHAPES = (
    (9, 7, 13, (8, 8)),
    (4, 17, 3, (4, 4)),
    (20, 5, 11, (8, 4)),
    (1, 6, 10, (16, 2)),
    (13, 12, 14, (4, 8)),
)


def cases_matmul(rng):
    out = []
    # (rows, inner, cols, block): no square matrix has inner == rows == cols, so swapped loops or
    # indices go out of bounds or give wrong values instead of passing by symmetry
    # case 0 the notebook's; then per seed rows and cols at the edges around a block drawn from the
    # list, a side longer than before, and inner from 1 to 12
    pair = rng.spawn(1)[0]  # its own stream: case 0's data stay what they were
    bx, by = MATMUL_SHAPES[int(pair.integers(1, len(MATMUL_SHAPES)))][3]
    cs = edge_sizes(rng, 13, bx, (15, 18))[1:]
    rs = edge_sizes(rng, 9, by, (21, 24))[1:]
    k = max(len(cs), len(rs))
    cs += [int(pair.integers(1, 3 * bx)) for _ in range(k - len(cs))]
    rs += [int(pair.integers(1, 3 * by)) for _ in range(k - len(rs))]
    shapes = [MATMUL_SHAPES[0]] + [
        (r, int(pair.integers(1, 13)), c, (bx, by)) for r, c in zip(pair.permutation(rs).tolist(), cs)
    ]
    for rows, inner, cols, block in shapes:
        m = rng.normal(0, 1, (rows, inner)).astype(np.float32)
        n = rng.uniform(-2, 2, (inner, cols)).astype(np.float32)
        out.append(
            Case(
                grid=_grid2d(rows, cols, block),
                block=block,
                args={
                    "p": np.empty((rows, cols), np.float32),
                    "m": m,
                    "n": n,
                    "rows": rows,
                    "inner": inner,
                    "cols": cols,
                },
            )
        )
    return out


# ---------------------------------------------------------------------------- one output per thread


@cuda.jit
def matmul_kernel(p, m, n, rows, inner, cols):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    ### BEGIN SOLUTION
    if row < rows and col < cols:
        acc = float32(0)
        for k in range(inner):
            acc += m[row, k] * n[k, col]
        p[row, col] = acc
    ### END SOLUTION


CH03_MATMUL = Puzzle(
    name="ch03_matmul",
    title="PMPP 3: Matrix multiplication, one output per thread",
    statement="""\
`p = m @ n` with `m` of shape `rows x inner` and `n` of shape `inner x cols`. Thread `(row, col)`
computes the dot product of row `row` of `m` and column `col` of `n`. No two sizes are equal, so the
shapes tell you which index goes where. Accumulate in float32 (`float32(0)`): a float64 accumulator
is up to 64 times slower on consumer GPUs. Budget per thread: `2 * inner` global reads, 1 write:
every element of `m` and `n` is read from global memory `cols` and `rows` times over, the waste
chapter 5 removes.""",
    outputs=("p",),
    spec=spec_matmul,
    cases=cases_matmul,
    reference=matmul_kernel,
    float64="reject",  # the statement asks for float32: a float64 accumulator is up to 64 times slower
    hints=(
        "Guard on both `row < rows` and `col < cols`.",
        "`m[row, k]` walks along a row of m, `n[k, col]` down a column of n.",
    ),
    budget=Budget(global_reads=lambda c: 2 * c.args["inner"], global_writes=1),
    rtol=1e-4,
    atol=1e-4,
    chapter=CHAPTER,
)


PUZZLES = [CH03_MATMUL]
