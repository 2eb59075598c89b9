"""Transformer kernels 4 (notebook 23): a GPT-2 block from your kernels, one op ladder per file.

    matmul.py          llm4_linear, llm4_linear_gelu (the bias and GELU in the product's epilogue)
    residual_norm.py   llm4_residual_layernorm (the residual add fused with the LayerNorm after it)
    heads.py           llm4_split_heads, llm4_merge_heads
    pipeline.py        the block as a plan of launches (op by op or fused), its NumPy truth, its bytes
    common.py          launch constants, NumPy GELU and LayerNorm
    bench.py           benchmark() and GOAL (the fused block against the op-by-op one)


A GPT-2 transformer block maps the residual stream x (B x T x C) to

    h = x + proj(attention(ln1(x)))          attention: causal, NH heads of size C / NH
    y = h + fcproj(gelu(fc(ln2(h))))          fc: C -> 4C, fcproj: 4C -> C

Every step is a kernel of the course: LayerNorm and GELU and the residual add (Transformer kernels 1
and 2), a tiled matrix product with a bias (PMPP chapter 5), attention (Transformer kernels 3), and two
small kernels that move the heads in and out of the (B * NH, T, hs) layout attention wants.

The fusion lesson: most of these kernels do a handful of FLOPs per byte, so their time is the bytes
they move. Fusing two of them into one kernel removes a write and a read of the array between them.
This module adds two fused kernels (a matrix product whose epilogue applies the bias and GELU; the
residual add fused with the LayerNorm that follows it) and counts the bytes of the whole block, op by
op and fused.

Tolerances. Each output element of the block is a chain of float32 dot products (length C or 4C),
LayerNorms and exponentials. Rather than bound each chain by hand, the block is compared with two
NumPy evaluations of the same formulas: one in float64 (the truth), one in float32 (what float32
arithmetic costs on these very inputs, summing in NumPy's order). A correct kernel sums in another
order, so its error is of the same size as NumPy's float32 error, not equal to it; the check allows
8 times the float32 reference's largest error plus 1e-6 (a wrong kernel is off by O(1) of the output
scale). The single kernels have their own tolerances, derived beside them.

The names below are re-exported for the notebook (`gb.<name>`) and the tests;
`from puzzles.llm.gpt2_block import *` gives the constants only, never a kernel.
"""

# the imports re-export what the notebook (`gb.<name>`) and the tests read
# ruff: noqa: F401
from puzzles.llm.gpt2_block.bench import GOAL, GPT2_SMALL, benchmark, block_flops
from puzzles.llm.gpt2_block.common import (
    CHAPTER,
    EPS,
    FULL_MASK,
    GELU_C,
    GELU_K,
    ROWS_PER_BLOCK,
    TILE,
    WARP,
    gelu_ref,
    layernorm_ref,
)
from puzzles.llm.gpt2_block.heads import merge_heads, split_heads
from puzzles.llm.gpt2_block.matmul import gelu_tanh, linear, linear_gelu
from puzzles.llm.gpt2_block.pipeline import (
    block_buffers,
    block_plan,
    block_ref,
    block_shapes,
    block_tolerance,
    gpt2_block,
    kernel_name,
    plan_bytes,
    random_block_params,
    run_block,
)
from puzzles.llm.gpt2_block.residual_norm import residual_layernorm

# what `from puzzles.llm.gpt2_block import *` gives a notebook: constants only, never a kernel
__all__ = ["TILE", "WARP", "FULL_MASK", "EPS", "GELU_K", "GELU_C", "ROWS_PER_BLOCK"]
