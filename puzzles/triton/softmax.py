"""Row softmax in Triton, beside Transformer kernels 1's `softmax_warp` (one warp per row).

The mapping: one program per row (the Numba kernel's warp); the row is one block of values,
`tl.arange(0, BLOCK)` its columns with BLOCK the next power of two above `cols` (Triton's blocks are
powers of two), and the mask `cols_ < cols` loads -inf past the end, which neither wins the maximum
nor adds to the sum. `tl.max` and `tl.sum` are the shuffle butterflies of the Numba kernel: Triton
writes the reduction (shuffles, and shared memory across warps) itself. A fully masked row (every
entry -inf) gets zeros, as the course's spec says.
"""

from __future__ import annotations

from puzzles.llm.softmax_layernorm.softmax import SOFTMAX_WARP as TWIN
from puzzles.llm.softmax_layernorm.softmax import softmax_warp as numba_kernel  # noqa: F401
from puzzles.triton.lang import jit, launch, tl

NAME = "triton_softmax"


@jit
def softmax_kernel(out_ptr, x_ptr, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    ### BEGIN SOLUTION
    x = tl.load(x_ptr + row * cols + c, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)  # a fully masked row: exp(-inf - 0) = 0, no NaN
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    y = tl.where(s > 0, e / s, 0.0)  # s == 0 only for a fully masked row: zeros
    tl.store(out_ptr + row * cols + c, y, mask=mask)
    ### END SOLUTION


def block_for(cols: int) -> int:
    return 1 << max(0, (int(cols) - 1).bit_length())  # the next power of two, >= cols


def run(kernel, torch, args: dict, device: str) -> dict:
    rows, cols = int(args["rows"]), int(args["cols"])
    x = args["x"]
    out = torch.full((rows, cols), float("nan"), device=device)
    launch(kernel, (rows,), out, x, rows, cols, BLOCK=block_for(cols))
    return {"out": out.cpu().numpy()}


def cases(rng) -> list[dict]:
    return [c.args for c in TWIN.cases(rng)]


REFERENCE = softmax_kernel
OUTPUTS = ("out",)
