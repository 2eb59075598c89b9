"""The residual add fused with LayerNorm in Triton, beside the GPT-2 block's `residual_layernorm`.

`res = x + y` (kept for the next residual add) and `out = (res - mean) * rstd * weight + bias`, with
`mean` and `rstd` saved per row. The mapping: one program per row (the Numba kernel's warp); the
warp's lanes striding over the columns become one block of `BLOCK >= cols` values; its
`shfl_xor_sync` butterflies become `tl.sum`; the two passes of the Numba kernel (the mean, then the
squared deviations) stay two reductions over values already loaded: one read of x and y, one write of
res and out, which is what fusing saves (the two kernels would write res and read it back).
"""

from __future__ import annotations

from puzzles.llm.gpt2_block.common import EPS
from puzzles.llm.gpt2_block.residual_norm import RESIDUAL_LAYERNORM as TWIN
from puzzles.llm.gpt2_block.residual_norm import residual_layernorm as numba_kernel  # noqa: F401
from puzzles.triton.lang import jit, launch, tl
from puzzles.triton.softmax import block_for

NAME = "triton_residual_layernorm"


@jit
def residual_layernorm_kernel(
    res_ptr, out_ptr, mean_ptr, rstd_ptr, x_ptr, y_ptr, w_ptr, b_ptr, rows, cols, eps, BLOCK: tl.constexpr
):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    h = tl.load(x_ptr + row * cols + c, mask=mask, other=0.0) + tl.load(
        y_ptr + row * cols + c, mask=mask, other=0.0
    )
    tl.store(res_ptr + row * cols + c, h, mask=mask)
    mean = tl.sum(h, axis=0) / cols
    dev = tl.where(mask, h - mean, 0.0)  # past the row's end: 0, not -mean
    rstd = 1.0 / tl.sqrt(tl.sum(dev * dev, axis=0) / cols + eps)
    w = tl.load(w_ptr + c, mask=mask)
    b = tl.load(b_ptr + c, mask=mask)
    tl.store(out_ptr + row * cols + c, dev * rstd * w + b, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


def run(kernel, torch, args: dict, device: str) -> dict:
    rows, cols = int(args["rows"]), int(args["cols"])
    x, y, w, b = (args[k] for k in ("x", "y", "weight", "bias"))

    def nan(*shape):
        return torch.full(shape, float("nan"), device=device)

    res, out, mean, rstd = nan(rows, cols), nan(rows, cols), nan(rows), nan(rows)
    launch(kernel, (rows,), res, out, mean, rstd, x, y, w, b, rows, cols, float(EPS), BLOCK=block_for(cols))
    return {k: v.cpu().numpy() for k, v in dict(res=res, out=out, mean=mean, rstd=rstd).items()}


def cases(rng) -> list[dict]:
    return [c.args for c in TWIN.cases(rng)]


REFERENCE = residual_layernorm_kernel
OUTPUTS = ("res", "out", "mean", "rstd")
