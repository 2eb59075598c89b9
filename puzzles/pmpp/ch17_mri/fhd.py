"""F^H D: scatter as written, then gather after loop interchange.

Rungs:
    ch17_fhd_scatter    one thread per k-space sample, atomics into every voxel (worked)
    ch17_fhd_gather     loop interchange: one thread per voxel, position and sums in registers (exercise)
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import _FHD, _RTOL, CHAPTER, FHD_ATOL, SIZES, TPB, TWO_PI, _blocks, _fhd_args, fhd_ref


def spec_fhd(k, mu, pos):
    r, i = fhd_ref(k, mu, pos)
    return {"r_fhd": r.astype(np.float32), "i_fhd": i.astype(np.float32)}


def cases_scatter(rng):
    return [Case(_blocks(m), TPB, _fhd_args(rng, n, m)) for n, m in SIZES]


def cases_gather(rng):
    return [Case(_blocks(n), TPB, _fhd_args(rng, n, m)) for n, m in SIZES]


def _gather_reads(case):
    return 3 + 5 * case.args["k"].shape[0]


@cuda.jit
def fhd_scatter(r_fhd, i_fhd, k, mu, pos):
    m = cuda.grid(1)
    if m < k.shape[0]:
        r_mu = mu[m, 0]
        i_mu = mu[m, 1]
        for n in range(pos.shape[0]):
            arg = TWO_PI * (k[m, 0] * pos[n, 0] + k[m, 1] * pos[n, 1] + k[m, 2] * pos[n, 2])
            c = math.cos(arg)
            s = math.sin(arg)
            # every sample adds into every voxel: atomics, and all threads on the same voxel at once
            cuda.atomic.add(r_fhd, n, r_mu * c - i_mu * s)
            cuda.atomic.add(i_fhd, n, i_mu * c + r_mu * s)


FHD_SCATTER = Puzzle(
    name="ch17_fhd_scatter",
    title="F^H D as written: one thread per k-space sample",
    statement=f"""{_FHD}

The loop as the sequential code writes it, parallelised over samples: thread `m` (blocks of
`TPB = {TPB}`) adds its sample's contribution to every voxel with `cuda.atomic.add`. The outputs start
at zero.""",
    outputs=("r_fhd", "i_fhd"),
    spec=spec_fhd,
    cases=cases_scatter,
    reference=fhd_scatter,
    zeroed=("r_fhd", "i_fhd"),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=FHD_ATOL,
)


@cuda.jit
def fhd_gather(r_fhd, i_fhd, k, mu, pos):
    n = cuda.grid(1)
    ### BEGIN SOLUTION
    if n < pos.shape[0]:
        # the voxel's position and both sums live in registers for the whole loop
        x = pos[n, 0]
        y = pos[n, 1]
        z = pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        for m in range(k.shape[0]):
            arg = TWO_PI * (k[m, 0] * x + k[m, 1] * y + k[m, 2] * z)
            c = math.cos(arg)
            s = math.sin(arg)
            r_mu = mu[m, 0]  # each used twice: one load each
            i_mu = mu[m, 1]
            r_acc += r_mu * c - i_mu * s
            i_acc += i_mu * c + r_mu * s
        r_fhd[n] = r_acc
        i_fhd[n] = i_acc
    ### END SOLUTION


FHD_GATHER = Puzzle(
    name="ch17_fhd_gather",
    title="Loop interchange: one thread per voxel",
    statement=f"""{_FHD}

One thread per voxel `n` (blocks of `TPB = {TPB}`) loops over all samples: no atomics (enforced). Keep
the voxel's position and both running sums in registers: the budget is 3 global reads for the
position, 5 per sample (`k[m, 0..2]`, `mu[m, 0..1]`) and one write per output.""",
    outputs=("r_fhd", "i_fhd"),
    spec=spec_fhd,
    cases=cases_gather,
    reference=fhd_gather,
    budget=Budget(global_atomics_per_block=0, global_reads=_gather_reads, global_writes=2),
    hints=(
        "Read pos[n, 0..2] once, before the loop over m, into three local variables.",
        "Accumulate in two float32 locals and write r_fhd[n], i_fhd[n] once, after the loop.",
        "Threads past the last voxel must do nothing.",
    ),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=FHD_ATOL,
)


PUZZLES = [FHD_SCATTER, FHD_GATHER]
