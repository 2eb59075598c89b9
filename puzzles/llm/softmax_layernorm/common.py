"""What the op files of transformer kernels 1 share: the launch constants, the float32 unit
roundoff, and the LayerNorm/RMSNorm inputs, reference and tolerances (three op files use them).

LayerNorm / RMSNorm tolerances: out = (x - mean) * rstd * w + b. The mean and the variance are sums
of n terms ((n + 8)u relative each, a few more roundings for the division and the square root), and
x_hat = (x - mean) * rstd is at most sqrt(n) in size, so |error| <= (n + 8)u (sqrt(n) + R) W + u|b|,
where R bounds |x| / std (the data are drawn with R <= 8) and W = 2 bounds |w|. The case with a
large offset (mean +-1000, std about 1) is drawn on a grid of 1/64 so that every sum of it is exact
in float32 in any order; what remains is the rounding of the mean itself, u * 1000 / std per
rounding, a handful of them (Welford's running mean rounds once per element of a lane). NORM_ATOL
bounds both; NORM_RTOL = (n + 8)u covers the large values (the saved means).
"""

import math

import numpy as np

CHAPTER = "llm-1"


WARP = 32


FULL_MASK = 0xFFFFFFFF


TPB = 64  # block-per-row softmax: threads per block (two warps), a power of two


ROWS_PER_BLOCK = 2  # warp-per-row kernels: rows (warps) per block in the puzzles


ROW_THREADS = 32  # one-thread-per-row softmax: threads per block


PER_LANE = 8  # register-cached kernels: floats per lane (rows up to 32 * PER_LANE)


NEG_INF = np.float32(-np.inf)


EPS = np.float32(1e-5)  # LayerNorm / RMSNorm epsilon (PyTorch's and GPT-2's default)


U = 2.0**-24


FLT_MIN = 2.0**-126


NORM_MAX_COLS = 160


W_MAX, B_MAX, R_MAX, OFFSET = 2.0, 1.0, 8.0, 1000.0


NORM_RTOL = (NORM_MAX_COLS + 8) * U  # 1.0e-5


NORM_ATOL = (
    NORM_RTOL * (math.sqrt(NORM_MAX_COLS) + R_MAX) * W_MAX
    + U * B_MAX
    + (NORM_MAX_COLS // WARP + 8) * U * OFFSET / 0.9 * W_MAX
)  # 2.1e-3


_NORM_TOL = dict(rtol=NORM_RTOL, atol=NORM_ATOL)


def warp_per_row(rows):
    return (rows + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK, ROWS_PER_BLOCK * WARP


def norm_input(rng, rows, cols, kind):
    if kind == "offset":
        # a grid of 1/64 around +-1000: every partial sum is exact in float32, in any order
        k = rng.integers(-128, 129, (rows, cols))
        return (rng.choice([-1, 1]) * OFFSET + k / 64.0).astype(np.float32)
    if kind == "tiny":
        # RMSNorm: mean square ~1e-7, far below eps
        return rng.uniform(-1e-3, 1e-3, (rows, cols)).astype(np.float32)
    return (rng.uniform(-1, 1, (rows, cols)) * rng.uniform(1, 4) + rng.uniform(-2, 2)).astype(np.float32)


def norm_shapes(rng, last="offset"):
    return [
        (1, int(rng.integers(40, 100)), "normal"),
        (int(rng.integers(3, 6)), 1, "normal"),
        (int(rng.integers(3, 6)), int(rng.choice([31, 33, rng.integers(34, 70)])), "normal"),
        (int(rng.integers(2, 5)), int(rng.integers(33, 80)), last),
        (2, int(rng.integers(NORM_MAX_COLS - 40, NORM_MAX_COLS + 1)), "normal"),
    ]


def params(rng, cols):
    w = rng.uniform(0.5, W_MAX, cols) * rng.choice([-1, 1], cols)
    b = rng.uniform(-B_MAX, B_MAX, cols)
    return w.astype(np.float32), b.astype(np.float32)


def layernorm_ref(x, weight, bias, eps=float(EPS)):
    """float64 LayerNorm: (out, mean, rstd)."""
    x = x.astype(np.float64)
    mu = x.mean(axis=1)
    var = ((x - mu[:, None]) ** 2).mean(axis=1)
    rs = 1.0 / np.sqrt(var + eps)
    out = (x - mu[:, None]) * rs[:, None] * weight.astype(np.float64) + bias.astype(np.float64)
    return out, mu, rs


def saved_stats(x):
    _, mu, rs = layernorm_ref(x, np.ones(x.shape[1], np.float32), np.zeros(x.shape[1], np.float32))
    return mu.astype(np.float32), rs.astype(np.float32)
