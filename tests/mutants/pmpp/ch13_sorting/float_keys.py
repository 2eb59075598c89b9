"""Mutants of puzzles/pmpp/ch13_sorting/float_keys.py; format: mutants/common.py."""

import numpy as np
from numba import cuda

from mutants.common import OOB, WRONG
from puzzles.pmpp.ch13_sorting import FULL_MASK, SIGN
from puzzles.pmpp.ch13_sorting.float_keys import PUZZLES


@cuda.jit
def float_no_flip(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = bits[i]  # signed floats read as unsigned: negatives sort last


@cuda.jit
def float_sign_bit_only(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = bits[i] ^ np.uint32(SIGN)  # negatives now first, but the larger magnitudes last


@cuda.jit
def float_flip_all(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = bits[i] ^ np.uint32(FULL_MASK)


@cuda.jit
def float_rule_swapped(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        x = bits[i]
        if x >> 31:
            out[i] = x | np.uint32(SIGN)
        else:
            out[i] = x ^ np.uint32(FULL_MASK)


@cuda.jit
def float_abs(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        x = bits[i]
        if x >> 31:
            out[i] = x ^ np.uint32(SIGN)  # clears the sign: sorts by magnitude
        else:
            out[i] = x | np.uint32(SIGN)


@cuda.jit
def float_no_guard(out, bits, n):
    i = cuda.grid(1)
    x = bits[i]
    if x >> 31:
        out[i] = x ^ np.uint32(FULL_MASK)
    else:
        out[i] = x | np.uint32(SIGN)


@cuda.jit
def float_mask(out, bits, n):
    # variant: one expression: the mask is all ones for negatives, the sign bit alone for positives
    i = cuda.grid(1)
    if i < n:
        x = bits[i]
        neg = np.uint32(x >> 31)
        out[i] = x ^ ((neg * np.uint32(FULL_MASK)) | np.uint32(SIGN))


@cuda.jit
def float_signed_compare(out, bits, n):
    # variant: the test as a comparison of the unsigned value with the sign bit
    i = cuda.grid(1)
    if i < n:
        x = bits[i]
        out[i] = ~x if x >= np.uint32(SIGN) else x + np.uint32(SIGN)


@cuda.jit
def float_negative_zero_positive(out, bits, n):
    # -0.0 (bits 0x80000000) taken for a positive zero: both zeros get the same key
    i = cuda.grid(1)
    if i < n:
        x = bits[i]
        if x >> 31 and x != np.uint32(SIGN):
            out[i] = x ^ np.uint32(FULL_MASK)
        else:
            out[i] = (x & np.uint32(0x7FFFFFFF)) | np.uint32(SIGN)


MUTANTS = {
    "ch13_float_to_key": [
        ("no_flip", float_no_flip, *WRONG),
        ("sign_bit_only", float_sign_bit_only, *WRONG),
        ("flip_all", float_flip_all, *WRONG),
        ("rule_swapped", float_rule_swapped, *WRONG),
        ("abs", float_abs, *WRONG),
        ("no_guard", float_no_guard, *OOB),
        ("negative_zero_positive", float_negative_zero_positive, *WRONG),
    ],
}

VARIANTS = {
    "ch13_float_to_key": [("mask", float_mask), ("compare", float_signed_compare)],
}

# exercises on three seeds, the worked kernels on two (as the chapter's tests ran them)
SEEDS = {p.name: (0, 1, 2) if p.name in MUTANTS else (0, 1) for p in PUZZLES}
# the sign flip on seeds 0-9: every seed's first case holds -0.0, +0.0 and both infinities (issue 23,
# class 3)
SEEDS["ch13_float_to_key"] = tuple(range(10))
