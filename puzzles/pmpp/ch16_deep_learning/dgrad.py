"""The backward pass with respect to the input.

Rungs:
    ch16_conv_dgrad    a gather: each input element sums the outputs it fed (worked)
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Case, Puzzle

from .common import _RTOL, CHAPTER, DGRAD_ATOL, TILE, _dy, _shapes, _tiles, _w, dgrad_ref


def _dgrad_spec(dy, w):
    fs = w.shape[2]
    return dgrad_ref(dy, w, dy.shape[2] + fs - 1, dy.shape[3] + fs - 1).astype(np.float32)


def cases_dgrad(rng):
    out = []
    for n, c, k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        args = dict(dx=np.empty((n, c, h, wd), np.float32), dy=_dy(rng, n, k, ho, wo), w=_w(rng, k, c, fs))
        out.append(Case((_tiles(wd), _tiles(h), n * c), (TILE, TILE), args))
    return out


@cuda.jit
def conv_dgrad(dx, dy, w):
    # dx[n, c, h, w] = sum over k, p, q of dy[n, k, h - p, w - q] * w[k, c, p, q]: every input pixel
    # gathers from the outputs it fed, so each thread owns its dx element and needs no atomics
    col, row = cuda.grid(2)
    c_in = dx.shape[1]
    n = cuda.blockIdx.z // c_in
    c = cuda.blockIdx.z % c_in
    ho, wo = dy.shape[2], dy.shape[3]
    if row < dx.shape[2] and col < dx.shape[3]:
        acc = float32(0.0)
        for k in range(dy.shape[1]):
            for p in range(w.shape[2]):
                r = row - p
                if 0 <= r < ho:
                    for q in range(w.shape[3]):
                        s = col - q
                        if 0 <= s < wo:
                            acc += dy[n, k, r, s] * w[k, c, p, q]
        dx[n, c, row, col] = acc


CONV_DGRAD = Puzzle(
    name="ch16_conv_dgrad",
    title="Backward: the gradient with respect to the input",
    statement="""Given the gradient `dy` of the loss with respect to the layer's output, the gradient
with respect to its input is `dx[n, c, h, w] = sum over k, p, q of dy[n, k, h - p, w - q] * w[k, c, p, q]`,
taking only the terms with `0 <= h - p < HO` and `0 <= w - q < WO`. One thread per `dx` element (it
gathers: no atomics), `blockIdx.z = n * C + c`.""",
    outputs=("dx",),
    spec=_dgrad_spec,
    cases=cases_dgrad,
    reference=conv_dgrad,
    chapter=CHAPTER,
    rtol=_RTOL,
    atol=DGRAD_ATOL,
)


PUZZLES = [CONV_DGRAD]
