"""Transformer kernels 3 (notebook 22): attention, from naive to FlashAttention, one file per rung.

    naive.py           llm3_attn_scores, llm3_attn_softmax, llm3_attn_pv (+ attention_naive, the pipeline)
    flash.py           llm3_attn_row (fused per query), llm3_attn_flash (K/V tiles in shared memory)
    flash_tiled.py     llm3_attn_flash_tiled (register tiles: what the GPU runs)
    decode.py          llm3_attn_decode (one new token over a KV cache: generation's attention)
    memory_traffic.py  each version's global-memory bytes, as formulas and as counted in the trace
    common.py          constants, the float64 truth, the inputs and the tolerance (derived there)
    bench.py           benchmark() and GOAL (torch's FP32 SDPA as the ceiling)

The ladder:

1. naive, as three kernels through global memory: the scores S = Q K^T / sqrt(d) (T x T per head),
   a row softmax P = softmax(S), then P V. S and P are written and read back: T * T floats each per
   head, which at T = 1024 is 4 MiB per head, 400 MiB for 96 heads.
2. fused per query row: one thread per query walks the keys with the online softmax (a running
   maximum m, a running sum lsum, and an accumulator rescaled by exp(m_old - m_new) whenever the maximum
   grows). Nothing T x T is ever stored, but every thread reads all of K and V from global memory.
3. FlashAttention-style: a block of BR query rows loads K and V in tiles of BC rows into shared
   memory, once for the whole block, and each thread applies the online softmax tile by tile.
   Global reads of K and V drop by a factor BR; the score matrix is never materialised.
4. register tiles: a TY x TX grid of threads per block, each owning RM queries, RN keys of a tile and
   RD output columns, rows combined with shuffles (the kernel the GPU benchmark runs).
5. decode (the serving side): one new query per (sequence, head) over a KV cache; a block's threads
   split the cached rows and merge their online-softmax states in shared memory.

The names below are re-exported for the notebooks (`la.<name>`) and the tests;
`from puzzles.llm.attention import *` gives the constants only, never a kernel.
"""

# the imports re-export what the notebooks (`la.<name>`) and the tests read
# ruff: noqa: F401
from puzzles.llm.attention.bench import GOAL, benchmark
from puzzles.llm.attention.common import (
    _TOL,
    BC,
    BR,
    CHAPTER,
    MAX_D,
    NEG_INF,
    S_MAX,
    TPB,
    _qkv,
    attention_spec,
    scores_spec,
)
from puzzles.llm.attention.decode import DB, attn_decode, decode_spec
from puzzles.llm.attention.flash import attn_flash, attn_row, flash_cases
from puzzles.llm.attention.flash_tiled import (
    FB_C,
    FB_C1,
    FB_R,
    FB_R1,
    KT_SIZE,
    LOG_TX,
    NEG_INF32,
    NONNEG,
    PS_SIZE,
    QT_SIZE,
    RD,
    RM,
    RMD,
    RMN,
    RN,
    TILED_GPU,
    TX,
    TY,
    VS_SIZE,
    ZERO32,
    attn_flash_tiled,
    tiled_constants,
    tiled_for_gpu,
)
from puzzles.llm.attention.memory_traffic import counted_accesses, traffic
from puzzles.llm.attention.naive import attention_naive, attn_pv, attn_scores, attn_softmax

# what `from puzzles.llm.attention import *` gives a notebook: constants only, never a kernel
__all__ = [
    "TPB",
    "BR",
    "BC",
    "MAX_D",
    "NEG_INF",
    "TX",
    "TY",
    "RM",
    "RN",
    "FB_R",
    "FB_C",
    "RD",
    "RMN",
    "RMD",
    "LOG_TX",
    "FB_R1",
    "FB_C1",
    "QT_SIZE",
    "KT_SIZE",
    "VS_SIZE",
    "PS_SIZE",
    "NEG_INF32",
    "ZERO32",
    "NONNEG",
    "DB",
]
