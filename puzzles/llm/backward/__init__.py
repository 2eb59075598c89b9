"""Transformer kernels 5 (notebook 24): the backward pass, the kernels a training step still lacks.

    linear.py      llm5_matmul_nt (dinp = dout w^T), llm5_matmul_tn (dw = inp^T dout),
                   llm5_matmul_tn_split (rows split across blocks, atomics), llm5_bias_grad_atomic,
                   llm5_bias_grad_two_stage (deterministic)
    attention.py   llm5_attn_backward_dp (dP = dO V^T, causal), llm5_softmax_backward (a row),
                   llm5_attn_backward_qkv (dQ, dK, dV from dS and P)
    flash.py       llm5_attn_flash_backward (P recomputed from each row's saved log-sum-exp: no T x T
                   array)
    common.py      launch constants, the per-seed sizes' helpers, the dot-product tolerance
    bench.py       benchmark() and GOAL: tokens per second of a training step

The other backward kernels are earlier chapters': LayerNorm (llm1_layernorm_backward), GELU
(llm2_gelu_backward), cross-entropy fused with the softmax (llm2_crossentropy_softmax_backward), the
embeddings (llm2_embedding_backward_atomic). The residual connection's backward is the residual add
itself (llm2_residual_add): the gradient reaching `x + f(x)` flows on to `x` unchanged and through
`f`, and the two are added.

`from puzzles.llm.backward import *` gives the constants only, never a kernel.
"""

# the imports re-export what the notebook (`bw.<name>`) and the tests read
# ruff: noqa: F401
from puzzles.llm.backward.attention import attn_backward_dp, attn_backward_qkv, softmax_backward
from puzzles.llm.backward.bench import GOAL, benchmark, step_flops
from puzzles.llm.backward.common import CHAPTER, SPLIT_ROWS, TILE, TPB
from puzzles.llm.backward.flash import HS_MAX, attn_flash_backward
from puzzles.llm.backward.linear import (
    bias_grad_atomic,
    bias_grad_two_stage,
    matmul_nt,
    matmul_tn,
    matmul_tn_split,
)

__all__ = ["TILE", "TPB", "SPLIT_ROWS", "HS_MAX"]
