"""Known-wrong and known-right kernels for puzzles/llm/gpt2_block/matmul.py (bias and GELU epilogue).

MUTANTS[puzzle] = [(name, kernel, expected exception, detail)]; VARIANTS[puzzle] = [(name, kernel)].
Format: mutants/common.py.
"""

import math

import numba
import numpy as np
from numba import cuda

from mutants.common import NO_BARRIER, OOB, RACE, WRONG, M, over
from puzzles.llm.gpt2_block import matmul as gb
from puzzles.llm.gpt2_block.common import GELU_C, GELU_K, TILE
from puzzles.llm.gpt2_block.matmul import gelu_tanh


def _linear_gelu(
    bias_first=True, use_bias=True, barrier_after_load=True, barrier_before_next=True, guard=True, erf=False
):
    @cuda.jit
    def kernel(out, inp, w, bias):
        a_t = cuda.shared.array((TILE, TILE), numba.float32)
        w_t = cuda.shared.array((TILE, TILE), numba.float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        o = cuda.blockIdx.x * TILE + tx
        n = cuda.blockIdx.y * TILE + ty
        rows, cin = inp.shape
        cout = w.shape[1]
        acc = np.float32(0.0)
        for c0 in range(0, cin, TILE):
            if guard:
                a_t[ty, tx] = inp[n, c0 + tx] if n < rows and c0 + tx < cin else np.float32(0.0)
            else:
                a_t[ty, tx] = inp[n, c0 + tx]
            w_t[ty, tx] = w[c0 + ty, o] if c0 + ty < cin and o < cout else np.float32(0.0)
            if barrier_after_load:
                cuda.syncthreads()
            for kk in range(TILE):
                acc += a_t[ty, kk] * w_t[kk, tx]
            if barrier_before_next:
                cuda.syncthreads()
        if n < rows and o < cout:
            b = bias[o] if use_bias else np.float32(0.0)
            if erf:
                z = acc + b
                out[n, o] = np.float32(0.5) * z * (np.float32(1.0) + math.erf(z / math.sqrt(np.float32(2.0))))
            elif bias_first:
                out[n, o] = gelu_tanh(acc + b)
            else:
                out[n, o] = gelu_tanh(acc) + b

    return kernel


lg_no_bias = _linear_gelu(use_bias=False)


lg_gelu_then_bias = _linear_gelu(bias_first=False)


lg_no_barrier_after_load = _linear_gelu(barrier_after_load=False)


lg_no_barrier_before_next = _linear_gelu(barrier_before_next=False)


lg_no_guard = _linear_gelu(guard=False)


lg_exact_erf = _linear_gelu(erf=True)


for _name in (
    "lg_no_bias",
    "lg_gelu_then_bias",
    "lg_no_barrier_after_load",
    "lg_no_barrier_before_next",
    "lg_no_guard",
    "lg_exact_erf",
):
    globals()[_name].__name__ = _name


@cuda.jit
def lg_tanh_by_exp(out, inp, w, bias):
    # tanh(u) = 1 - 2 / (exp(2u) + 1); the k loop counts down
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    w_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    n = cuda.blockIdx.y * TILE + ty
    acc = np.float32(0.0)
    for c0 in range(0, inp.shape[1], TILE):
        ok_a = n < inp.shape[0] and c0 + tx < inp.shape[1]
        ok_w = c0 + ty < inp.shape[1] and o < w.shape[1]
        a_t[ty, tx] = inp[n, c0 + tx] if ok_a else np.float32(0.0)
        w_t[ty, tx] = w[c0 + ty, o] if ok_w else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE - 1, -1, -1):
            acc += a_t[ty, kk] * w_t[kk, tx]
        cuda.syncthreads()
    if n < inp.shape[0] and o < w.shape[1]:
        z = acc + bias[o]
        u = GELU_K * (z + GELU_C * z * z * z)
        th = np.float32(1.0) - np.float32(2.0) / (
            math.exp(min(np.float32(2.0) * u, np.float32(80.0))) + np.float32(1.0)
        )
        out[n, o] = np.float32(0.5) * z * (np.float32(1.0) + th)


@cuda.jit
def lg_transposed_roles(out, inp, w, bias):
    # threads along y walk the outputs, along x the rows: the same tiles, other roles
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    w_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = cuda.blockIdx.y * TILE + tx
    o = cuda.blockIdx.x * TILE + ty
    rows, cin = inp.shape
    cout = w.shape[1]
    acc = np.float32(0.0)
    for c0 in range(0, cin, TILE):
        a_t[tx, ty] = inp[n, c0 + ty] if n < rows and c0 + ty < cin else np.float32(0.0)
        w_t[tx, ty] = w[c0 + tx, o] if c0 + tx < cin and o < cout else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[tx, kk] * w_t[kk, ty]
        cuda.syncthreads()
    if n < rows and o < cout:
        out[n, o] = gelu_tanh(acc + bias[o])


MUTANTS = {
    "llm4_linear_gelu": [
        ("bias forgotten", lg_no_bias, *WRONG),
        ("GELU before the bias", lg_gelu_then_bias, *WRONG),
        ("no barrier after loading a tile", lg_no_barrier_after_load, *NO_BARRIER),
        ("no barrier before the next tile", lg_no_barrier_before_next, *RACE),
        ("tile of inp loaded without a guard", lg_no_guard, *OOB),
        ("exact erf GELU instead of GPT-2's tanh form", lg_exact_erf, *WRONG),
        # `acc = 0.0` makes the whole product float64: this exercise (float64="reject") fails it
        M(gb.linear_gelu, "lg_float64_accumulator", over("float64"), ("acc = np.float32(0.0)", "acc = 0.0")),
    ],
}

VARIANTS = {
    "llm4_linear_gelu": [
        ("tanh through exp, k loop reversed", lg_tanh_by_exp),
        ("thread roles transposed", lg_transposed_roles),
    ],
}

SEEDS = {p.name: (0, 1, 2) for p in gb.PUZZLES}  # references and worked kernels too
