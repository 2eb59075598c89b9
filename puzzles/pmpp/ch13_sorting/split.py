"""Radix sort's first step (PMPP 13.2-13.3): a stable split by one bit, within one block.

ch13_split  each block's section: keys whose bit is 0 to the front, 1 to the back, order kept
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import CHAPTER, TPB, blocks_of, key_vals

# ------------------------------------------------------------------ spec


def split_spec(keys, vals, bit, n):
    order = np.concatenate(
        [s + np.argsort((keys[s : s + TPB] >> np.uint32(bit)) & 1, kind="stable") for s in range(0, n, TPB)]
    )
    return {"keys_out": keys[order], "vals_out": vals[order]}


# ------------------------------------------------------------------ cases


def split_cases(rng):
    # a random multi-block case first; sizes 1, TPB - 1, TPB, TPB + 1; the rest of the kinds
    shapes = [
        (int(rng.integers(33, 60)), "random"),
        (1, "random"),
        (TPB - 1, "dups"),
        (TPB, "equal"),
        (TPB + 1, "sorted"),
        (int(rng.integers(20, 32)), "reversed"),
        (int(rng.integers(17, 40)), "dups"),
    ]
    cases = []
    for n, kind in shapes:
        keys, vals = key_vals(rng, n, kind)
        bit = int(rng.integers(0, 32))
        cases.append(
            Case(
                blocks_of(n, TPB),
                TPB,
                dict(
                    keys_out=np.zeros(n, np.uint32),
                    vals_out=np.zeros(n, np.int32),
                    keys=keys,
                    vals=vals,
                    bit=bit,
                    n=n,
                ),
            )
        )
    return cases


# ------------------------------------------------------------------ rung 1: one bit, one block


@cuda.jit
def split_kernel(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)  # keys in this block's section (fewer in the last block)
    ### BEGIN SOLUTION
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    # Kogge-Stone inclusive scan of the bits; minus b it is the exclusive one
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    # the scan's last writes must land before anyone reads the total
    cuda.syncthreads()
    before = ones[t] - b
    total = ones[bd - 1]
    if i < n:
        if b == 0:
            dst = t - before  # zeros keep their order, at the front
        else:
            dst = valid - total + before  # ones keep their order, after all zeros
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]
    ### END SOLUTION


SPLIT = Puzzle(
    name="ch13_split",
    title="Radix sort, one bit: a stable split",
    statement=f"""Each block of `TPB = {TPB}` threads owns a section of `TPB` key-value pairs (fewer in
the last block). Reorder the section by bit `bit` of the keys: keys whose bit is 0 first, then keys whose
bit is 1, each group in its original order, values travelling with their keys. A key whose bit is 0 goes
to its index minus the number of 1s before it; a key whose bit is 1 goes after all the section's zeros,
plus the number of 1s before it. An **exclusive scan** of the bits in shared memory gives those counts.""",
    outputs=("keys_out", "vals_out"),
    spec=split_spec,
    cases=split_cases,
    reference=split_kernel,
    hints=(
        "b = (keys[i] >> bit) & 1; threads past n count as 0.",
        "Kogge-Stone gives the inclusive scan; the exclusive one (1s strictly before t) is it minus b. "
        "After the loop the section's total is the last thread's entry.",
        "valid = the section's number of keys; a 1 goes to valid - total + before. A barrier between "
        "the scan's last write and the reads of the total.",
    ),
    chapter=CHAPTER,
)


PUZZLES = [SPLIT]
