"""Puzzle 11, 1-D convolution: a tile of `a` plus a halo, the kernel `b` in shared memory."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes

TPB = 8
MAX_CONV = 4
A_TILE = TPB + MAX_CONV  # shared-array lengths must be plain constants, not expressions


@cuda.jit
def conv_kernel(out, a, b, a_size, b_size):
    # a_tile[k] holds a[block start + k]: TPB elements of the block plus up to MAX_CONV - 1 after it.
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    ### BEGIN SOLUTION
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = numba.float32(0.0)
        for j in range(b_size):
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total
    ### END SOLUTION


def spec(a, b, a_size, b_size):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    padded = np.concatenate([a64, np.zeros(b_size)])
    return np.array([padded[i : i + b_size] @ b64 for i in range(a_size)], np.float32)


def _weights(rng, n):
    # Magnitudes in [0.5, 2) with random signs: no weight is ever zero, the first one included.
    return (rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)).astype(np.float32)


def cases(rng):
    # a_size per seed: 1, around one block, several blocks, up to 8 blocks; b_size 1..MAX_CONV,
    # MAX_CONV always among them (the longest halo), sometimes longer than a itself
    out = []
    sizes = edge_sizes(rng, 15, TPB, (41, 64))
    widths = [4, MAX_CONV, 1] + [int(w) for w in rng.integers(1, MAX_CONV + 1, len(sizes))]
    for a_size, b_size in zip(sizes, widths):
        a = rng.uniform(-5, 5, a_size).astype(np.float32)
        out.append(
            Case(
                grid=(a_size + TPB - 1) // TPB,
                block=TPB,
                args={
                    "out": np.empty(a_size, np.float32),
                    "a": a,
                    "b": _weights(rng, b_size),
                    "a_size": a_size,
                    "b_size": b_size,
                },
            )
        )
    return out


STATEMENT = f"""\
Slide the short array `b` along `a`: `out[i] = a[i]*b[0] + a[i+1]*b[1] + ... + a[i+b_size-1]*b[b_size-1]`,
dropping the terms that run past the end of `a`.
(Signal processing calls this a correlation; deep learning calls it a 1-D convolution.)

Blocks of `TPB = {TPB}` threads, one thread per element of `out`, several blocks;
`b_size <= MAX_CONV = {MAX_CONV}`.
A thread may read at most 3 values from global memory, so each block stages its part of `a`, plus
the halo of up to `b_size - 1` elements just after it, and all of `b` in shared memory.
Budget per thread: 3 global reads, 1 global write;
{(TPB + 2 * MAX_CONV) * 4} bytes of shared memory per block."""

PUZZLES = [
    Puzzle(
        name="conv",
        title="Puzzle 11: 1-D convolution",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=conv_kernel,
        hints=(
            "Three loads before the barrier: your own element of `a`, maybe one halo element, maybe one "
            "element of `b`.",
            "The halo sits after the block: which threads fetch it, and from which global index?",
            "After the barrier, each thread loops over `b_size` taps reading only shared memory.",
            "A tap that runs past the end of `a` reads a shared slot nobody wrote: skip it.",
        ),
        budget=Budget(global_reads=3, global_writes=1, shared_bytes=(TPB + 2 * MAX_CONV) * 4),
        rtol=1e-4,
        atol=1e-4,
        chapter="puzzles",
    )
]
