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

The ladder, one op per file:
    common.py    constants, the filter bank, the shapes, the NumPy truth and the derived tolerances
    forward.py   ch16_conv_forward, ch16_conv_tiled
    im2col.py    ch16_im2col, ch16_conv_gemm
    maxpool.py   ch16_maxpool
    dgrad.py     ch16_conv_dgrad
    wgrad.py     ch16_conv_wgrad_atomic, ch16_conv_wgrad_reduce
    bench.py     benchmark(), GOAL and GOAL_DIRECT
"""

# ruff: noqa: F401  (re-exports: notebooks and tests read these as `ch16.<name>`; `import *` gives __all__)
from .bench import GOAL, GOAL_DIRECT, benchmark
from .common import (
    BANK,
    BANK_BIAS,
    BANK_C,
    BANK_FS,
    BANK_K,
    CHAPTER,
    DGRAD_ATOL,
    EPS32,
    FWD_ATOL,
    IN_TILE,
    POOL,
    SHAPES,
    TILE,
    TPB,
    W_MAX,
    WGRAD_ATOL,
    X_MAX,
    conv_ref,
    dgrad_ref,
    im2col_ref,
    sum_tolerance,
    wgrad_ref,
)
from .dgrad import cases_dgrad, conv_dgrad
from .forward import cases_forward, cases_tiled, conv_forward, conv_tiled, spec_forward, spec_tiled
from .im2col import cases_gemm, cases_im2col, conv_gemm, im2col, spec_gemm, spec_im2col
from .maxpool import cases_maxpool, maxpool, spec_maxpool
from .wgrad import cases_wgrad_atomic, cases_wgrad_reduce, conv_wgrad_atomic, conv_wgrad_reduce

# what `from puzzles.pmpp.ch16_deep_learning import *` gives a notebook: constants only, never a kernel
__all__ = ["TILE", "TPB", "POOL", "EPS32", "BANK", "BANK_BIAS", "BANK_K", "BANK_C", "BANK_FS", "IN_TILE"]
