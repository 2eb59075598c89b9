"""F^H D with the trajectory in constant memory, one chunk per launch.

Rungs:
    ch17_fhd_const    the gather reading its chunk's samples from constant memory (a broadcast), adding its
                      partial sums to what the earlier chunks left (exercise)
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import (
    _RTOL,
    CHAPTER,
    CHUNK,
    CONST_ATOL,
    CONST_BYTES,
    K_TRAJ,
    M_TRAJ,
    TPB,
    TWO_PI,
    _blocks,
    _mu,
    _pos,
    fhd_ref,
)


def spec_const(r_fhd, i_fhd, mu, pos, chunk):
    """What the earlier chunks left in r_fhd, i_fhd plus this chunk's part."""
    lo, hi = chunk * CHUNK, min((chunk + 1) * CHUNK, M_TRAJ)
    r, i = fhd_ref(K_TRAJ[lo:hi], mu[lo:hi], pos)
    return {"r_fhd": (r_fhd + r).astype(np.float32), "i_fhd": (i_fhd + i).astype(np.float32)}


def cases_const(rng):
    # every chunk of the trajectory: the first, a middle one, and the short last one (40 = 16 + 16 + 8)
    out = []
    for n, chunk in [(33, 1), (1, 2), (TPB - 1, 0), (70, 2), (TPB, 1)]:
        mu, pos = _mu(rng, M_TRAJ), _pos(rng, n)
        # the outputs hold what the earlier chunks' launches left (zero before the first chunk): a
        # kernel that stores its part instead of adding it loses them
        r, i = fhd_ref(K_TRAJ[: chunk * CHUNK], mu[: chunk * CHUNK], pos)
        args = dict(r_fhd=r.astype(np.float32), i_fhd=i.astype(np.float32), mu=mu, pos=pos)
        args["chunk"] = chunk
        out.append(Case(_blocks(n), TPB, args))
    return out


def _const_reads(case):
    lo = case.args["chunk"] * CHUNK
    return 3 + 2 * (min(lo + CHUNK, M_TRAJ) - lo) + 2  # position, the chunk's mu, the two running sums


@cuda.jit
def fhd_const(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    ### BEGIN SOLUTION
    if n < pos.shape[0]:
        x = pos[n, 0]
        y = pos[n, 1]
        z = pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        start = chunk * CHUNK
        # the last chunk may be short: stop at the end of the trajectory
        for m in range(start, min(start + CHUNK, M_TRAJ)):
            # every thread of the warp reads the same sample: a constant-cache broadcast
            arg = TWO_PI * (traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z)
            c = math.cos(arg)
            s = math.sin(arg)
            r_mu = mu[m, 0]  # each used twice: one load each
            i_mu = mu[m, 1]
            r_acc += r_mu * c - i_mu * s
            i_acc += i_mu * c + r_mu * s
        # launches add up chunk by chunk; each voxel has one owner thread, so no atomics
        r_fhd[n] += r_acc
        i_fhd[n] += i_acc
    ### END SOLUTION


FHD_CONST = Puzzle(
    name="ch17_fhd_const",
    title="The trajectory in constant memory, chunk by chunk",
    statement=f"""The same sums, with the k-space trajectory in constant memory: `traj` holds the
`M_TRAJ = {M_TRAJ}` samples' `(kx, ky, kz)` (`K_TRAJ`, compiled in), read by every thread of a warp at
the same moment: a broadcast. A real trajectory is larger than the {CONST_BYTES // 1024} KB of constant
memory, so the host launches the kernel once per chunk of `CHUNK = {CHUNK}` samples: this launch
handles chunk `chunk`, samples `chunk * CHUNK` up to (not including) `min((chunk + 1) * CHUNK, M_TRAJ)`,
and **adds** its partial sums to `r_fhd[n]`, `i_fhd[n]`, which hold the sums of the chunks before it
(zero before the first chunk). `mu` is the whole trajectory's, in global memory. One thread per voxel,
registers as in the gather; no atomics.""",
    outputs=("r_fhd", "i_fhd"),
    spec=spec_const,
    cases=cases_const,
    reference=fhd_const,
    accumulate=("r_fhd", "i_fhd"),
    budget=Budget(global_atomics_per_block=0, global_reads=_const_reads, global_writes=2),
    hints=(
        "Sample m of chunk c is m = c * CHUNK + s, s = 0 .. CHUNK - 1; the last chunk is shorter.",
        "mu is indexed by the sample m, not by its place s in the chunk.",
        "Add to r_fhd[n] (+=): the chunks before this one left their sums there.",
    ),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=CONST_ATOL,
)


PUZZLES = [FHD_CONST]
