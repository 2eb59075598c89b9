"""Mutants of puzzles/pmpp/ch11_scan/single_pass.py; format: mutants/common.py. domino_static (a
domino scan that waits on blockIdx.x - 1) is run by tests/test_pmpp_ch10_12.py under a short timeout."""

import numba
from numba import cuda

from helpers.check import WrongAnswer
from puzzles.pmpp.ch11_scan import TPB
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


@cuda.jit
def domino_last_unpublished(out, flags, carries, counter, a, n):
    xy = cuda.shared.array(TPB, numba.float32)
    ticket = cuda.shared.array(1, numba.int32)
    carry_in = cuda.shared.array(1, numba.float32)
    t = cuda.threadIdx.x
    # blocks take section numbers in the order they start: every section's predecessor has started
    if t == 0:
        ticket[0] = cuda.atomic.add(counter, 0, 1)
    cuda.syncthreads()
    sec = ticket[0]
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
    # nobody waits for the last section, so it skips publishing: its flag and carry stay 0
    if t == cuda.blockDim.x - 1:
        prev = 0.0
        if sec > 0:
            # wait for the predecessor's running total; atomics read L2, never a stale L1 line
            while cuda.atomic.add(flags, sec - 1, 0) == 0:
                pass
            cuda.threadfence()
            prev = cuda.atomic.add(carries, sec - 1, 0.0)
        if sec < cuda.gridDim.x - 1:
            carries[sec] = prev + xy[t]
            cuda.threadfence()
            cuda.atomic.exch(flags, sec, 1)
        carry_in[0] = prev
    cuda.syncthreads()
    if i < n:
        out[i] = xy[t] + carry_in[0]


MUTANTS = {"ch11_domino": [("domino_last_unpublished", domino_last_unpublished, WrongAnswer, None)]}
VARIANTS: dict = {}
# seeds 0-9: flags and carries are compared on every seed (issue 23, class 1)
SEEDS = {"ch11_domino": tuple(range(10))}
