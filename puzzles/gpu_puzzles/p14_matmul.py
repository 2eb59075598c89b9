"""Puzzle 14, Matrix multiply: tiles of a and b through shared memory."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes

TPB = 8  # tile width; blocks are TPB x TPB threads


@cuda.jit
def matmul_kernel(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty  # row of out
    j = cuda.blockIdx.x * TPB + tx  # column of out
    ### BEGIN SOLUTION
    total = numba.float32(0.0)
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        if i < size and k < size:
            a_tile[ty, tx] = a[i, k]
        else:
            a_tile[ty, tx] = 0.0
        k = t * TPB + ty
        if k < size and j < size:
            b_tile[ty, tx] = b[k, j]
        else:
            b_tile[ty, tx] = 0.0
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total
    ### END SOLUTION


def spec(a, b, size):
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def _tiles(case):
    return (case.args["size"] + TPB - 1) // TPB


def cases(rng):
    # sizes per seed: 1, TPB-1, TPB, TPB+1, two tiles and a bit, and the largest, 4 tiles or more
    # (a fixed tile count fails on some case), never a multiple of TPB unless it is TPB itself
    out = []
    for n in edge_sizes(rng, 5, TPB, (25, 31)):
        a = rng.uniform(-3, 3, (n, n)).astype(np.float32)
        b = rng.uniform(-3, 3, (n, n)).astype(np.float32)
        g = (n + TPB - 1) // TPB
        out.append(
            Case(
                grid=(g, g),
                block=(TPB, TPB),
                args={"out": np.empty((n, n), np.float32), "a": a, "b": b, "size": n},
            )
        )
    return out


STATEMENT = f"""\
Multiply two `size` x `size` matrices: `out[i, j] = sum over k of a[i, k] * b[k, j]`.

Blocks of `TPB x TPB = {TPB} x {TPB}` threads tile `out`; as before `i` (row) comes from the `.y`
components and `j` (column) from the `.x` ones, and thread `(tx, ty)` owns `out[i, j]`.
The naive loop reads `2 * size` values from global memory per thread. Here a thread may read only
**2 values per tile** (`2 * ceil(size / TPB)` in all): the block walks along the shared dimension one
`TPB`-wide tile at a time, each thread loading one element of `a`'s tile and one of `b`'s into shared
memory, and then every thread uses the whole tile. Tiles that stick out past the matrix need padding.
Budget per thread: `2 * ceil(size / TPB)` global reads, 1 global write;
{2 * TPB * TPB * 4} bytes of shared memory per block."""

PUZZLES = [
    Puzzle(
        name="matmul",
        title="Puzzle 14: Matrix multiply",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=matmul_kernel,
        hints=(
            "First make it work for one block (size <= TPB): load both tiles, barrier, one dot product "
            "of a row of `a_tile` with a column of `b_tile`.",
            "For bigger matrices, loop over tiles t = 0, 1, ...: `a`'s tile is block-row of `out` x "
            "t-th column strip, `b`'s tile is t-th row strip x block-column of `out`.",
            "Slots of a tile past the edge of the matrix must hold 0, not garbage.",
            "Two barriers per tile: one before using the tiles, one before overwriting them.",
        ),
        budget=Budget(
            global_reads=lambda case: 2 * _tiles(case), global_writes=1, shared_bytes=2 * TPB * TPB * 4
        ),
        rtol=1e-4,
        atol=1e-4,
        chapter="puzzles",
    )
]
