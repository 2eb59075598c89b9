"""An int8 quantized matrix-matrix product with dp4a, one rung:

    tc_int8_gemm   C[i, j] = a_scale[i] * b_scale[j] * sum_k A[i, k] B[k, j], A and B int8
                   (symmetric: per-row scales for A, per-column scales for B). A comes packed, four
                   k-neighbours to an int32 word; the kernel packs B's columns itself while staging
                   16 x 16 word tiles in shared memory (ch05's tiled matmul), sums with `dp4a` in
                   int32, and dequantizes to fp32 at the end

K is any size: `pack` zero-pads A's rows to whole words, and the kernel zero-fills B's bytes past k,
so the k-loop runs over ceil(k / 4) words (`k // 4` would drop the tail).

What is exact and what is not. The integer sums are exact (|sum| <= 127^2 k < 2^31 for k < 133,000)
and the check compares them (`sums`) exactly against NumPy's int64 product. `c` is that sum converted
to fp32 (exact while |sum| < 2^24, so for k < 1040) times two fp32 scales: two roundings against the
float64 product of the same three numbers, `rtol` 1e-6 (2 * U32 = 1.2e-7). What the quantization
itself costs (each value rounded to half a step of its row's or column's scale), against the fp32
product of the unquantized matrices, is `quantization_error`: stated in the notebook, not judged.
"""

import math

import numpy as np
from numba import cuda, float32, int32

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.tensor_cores import dp4a

from .common import CHAPTER
from .int8_matvec import pack, quantize, unpack

QT = 16  # threads per block side: a 16 x 16 tile of C, 16 x 16 word tiles of A and B
QW = 16  # words (64 int8 values of k) per step


def quantize_gemm(a: np.ndarray, b: np.ndarray):
    """(packed A words, int8 B, A's per-row scales, B's per-column scales) of float matrices."""
    aq, a_scale = quantize(a, axis=1)
    bq, b_scale = quantize(b, axis=0)
    return pack(aq), bq, a_scale, b_scale


def spec(aq, b, a_scale, b_scale, m, n, k):
    sums = unpack(aq)[:, :k].astype(np.int64) @ b.astype(np.int64)
    c = sums * a_scale.astype(np.float64)[:, None] * b_scale.astype(np.float64)[None, :]
    return {"c": c.astype(np.float32), "sums": sums.astype(np.int32)}


