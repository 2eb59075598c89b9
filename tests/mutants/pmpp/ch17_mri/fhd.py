"""Mutants and variants of puzzles/pmpp/ch17_mri.py; format: mutants/common.py."""

import math

from numba import cuda, float32

from mutants.common import OOB, RACE, WRONG, over
from puzzles.pmpp.ch17_mri import CHUNK, K_TRAJ, M_TRAJ, TWO_PI

# ------------------------------------------------------------------ worked


@cuda.jit
def mu_no_conjugate(mu, phi, d):
    m = cuda.grid(1)
    if m < mu.shape[0]:
        mu[m, 0] = phi[m, 0] * d[m, 0] - phi[m, 1] * d[m, 1]  # phi * d: the conjugate forgotten
        mu[m, 1] = phi[m, 0] * d[m, 1] + phi[m, 1] * d[m, 0]


@cuda.jit
def scatter_plain_add(r_fhd, i_fhd, k, mu, pos):
    m = cuda.grid(1)
    if m < k.shape[0]:
        for n in range(pos.shape[0]):
            arg = TWO_PI * (k[m, 0] * pos[n, 0] + k[m, 1] * pos[n, 1] + k[m, 2] * pos[n, 2])
            r_fhd[n] += mu[m, 0] * math.cos(arg) - mu[m, 1] * math.sin(arg)  # lost updates
            i_fhd[n] += mu[m, 1] * math.cos(arg) + mu[m, 0] * math.sin(arg)


# ------------------------------------------------------------------ gather


@cuda.jit
def gather_no_guard(r_fhd, i_fhd, k, mu, pos):
    n = cuda.grid(1)
    x = pos[n, 0]
    y = pos[n, 1]
    z = pos[n, 2]
    r_acc = float32(0.0)
    i_acc = float32(0.0)
    for m in range(k.shape[0]):
        arg = TWO_PI * (k[m, 0] * x + k[m, 1] * y + k[m, 2] * z)
        r_mu = mu[m, 0]
        i_mu = mu[m, 1]
        r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
        i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
    r_fhd[n] = r_acc
    i_fhd[n] = i_acc


@cuda.jit
def gather_sums_in_global(r_fhd, i_fhd, k, mu, pos):
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x = pos[n, 0]
        y = pos[n, 1]
        z = pos[n, 2]
        r_fhd[n] = 0.0
        i_fhd[n] = 0.0
        for m in range(k.shape[0]):
            arg = TWO_PI * (k[m, 0] * x + k[m, 1] * y + k[m, 2] * z)
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            # the running sums in global memory: a read and a write per sample instead of registers
            r_fhd[n] += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_fhd[n] += i_mu * math.cos(arg) + r_mu * math.sin(arg)


@cuda.jit
def gather_position_per_sample(r_fhd, i_fhd, k, mu, pos):
    n = cuda.grid(1)
    if n < pos.shape[0]:
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        for m in range(k.shape[0]):
            # the voxel's position reloaded for every sample
            arg = TWO_PI * (k[m, 0] * pos[n, 0] + k[m, 1] * pos[n, 1] + k[m, 2] * pos[n, 2])
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
        r_fhd[n] = r_acc
        i_fhd[n] = i_acc


@cuda.jit
def gather_sign_flipped(r_fhd, i_fhd, k, mu, pos):
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x = pos[n, 0]
        y = pos[n, 1]
        z = pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        for m in range(k.shape[0]):
            arg = TWO_PI * (k[m, 0] * x + k[m, 1] * y + k[m, 2] * z)
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_acc += r_mu * math.cos(arg) + i_mu * math.sin(arg)  # exp(-i arg): the forward transform
            i_acc += i_mu * math.cos(arg) - r_mu * math.sin(arg)
        r_fhd[n] = r_acc
        i_fhd[n] = i_acc


@cuda.jit
def gather_no_two_pi(r_fhd, i_fhd, k, mu, pos):
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x = pos[n, 0]
        y = pos[n, 1]
        z = pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        for m in range(k.shape[0]):
            arg = k[m, 0] * x + k[m, 1] * y + k[m, 2] * z  # k in cycles per unit: the 2 pi is needed
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_acc += r_mu * math.cos(arg) - i_mu * math.sin(arg)
            i_acc += i_mu * math.cos(arg) + r_mu * math.sin(arg)
        r_fhd[n] = r_acc
        i_fhd[n] = i_acc


