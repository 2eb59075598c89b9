"""Transformer kernels 2 (notebook 21): cross-entropy, GELU, residual add, AdamW, embeddings, one op
ladder per file.

    crossentropy.py   llm2_crossentropy_forward, llm2_crossentropy_softmax_backward (fused)
    gelu.py           llm2_gelu_forward, llm2_gelu_backward
    residual.py       llm2_residual_add
    adamw.py          llm2_adamw
    sf_adamw.py       llm2_sf_adamw (schedule-free AdamW: no learning-rate schedule; evaluate at x)
    embedding.py      llm2_embedding_forward, llm2_embedding_backward_atomic, _buckets (deterministic)
    common.py         launch constants, unit roundoff, the element-wise sizes
    bench.py          benchmark(), GOAL, GOALS and goals(rows)

Kernel names are stable (the GPT-2 capstone imports them). Launch shapes:

    crossentropy_forward(losses, logits, targets, rows, cols)           one warp per row
    crossentropy_softmax_backward(dlogits, losses, logits, targets, dloss, rows, cols)
                                     one warp per row: loss and d(loss)/d(logits) in one kernel
    gelu_forward(out, x, n)                          grid-stride, any grid
    gelu_backward(dx, x, dout, n)                    grid-stride, any grid
    gelu_forward_unrolled(out, x, n)                 the same, UNROLL elements per thread per round
    residual_add(out, a, b, n)                       grid-stride, any grid
    adamw(p_out, m_out, v_out, params, grads, m, v, lr, beta1, beta2, eps, weight_decay, step, n_decay, n)
                                     grid-stride over every parameter of the model in one flat buffer;
                                     elements [0, n_decay) get weight decay; the outputs may alias the
                                     inputs on a GPU (each element is read and written by one thread)
    adamw_unrolled(...)                              the same arguments, UNROLL elements per thread per round
    embedding_forward(out, tokens, wte, wpe, n, T, C)     grid-stride over n * C; position = i % T
    embedding_backward_atomic(dwte, dwpe, dout, tokens, n, T, C)   grid-stride; dwte, dwpe zeroed
    embedding_backward_buckets(dwte, dwpe, dout, order, bucket_start, bucket_token, n_buckets, B, T, C)
                                     block (bx, y): y < n_buckets sums one token's bucket, else one position

The names below are re-exported for the notebook (`llm2.<name>`) and the tests (the kernel `adamw`
is `small_ops.adamw.adamw`: the package's `adamw` is its op file); `from puzzles.llm.small_ops import *`
gives the constants only, never a kernel.
"""

# the imports re-export what the notebook (`llm2.<name>`) and the tests read
# ruff: noqa: F401
from puzzles.llm.small_ops.bench import GOAL, GOALS, benchmark, goals
from puzzles.llm.small_ops.common import (
    CHAPTER,
    FULL_MASK,
    GELU_C,
    GELU_K,
    NEG_INF,
    ROWS_PER_BLOCK,
    TPB,
    UNROLL,
    WARP,
)
from puzzles.llm.small_ops.crossentropy import crossentropy_forward, crossentropy_softmax_backward
from puzzles.llm.small_ops.embedding import (
    bucket_tokens,
    embedding_backward_atomic,
    embedding_backward_buckets,
    embedding_forward,
)
from puzzles.llm.small_ops.gelu import gelu_backward, gelu_forward
from puzzles.llm.small_ops.residual import residual_add

# what `from puzzles.llm.small_ops import *` gives a notebook: constants only, never a kernel
__all__ = ["WARP", "FULL_MASK", "ROWS_PER_BLOCK", "TPB", "UNROLL", "NEG_INF", "GELU_K", "GELU_C"]
