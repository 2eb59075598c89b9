"""Vector add in Triton, beside PMPP chapter 2's `vecadd_kernel` (one element per thread).

The mapping: a Triton *program* is a CUDA *block*; `tl.program_id(0)` is `cuda.blockIdx.x`; the
block's threads are not written one by one: `tl.arange(0, BLOCK)` is the vector of every thread's
`cuda.threadIdx.x` at once, so `pid * BLOCK + tl.arange(0, BLOCK)` is every thread's `i`; the guard
`if i < n:` becomes a mask on the load and the store (masked lanes neither read nor write).
"""

from __future__ import annotations

from puzzles.pmpp.ch02_vector_add.vecadd import CH02_VECADD as TWIN
from puzzles.pmpp.ch02_vector_add.vecadd import vecadd_kernel as numba_kernel  # noqa: F401
from puzzles.triton.lang import jit, launch, tl

NAME = "triton_vector_add"
BLOCK = 64  # small, so the twin's sizes straddle several programs; 1024 on the GPU


@jit
def add_kernel(out_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    a = tl.load(a_ptr + i, mask=mask)
    b = tl.load(b_ptr + i, mask=mask)
    tl.store(out_ptr + i, a + b, mask=mask)


def run(kernel, torch, args: dict, device: str, block: int = BLOCK) -> dict:
    """Launch `kernel` on one case (its arrays as torch tensors on `device`); the outputs as NumPy."""
    a, b = args["a"], args["b"]
    n = int(args["n"])
    out = torch.full((n,), float("nan"), device=device)
    launch(kernel, ((n + block - 1) // block,), out, a, b, n, BLOCK=block)
    return {"out": out.cpu().numpy()}


def cases(rng) -> list[dict]:
    return [c.args for c in TWIN.cases(rng)]


REFERENCE = add_kernel
OUTPUTS = ("out",)
