"""An int8 quantized matrix-vector product with dp4a, one rung:

    tc_int8_matvec   y = (w_scale[r] * x_scale) * sum_j wq[r, j] * xq[j]: weights and activations stored
                     as int8 (a quarter of fp32's bytes), four per int32 word; `dp4a` multiplies four
                     pairs and adds them to an int32 sum; the scales turn the sum back into a float

Quantization (symmetric, per row for the weights, one scale for the vector): q = round(v / s) with
s = max|v| / 127, so |v - s q| <= s / 2 per value. The integer sum is exact (|sum| <= 127^2 * cols
< 2^31); converting it to float32 and multiplying by two scales rounds three times: `rtol` 1e-6
(3 * U32 = 1.8e-7), `atol` 1e-6. What the quantization itself costs, against the fp32 product, is
`quantization_error` (stated in the notebook), not part of this check.
"""

import numpy as np
from numba import cuda, float32, int32

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.tensor_cores import dp4a

from .common import CHAPTER, FULL_MASK, ROWS_PER_BLOCK, WARP


def quantize(v: np.ndarray, axis=None) -> tuple[np.ndarray, np.ndarray]:
    """(int8 values, float32 scales): symmetric, the largest |value| (per row with axis=1) -> 127."""
    peak = np.abs(v).max(axis=axis, keepdims=axis is not None)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(v / scale), -127, 127).astype(np.int8)
    return q, scale.reshape(-1) if axis is not None else np.float32(scale)


def pack(q: np.ndarray) -> np.ndarray:
    """int8 values (last axis padded with zeros to a multiple of 4) as int32 words, 4 per word."""
    pad = (-q.shape[-1]) % 4
    q = np.concatenate([q, np.zeros(q.shape[:-1] + (pad,), np.int8)], axis=-1)
    return np.ascontiguousarray(q).view(np.int32)


def unpack(words: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(words).view(np.int8)


def spec(wq, xq, w_scale, x_scale, rows, words):
    sums = unpack(wq).astype(np.int64) @ unpack(xq).astype(np.int64)
    return (sums * w_scale.astype(np.float64) * float(x_scale)).astype(np.float32)


def quantization_error(w: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(y from the int8 path, max |y - w @ x| / max |w @ x|) for float weights and vector."""
    wq, ws = quantize(w, axis=1)
    xq, xs = quantize(x)
    y = spec(pack(wq), pack(xq), ws, xs, w.shape[0], 0)
    exact = w.astype(np.float64) @ x.astype(np.float64)
    return y, float(np.abs(y - exact).max() / np.abs(exact).max())


def cases(rng):
    out = []
    for cols in edge_sizes(rng, 256, 4 * WARP, (300, 600)):
        rows = int(rng.integers(4, 12))
        w = rng.standard_normal((rows, cols)) * rng.uniform(0.1, 3.0, (rows, 1))  # rows of different scales
        x = rng.standard_normal(cols) * 2.0
        wq, ws = quantize(w, axis=1)
        xq, xs = quantize(x)
        wq, xq = pack(wq), pack(xq)
        grid = (rows + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
        args = dict(
            y=np.zeros(rows, np.float32), wq=wq, xq=xq, w_scale=ws, x_scale=xs, rows=rows, words=wq.shape[1]
        )
        out.append(Case(grid, ROWS_PER_BLOCK * WARP, args))
    return out


@cuda.jit
def int8_matvec(y, wq, xq, w_scale, x_scale, rows, words):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * ROWS_PER_BLOCK + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    acc = int32(0)
    for j in range(lane, words, WARP):
        acc = dp4a(wq[r, j], xq[j], acc)  # four int8 products, summed in int32
    for offset in (16, 8, 4, 2, 1):
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, offset)
    if lane == 0:
        y[r] = float32(acc) * w_scale[r] * x_scale
    ### END SOLUTION


INT8_MATVEC = Puzzle(
    name="tc_int8_matvec",
    title="int8 quantized matrix-vector product with dp4a",
    statement=f"""`y[r] = w_scale[r] * x_scale * sum_j W[r, j] * X[j]`, where the weights `W` and the vector
`X` are **int8**, four to an int32 word (`wq[r, j]` and `xq[j]` hold elements 4j to 4j + 3; `words`
words per row, zero-padded). `dp4a(a, b, acc)` (from `helpers.tensor_cores`) multiplies the four
signed bytes of `a` by those of `b` and adds them to the int32 `acc`. One warp per row
(`{ROWS_PER_BLOCK}` rows per block): lanes stride along the row's words, an int32 sum, a shuffle
reduction, and lane 0 **dequantizes**: the float32 sum times the row's scale and the vector's.""",
    outputs=("y",),
    spec=spec,
    cases=cases,
    reference=int8_matvec,
    float64="reject",
    budget=Budget(shared_bytes=0),
    hints=(
        "acc = int32(0); acc = dp4a(wq[r, j], xq[j], acc) for j = lane, lane + 32, ...",
        "The reduction is the usual shfl_xor_sync one, on integers: exact.",
        "Both scales: the row's w_scale[r] and the vector's x_scale.",
    ),
    rtol=1e-6,
    atol=1e-6,
    chapter=CHAPTER,
)

PUZZLES = [INT8_MATVEC]
