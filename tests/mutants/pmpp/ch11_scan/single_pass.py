"""Mutants of puzzles/pmpp/ch11_scan/single_pass.py; format: mutants/common.py. domino_static (a
domino scan that waits on blockIdx.x - 1) is run by tests/test_pmpp_c.py under a short timeout."""

import numba
from numba import cuda

from puzzles.pmpp.ch11_scan import TPB as KS


@cuda.jit
def domino_static(out, flags, carries, counter, a, n):
    xy = cuda.shared.array(KS, numba.float32)
    carry_in = cuda.shared.array(1, numba.float32)
    t = cuda.threadIdx.x
    sec = cuda.blockIdx.x  # not a ticket: the predecessor may not have started
    i = sec * cuda.blockDim.x + t
    xy[t] = a[i] if i < n else 0.0
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            tmp = xy[t] + xy[t - stride]
        cuda.syncthreads()
        if t >= stride:
            xy[t] = tmp
        stride *= 2
    if t == cuda.blockDim.x - 1:
        prev = 0.0
        if sec > 0:
            while cuda.atomic.add(flags, sec - 1, 0) == 0:
                pass
            cuda.threadfence()
            prev = cuda.atomic.add(carries, sec - 1, 0.0)
        carries[sec] = prev + xy[t]
        cuda.threadfence()
        cuda.atomic.exch(flags, sec, 1)
        carry_in[0] = prev
    cuda.syncthreads()
    if i < n:
        out[i] = xy[t] + carry_in[0]
