"""One warp, one tensor-core instruction, one rung:

    tc_mma_tile   C (16x8, fp32) = A (16x8, fp16) @ B (8x8, fp16) with the course's mma_m16n8k8: each
                  lane loads its 4 + 2 fragment values from the layout (group = lane >> 2,
                  t = lane & 3), the warp multiplies, each lane stores its 4 results

Tolerance, derived (`common.mma_tolerance`): the tensor core adds the eight exact fp16 products
after aligning them to the largest and truncating, so its error follows S = sum_k |a_ik b_kj|, not
|c_ij|: per element |got - want| <= 25 * 2^-23 * S (3e-6 S). An elementwise rtol/atol cannot say
this: where the products cancel (a result of -10.9 from products of 10^4) a correct H100 was 250 ulps
of the result off.
"""

import numpy as np
from numba import cuda, float32
from numba.types import float16

from helpers.puzzle import Budget, Case, Puzzle
from helpers.tensor_cores import mma_m16n8k8

from .common import CHAPTER, mma_tolerance


def spec(a, b):
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def tolerance(a, b):
    return mma_tolerance(a, b)


def cases(rng):
    def draw(shape, scale, top):
        return np.clip(rng.standard_normal(shape) * scale, -top, top)

    pairs = [
        (draw((16, 8), 1.0, 4), draw((8, 8), 1.0, 4)),  # ordinary values
        (draw((16, 8), 0.01, 4), draw((8, 8), 1.0, 4)),  # small ones: fp16 has fewer bits there
        (draw((16, 8), 3.0, 4), draw((8, 8), 1.0, 4)),
        # products and sums past fp16's 65504: fine, the products are exact in fp32 and the sum is fp32
        (draw((16, 8), 150.0, 250), draw((8, 8), 150.0, 250)),
        (rng.integers(-8, 9, (16, 8)), rng.integers(-8, 9, (8, 8))),  # integers: an exact product
    ]
    return [
        Case(1, 32, dict(c=np.zeros((16, 8), np.float32), a=a.astype(np.float16), b=b.astype(np.float16)))
        for a, b in pairs
    ]


@cuda.jit
def mma_tile(c, a, b):
    lane = cuda.threadIdx.x
    fa = cuda.local.array(4, float16)
    fb = cuda.local.array(2, float16)
    fc = cuda.local.array(4, float32)
    ### BEGIN SOLUTION
    group = lane >> 2  # rows group and group + 8 of A and C, column group of B
    t = lane & 3  # columns 2t and 2t + 1 of A and C, rows 2t and 2t + 1 of B
    for i in range(4):
        fa[i] = a[group + 8 * (i >> 1), 2 * t + (i & 1)]
        fc[i] = 0.0
    for i in range(2):
        fb[i] = b[2 * t + i, group]
    mma_m16n8k8(fa, fb, fc)
    for i in range(4):
        c[group + 8 * (i >> 1), 2 * t + (i & 1)] = fc[i]
    ### END SOLUTION


MMA_TILE = Puzzle(
    name="tc_mma_tile",
    title="One warp, one mma: a 16x8 tile on the tensor cores",
    statement="""`c = a @ b` for one tile: `a` is 16x8 and `b` 8x8, both **float16**; `c` is 16x8
**float32**. One warp (32 threads) computes it with one tensor-core instruction,
`mma_m16n8k8(fa, fb, fc)` (from `helpers.tensor_cores`): no lane computes a product of its own; each
lane hands over a few values (its *fragments*) and gets a few results back. Every lane holds
`fa = cuda.local.array(4, float16)`, `fb = cuda.local.array(2, float16)` and
`fc = cuda.local.array(4, float32)` (the accumulator: `fc += A @ B`, so zero it first).
The tensor core truncates as it sums, so `c[i, j]` may be off by up to
`25 * 2**-23 * sum_k abs(a[i, k] * b[k, j])`: not a fraction of `c[i, j]` (products that cancel
leave the error). With `group = lane >> 2` and `t = lane & 3`:

- `fa[i]` holds `a[group + 8 * (i >> 1), 2 * t + (i & 1)]`
- `fb[i]` holds `b[2 * t + i, group]`
- `fc[i]` holds (and returns) `c[group + 8 * (i >> 1), 2 * t + (i & 1)]`

The picture above draws it lane by lane. Every lane of the warp must call the mma.""",
    outputs=("c",),
    spec=spec,
    cases=cases,
    reference=mma_tile,
    float64="reject",
    budget=Budget(global_reads=6, global_writes=4, shared_bytes=0),
    hints=(
        "Four loads into fa, two into fb, four zeros into fc, one mma, four stores from fc.",
        "Rows of A and C: group and group + 8 (i >> 1 picks which); columns 2t and 2t + 1 (i & 1).",
        "B is read down a column: fb[i] is b[2 * t + i, group].",
    ),
    tolerance=tolerance,
    chapter=CHAPTER,
)

PUZZLES = [MMA_TILE]
