"""Max pooling.

Rungs:
    ch16_maxpool    POOL x POOL windows at stride POOL (worked)
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

from .common import CHAPTER, POOL, TILE, _tiles, _x


def spec_maxpool(x):
    n, c, h, wd = x.shape
    ho, wo = h // POOL, wd // POOL
    return x[:, :, : ho * POOL, : wo * POOL].reshape(n, c, ho, POOL, wo, POOL).max(axis=(3, 5))


def cases_maxpool(rng):
    out = []
    for n, c, h, wd in [(2, 3, 11, 6), (1, 1, 2, 17), (1, 2, 16, 5), (2, 1, 19, 19)]:
        ho, wo = h // POOL, wd // POOL
        args = dict(y=np.empty((n, c, ho, wo), np.float32), x=_x(rng, n, c, h, wd))
        out.append(Case((_tiles(wo), _tiles(ho), n * c), (TILE, TILE), args))
    return out


@cuda.jit
def maxpool(y, x):
    col, row = cuda.grid(2)
    nc = cuda.blockIdx.z  # one z-block per (image, channel)
    n = nc // x.shape[1]
    c = nc % x.shape[1]
    if row < y.shape[2] and col < y.shape[3]:
        m = x[n, c, row * POOL, col * POOL]
        for p in range(POOL):
            for q in range(POOL):
                m = max(m, x[n, c, row * POOL + p, col * POOL + q])
        y[n, c, row, col] = m


MAXPOOL = Puzzle(
    name="ch16_maxpool",
    title="Max pooling",
    statement=f"""`y[n, c, h, w]` is the largest of the `POOL x POOL` inputs
`x[n, c, POOL * h + p, POOL * w + q]` (`POOL = {POOL}`, stride `POOL`; a last odd row or column is
dropped). One thread per output, `blockIdx.z = n * C + c`.""",
    outputs=("y",),
    spec=spec_maxpool,
    cases=cases_maxpool,
    reference=maxpool,
    budget=Budget(global_reads=POOL * POOL + 1, global_writes=1),
    chapter=CHAPTER,
)


PUZZLES = [MAXPOOL]
