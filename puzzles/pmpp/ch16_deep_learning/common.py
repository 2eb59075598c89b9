"""Chapter 16's shared pieces: launch constants, the constant-memory filter bank, the layer shapes every
case draws, the NumPy truth of each pass and the derived tolerances.

Tolerances are derived, not tuned: a float32 sum of n terms, in any order, is within
n * eps * sum|terms| of the exact sum (eps = 2^-24, float32's unit roundoff; each product's own
rounding is one more eps * |term|, absorbed by counting the bias as a term). `sum_tolerance` turns the
largest n and the largest |term| a puzzle's cases can produce into its `atol`.
"""

from __future__ import annotations

import math

import numpy as np

TILE = 8  # output tile side (tiled kernel, GEMM tiles)


TPB = 32  # threads per block: im2col, weight-gradient reduction


POOL = 2  # max pooling window and stride


EPS32 = 2.0**-24  # float32 unit roundoff


# The constant-memory filter bank of ch16_conv_tiled: in Numba, constant memory is filled at compile
# time from a global array (cuda.const.array_like), as an inference layer's trained weights would be.
BANK_K, BANK_C, BANK_FS = 3, 2, 3


IN_TILE = TILE + BANK_FS - 1  # the input tile a TILE x TILE output tile needs


_bank_rng = np.random.default_rng(16)


BANK = _bank_rng.uniform(-1, 1, (BANK_K, BANK_C, BANK_FS, BANK_FS)).astype(np.float32)


BANK_BIAS = (_bank_rng.choice([-1, 1], BANK_K) * _bank_rng.uniform(0.5, 1, BANK_K)).astype(np.float32)


CHAPTER = "pmpp-16"


def sum_tolerance(n_terms: int, term_max: float) -> float:
    """Worst-case error of a float32 sum of n terms, each at most term_max: n * eps * (n * term_max)."""
    return n_terms * EPS32 * n_terms * term_max


# (N, C, K, H, W, FS): the edges first (1x1 filters, a single channel, a single image, a single
# filter, odd and non-square sizes, outputs of TILE - 1, TILE + 1 and several tiles), then one drawn
SHAPES = [
    (2, 3, 2, 11, 6, 3),  # HO = 9 = TILE + 1, WO = 4; non-square
    (1, 1, 3, 7, 9, 1),  # 1x1 filters, one channel
    (2, 2, 1, 5, 12, 3),  # one filter, WO = 10
    (1, 3, 2, 9, 9, 3),  # HO = WO = 7 = TILE - 1
]


X_MAX, W_MAX = 2.0, 1.0  # |x| < 2, |w| < 1, 0.5 <= |b| <= 1


def _shapes(rng):
    n = int(rng.integers(1, 3))
    c, k = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    fs = int(rng.choice([1, 2, 3]))
    h, wd = int(rng.integers(fs, 13)), int(rng.integers(fs, 13))
    return [*SHAPES, (n, c, k, h, wd, fs)]


def _x(rng, n, c, h, wd):
    return rng.uniform(-X_MAX, X_MAX, (n, c, h, wd)).astype(np.float32)


def _w(rng, k, c, fs):
    return rng.uniform(-W_MAX, W_MAX, (k, c, fs, fs)).astype(np.float32)


def _bias(rng, k):
    # never near 0: a kernel that forgets the bias must be visibly wrong
    return (rng.choice([-1, 1], k) * rng.uniform(0.5, 1, k)).astype(np.float32)


def _tiles(n):
    return math.ceil(n / TILE)


def _dy(rng, n, k, ho, wo):
    return rng.uniform(-1, 1, (n, k, ho, wo)).astype(np.float32)


def conv_ref(x, w, b=None):
    """Valid, stride-1 correlation in float64: y[n,k,h,w] = b[k] + sum_cpq x[n,c,h+p,w+q] w[k,c,p,q]."""
    n, c, h, wd = x.shape
    k, _, fs, _ = w.shape
    ho, wo = h - fs + 1, wd - fs + 1
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    y = np.zeros((n, k, ho, wo))
    for p in range(fs):
        for q in range(fs):
            y += np.einsum("nchw,kc->nkhw", x64[:, :, p : p + ho, q : q + wo], w64[:, :, p, q])
    if b is not None:
        y += b.astype(np.float64)[None, :, None, None]
    return y


def im2col_ref(x, fs):
    n, c, h, wd = x.shape
    ho, wo = h - fs + 1, wd - fs + 1
    xu = np.empty((n, c * fs * fs, ho * wo), x.dtype)
    for ci in range(c):
        for p in range(fs):
            for q in range(fs):
                xu[:, ci * fs * fs + p * fs + q, :] = x[:, ci, p : p + ho, q : q + wo].reshape(n, -1)
    return xu


def wgrad_ref(dy, x, fs):
    n, k, ho, wo = dy.shape
    dy64, x64 = dy.astype(np.float64), x.astype(np.float64)
    dw = np.zeros((k, x.shape[1], fs, fs))
    for p in range(fs):
        for q in range(fs):
            dw[:, :, p, q] = np.einsum("nkhw,nchw->kc", dy64, x64[:, :, p : p + ho, q : q + wo])
    return dw


def dgrad_ref(dy, w, h, wd):
    n, k, ho, wo = dy.shape
    fs = w.shape[2]
    dx = np.zeros((n, w.shape[1], h, wd))
    for p in range(fs):
        for q in range(fs):
            dx[:, :, p : p + ho, q : q + wo] += np.einsum(
                "nkhw,kc->nchw", dy.astype(np.float64), w[:, :, p, q]
            )
    return dx


# largest sums the cases can produce (see SHAPES and _shapes): C * FS^2 + 1 terms in a forward output,
# N * HO * WO products in a weight gradient, K * FS^2 in an input gradient
_FWD_TERMS = 3 * 9 + 1


_WGRAD_TERMS = 2 * 18 * 10


_DGRAD_TERMS = 3 * 9


FWD_ATOL = sum_tolerance(_FWD_TERMS, X_MAX * W_MAX)


WGRAD_ATOL = sum_tolerance(_WGRAD_TERMS, X_MAX * 1.0)


DGRAD_ATOL = sum_tolerance(_DGRAD_TERMS, 1.0 * W_MAX)


_RTOL = EPS32 * 2  # the reference's own rounding to float32: one ulp


_SHAPE_TEXT = """`x[n, c, h, w]` holds N images of C channels, `w[k, c, p, q]` K filters of `FS x FS`, `b[k]`
one bias per filter. Stride 1, no padding: the output is `HO x WO` with `HO = H - FS + 1`,
`WO = W - FS + 1`, and `y[n, k, h, w] = b[k] + sum over c, p, q of x[n, c, h + p, w + q] * w[k, c, p, q]`."""
