"""Known-wrong and known-right kernels for puzzles/tensor_cores/int8_gemm.py (int8, dp4a over packed
words, per-row and per-column scales)."""

from numba import cuda, float32, int16, int32

from helpers.tensor_cores import dp4a
from mutants.common import WRONG, M
from puzzles.tensor_cores import int8_gemm as m
from puzzles.tensor_cores.int8_gemm import QT, QW

ig = m.int8_gemm
DEQUANT = "c[row, col] = float32(acc) * a_scale[row] * b_scale[col]"


def needing(entry, **names):
    """A mutant entry whose edit names something the puzzle module does not import (e.g. int16)."""
    entry[1].py_func.__globals__.update(names)
    return entry


MUTANTS = {
    "tc_int8_gemm": [
        # dequantization without B's column scale
        M(ig, "missing_b_scale", WRONG, (DEQUANT, "c[row, col] = float32(acc) * a_scale[row]")),
        # one scale for all of A (per tensor), where each row has its own
        M(
            ig,
            "per_tensor_a_scale",
            WRONG,
            (DEQUANT, "c[row, col] = float32(acc) * a_scale[0] * b_scale[col]"),
        ),
        # the sum kept in int16: 127 * 127 * 4 per dp4a, it wraps within a few words
        needing(
            M(
                ig,
                "int16_accumulator",
                WRONG,
                ("acc = dp4a(sa[ty, j], sb[j, tx], acc)", "acc = int16(dp4a(sa[ty, j], sb[j, tx], acc))"),
            ),
            int16=int16,
        ),
        # B's bytes packed high byte first: k = 4w + s meets A's k = 4w + 3 - s
        M(
            ig,
            "packing_order_reversed",
            WRONG,
            ("word |= (v & 0xFF) << (8 * s)", "word |= (v & 0xFF) << (24 - 8 * s)"),
        ),
        # k // 4 words: the last, partial word dropped when k is not a multiple of 4
        M(ig, "k_tail_dropped", WRONG, ("words = (k + 3) // 4", "words = k // 4")),
        # no mask: a negative byte's sign bits spread over the bytes above it
        M(ig, "sign_bits_not_masked", WRONG, ("word |= (v & 0xFF) << (8 * s)", "word |= v << (8 * s)")),
    ]
}


@cuda.jit
def bytes_by_shifts(c, sums, aq, b, a_scale, b_scale, m, n, k):  # B's word built top byte first
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * QT + ty
    col = cuda.blockIdx.x * QT + tx
    sa = cuda.shared.array((QT, QW), int32)
    sb = cuda.shared.array((QW, QT), int32)
    words = k // 4 + (1 if k % 4 else 0)
    steps = (words + QW - 1) // QW
    acc = int32(0)
    for step in range(steps):
        w0 = step * QW
        ok = row < m and w0 + tx < words
        sa[ty, tx] = aq[row, w0 + tx] if ok else 0
        word = 0
        for s in range(3, -1, -1):  # shift up what is there, the next lower byte below it
            kk = 4 * (w0 + ty) + s
            byte = int32(b[kk, col]) if kk < k and col < n else 0
            word = (word << 8) | (byte & 0xFF)
        sb[ty, tx] = int32(word - (1 << 32) if word >= (1 << 31) else word)  # as a signed 32-bit word
        cuda.syncthreads()
        for j in range(QW):
            acc = dp4a(sa[ty, j], sb[j, tx], acc)
        cuda.syncthreads()
    if row < m and col < n:
        sums[row, col] = acc
        scale = a_scale[row] * b_scale[col]
        c[row, col] = float32(acc) * scale


VARIANTS = {"tc_int8_gemm": [("bytes_by_shifts", bytes_by_shifts)]}
SEEDS = {"tc_int8_gemm": (0, 1, 2)}
