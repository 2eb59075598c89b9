"""Known-wrong and known-right kernels for puzzles/llm/backward/linear.py. Format: mutants/common.py."""

import numba
import numpy as np
from numba import cuda

from mutants.common import NO_BARRIER, RACE, WRONG, M
from puzzles.llm.backward import linear as m
from puzzles.llm.backward.common import SPLIT_ROWS, TPB

MATMUL_NT = [
    # the forward's read: b_t used as if w were not transposed
    M(m.matmul_nt, "nt_missing_transpose", WRONG, ("a_t[ty, kk] * b_t[tx, kk]", "a_t[ty, kk] * b_t[kk, tx]")),
    M(m.matmul_nt, "nt_no_second_barrier", NO_BARRIER, ("        cuda.syncthreads()\n    if", "    if")),
    M(
        m.matmul_nt,
        "nt_no_first_barrier",
        NO_BARRIER,
        ("np.float32(0.0)\n        cuda.syncthreads()\n        for kk", "np.float32(0.0)\n        for kk"),
    ),
    # every tile of b read from the first columns: the k offset forgotten
    M(m.matmul_nt, "nt_k_offset_forgotten", WRONG, ("b[bc, k0 + tx]", "b[bc, tx]")),
]

MATMUL_TN = [
    M(
        m.matmul_tn,
        "tn_missing_transpose",
        WRONG,
        ("acc += a_t[kk, ty] * b_t[kk, tx]", "acc += a_t[ty, kk] * b_t[kk, tx]"),
    ),
    M(
        m.matmul_tn,
        "tn_one_tile_only",
        WRONG,
        ("for k0 in range(0, K, TILE):", "for k0 in range(0, min(K, TILE), TILE):"),
    ),
    M(
        m.matmul_tn,
        "tn_no_first_barrier",
        NO_BARRIER,
        ("np.float32(0.0)\n        cuda.syncthreads()\n        for kk", "np.float32(0.0)\n        for kk"),
    ),
]

MATMUL_TN_SPLIT = [
    # dw accumulated without atomics across row blocks: two blocks add to the same element
    M(m.matmul_tn_split, "split_no_atomic", RACE, ("cuda.atomic.add(out, (c, o), acc)", "out[c, o] += acc")),
    M(m.matmul_tn_split, "split_overwrites", RACE, ("cuda.atomic.add(out, (c, o), acc)", "out[c, o] = acc")),
]

BIAS_GRAD_ATOMIC = [
    M(m.bias_grad_atomic, "bias_no_atomic", RACE, ("cuda.atomic.add(db, col, acc)", "db[col] += acc")),
    M(
        m.bias_grad_atomic,
        "bias_strip_from_zero",
        WRONG,
        ("for r in range(start, min(", "for r in range(0, min("),
    ),
]

BIAS_GRAD_TWO_STAGE = [
    M(
        m.bias_grad_two_stage,
        "bias2_no_barrier_before_tree",
        NO_BARRIER,
        ("    part[t] = acc\n    cuda.syncthreads()\n", "    part[t] = acc\n"),
    ),
    M(
        m.bias_grad_two_stage,
        "bias2_rows_by_one",
        WRONG,
        ("for r in range(t, rows, TPB):", "for r in range(t, rows):"),
    ),
]


@cuda.jit
def nt_untiled(out, a, b):
    # one thread per output, straight from global memory
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    n = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if n < a.shape[0] and c < b.shape[0]:
        acc = np.float32(0.0)
        for k in range(a.shape[1]):
            acc += a[n, k] * b[c, k]
        out[n, c] = acc


@cuda.jit
def tn_untiled(out, a, b):
    o = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if c < a.shape[1] and o < b.shape[1]:
        acc = np.float32(0.0)
        for k in range(a.shape[0]):
            acc += a[k, c] * b[k, o]
        out[c, o] = acc


@cuda.jit
def split_untiled(out, a, b):
    o = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    start = cuda.blockIdx.z * SPLIT_ROWS
    if c < a.shape[1] and o < b.shape[1]:
        acc = np.float32(0.0)
        for k in range(start, min(a.shape[0], start + SPLIT_ROWS)):
            acc += a[k, c] * b[k, o]
        cuda.atomic.add(out, (c, o), acc)


@cuda.jit
def bias_rows_reversed(db, dout):
    # the strip summed from its last row up, the column from the thread's x and y ids spelt out
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    start = cuda.blockIdx.y * SPLIT_ROWS
    if col < dout.shape[1]:
        acc = np.float32(0.0)
        for r in range(min(dout.shape[0], start + SPLIT_ROWS) - 1, start - 1, -1):
            acc += dout[r, col]
        cuda.atomic.add(db, col, acc)


@cuda.jit
def bias2_sequential_tree(db, dout):
    # stage 2 by thread 0 alone, in a fixed order: still deterministic
    part = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    acc = np.float32(0.0)
    for r in range(t, dout.shape[0], TPB):
        acc += dout[r, cuda.blockIdx.x]
    part[t] = acc
    cuda.syncthreads()
    if t == 0:
        total = np.float32(0.0)
        for s in range(TPB):
            total += part[s]
        db[cuda.blockIdx.x] = total


MUTANTS = {
    "llm5_matmul_nt": MATMUL_NT,
    "llm5_matmul_tn": MATMUL_TN,
    "llm5_matmul_tn_split": MATMUL_TN_SPLIT,
    "llm5_bias_grad_atomic": BIAS_GRAD_ATOMIC,
    "llm5_bias_grad_two_stage": BIAS_GRAD_TWO_STAGE,
}
VARIANTS = {
    "llm5_matmul_nt": [("untiled", nt_untiled)],
    "llm5_matmul_tn": [("untiled", tn_untiled)],
    "llm5_matmul_tn_split": [("untiled", split_untiled)],
    "llm5_bias_grad_atomic": [("rows_reversed", bias_rows_reversed)],
    "llm5_bias_grad_two_stage": [("sequential_tree", bias2_sequential_tree)],
}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}
