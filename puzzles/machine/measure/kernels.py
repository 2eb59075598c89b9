"""The GPU kernels the studies time besides the exercise's SAXPY: a reduction, a tiled matmul, a
busy kernel for the stream timeline and an empty one for the launch overhead.
"""

from __future__ import annotations

import numba
from numba import cuda

FULL_MASK = 0xFFFFFFFF
TILE = 16  # matmul tile


@cuda.jit
def sum_kernel(out, x, size):
    """out[0] += sum(x): grid-stride sums, warp shuffles, one shared slot per warp, one atomic per block."""
    warp_sums = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    acc = numba.float32(0)
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        acc += x[i]
    for d in (16, 8, 4, 2, 1):
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
    if t % 32 == 0:
        warp_sums[t // 32] = acc
    cuda.syncthreads()
    if t < 32:
        v = warp_sums[t] if t < cuda.blockDim.x // 32 else numba.float32(0)
        for d in (16, 8, 4, 2, 1):
            v += cuda.shfl_down_sync(FULL_MASK, v, d)
        if t == 0:
            cuda.atomic.add(out, 0, v)


@cuda.jit
def zero_kernel(out):
    if cuda.grid(1) < out.size:
        out[cuda.grid(1)] = 0


@cuda.jit
def matmul_kernel(c, a, b, n):
    """c = a @ b for n x n float32 matrices, TILE x TILE tiles in shared memory."""
    sa = cuda.shared.array((TILE, TILE), numba.float32)
    sb = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = numba.float32(0)
    for t0 in range(0, n, TILE):
        sa[ty, tx] = a[row, t0 + tx] if row < n and t0 + tx < n else 0
        sb[ty, tx] = b[t0 + ty, col] if t0 + ty < n and col < n else 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        c[row, col] = acc


@cuda.jit
def busy_kernel(out, x, reps):
    """out = x after `reps` rounds of a cheap recurrence: a kernel whose length we can dial."""
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        v = x[i]
        for _ in range(reps):
            v = v * numba.float32(0.999) + numba.float32(0.001)
        out[i] = v


@cuda.jit
def empty_kernel():
    pass
