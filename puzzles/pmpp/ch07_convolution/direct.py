"""Direct convolution: one thread per output pixel, every tap read from memory.

Rungs:
- ch07_conv2d_basic (worked): the filter passed in global memory.
- ch07_conv2d_const (worked): the filter in constant memory (`cuda.const.array_like`), at most
  FW * FW global reads per thread.
"""

import math

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import _COMMON, CHAPTER, FILTER, FW, R, _image, _shapes, conv2d, spec_const

# ---------------------------------------------------------------------------- spec


def spec_basic(a, f, h, w):
    return conv2d(a, f)


# ---------------------------------------------------------------------------- cases


def cases_basic(rng):
    out = []
    for h, w in _shapes(rng, 8, 4):
        f = rng.uniform(-2, 2, (FW, FW)).astype(np.float32)
        out.append(
            Case(
                grid=(math.ceil(w / 8), math.ceil(h / 4)),
                block=(8, 4),
                args={"out": np.empty((h, w), np.float32), "a": _image(rng, h, w), "f": f, "h": h, "w": w},
            )
        )
    return out


def cases_const(rng):
    return [
        Case(
            grid=(math.ceil(w / 8), math.ceil(h / 4)),
            block=(8, 4),
            args={"out": np.empty((h, w), np.float32), "a": _image(rng, h, w), "h": h, "w": w},
        )
        for h, w in _shapes(rng, 8, 4)
    ]


# ---------------------------------------------------------------------------- filter in global memory


@cuda.jit
def conv2d_basic(out, a, f, h, w):
    col, row = cuda.grid(2)
    if row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            r = row - R + i
            if 0 <= r < h:
                for j in range(FW):
                    c = col - R + j
                    if 0 <= c < w:
                        acc += f[i, j] * a[r, c]
        out[row, col] = acc


BASIC = (
    """\
One thread per output pixel. The thread walks the `FW x FW` window around its pixel, skipping
window positions that fall outside the image, and writes one sum. Every thread reads the filter
`f` from global memory and up to `FW * FW` pixels of `a`."""
    + _COMMON
)


CH07_CONV2D_BASIC = Puzzle(
    name="ch07_conv2d_basic",
    title="2-D convolution, basic",
    statement=BASIC,
    outputs=("out",),
    spec=spec_basic,
    cases=cases_basic,
    reference=conv2d_basic,
    budget=Budget(global_writes=1),
    chapter=CHAPTER,
)


# ---------------------------------------------------------------------------- filter in constant memory


@cuda.jit
def conv2d_const(out, a, h, w):
    # The filter is baked into the kernel: every thread of a warp reads the same tap at the
    # same time, which the constant cache serves as one broadcast.
    f = cuda.const.array_like(FILTER)
    col, row = cuda.grid(2)
    if row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            r = row - R + i
            if 0 <= r < h:
                for j in range(FW):
                    c = col - R + j
                    if 0 <= c < w:
                        acc += f[i, j] * a[r, c]
        out[row, col] = acc


CONST = (
    """\
The filter is small, never changes during the launch, and every thread reads the same tap at the
same moment: the pattern **constant memory** serves best. `cuda.const.array_like(FILTER)` copies
the module-level NumPy array `FILTER` into the kernel's constant bank when Numba compiles it, so
the kernel has no `f` parameter. The image reads are as before."""
    + _COMMON
    + """

Budget per thread: at most `FW * FW` global reads (the filter no longer counts: it is constant
memory)."""
)


CH07_CONV2D_CONST = Puzzle(
    name="ch07_conv2d_const",
    title="2-D convolution, filter in constant memory",
    statement=CONST,
    outputs=("out",),
    spec=spec_const,
    cases=cases_const,
    reference=conv2d_const,
    budget=Budget(global_reads=FW * FW, global_writes=1),
    chapter=CHAPTER,
)


PUZZLES = [CH07_CONV2D_BASIC, CH07_CONV2D_CONST]
