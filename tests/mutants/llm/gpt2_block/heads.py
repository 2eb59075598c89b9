"""Known-wrong kernels for puzzles/llm/gpt2_block/heads.py (worked examples: no variants needed).

Each assumes one block of 8 threads covers a row of C (or 3C) channels; the cases have C > 8 on every
seed, so the blocks along x write the same cells (a race) and the columns past 8 are never written.
"""

from mutants.common import RACE, M
from puzzles.llm.gpt2_block import heads as gb

MUTANTS = {
    "llm4_split_heads": [
        M(
            gb.split_heads,
            "split_row_fits_block",
            RACE,
            ("col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "col = cuda.threadIdx.x"),
        ),
    ],
    "llm4_merge_heads": [
        M(
            gb.merge_heads,
            "merge_row_fits_block",
            RACE,
            ("col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "col = cuda.threadIdx.x"),
        ),
    ],
}

VARIANTS = {}

SEEDS = {p.name: (0, 1, 2) for p in gb.PUZZLES}  # references and worked kernels too
