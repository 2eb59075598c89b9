"""Mutants and variants of puzzles/pmpp/ch18_electrostatics/cutoff.py; format: mutants/common.py."""

import math

from numba import cuda, float32

from mutants.common import OOB, WRONG, over
from puzzles.pmpp.ch18_electrostatics import CUTOFF, CUTOFF2, SPACING


@cuda.jit
def cutoff_own_bin_only(energy, bins, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        b = int(y / CUTOFF)
        c = int(x / CUTOFF)
        acc = float32(0.0)
        for s in range(bins.shape[2]):  # the neighbourhood one bin too small: atoms next door are lost
            dx = x - bins[b, c, s, 0]
            dy = y - bins[b, c, s, 1]
            dz = z - bins[b, c, s, 2]
            r2 = dx * dx + dy * dy + dz * dz
            if r2 < CUTOFF2:
                sw = float32(1.0) - r2 / CUTOFF2
                acc += bins[b, c, s, 3] / math.sqrt(r2) * sw * sw
        energy[j, i] = acc


@cuda.jit
def cutoff_one_side(energy, bins, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        bx = int(x / CUTOFF)
        by = int(y / CUTOFF)
        acc = float32(0.0)
        for b in range(max(by - 1, 0), min(by + 1, bins.shape[0])):  # stops one bin short
            for c in range(max(bx - 1, 0), min(bx + 1, bins.shape[1])):
                for s in range(bins.shape[2]):
                    dx = x - bins[b, c, s, 0]
                    dy = y - bins[b, c, s, 1]
                    dz = z - bins[b, c, s, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 < CUTOFF2:
                        sw = float32(1.0) - r2 / CUTOFF2
                        acc += bins[b, c, s, 3] / math.sqrt(r2) * sw * sw
        energy[j, i] = acc


@cuda.jit
def cutoff_no_clamp(energy, bins, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        bx = int(x / CUTOFF)
        by = int(y / CUTOFF)
        acc = float32(0.0)
        for b in range(by - 1, by + 2):  # past the grid of bins at its edges
            for c in range(bx - 1, bx + 2):
                for s in range(bins.shape[2]):
                    dx = x - bins[b, c, s, 0]
                    dy = y - bins[b, c, s, 1]
                    dz = z - bins[b, c, s, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 < CUTOFF2:
                        sw = float32(1.0) - r2 / CUTOFF2
                        acc += bins[b, c, s, 3] / math.sqrt(r2) * sw * sw
        energy[j, i] = acc


@cuda.jit
def cutoff_no_test(energy, bins, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        bx = int(x / CUTOFF)
        by = int(y / CUTOFF)
        acc = float32(0.0)
        for b in range(max(by - 1, 0), min(by + 2, bins.shape[0])):
            for c in range(max(bx - 1, 0), min(bx + 2, bins.shape[1])):
                for s in range(bins.shape[2]):
                    dx = x - bins[b, c, s, 0]
                    dy = y - bins[b, c, s, 1]
                    dz = z - bins[b, c, s, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    sw = float32(1.0) - r2 / CUTOFF2  # a bin's corners are past CUTOFF: sw^2 grows again
                    acc += bins[b, c, s, 3] / math.sqrt(r2) * sw * sw
        energy[j, i] = acc


@cuda.jit
def cutoff_not_squared(energy, bins, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        bx = int(x / CUTOFF)
        by = int(y / CUTOFF)
        acc = float32(0.0)
        for b in range(max(by - 1, 0), min(by + 2, bins.shape[0])):
            for c in range(max(bx - 1, 0), min(bx + 2, bins.shape[1])):
                for s in range(bins.shape[2]):
                    dx = x - bins[b, c, s, 0]
                    dy = y - bins[b, c, s, 1]
                    dz = z - bins[b, c, s, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 < CUTOFF:  # r^2 against the radius: keeps only atoms within sqrt(CUTOFF)
                        sw = float32(1.0) - r2 / CUTOFF2
                        acc += bins[b, c, s, 3] / math.sqrt(r2) * sw * sw
        energy[j, i] = acc


@cuda.jit
def cutoff_bin_of_index(energy, bins, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        bx = min(int(i / CUTOFF), bins.shape[1] - 1)  # the index, not the coordinate: the wrong bin
        by = min(int(j / CUTOFF), bins.shape[0] - 1)
        acc = float32(0.0)
        for b in range(max(by - 1, 0), min(by + 2, bins.shape[0])):
            for c in range(max(bx - 1, 0), min(bx + 2, bins.shape[1])):
                for s in range(bins.shape[2]):
                    dx = x - bins[b, c, s, 0]
                    dy = y - bins[b, c, s, 1]
                    dz = z - bins[b, c, s, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 < CUTOFF2:
                        sw = float32(1.0) - r2 / CUTOFF2
                        acc += bins[b, c, s, 3] / math.sqrt(r2) * sw * sw
        energy[j, i] = acc


@cuda.jit
def cutoff_offsets(energy, bins, z, nx, ny):
    i, j = cuda.grid(2)
    if i >= nx or j >= ny:
        return
    x = float32(i) * SPACING
    y = float32(j) * SPACING
    bx = int(x / CUTOFF)
    by = int(y / CUTOFF)
    acc = float32(0.0)
    for db in range(-1, 2):
        for dc in range(-1, 2):
            b = by + db
            c = bx + dc
            if b < 0 or b >= bins.shape[0] or c < 0 or c >= bins.shape[1]:
                continue
            for s in range(bins.shape[2]):
                q = bins[b, c, s, 3]
                r2 = (x - bins[b, c, s, 0]) ** 2 + (y - bins[b, c, s, 1]) ** 2 + (z - bins[b, c, s, 2]) ** 2
                if r2 >= CUTOFF2:
                    continue
                r = math.sqrt(r2)
                s2 = float32(1.0) - r2 / CUTOFF2
                acc += q * s2 * s2 / r
    energy[j, i] = acc


@cuda.jit
def cutoff_bounds_first(energy, bins, z, nx, ny):
    i, j = cuda.grid(2)
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        b0 = max(int(y / CUTOFF) - 1, 0)
        b1 = min(int(y / CUTOFF) + 1, bins.shape[0] - 1)
        c0 = max(int(x / CUTOFF) - 1, 0)
        c1 = min(int(x / CUTOFF) + 1, bins.shape[1] - 1)
        acc = float32(0.0)
        for c in range(c0, c1 + 1):  # columns outside, rows inside: the same 3 x 3 (or fewer) bins
            for b in range(b0, b1 + 1):
                for s in range(bins.shape[2]):
                    dz = z - bins[b, c, s, 2]
                    dy = y - bins[b, c, s, 1]
                    dx = x - bins[b, c, s, 0]
                    r2 = dz * dz + dy * dy + dx * dx
                    if r2 < CUTOFF2:
                        sw = float32(1.0) - r2 / CUTOFF2
                        acc += sw * sw * bins[b, c, s, 3] / math.sqrt(r2)
        energy[j, i] = acc


@cuda.jit
def cutoff_every_bin(energy, bins, z, nx, ny):
    # right map, wrong technique: every bin scanned, the cutoff test alone keeps the far atoms out
    i, j = cuda.grid(2)
    nby, nbx, cap = bins.shape[0], bins.shape[1], bins.shape[2]
    if i < nx and j < ny:
        x = float32(i) * SPACING
        y = float32(j) * SPACING
        acc = float32(0.0)
        for b in range(nby):
            for c in range(nbx):
                for s in range(cap):
                    dx = x - bins[b, c, s, 0]
                    dy = y - bins[b, c, s, 1]
                    dz = z - bins[b, c, s, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 < CUTOFF2:
                        sw = float32(1.0) - r2 / CUTOFF2
                        acc += bins[b, c, s, 3] / math.sqrt(r2) * sw * sw
        energy[j, i] = acc


MUTANTS = {
    "ch18_dcs_cutoff": [
        ("cutoff_own_bin_only", cutoff_own_bin_only, *WRONG),
        ("cutoff_one_side", cutoff_one_side, *WRONG),
        ("cutoff_no_clamp", cutoff_no_clamp, *OOB),
        ("cutoff_no_test", cutoff_no_test, *WRONG),
        ("cutoff_not_squared", cutoff_not_squared, *WRONG),
        ("cutoff_bin_of_index", cutoff_bin_of_index, *WRONG),
        ("cutoff_every_bin", cutoff_every_bin, *over("reads_of_bins")),
    ],
}

VARIANTS = {
    "ch18_dcs_cutoff": [
        ("cutoff_offsets", cutoff_offsets),
        ("cutoff_bounds_first", cutoff_bounds_first),
    ],
}

SEEDS = {name: (0, 1, 2) for name in MUTANTS}
