"""Tiled matrix product in Triton, beside PMPP chapter 5's `tiled_matmul_kernel` (shared tiles).

The mapping: one program per BM x BN tile of the output (the Numba block); the Numba kernel's two
shared-memory tiles and its two barriers become two `tl.load`s of whole tiles into values (Triton
decides where they live: shared memory, registers) and `tl.dot` replaces the loop of products over
the tile; the `if row < rows and k < inner ... else 0` of the tile loads is a 2-D mask with `other=0`.
`input_precision="ieee"`: true FP32 products, as the Numba kernel's (the default on Ampere and newer
is TF32, which keeps 10 bits of mantissa and fails the chapter's tolerance). `tl.dot` needs tiles of
at least 16 x 16.
"""

from __future__ import annotations

from puzzles.pmpp.ch05_memory_tiling.tiled import CH05_MATMUL_TILED as TWIN
from puzzles.pmpp.ch05_memory_tiling.tiled import tiled_matmul_kernel as numba_kernel  # noqa: F401
from puzzles.triton.lang import jit, launch, tl

NAME = "triton_matmul"
BM = BN = BK = 16  # the smallest tl.dot takes; the GPU benchmark uses larger tiles


@jit
def matmul_kernel(
    p_ptr, m_ptr, n_ptr, rows, inner, cols, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    r = tl.program_id(1) * BM + tl.arange(0, BM)  # the tile's rows (blockIdx.y * TILE + ty, every ty)
    c = tl.program_id(0) * BN + tl.arange(0, BN)  # its columns (blockIdx.x * TILE + tx, every tx)
    kk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    ### BEGIN SOLUTION
    for k0 in range(0, inner, BK):
        k = k0 + kk
        a_mask = (r[:, None] < rows) & (k[None, :] < inner)
        b_mask = (k[:, None] < inner) & (c[None, :] < cols)
        a = tl.load(m_ptr + r[:, None] * inner + k[None, :], mask=a_mask, other=0.0)
        b = tl.load(n_ptr + k[:, None] * cols + c[None, :], mask=b_mask, other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    ### END SOLUTION
    tl.store(p_ptr + r[:, None] * cols + c[None, :], acc, mask=(r[:, None] < rows) & (c[None, :] < cols))


def run(kernel, torch, args: dict, device: str, bm: int = BM, bn: int = BN, bk: int = BK) -> dict:
    rows, inner, cols = (int(args[k]) for k in ("rows", "inner", "cols"))
    m, n = args["m"], args["n"]
    p = torch.full((rows, cols), float("nan"), device=device)
    grid = ((cols + bn - 1) // bn, (rows + bm - 1) // bm)
    launch(kernel, grid, p, m, n, rows, inner, cols, BM=bm, BN=bn, BK=bk)
    return {"p": p.cpu().numpy()}


def cases(rng) -> list[dict]:
    return [c.args for c in TWIN.cases(rng)]


REFERENCE = matmul_kernel
OUTPUTS = ("p",)
