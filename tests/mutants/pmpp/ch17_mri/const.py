"""Mutants and variants of puzzles/pmpp/ch17_mri/const.py; format: mutants/common.py."""

import math

from numba import cuda, float32

from mutants.common import OOB, WRONG, M, over
from puzzles.pmpp.ch17_mri import CHUNK, K_TRAJ, M_TRAJ, TWO_PI, const


@cuda.jit
def const_chunk_one_too_long(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x, y, z = pos[n, 0], pos[n, 1], pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        start = chunk * CHUNK
        for m in range(start, min(start + CHUNK + 1, M_TRAJ)):  # the chunk off by one: overlaps the next
            arg = TWO_PI * (traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z)
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
        r_fhd[n] += r_acc
        i_fhd[n] += i_acc


@cuda.jit
def const_chunk_starts_late(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x, y, z = pos[n, 0], pos[n, 1], pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        start = chunk * CHUNK
        for m in range(start + 1, min(start + CHUNK, M_TRAJ)):  # skips the chunk's first sample
            arg = TWO_PI * (traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z)
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
        r_fhd[n] += r_acc
        i_fhd[n] += i_acc


@cuda.jit
def const_last_chunk_unclamped(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x, y, z = pos[n, 0], pos[n, 1], pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        start = chunk * CHUNK
        for m in range(start, start + CHUNK):  # the last chunk is short: reads past the trajectory
            arg = TWO_PI * (traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z)
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
        r_fhd[n] += r_acc
        i_fhd[n] += i_acc


@cuda.jit
def const_mu_chunk_index(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x, y, z = pos[n, 0], pos[n, 1], pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        start = chunk * CHUNK
        for m in range(start, min(start + CHUNK, M_TRAJ)):
            arg = TWO_PI * (traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z)
            r_mu = mu[m - start, 0]  # the place in the chunk, not the sample: chunk 0's mu every time
            i_mu = mu[m - start, 1]
            r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
        r_fhd[n] += r_acc
        i_fhd[n] += i_acc


@cuda.jit
def const_traj_chunk_index(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x, y, z = pos[n, 0], pos[n, 1], pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        start = chunk * CHUNK
        for s in range(min(CHUNK, M_TRAJ - start)):
            m = start + s
            # as if constant memory held only this chunk (CUDA C's copy per launch): here it holds all
            arg = TWO_PI * (traj[s, 0] * x + traj[s, 1] * y + traj[s, 2] * z)
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
        r_fhd[n] += r_acc
        i_fhd[n] += i_acc


@cuda.jit
def const_no_guard(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    x, y, z = pos[n, 0], pos[n, 1], pos[n, 2]
    r_acc = float32(0.0)
    i_acc = float32(0.0)
    start = chunk * CHUNK
    for m in range(start, min(start + CHUNK, M_TRAJ)):
        arg = TWO_PI * (traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z)
        r_mu = mu[m, 0]
        i_mu = mu[m, 1]
        r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
        i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
    r_fhd[n] += r_acc
    i_fhd[n] += i_acc


@cuda.jit
def const_atomic_add(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x, y, z = pos[n, 0], pos[n, 1], pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        start = chunk * CHUNK
        for m in range(start, min(start + CHUNK, M_TRAJ)):
            arg = TWO_PI * (traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z)
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
        cuda.atomic.add(r_fhd, n, r_acc)  # one owner per voxel: the atomic buys nothing
        cuda.atomic.add(i_fhd, n, i_acc)


@cuda.jit
def const_sample_loop_with_break(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x, y, z = pos[n, 0], pos[n, 1], pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        for s in range(CHUNK):
            m = chunk * CHUNK + s
            if m >= M_TRAJ:
                break
            arg = TWO_PI * (traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z)
            c = math.cos(arg)
            sn = math.sin(arg)
            a = mu[m, 0]
            b = mu[m, 1]
            r_acc += a * c - b * sn
            i_acc += b * c + a * sn
        r_fhd[n] = r_fhd[n] + r_acc
        i_fhd[n] = i_fhd[n] + i_acc


@cuda.jit
def const_reversed(r_fhd, i_fhd, mu, pos, chunk):
    traj = cuda.const.array_like(K_TRAJ)
    n = cuda.grid(1)
    if n >= pos.shape[0]:
        return
    x = TWO_PI * pos[n, 0]
    y = TWO_PI * pos[n, 1]
    z = TWO_PI * pos[n, 2]
    re = float32(0.0)
    im = float32(0.0)
    last = min((chunk + 1) * CHUNK, M_TRAJ) - 1
    for m in range(last, chunk * CHUNK - 1, -1):
        arg = traj[m, 0] * x + traj[m, 1] * y + traj[m, 2] * z
        a = mu[m, 0]
        b = mu[m, 1]
        re += a * math.cos(arg) - b * math.sin(arg)
        im += b * math.cos(arg) + a * math.sin(arg)
    r_fhd[n] += re
    i_fhd[n] += im


# the chunks before this one left their sums in r_fhd, i_fhd: storing this chunk's part loses them
CONST_STORES_PART = M(
    const.fhd_const,
    "const_stores_part",
    WRONG,
    ("r_fhd[n] += r_acc", "r_fhd[n] = r_acc"),
    ("i_fhd[n] += i_acc", "i_fhd[n] = i_acc"),
)


MUTANTS = {
    "ch17_fhd_const": [
        ("const_chunk_one_too_long", const_chunk_one_too_long, *WRONG),
        ("const_chunk_starts_late", const_chunk_starts_late, *WRONG),
        ("const_last_chunk_unclamped", const_last_chunk_unclamped, *OOB),
        ("const_mu_chunk_index", const_mu_chunk_index, *WRONG),
        ("const_traj_chunk_index", const_traj_chunk_index, *WRONG),
        ("const_no_guard", const_no_guard, *OOB),
        ("const_atomic_add", const_atomic_add, *over("global_atomics_per_block")),
        CONST_STORES_PART,
    ],
}

VARIANTS = {
    "ch17_fhd_const": [
        ("const_sample_loop_with_break", const_sample_loop_with_break),
        ("const_reversed", const_reversed),
    ],
}

SEEDS = {name: (0, 1, 2) for name in MUTANTS}