def quantization_error(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """(C from the int8 path, max |C - A @ B| / max |A @ B|) for float matrices."""
    aq, bq, sa, sb = quantize_gemm(a, b)
    c = spec(aq, bq, sa, sb, a.shape[0], b.shape[1], a.shape[1])["c"]
    exact = a.astype(np.float64) @ b.astype(np.float64)
    return c, float(np.abs(c - exact).max() / np.abs(exact).max())


def cases(rng):
    out = []
    for num, m in enumerate(edge_sizes(rng, 12, QT, (17, 24))):
        n = int(rng.integers(1, 25))
        k = int(rng.integers(1, 70)) if num else 4 * int(rng.integers(5, 15)) + int(rng.integers(1, 4))
        if num == 0:  # nonnegative (activations after a ReLU): the int32 sums reach 127^2 k / 4
            a = rng.uniform(0, 1, (m, k)) * rng.uniform(0.5, 2.0, (m, 1))
            b = rng.uniform(0, 1, (k, n))
        else:  # rows of A, columns of B of different scales: per-row and per-column scales matter
            a = rng.standard_normal((m, k)) * rng.uniform(0.1, 3.0, (m, 1))
            b = rng.standard_normal((k, n)) * rng.uniform(0.1, 3.0, (1, n))
        aq, bq, a_scale, b_scale = quantize_gemm(a, b)
        grid = (math.ceil(n / QT), math.ceil(m / QT))
        args = dict(
            c=np.zeros((m, n), np.float32),
            sums=np.zeros((m, n), np.int32),
            aq=aq,
            b=bq,
            a_scale=a_scale,
            b_scale=b_scale,
            m=m,
            n=n,
            k=k,
        )
        out.append(Case(grid, (QT, QT), args))
    return out


@cuda.jit
def int8_gemm(c, sums, aq, b, a_scale, b_scale, m, n, k):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * QT + ty
    col = cuda.blockIdx.x * QT + tx
    sa = cuda.shared.array((QT, QW), int32)  # A's words: rows of C x words of k
    sb = cuda.shared.array((QW, QT), int32)  # B's words: words of k x columns of C
    ### BEGIN SOLUTION
    words = (k + 3) // 4  # the last word may be partly padding (zeros)
    acc = int32(0)
    for w0 in range(0, words, QW):
        w = w0 + tx  # A: thread (ty, tx) copies word w of row `row`
        sa[ty, tx] = aq[row, w] if row < m and w < words else 0
        w = w0 + ty  # B: it packs k = 4w .. 4w + 3 of column `col`, k's byte s in byte s
        word = 0
        for s in range(4):
            kk = 4 * w + s
            v = int32(b[kk, col]) if kk < k and col < n else 0
            word |= (v & 0xFF) << (8 * s)
        sb[ty, tx] = word
        cuda.syncthreads()
        for j in range(QW):
            acc = dp4a(sa[ty, j], sb[j, tx], acc)
        cuda.syncthreads()
    if row < m and col < n:
        sums[row, col] = acc
        c[row, col] = float32(acc) * a_scale[row] * b_scale[col]
    ### END SOLUTION


INT8_GEMM = Puzzle(
    name="tc_int8_gemm",
    title="int8 quantized matrix product with dp4a: per-row and per-column scales",
    statement=f"""`c[i, j] = a_scale[i] * b_scale[j] * sum_k A[i, k] * B[k, j]` with `A` (`m x k`) and `B`
(`k x n`) **int8**, quantized symmetrically: per **row** of A (`a_scale`, `m` float32) and per
**column** of B (`b_scale`, `n` float32). `aq` holds A packed, four k-neighbours to an int32 word
(`aq[i, w]` has `A[i, 4w + s]` in byte `s`, the low byte first; `ceil(k / 4)` words a row, the last
zero-padded: **k need not be a multiple of 4**). `b` is plain int8, `k x n`.
A `{QT} x {QT}` block computes the `{QT} x {QT}` tile of `c` at (`blockIdx.y * {QT}`, `blockIdx.x * {QT}`),
thread (`ty`, `tx`) one element, walking the words {QW} at a time (ch05's tiled matmul): thread (`ty`, `tx`)
copies word `w0 + tx` of its row into `sa[ty, tx]` and **packs** B's `k = 4w .. 4w + 3` (`w = w0 + ty`)
of its column into `sb[ty, tx]`, byte `s` from `k = 4w + s` (0 past `k`, past `n`, past `m`); a
barrier; `acc = dp4a(sa[ty, j], sb[j, tx], acc)` for `j` in the tile, in **int32**; a barrier.
At the end store the int32 sum in `sums[row, col]` (checked exactly) and the **dequantized**
`float32(acc) * a_scale[row] * b_scale[col]` in `c[row, col]` (`rtol` 1e-6).""",
    outputs=("c", "sums"),
    spec=spec,
    cases=cases,
    reference=int8_gemm,
    float64="reject",
    budget=Budget(shared_bytes=2 * QT * QW * 4),
    hints=(
        "words = (k + 3) // 4: the last, partial word still counts (its padding bytes are zeros).",
        "word |= (int32(b[kk, col]) & 0xFF) << (8 * s): the mask keeps a negative byte from "
        "spreading its sign bits over the bytes above it.",
        "acc = int32(0) and acc = dp4a(...): never narrower than int32 (127 * 127 * 4 = 64,516 "
        "already overflows int16 in one step).",
    ),
    rtol=1e-6,
    atol=1e-6,
    chapter=CHAPTER,
)

PUZZLES = [INT8_GEMM]
