"""PMPP chapter 16, deep learning: the convolutional layer, forward and backward.

    ch16_conv_forward       direct: one thread per output element y[n, k, h, w] (exercise)
    ch16_conv_tiled         shared-memory input tiles, the filter bank in constant memory (worked)
    ch16_im2col             the unrolled input matrix of one image per z-block (exercise)
    ch16_conv_gemm          convolution as matrix multiplication: the chapter 5 tiled SGEMM (worked)
    ch16_maxpool            max pooling, POOL x POOL windows at stride POOL (worked)
    ch16_conv_dgrad         gradient with respect to the input, a gather (worked)
    ch16_conv_wgrad_atomic  gradient with respect to the weights with atomics (exercise)
    ch16_conv_wgrad_reduce  the same as a block reduction per weight, no atomics (exercise)

Layouts as in the book: x[n, c, h, w] (N images, C channels), w[k, c, p, q] (K filters of FS x FS),
b[k], y[n, k, h, w] with HO = H - FS + 1, WO = W - FS + 1 (stride 1, no padding: "valid").

Tolerances are derived, not tuned: a float32 sum of n terms, in any order, is within
n * eps * sum|terms| of the exact sum (eps = 2^-24, float32's unit roundoff; each product's own
rounding is one more eps * |term|, absorbed by counting the bias as a term). `sum_tolerance` turns the
largest n and the largest |term| a puzzle's cases can produce into its `atol`.
"""

import math

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

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

# what `from puzzles.pmpp.ch16_deep_learning import *` gives a notebook: constants only, never a kernel
__all__ = ["TILE", "TPB", "POOL", "EPS32", "BANK", "BANK_BIAS", "BANK_K", "BANK_C", "BANK_FS", "IN_TILE"]
CHAPTER = "pmpp-16"


def sum_tolerance(n_terms: int, term_max: float) -> float:
    """Worst-case error of a float32 sum of n terms, each at most term_max: n * eps * (n * term_max)."""
    return n_terms * EPS32 * n_terms * term_max


# ------------------------------------------------------------------ forward


