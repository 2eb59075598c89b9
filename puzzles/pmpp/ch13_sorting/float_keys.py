"""Float keys (PMPP 13.7): radix sort sorts unsigned integers; flip a float's bits so that their
unsigned order is the float order, sort, flip back.

    ch13_float_to_key  negative: flip every bit; positive: set the sign bit
    ch13_key_to_float  the inverse
"""

import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import CHAPTER, FULL_MASK, SIGN, TPB, blocks_of

# ------------------------------------------------------------------ specs


def flip_spec(bits, n):
    return np.where(bits >> np.uint32(31), ~bits, bits | np.uint32(SIGN)).astype(np.uint32)


def unflip_spec(keys, n):
    return np.where(keys >> np.uint32(31), keys ^ np.uint32(SIGN), ~keys).astype(np.uint32)


# ------------------------------------------------------------------ cases


def make_floats(rng, n):
    """Non-integer floats of both signs and magnitudes from 1e-30 to 1e30, with zeros of both signs,
    infinities and repeats where there is room."""
    x = (rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-30, 30, n)).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1.5, -1.5], np.float32)
    if n >= 16:
        pos = rng.choice(n, special.size, replace=False)
        x[pos] = special
        x[rng.integers(0, n)] = x[rng.integers(0, n)]
    return x


def _float_sizes(rng):
    return (int(rng.integers(20, 40)), 1, TPB - 1, TPB, TPB + 1)


def float_cases(rng):
    cases = []
    for n in _float_sizes(rng):
        bits = make_floats(rng, n).view(np.uint32)
        cases.append(Case(blocks_of(n, TPB), TPB, dict(out=np.zeros(n, np.uint32), bits=bits, n=n)))
    return cases


def unflip_cases(rng):
    cases = []
    for n in _float_sizes(rng):
        keys = flip_spec(make_floats(rng, n).view(np.uint32), n)
        cases.append(Case(blocks_of(n, TPB), TPB, dict(out=np.zeros(n, np.uint32), keys=keys, n=n)))
    return cases


# ------------------------------------------------------------------ rung 1: float bits to a sortable key


@cuda.jit
def float_to_key(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        ### BEGIN SOLUTION
        x = bits[i]
        if x >> 31:
            out[i] = x ^ np.uint32(FULL_MASK)  # negative: flip all, larger magnitudes first
        else:
            out[i] = x | np.uint32(SIGN)  # positive: after every negative
        ### END SOLUTION


FLOAT_TO_KEY = Puzzle(
    name="ch13_float_to_key",
    title="Float keys: the sign flip",
    statement="""`bits` holds float32 values reinterpreted as uint32. Write sortable keys: for a
negative float (sign bit set) flip every bit; for a positive one set the sign bit. As unsigned integers,
the keys are then in the floats' order (-0.0 just before +0.0).""",
    outputs=("out",),
    spec=flip_spec,
    cases=float_cases,
    reference=float_to_key,
    hints=(
        "x >> 31 is the sign bit.",
        "Negative floats compare backwards as integers: a larger magnitude has larger bits. Flipping "
        "every bit reverses them and puts them below every positive key.",
    ),
    chapter=CHAPTER,
)


# ------------------------------------------------------------------ rung 2: back to the float


@cuda.jit
def key_to_float(out, keys, n):
    i = cuda.grid(1)
    if i < n:
        k = keys[i]
        if k >> 31:
            out[i] = k ^ np.uint32(SIGN)
        else:
            out[i] = k ^ np.uint32(FULL_MASK)


KEY_TO_FLOAT = Puzzle(
    name="ch13_key_to_float",
    title="Float keys: flip back",
    statement="""The inverse of the sign flip: a key with its top bit set came from a positive float
(clear that bit); any other key came from a negative one (flip every bit).""",
    outputs=("out",),
    spec=unflip_spec,
    cases=unflip_cases,
    reference=key_to_float,
    chapter=CHAPTER,
)


PUZZLES = [FLOAT_TO_KEY, KEY_TO_FLOAT]
