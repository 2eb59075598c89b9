"""Mutants and variants of puzzles/pmpp/ch17_mri/fhd.py; format: mutants/common.py."""

import math

from numba import cuda, float32

from mutants.common import OOB, RACE, WRONG, over
from puzzles.pmpp.ch17_mri import TWO_PI


@cuda.jit
def scatter_plain_add(r_fhd, i_fhd, k, mu, pos):
    m = cuda.grid(1)
    if m < k.shape[0]:
        for n in range(pos.shape[0]):
            arg = TWO_PI * (k[m, 0] * pos[n, 0] + k[m, 1] * pos[n, 1] + k[m, 2] * pos[n, 2])
            r_fhd[n] += mu[m, 0] * math.cos(arg) - mu[m, 1] * math.sin(arg)  # lost updates
            i_fhd[n] += mu[m, 1] * math.cos(arg) + mu[m, 0] * math.sin(arg)


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
        r_fhd[n] = float32(0.0)
        i_fhd[n] = float32(0.0)
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


MUTANTS = {
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
}

VARIANTS = {
    "ch17_fhd_gather": [
        ("gather_reversed", gather_reversed),
        ("gather_grid_stride", gather_grid_stride),
    ],
}

SEEDS = {name: (0, 1, 2) for name in MUTANTS}