@cuda.jit
def conv_forward(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out  # one z-block per (image, filter)
    k = cuda.blockIdx.z % k_out
    ### BEGIN SOLUTION
    if row < y.shape[2] and col < y.shape[3]:
        acc = b[k]
        for c in range(x.shape[1]):
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += x[n, c, row + p, col + q] * w[k, c, p, q]
        y[n, k, row, col] = acc
    ### END SOLUTION


@cuda.jit
def conv_tiled(y, x):
    bank = cuda.const.array_like(BANK)
    bias = cuda.const.array_like(BANK_BIAS)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    acc = cuda.local.array(BANK_K, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TILE + tx
    n = cuda.blockIdx.z
    row0 = cuda.blockIdx.y * TILE
    col0 = cuda.blockIdx.x * TILE
    row = row0 + ty
    col = col0 + tx
    h, wd = x.shape[2], x.shape[3]
    inside = row < y.shape[2] and col < y.shape[3]
    for k in range(BANK_K):
        acc[k] = bias[k]
    for c in range(BANK_C):
        # the block loads the input tile of channel c once, halo included, and every one of the
        # BANK_K filters uses it: IN_TILE^2 loads serve BANK_K * TILE^2 * FS^2 multiply-adds
        for i in range(t, IN_TILE * IN_TILE, TILE * TILE):
            r = row0 + i // IN_TILE
            s = col0 + i % IN_TILE
            tile[i // IN_TILE, i % IN_TILE] = x[n, c, r, s] if r < h and s < wd else float32(0.0)
        cuda.syncthreads()
        if inside:
            for p in range(BANK_FS):
                for q in range(BANK_FS):
                    v = tile[ty + p, tx + q]  # one shared load, BANK_K multiply-adds from a register
                    for k in range(BANK_K):
                        acc[k] += v * bank[k, c, p, q]
        cuda.syncthreads()  # the next channel's tile overwrites this one
    if inside:
        for k in range(BANK_K):
            y[n, k, row, col] = acc[k]


@cuda.jit
def im2col(xu, x, fs):
    # thread (column j = h * WO + w of image n, channel c) writes the FS * FS entries it owns
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    ### BEGIN SOLUTION
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[n, c * fs * fs + p * fs + q, j] = x[n, c, h + p, w + q]
    ### END SOLUTION


@cuda.jit
def conv_gemm(y, wm, xu, b):
    # y[n] = wm @ xu[n] + b: (K x CFF) times (CFF x HO*WO), the chapter 5 tiled matmul, one image per z
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = cuda.blockIdx.z
    row = cuda.blockIdx.y * TILE + ty  # filter k
    col = cuda.blockIdx.x * TILE + tx  # output pixel
    rows, inner, cols = wm.shape[0], wm.shape[1], xu.shape[2]
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = float32(0.0)
    for t in range((inner + TILE - 1) // TILE):
        kk = t * TILE + tx
        m_tile[ty, tx] = wm[row, kk] if row < rows and kk < inner else float32(0.0)
        kk = t * TILE + ty
        n_tile[ty, tx] = xu[n, kk, col] if kk < inner and col < cols else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE):
            acc += m_tile[ty, i] * n_tile[i, tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        y[n, row, col] = acc + b[row]


@cuda.jit
def maxpool(y, x):
    col, row = cuda.grid(2)
    nc = cuda.blockIdx.z  # one z-block per (image, channel)
    n = nc // x.shape[1]
    c = nc % x.shape[1]
    if row < y.shape[2] and col < y.shape[3]:
        m = x[n, c, row * POOL, col * POOL]
        for p in range(POOL):
            for q in range(POOL):
                m = max(m, x[n, c, row * POOL + p, col * POOL + q])
        y[n, c, row, col] = m


@cuda.jit
def conv_dgrad(dx, dy, w):
    # dx[n, c, h, w] = sum over k, p, q of dy[n, k, h - p, w - q] * w[k, c, p, q]: every input pixel
    # gathers from the outputs it fed, so each thread owns its dx element and needs no atomics
    col, row = cuda.grid(2)
    c_in = dx.shape[1]
    n = cuda.blockIdx.z // c_in
    c = cuda.blockIdx.z % c_in
    ho, wo = dy.shape[2], dy.shape[3]
    if row < dx.shape[2] and col < dx.shape[3]:
        acc = float32(0.0)
        for k in range(dy.shape[1]):
            for p in range(w.shape[2]):
                r = row - p
                if 0 <= r < ho:
                    for q in range(w.shape[3]):
                        s = col - q
                        if 0 <= s < wo:
                            acc += dy[n, k, r, s] * w[k, c, p, q]
        dx[n, c, row, col] = acc


@cuda.jit
def conv_wgrad_atomic(dw, dy, x):
    # one thread per output-gradient element dy[n, k, h, w]: it adds its share to every weight of filter k
    col, row = cuda.grid(2)
    k_out = dy.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    ### BEGIN SOLUTION
    if row < dy.shape[2] and col < dy.shape[3]:
        g = dy[n, k, row, col]
        for c in range(x.shape[1]):
            for p in range(dw.shape[2]):
                for q in range(dw.shape[3]):
                    cuda.atomic.add(dw, (k, c, p, q), g * x[n, c, row + p, col + q])
    ### END SOLUTION


@cuda.jit
def conv_wgrad_reduce(dw, dy, x):
    # one block per weight dw[k, c, p, q]: its threads split the N * HO * WO products, then a tree
    part = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    total = dy.shape[0] * ho * wo
    ### BEGIN SOLUTION
    acc = float32(0.0)
    for i in range(t, total, TPB):
        n = i // (ho * wo)
        h = (i // wo) % ho
        w = i % wo
        acc += dy[n, k, h, w] * x[n, c, h + p, w + q]
    part[t] = acc
    stride = TPB // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        dw[k, c, p, q] = part[0]
    ### END SOLUTION


# ------------------------------------------------------------------ NumPy truth


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


def spec_forward(x, w, b):
    return conv_ref(x, w, b).astype(np.float32)


def spec_tiled(x):
    return conv_ref(x, BANK, BANK_BIAS).astype(np.float32)


def spec_im2col(x, fs):
    return im2col_ref(x, fs)


def spec_gemm(wm, xu, b):
    return (np.einsum("kr,nrj->nkj", wm.astype(np.float64), xu.astype(np.float64)) + b[None, :, None]).astype(
        np.float32
    )


def spec_maxpool(x):
    n, c, h, wd = x.shape
    ho, wo = h // POOL, wd // POOL
    return x[:, :, : ho * POOL, : wo * POOL].reshape(n, c, ho, POOL, wo, POOL).max(axis=(3, 5))


# ------------------------------------------------------------------ cases

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


def cases_forward(rng):
    out = []
    for n, c, k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        args = dict(
            y=np.empty((n, k, ho, wo), np.float32),
            x=_x(rng, n, c, h, wd),
            w=_w(rng, k, c, fs),
            b=_bias(rng, k),
        )
        out.append(Case((_tiles(wo), _tiles(ho), n * k), (TILE, TILE), args))
    return out


def cases_tiled(rng):
    out = []
    for n, h, wd in [(2, 11, 6), (1, 9, 12), (1, 20, 9), (2, 3, 5)]:  # HO = 9, 7, 18, 1
        ho, wo = h - BANK_FS + 1, wd - BANK_FS + 1
        args = dict(y=np.empty((n, BANK_K, ho, wo), np.float32), x=_x(rng, n, BANK_C, h, wd))
        out.append(Case((_tiles(wo), _tiles(ho), n), (TILE, TILE), args))
    return out


def cases_im2col(rng):
    out = []
    for n, c, _k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        args = dict(xu=np.empty((n, c * fs * fs, ho * wo), np.float32), x=_x(rng, n, c, h, wd), fs=fs)
        out.append(Case((math.ceil(ho * wo / TPB), c, n), TPB, args))
    return out


def cases_gemm(rng):
    out = []
    for n, c, k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        x = _x(rng, n, c, h, wd)
        wm = _w(rng, k, c, fs).reshape(k, c * fs * fs)
        args = dict(y=np.empty((n, k, ho * wo), np.float32), wm=wm, xu=im2col_ref(x, fs), b=_bias(rng, k))
        out.append(Case((_tiles(ho * wo), _tiles(k), n), (TILE, TILE), args))
    return out


def cases_maxpool(rng):
    out = []
    for n, c, h, wd in [(2, 3, 11, 6), (1, 1, 2, 17), (1, 2, 16, 5), (2, 1, 19, 19)]:
        ho, wo = h // POOL, wd // POOL
        args = dict(y=np.empty((n, c, ho, wo), np.float32), x=_x(rng, n, c, h, wd))
        out.append(Case((_tiles(wo), _tiles(ho), n * c), (TILE, TILE), args))
    return out


def _dy(rng, n, k, ho, wo):
    return rng.uniform(-1, 1, (n, k, ho, wo)).astype(np.float32)


def cases_dgrad(rng):
    out = []
    for n, c, k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        args = dict(dx=np.empty((n, c, h, wd), np.float32), dy=_dy(rng, n, k, ho, wo), w=_w(rng, k, c, fs))
        out.append(Case((_tiles(wd), _tiles(h), n * c), (TILE, TILE), args))
    return out


def cases_wgrad_atomic(rng):
    out = []
    for n, c, k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        args = dict(
            dw=np.zeros((k, c, fs, fs), np.float32), dy=_dy(rng, n, k, ho, wo), x=_x(rng, n, c, h, wd)
        )
        out.append(Case((_tiles(wo), _tiles(ho), n * k), (TILE, TILE), args))
    return out


def cases_wgrad_reduce(rng):
    out = []
    for n, c, k, h, wd, fs in _shapes(rng):
        ho, wo = h - fs + 1, wd - fs + 1
        args = dict(
            dw=np.empty((k, c, fs, fs), np.float32), dy=_dy(rng, n, k, ho, wo), x=_x(rng, n, c, h, wd)
        )
        out.append(Case(k * c * fs * fs, TPB, args))
    return out


def _dgrad_spec(dy, w):
    fs = w.shape[2]
    return dgrad_ref(dy, w, dy.shape[2] + fs - 1, dy.shape[3] + fs - 1).astype(np.float32)


def _wgrad_spec(dy, x):
    return wgrad_ref(dy, x, x.shape[2] - dy.shape[2] + 1).astype(np.float32)


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

PUZZLES = [
    Puzzle(
        name="ch16_conv_forward",
        title="Convolutional layer, direct",
        statement=f"""{_SHAPE_TEXT}

One thread per output element: blocks of `TILE x TILE = {TILE} x {TILE}` threads cover an output
plane (`cuda.grid(2)` gives `(column, row)`), and `blockIdx.z` numbers the (image, filter) pairs,
`n * K + k`. Shapes are drawn per case: 1x1 filters, one channel, odd and non-square sizes.""",
        outputs=("y",),
        spec=spec_forward,
        cases=cases_forward,
        reference=conv_forward,
        hints=(
            "Start the sum at the bias b[k], then loop over every channel c and every filter tap p, q.",
            "Output (row, col) reads the window with top-left corner (row, col): x[n, c, row + p, col + q].",
            "The grid rounds up to whole tiles: threads past HO or WO must do nothing.",
        ),
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=FWD_ATOL,
    ),
    Puzzle(
        name="ch16_conv_tiled",
        title="Shared input tiles, the filter bank in constant memory",
        statement=f"""The layer's `BANK_K = {BANK_K}` filters of `BANK_C = {BANK_C}` channels,
`{BANK_FS} x {BANK_FS}`, and their biases sit in constant memory (`BANK`, `BANK_BIAS`). One block
of `TILE x TILE` threads per output tile and image (`blockIdx.z = n`): for each channel, the block
loads the `IN_TILE x IN_TILE` input tile (`IN_TILE = TILE + FS - 1 = {IN_TILE}`) into shared memory
once, and each thread uses it for all `BANK_K` filters, keeping `BANK_K` sums in registers.""",
        outputs=("y",),
        spec=spec_tiled,
        cases=cases_tiled,
        reference=conv_tiled,
        budget=Budget(shared_bytes=IN_TILE * IN_TILE * 4),
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=sum_tolerance(BANK_C * BANK_FS**2 + 1, X_MAX * W_MAX),
    ),
    Puzzle(
        name="ch16_im2col",
        title="Unrolling the input (im2col)",
        statement=f"""Unroll each image into the matrix that turns convolution into a matrix product:
`xu[n, c * FS * FS + p * FS + q, h * WO + w] = x[n, c, h + p, w + q]`. Row `c * FS^2 + p * FS + q` is
the input pixel that filter tap `(c, p, q)` sees, column `h * WO + w` the output pixel. Thread `j` of
the grid's x dimension (blocks of `TPB = {TPB}`) owns column `j`; `blockIdx.y` is the channel
`c` and `blockIdx.z` the image `n`; the thread writes its `FS * FS` entries of channel `c`.""",
        outputs=("xu",),
        spec=spec_im2col,
        cases=cases_im2col,
        reference=im2col,
        hints=(
            "Column j is output pixel (h, w) = (j // WO, j % WO).",
            "The row is c * fs * fs + p * fs + q: w[k] flattened, so that w.reshape(K, -1) @ xu[n] works.",
        ),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch16_conv_gemm",
        title="Convolution as matrix multiplication",
        statement=f"""`y[n] = wm @ xu[n] + b[:, None]`: the filters flattened
(`wm = w.reshape(K, C * FS * FS)`) times the unrolled image, plus the bias of each row. The chapter 5
tiled matmul with `TILE = {TILE}`, one image per `blockIdx.z`; `y[n, k, h * WO + w]` is the output
plane flattened.""",
        outputs=("y",),
        spec=spec_gemm,
        cases=cases_gemm,
        reference=conv_gemm,
        budget=Budget(shared_bytes=2 * TILE * TILE * 4),
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=FWD_ATOL,
    ),
    Puzzle(
        name="ch16_maxpool",
        title="Max pooling",
        statement=f"""`y[n, c, h, w]` is the largest of the `POOL x POOL` inputs
`x[n, c, POOL * h + p, POOL * w + q]` (`POOL = {POOL}`, stride `POOL`; a last odd row or column is
dropped). One thread per output, `blockIdx.z = n * C + c`.""",
        outputs=("y",),
        spec=spec_maxpool,
        cases=cases_maxpool,
        reference=maxpool,
        budget=Budget(global_reads=POOL * POOL + 1, global_writes=1),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch16_conv_dgrad",
        title="Backward: the gradient with respect to the input",
        statement="""Given the gradient `dy` of the loss with respect to the layer's output, the gradient
with respect to its input is `dx[n, c, h, w] = sum over k, p, q of dy[n, k, h - p, w - q] * w[k, c, p, q]`,
taking only the terms with `0 <= h - p < HO` and `0 <= w - q < WO`. One thread per `dx` element (it
gathers: no atomics), `blockIdx.z = n * C + c`.""",
        outputs=("dx",),
        spec=_dgrad_spec,
        cases=cases_dgrad,
        reference=conv_dgrad,
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=DGRAD_ATOL,
    ),
    Puzzle(
        name="ch16_conv_wgrad_atomic",
        title="Backward: the weight gradient with atomics",
        statement="""`dw[k, c, p, q] = sum over n, h, w of dy[n, k, h, w] * x[n, c, h + p, w + q]`: every
output gradient contributes to every weight of its filter, so this is a reduction. First the direct way:
one thread per `dy` element (launched like the forward pass, `blockIdx.z = n * K + k`), adding its
`C * FS * FS` products into `dw` with `cuda.atomic.add` (`dw` starts at zero).""",
        outputs=("dw",),
        spec=_wgrad_spec,
        cases=cases_wgrad_atomic,
        reference=conv_wgrad_atomic,
        zeroed=("dw",),
        hints=(
            "Many threads add into the same dw[k, c, p, q]: a plain += loses updates.",
            "cuda.atomic.add(dw, (k, c, p, q), v) adds v to one element of a 4-D array atomically.",
            "The input pixel that tap (p, q) of output (row, col) saw is x[n, c, row + p, col + q].",
        ),
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=WGRAD_ATOL,
    ),
    Puzzle(
        name="ch16_conv_wgrad_reduce",
        title="Backward: the weight gradient without atomics",
        statement=f"""The same `dw`, with one block of `TPB = {TPB}` threads per weight (`blockIdx.x`
numbers `(k, c, p, q)` in row-major order; decoded for you). Thread `t` sums the products for
`i = t, t + TPB, t + 2 TPB, ...` over the `N * HO * WO` output positions (`i = (n * HO + h) * WO + w`), the
block adds the `TPB` partial sums with the chapter 10 tree in shared memory, and thread 0 writes
`dw[k, c, p, q]`. No atomics (enforced): every weight has exactly one writer.""",
        outputs=("dw",),
        spec=_wgrad_spec,
        cases=cases_wgrad_reduce,
        reference=conv_wgrad_reduce,
        budget=Budget(global_atomics_per_block=0, global_writes=1, shared_bytes=TPB * 4),
        hints=(
            "Decode i into (n, h, w): n = i // (HO * WO), h = (i // WO) % HO, w = i % WO.",
            "A barrier before every step of the tree, outside the `if t < stride`.",
        ),
        chapter=CHAPTER,
        rtol=_RTOL,
        atol=WGRAD_ATOL,
    ),
]


# ------------------------------------------------------------------ GPU benchmark

GOAL = {"ceiling": "cuDNN conv2d (torch, FP32)", "fraction": 0.5, "best": "ch16 im2col + SGEMM"}
GOAL_DIRECT = 0.3  # the direct layer's goal, reported by benchmark() itself


def benchmark(scale: float = 1.0, *, layer: tuple = (32, 64, 64, 56, 56)):
    """A ResNet-style layer (N=32, C=K=64, 56x56, 3x3, 'same' via a padded input): direct, tiled with
    a constant filter bank, and im2col + register-tiled SGEMM against torch's cuDNN conv2d in FP32
    (TF32 off), each validated first. `layer` = (N, C, K, H, W) (a smaller one for a dry run)."""
    from helpers import timing
    from helpers.timing import specialize
    from puzzles.pmpp import ch05_memory_tiling as ch05

    n_img, c_in, k_out, h, wd = layer
    n_img = max(1, int(n_img * scale))
    fs = 3
    rng = np.random.default_rng(16)
    # 'same' padding done once on the host: the kernels compute valid convolutions of the padded input
    x = np.zeros((n_img, c_in, h + 2, wd + 2), np.float32)
    x[:, :, 1:-1, 1:-1] = rng.uniform(-1, 1, (n_img, c_in, h, wd))
    w = rng.uniform(-0.1, 0.1, (k_out, c_in, fs, fs)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, k_out).astype(np.float32)
    flops = 2 * n_img * k_out * h * wd * c_in * fs * fs
    tol = dict(rtol=1e-4, atol=sum_tolerance(c_in * fs * fs + 1, 0.1))
    # validation on the first image in float64 (the whole batch in float64 is slow on the host)
    expected0 = conv_ref(x[:1], w, b).astype(np.float32)

    d_x, d_w, d_b = cuda.to_device(x), cuda.to_device(w), cuda.to_device(b)
    rows = []

    # the library peer, the ceiling of this table: cuDNN through torch, TF32 pinned off
    try:
        import torch
        import torch.nn.functional as F

        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
        tx = torch.as_tensor(x[:, :, 1:-1, 1:-1].copy(), device="cuda")
        tw, tb = torch.as_tensor(w, device="cuda"), torch.as_tensor(b, device="cuda")
        ty = F.conv2d(tx, tw, tb, padding=1)
        timing.validate("cuDNN conv2d", ty[:1].cpu().numpy(), expected0, **tol)
        s = timing.time_gpu(lambda: F.conv2d(tx, tw, tb, padding=1))
        rows.append(timing.Measurement(GOAL["ceiling"], s, flops=flops, ceiling=True, peer=True))
    except ImportError:
        print("torch is not installed: no cuDNN row (the goals need it)")

    # direct, one thread per output: the exercise kernel at 16 x 16 tiles
    y = cuda.device_array((n_img, k_out, h, wd), np.float32)
    direct = specialize(conv_forward)
    grid = (math.ceil(wd / 16), math.ceil(h / 16), n_img * k_out)
    run_direct = lambda: direct[grid, (16, 16)](y, d_x, d_w, d_b)  # noqa: E731
    run_direct()
    timing.validate("ch16 direct", y.copy_to_host()[:1], expected0, **tol)
    rows.append(timing.Measurement("ch16 direct", timing.time_gpu(run_direct), flops=flops))

    # shared input tiles, the filter bank in constant memory: 144 KiB of weights do not fit in 64 KiB, so
    # one kernel per group of KB filters, each with its group compiled in (CUDA C would copy the group
    # with cudaMemcpyToSymbol before each launch); 16 x 16 output tiles
    kb, tile = 16, 16
    groups = []
    for k0 in range(0, k_out, kb):
        bank = np.ascontiguousarray(w[k0 : k0 + kb])
        kern = specialize(
            conv_tiled,
            BANK=bank,
            BANK_BIAS=np.ascontiguousarray(b[k0 : k0 + kb]),
            BANK_K=bank.shape[0],
            BANK_C=c_in,
            BANK_FS=fs,
            TILE=tile,
            IN_TILE=tile + fs - 1,
        )
        groups.append((kern, y[:, k0 : k0 + kb]))
    tgrid = (math.ceil(wd / tile), math.ceil(h / tile), n_img)

    def run_tiled():
        for kern, part in groups:
            kern[tgrid, (tile, tile)](part, d_x)

    run_tiled()
    timing.validate("ch16 tiled, constant filter bank", y.copy_to_host()[:1], expected0, **tol)
    rows.append(
        timing.Measurement("ch16 tiled, constant filter bank", timing.time_gpu(run_tiled), flops=flops)
    )

    # im2col of the whole batch into one CFF x (N * HO * WO) matrix, then one register-tiled SGEMM
    # (chapter 5's kernel at its GPU tile sizes): y comes out as K x (N * HO * WO), i.e. in CNHW order
    cff, cols = c_in * fs * fs, n_img * h * wd
    xu = cuda.device_array((1, cff, cols), np.float32)
    unroll = specialize(_im2col_batch)
    wm = cuda.to_device(w.reshape(k_out, cff))
    yk = cuda.device_array((k_out, cols), np.float32)
    # chapter 5's register-tiled kernel at a configuration its benchmark validates: 64 x 64 block tiles
    # match the K = 64 filters exactly (a 128-row tile would leave half of each block idle)
    bm, bn, bk, tm, tn = 64, 64, 8, 4, 4
    consts = ch05.regtile_constants(bm, bn, bk, tm, tn)
    gemm = specialize(ch05.regtile_matmul_kernel, **consts)
    add_bias = specialize(_add_row_bias)

    def run_gemm():
        unroll[(math.ceil(h * wd / 256), c_in, n_img), 256](xu, d_x, fs)
        gemm[(math.ceil(cols / bn), math.ceil(k_out / bm)), (consts["TX"], consts["TY"])](
            yk, wm, xu[0], k_out, cff, cols
        )
        add_bias[(math.ceil(cols / 256), k_out), 256](yk, d_b)

    run_gemm()
    got0 = yk.copy_to_host().reshape(k_out, n_img, h, wd)[:, :1].transpose(1, 0, 2, 3)
    timing.validate("ch16 im2col + SGEMM", got0, expected0, **tol)
    rows.append(timing.Measurement("ch16 im2col + SGEMM", timing.time_gpu(run_gemm), flops=flops))
    if rows[0].ceiling:
        best = max(
            timing.fraction_of_ceiling(rows, r) for r in ("ch16 direct", "ch16 tiled, constant filter bank")
        )
        print(f"best direct kernel: {best:.1%} of cuDNN (goal {GOAL_DIRECT:.0%})")
    return rows


@cuda.jit
def _im2col_batch(xu, x, fs):
    # the whole batch in one matrix: column n * HO * WO + h * WO + w (GPU-sized blocks of the exercise)
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    plane = (x.shape[2] - fs + 1) * wo
    if j < plane:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[0, c * fs * fs + p * fs + q, n * plane + j] = x[n, c, h + p, w + q]


@cuda.jit
def _add_row_bias(y, b):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    k = cuda.blockIdx.y
    if j < y.shape[1]:
        y[k, j] += b[k]
