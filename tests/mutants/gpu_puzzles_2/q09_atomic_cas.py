"""Known-wrong and known-right kernels for Puzzles II.9 (atomic max by magnitude with CAS)."""

from numba import cuda

from helpers.check import KernelDiagnosed, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds, Runaway

TPB = 64
ABS_BITS = 0x7FFFFFFF


@cuda.jit
def atomic_max_on_bits(out, bits, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size:
        cuda.atomic.max(out, 0, bits[i])  # negative floats have negative int patterns


@cuda.jit
def one_try(out, bits, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size:
        mine = bits[i]
        cuda.atomic.cas(out, 0, 0, mine)  # only the first thread's swap ever succeeds


@cuda.jit
def plain_read_first(out, bits, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size:
        mine = bits[i]
        old = out[0]  # raced by the other threads' swaps
        while (old & ABS_BITS) < (mine & ABS_BITS):
            seen = cuda.atomic.cas(out, 0, old, mine)
            if seen == old:
                break
            old = seen


@cuda.jit
def signed_compare(out, bits, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size:
        mine = bits[i]
        old = 0
        while old < mine:  # compares sign-and-magnitude patterns as ints
            seen = cuda.atomic.cas(out, 0, old, mine)
            if seen == old:
                break
            old = seen


@cuda.jit
def stale_guess(out, bits, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size:
        mine = bits[i]
        old = 0
        while (old & ABS_BITS) < (mine & ABS_BITS):
            seen = cuda.atomic.cas(out, 0, old, mine)
            if seen == old:
                break  # never learns the new value: spins forever


@cuda.jit
def no_guard(out, bits, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    mine = bits[i]
    old = 0
    while (old & ABS_BITS) < (mine & ABS_BITS):
        seen = cuda.atomic.cas(out, 0, old, mine)
        if seen == old:
            break
        old = seen


@cuda.jit
def drops_the_sign(out, bits, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size:
        mine = bits[i] & ABS_BITS  # stores the magnitude, not the element
        old = 0
        while old < mine:
            seen = cuda.atomic.cas(out, 0, old, mine)
            if seen == old:
                break
            old = seen


@cuda.jit
def cas_result_as_condition(out, bits, size):
    i = cuda.grid(1)
    if i >= size:
        return
    mine = bits[i]
    mag = mine & ABS_BITS
    old = cuda.atomic.cas(out, 0, 0, mine)  # the first try doubles as the read
    while old != 0 and (old & ABS_BITS) < mag:
        seen = cuda.atomic.cas(out, 0, old, mine)
        done = seen == old
        old = 0 if done else seen


@cuda.jit
def for_loop_bounded(out, bits, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size:
        mine = bits[i]
        guess = 0
        for _ in range(2 * TPB * 64):  # generous bound: every failure means progress
            if (guess & ABS_BITS) >= (mine & ABS_BITS):
                break
            seen = cuda.atomic.cas(out, 0, guess, mine)
            if seen == guess:
                break
            guess = seen


MUTANTS = {
    "atomic_cas": [
        ("atomic_max_on_bits", atomic_max_on_bits, WrongAnswer, None),
        ("one_try", one_try, WrongAnswer, None),
        ("plain_read_first", plain_read_first, KernelDiagnosed, DataRace),
        ("signed_compare", signed_compare, WrongAnswer, None),
        ("stale_guess", stale_guess, KernelDiagnosed, Runaway),
        ("no_guard", no_guard, KernelDiagnosed, OutOfBounds),
        ("drops_the_sign", drops_the_sign, WrongAnswer, None),
    ]
}
VARIANTS = {
    "atomic_cas": [
        ("cas_result_as_condition", cas_result_as_condition),
        ("for_loop_bounded", for_loop_bounded),
    ]
}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