@cuda.jit
def gather_cos_sin_swapped(r_fhd, i_fhd, k, mu, pos):
    n = cuda.grid(1)
    if n < pos.shape[0]:
        x = pos[n, 0]
        y = pos[n, 1]
        z = pos[n, 2]
        r_acc = float32(0.0)
        i_acc = float32(0.0)
        for m in range(k.shape[0]):
            arg = TWO_PI * (k[m, 0] * x + k[m, 1] * y + k[m, 2] * z)
            c = math.sin(arg)
            s = math.cos(arg)
            r_mu = mu[m, 0]
            i_mu = mu[m, 1]
            r_acc += r_mu * c - i_mu * s
            i_acc += i_mu * c + r_mu * s
        r_fhd[n] = r_acc
        i_fhd[n] = i_acc


@cuda.jit
def gather_reversed(r_fhd, i_fhd, k, mu, pos):
    n = cuda.grid(1)
    if n >= pos.shape[0]:
        return
    # 2 pi folded into the position once; samples summed last to first
    x = TWO_PI * pos[n, 0]
    y = TWO_PI * pos[n, 1]
    z = TWO_PI * pos[n, 2]
    r_acc = float32(0.0)
    i_acc = float32(0.0)
    for m in range(k.shape[0] - 1, -1, -1):
        kx, ky, kz = k[m, 0], k[m, 1], k[m, 2]
        r_mu, i_mu = mu[m, 0], mu[m, 1]
        arg = kx * x + ky * y + kz * z
        c, s = math.cos(arg), math.sin(arg)
        r_acc += r_mu * c - i_mu * s
        i_acc += r_mu * s + i_mu * c
    r_fhd[n] = r_acc
    i_fhd[n] = i_acc


@cuda.jit
def gather_grid_stride(r_fhd, i_fhd, k, mu, pos):
    # a grid-stride loop over voxels: correct for any grid (each thread here gets at most one voxel)
    n = cuda.grid(1)
    while n < pos.shape[0]:
        x, y, z = pos[n, 0], pos[n, 1], pos[n, 2]
        re = float32(0.0)
        im = float32(0.0)
        for m in range(k.shape[0]):
            arg = TWO_PI * (x * k[m, 0] + y * k[m, 1] + z * k[m, 2])
            a = mu[m, 0]
            b = mu[m, 1]
            c = math.cos(arg)
            s = math.sin(arg)
            re += a * c - b * s
            im += b * c + a * s
        r_fhd[n] = re
        i_fhd[n] = im
        n += cuda.gridsize(1)


# ------------------------------------------------------------------ constant memory, chunked


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


MUTANTS = {
    "ch17_mu": [
        ("mu_no_conjugate", mu_no_conjugate, *WRONG),
    ],
    "ch17_fhd_scatter": [
        ("scatter_plain_add", scatter_plain_add, *RACE),
    ],
    "ch17_fhd_gather": [
        ("gather_no_guard", gather_no_guard, *OOB),
        ("gather_sums_in_global", gather_sums_in_global, *over("global_reads")),
        ("gather_position_per_sample", gather_position_per_sample, *over("global_reads")),
        ("gather_sign_flipped", gather_sign_flipped, *WRONG),
        ("gather_no_two_pi", gather_no_two_pi, *WRONG),
        ("gather_cos_sin_swapped", gather_cos_sin_swapped, *WRONG),
    ],
    "ch17_fhd_const": [
        ("const_chunk_one_too_long", const_chunk_one_too_long, *WRONG),
        ("const_chunk_starts_late", const_chunk_starts_late, *WRONG),
        ("const_last_chunk_unclamped", const_last_chunk_unclamped, *OOB),
        ("const_mu_chunk_index", const_mu_chunk_index, *WRONG),
        ("const_traj_chunk_index", const_traj_chunk_index, *WRONG),
        ("const_no_guard", const_no_guard, *OOB),
        ("const_atomic_add", const_atomic_add, *over("global_atomics_per_block")),
    ],
}
VARIANTS = {
    "ch17_fhd_gather": [
        ("gather_reversed", gather_reversed),
        ("gather_grid_stride", gather_grid_stride),
    ],
    "ch17_fhd_const": [
        ("const_sample_loop_with_break", const_sample_loop_with_break),
        ("const_reversed", const_reversed),
    ],
}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}
