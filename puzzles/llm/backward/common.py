"""What the op files of the backward pass share: launch constants, the per-seed sizes and the
tolerance of a float32 dot product."""

import numpy as np

CHAPTER = "llm-5"


TILE = 4  # matrix-product tiles (TILE x TILE threads) in the puzzles; 16 on the GPU (timing.specialize)


SPLIT_ROWS = 2 * TILE  # rows of the product each block of the split weight gradient sums


TPB = 32  # threads per block of the one-dimensional kernels


U = 2.0**-24  # float32 unit roundoff


def blocks(n, b):
    return (n + b - 1) // b


def dot_tol(k: int, scale: float) -> dict:
    """A float32 sum of k products, any order: |error| <= k u sum|a b| <= k u k scale (scale bounds
    each |a b|); the kernels' cases keep k below 64, so this is at most a few 1e-4 of the largest sum."""
    return dict(rtol=2 * k * U, atol=2 * k * U * k * scale)


def uniform(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)
