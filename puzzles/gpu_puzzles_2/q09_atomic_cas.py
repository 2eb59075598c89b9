"""Puzzles II.9, Atomic CAS: an atomic max by magnitude that no built-in atomic provides."""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle

__all__ = ["TPB", "ABS_BITS"]  # the notebook's constants
TPB = 64
ABS_BITS = 0x7FFFFFFF  # a float32's bits without its sign bit
CHAPTER = "puzzles-2"


@cuda.jit
def atomic_cas_kernel(out, bits, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    ### BEGIN SOLUTION
    if i < size:
        mine = bits[i]
        old = 0  # a guess: out starts as 0, the bits of +0.0
        while (old & ABS_BITS) < (mine & ABS_BITS):
            seen = cuda.atomic.cas(out, 0, old, mine)
            if seen == old:  # nobody changed out since our guess: the swap happened
                break
            old = seen  # somebody did: compare again with their value
    ### END SOLUTION


def spec(bits, size):
    mag = bits & ABS_BITS
    return np.array([bits[int(np.argmax(mag))] if mag.max() > 0 else 0], np.int32)


def cases(rng):
    out = []
    for n, sign in (
        (int(rng.integers(3 * TPB, 5 * TPB)), 0),
        (TPB, -1),
        (1, 0),
        (TPB + 1, 1),
        (int(rng.integers(2, TPB)), -1),
        (int(rng.integers(TPB + 2, 2 * TPB)), 0),
    ):
        a = rng.uniform(-10, 10, n).astype(np.float32)
        if sign:
            a = np.abs(a) * sign  # all one sign: the sign bit alone decides nothing
        if n > 1 and sign == 0:
            a[int(rng.integers(0, n))] = -np.abs(a).max() - 1.5  # the winner is negative
        out.append(
            Case(
                grid=(n + TPB - 1) // TPB,
                block=TPB,
                args={"out": np.empty(1, np.int32), "bits": a.view(np.int32), "size": n},
            )
        )
    return out


STATEMENT = f"""\
Find the element of largest **magnitude**, keeping its sign: if `a = [1.5, -7.25, 3.0]` the answer
is `-7.25`. The floats arrive as their 32-bit patterns (`bits = a.view(np.int32)` on the host) and
the answer is a pattern too: `out[0]` starts at `0` (the bits of `+0.0`) and must end as the bits of
the winner. Blocks of `TPB = {TPB}` threads, one element per thread.

For non-negative floats, bigger values have bigger bit patterns, so `bits & ABS_BITS` (the pattern
without its sign bit, `ABS_BITS = 0x{ABS_BITS:X}`) orders the magnitudes. But no built-in atomic
keeps "the one with the larger `& ABS_BITS`": `atomic.max` on the raw bits gets negatives wrong.
`cuda.atomic.cas(out, 0, expected, new)` is the atomic every other one is built from: it stores
`new` only if `out[0]` still equals `expected`, and returns what it found there either way. Loop:
guess the current value, try to swap; if the swap failed, you learn the real value, and try again
while yours is still bigger. Reading `out[0]` with a plain load while other threads update it is a
data race: the simulator rejects it; let the CAS tell you what is there.
Budget per thread: 1 global read, 0 plain global writes."""

PUZZLES = [
    Puzzle(
        name="atomic_cas",
        title="Puzzle II.9: Atomic compare-and-swap",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=atomic_cas_kernel,
        hints=(
            "Start from a guess of what out[0] holds; the CAS returns the truth if the guess was wrong.",
            "Loop while your magnitude beats the magnitude of the value you last saw.",
            "The swap succeeded exactly when the CAS returned your guess; otherwise the returned value is "
            "your next guess.",
        ),
        budget=Budget(global_reads=1, global_writes=0),
        zeroed=("out",),
        chapter=CHAPTER,
    )
]
