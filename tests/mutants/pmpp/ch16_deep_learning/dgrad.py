"""Mutants and variants of puzzles/pmpp/ch16_deep_learning/dgrad.py; format: mutants/common.py."""

from numba import cuda, float32

from mutants.common import OOB


@cuda.jit
def dgrad_no_edge_test(dx, dy, w):
    col, row = cuda.grid(2)
    c_in = dx.shape[1]
    n = cuda.blockIdx.z // c_in
    c = cuda.blockIdx.z % c_in
    if row < dx.shape[2] and col < dx.shape[3]:
        acc = float32(0.0)
        for k in range(dy.shape[1]):
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += dy[n, k, row - p, col - q] * w[k, c, p, q]  # row - p < 0 at the top edge
        dx[n, c, row, col] = acc


MUTANTS = {
    "ch16_conv_dgrad": [
        ("dgrad_no_edge_test", dgrad_no_edge_test, *OOB),
    ],
}

VARIANTS = {}

SEEDS = {name: (0, 1, 2) for name in MUTANTS}
