"""The backward pass with respect to the weights.

Rungs:
    ch16_conv_wgrad_atomic    each output-gradient thread adds its products into dw with atomics (exercise)
    ch16_conv_wgrad_reduce    the same as a block reduction per weight, no atomics (exercise)
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import _RTOL, CHAPTER, TILE, TPB, WGRAD_ATOL, _dy, _shapes, _tiles, _x, wgrad_ref


def _wgrad_spec(dy, x):
    return wgrad_ref(dy, x, x.shape[2] - dy.shape[2] + 1).astype(np.float32)


def cases_wgrad_atomic(rng):
    out = []
    for n, c, k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        args = dict(
            dw=np.zeros((k, c, fs, fs), np.float32), dy=_dy(rng, n, k, ho, wo), x=_x(rng, n, c, h, wd)
        )
        out.append(Case((_tiles(wo), _tiles(ho), n * k), (TILE, TILE), args))
    return out


def cases_wgrad_reduce(rng):
    out = []
    # the shapes, then one with fewer output positions (N * HO * WO = 6) than the block's TPB threads:
    # a kernel that assumes every thread has at least one product reads past the end (every seed)
    for n, c, k, h, wd, fs in [*_shapes(rng), (1, 2, 2, 4, 5, 3)]:
        ho, wo = h - fs + 1, wd - fs + 1
        args = dict(
            dw=np.empty((k, c, fs, fs), np.float32), dy=_dy(rng, n, k, ho, wo), x=_x(rng, n, c, h, wd)
        )
        out.append(Case(k * c * fs * fs, TPB, args))
    return out


@cuda.jit
def conv_wgrad_atomic(dw, dy, x):
    # one thread per output-gradient element dy[n, k, h, w]: it adds its share to every weight of filter k
    col, row = cuda.grid(2)
    k_out = dy.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    ### BEGIN SOLUTION
    if row < dy.shape[2] and col < dy.shape[3]:
        g = dy[n, k, row, col]
        for c in range(x.shape[1]):
            for p in range(dw.shape[2]):
                for q in range(dw.shape[3]):
                    cuda.atomic.add(dw, (k, c, p, q), g * x[n, c, row + p, col + q])
    ### END SOLUTION


CONV_WGRAD_ATOMIC = Puzzle(
    name="ch16_conv_wgrad_atomic",
    title="Backward: the weight gradient with atomics",
    statement="""`dw[k, c, p, q] = sum over n, h, w of dy[n, k, h, w] * x[n, c, h + p, w + q]`: every
output gradient contributes to every weight of its filter, so this is a reduction. First the direct way:
one thread per `dy` element (launched like the forward pass, `blockIdx.z = n * K + k`), adding its
`C * FS * FS` products into `dw` with `cuda.atomic.add` (`dw` starts at zero).""",
    outputs=("dw",),
    spec=_wgrad_spec,
    cases=cases_wgrad_atomic,
    reference=conv_wgrad_atomic,
    zeroed=("dw",),
    hints=(
        "Many threads add into the same dw[k, c, p, q]: a plain += loses updates.",
        "cuda.atomic.add(dw, (k, c, p, q), v) adds v to one element of a 4-D array atomically.",
        "The input pixel that tap (p, q) of output (row, col) saw is x[n, c, row + p, col + q].",
    ),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=WGRAD_ATOL,
)


@cuda.jit
def conv_wgrad_reduce(dw, dy, x):
    # one block per weight dw[k, c, p, q]: its threads split the N * HO * WO products, then a tree
    part = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    total = dy.shape[0] * ho * wo
    ### BEGIN SOLUTION
    acc = float32(0.0)
    for i in range(t, total, TPB):
        n = i // (ho * wo)
        h = (i // wo) % ho
        w = i % wo
        acc += dy[n, k, h, w] * x[n, c, h + p, w + q]
    part[t] = acc
    stride = TPB // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        dw[k, c, p, q] = part[0]
    ### END SOLUTION


CONV_WGRAD_REDUCE = Puzzle(
    name="ch16_conv_wgrad_reduce",
    title="Backward: the weight gradient without atomics",
    statement=f"""The same `dw`, with one block of `TPB = {TPB}` threads per weight (`blockIdx.x`
numbers `(k, c, p, q)` in row-major order; decoded for you). Thread `t` sums the products for
`i = t, t + TPB, t + 2 TPB, ...` over the `N * HO * WO` output positions (`i = (n * HO + h) * WO + w`), the
block adds the `TPB` partial sums (the chapter 10 tree in shared memory, say; any way that reaches one
total passes), and one thread writes `dw[k, c, p, q]`. No atomics (enforced): every weight has exactly
one writer.""",
    outputs=("dw",),
    spec=_wgrad_spec,
    cases=cases_wgrad_reduce,
    reference=conv_wgrad_reduce,
    budget=Budget(global_atomics_per_block=0, global_writes=1, shared_bytes=TPB * 4),
    hints=(
        "Decode i into (n, h, w): n = i // (HO * WO), h = (i // WO) % HO, w = i % WO.",
        "A barrier before every step of the tree, outside the `if t < stride`.",
    ),
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=WGRAD_ATOL,
)


PUZZLES = [CONV_WGRAD_ATOMIC, CONV_WGRAD_REDUCE]
