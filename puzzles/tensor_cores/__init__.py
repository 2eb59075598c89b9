"""Tensor cores, half precision and int8 (notebook 28_tensor_cores), one op per file:

    half_matvec.py   tc_half_matvec: fp16 storage, fp32 arithmetic (one warp per row)
    mma_tile.py      tc_mma_tile: one warp, one mma.sync: a 16x8 tile from fragments, lane by lane
    mma_gemm.py      tc_mma_gemm: a block of warps tiles a matmul, A and B staged in shared memory
    reg_gemm.py      tc_mma_reg_gemm: register tiling on top: a warp's 2 x 2 mma tiles, fragments reused
    int8_matvec.py   tc_int8_matvec: int8 weights and activations, dp4a, int32 sums, per-row scales
    int8_gemm.py     tc_int8_gemm: int8 matrix product, dp4a, per-row (A) and per-column (B) scales
    layout.py        the fragment layout drawn lane by lane (a picture, no kernel)
    bench.py         benchmark(), GOAL: the tensor-core GEMM against cuBLAS HGEMM, FP32 SGEMM, TF32
    fast_gemm.py     the benchmark's tensor-core GEMMs (not exercises), with the pipelined candidates
    gemm_race.py     `python -m puzzles.tensor_cores.gemm_race`: those GEMMs alone against cuBLAS HGEMM

The intrinsics are the course's (helpers/tensor_cores.py): numba-cuda has no mma API. Constants for
the notebook: `from puzzles.tensor_cores import *` (never a kernel)."""

# the imports re-export what the notebook (`tc.<name>`) and the tests read
# ruff: noqa: F401
from puzzles.tensor_cores import bench, half_matvec, int8_gemm, int8_matvec, mma_gemm, mma_tile, reg_gemm
from puzzles.tensor_cores.bench import GOAL, GOALS, benchmark
from puzzles.tensor_cores.common import CHAPTER, FULL_MASK, ROWS_PER_BLOCK, WARP
from puzzles.tensor_cores.int8_gemm import QT, QW
from puzzles.tensor_cores.mma_gemm import BK, BM, BN, THREADS
from puzzles.tensor_cores.reg_gemm import REG_THREADS, RK, RM, RN, TILES, TM, TN, WM, WN

# what `from puzzles.tensor_cores import *` gives a notebook: constants only, never a kernel
__all__ = ["WARP", "FULL_MASK", "ROWS_PER_BLOCK", "BM", "BN", "BK", "THREADS"]
__all__ += ["TM", "TN", "TILES", "WM", "WN", "RM", "RN", "RK", "REG_THREADS", "QT", "QW"]
