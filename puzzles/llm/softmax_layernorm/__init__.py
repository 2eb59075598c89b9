"""Transformer kernels 1 (notebook 20): softmax, LayerNorm and RMSNorm, one op ladder per file.

    softmax.py             llm1_softmax_three_pass, _block, _warp, _online, _warp_cached
    layernorm.py           llm1_layernorm_forward (two passes), llm1_layernorm_welford (one pass)
    layernorm_grad.py      llm1_layernorm_backward (atomics), llm1_layernorm_param_partials (deterministic)
    rmsnorm.py             llm1_rmsnorm
    common.py              launch constants, unit roundoff, the norms' inputs, reference and tolerances
    bench.py               benchmark(), GOAL, GOALS and goals(rows)

Kernel names are stable (the GPT-2 capstone imports them); every row-wise kernel takes a C-contiguous
float32 matrix `x[rows, cols]`:

    softmax_three_pass(out, x, rows, cols)             one thread per row; grid*block >= rows
    softmax_block(out, x, rows, cols)                  one block of TPB threads per row; grid = rows
    softmax_warp(out, x, rows, cols)                   one warp per row, blockDim.x a multiple of 32
    softmax_online(out, x, rows, cols)                 one warp per row, one pass for max and sum
    softmax_warp_cached(out, x, rows, cols)            one warp per row, row in registers, cols <= 32*PER_LANE
    layernorm_forward(out, mean, rstd, x, weight, bias, rows, cols)      one warp per row, two passes
    layernorm_welford(out, mean, rstd, x, weight, bias, rows, cols)      one warp per row, Welford
    layernorm_forward_cached(out, mean, rstd, x, weight, bias, rows, cols)  row in registers
    layernorm_backward(dx, dweight, dbias, dout, x, mean, rstd, weight, rows, cols)
                                                       one warp per row; dweight/dbias by atomics (zeroed)
    layernorm_param_partials(dw_part, db_part, dout, x, mean, rstd, rows, cols, rows_per_chunk)
                                                       deterministic stage 1: block (cols/bd, chunks)
    column_sum(out, part, chunks, cols)                deterministic stage 2: one thread per column
    rmsnorm_forward(out, rstd, x, weight, rows, cols)  one warp per row

The names below are re-exported for the notebook (`llm1.<name>`) and
the tests; `from puzzles.llm.softmax_layernorm import *` gives the constants only, never a kernel.
"""

# the imports re-export what the notebook (`llm1.<name>`) and the tests read
# ruff: noqa: F401
from puzzles.llm.softmax_layernorm.bench import GOAL, GOALS, benchmark, goals
from puzzles.llm.softmax_layernorm.common import (
    CHAPTER,
    EPS,
    FULL_MASK,
    NEG_INF,
    NORM_ATOL,
    NORM_RTOL,
    PER_LANE,
    ROWS_PER_BLOCK,
    TPB,
    WARP,
    saved_stats,
)
from puzzles.llm.softmax_layernorm.layernorm import layernorm_forward, layernorm_welford
from puzzles.llm.softmax_layernorm.layernorm_grad import (
    column_sum,
    layernorm_backward,
    layernorm_backward_cases,
    layernorm_backward_ref,
    layernorm_param_partials,
)
from puzzles.llm.softmax_layernorm.softmax import SOFTMAX_ATOL, SOFTMAX_MAX_COLS, SOFTMAX_RTOL, softmax_spec

# what `from puzzles.llm.softmax_layernorm import *` gives a notebook: constants only, never a kernel
__all__ = ["WARP", "FULL_MASK", "TPB", "ROWS_PER_BLOCK", "PER_LANE", "NEG_INF", "EPS"]
