"""Mutants and variants of puzzles/pmpp/ch16_deep_learning/maxpool.py; format: mutants/common.py."""

from numba import cuda, float32

from mutants.common import WRONG


@cuda.jit
def maxpool_not_strided(y, x):
    col, row = cuda.grid(2)
    nc = cuda.blockIdx.z
    n = nc // x.shape[1]
    c = nc % x.shape[1]
    if row < y.shape[2] and col < y.shape[3]:
        m = x[n, c, row, col]
        for p in range(2):
            for q in range(2):
                m = max(m, x[n, c, row + p, col + q])  # overlapping windows: stride 1, not POOL
        y[n, c, row, col] = m


@cuda.jit
def maxpool_starts_at_zero(y, x):
    col, row = cuda.grid(2)
    nc = cuda.blockIdx.z
    n = nc // x.shape[1]
    c = nc % x.shape[1]
    if row < y.shape[2] and col < y.shape[3]:
        m = float32(0.0)  # the inputs are negative too: a window of negatives reports 0
        for p in range(2):
            for q in range(2):
                m = max(m, x[n, c, row * 2 + p, col * 2 + q])
        y[n, c, row, col] = m


MUTANTS = {
    "ch16_maxpool": [
        ("maxpool_not_strided", maxpool_not_strided, *WRONG),
        ("maxpool_starts_at_zero", maxpool_starts_at_zero, *WRONG),
    ],
}

VARIANTS = {}

SEEDS = {name: (0, 1, 2) for name in MUTANTS}
