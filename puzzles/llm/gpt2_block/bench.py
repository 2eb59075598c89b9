"""The GPT-2 block on the GPU at GPT-2 small's shapes, op by op and fused, validated against NumPy
then timed launch by launch. GOAL (judged by `python -m tools.bench`): the fused block 1.5 times
as fast as the op-by-op one."""

import numpy as np
from numba import cuda

from helpers import timing
from puzzles.llm.attention.flash_tiled import TILED_GPU, tiled_for_gpu
from puzzles.llm.gpt2_block.matmul import gelu_tanh, linear, linear_gelu
from puzzles.llm.gpt2_block.pipeline import (
    block_buffers,
    block_plan,
    block_ref,
    plan_bytes,
    random_block_params,
    run_block,
)

GPT2_SMALL = dict(B=8, T=1024, C=768, NH=12)


# the fused block against the same block op by op, in the same run: both rows count the block's FLOPs,
# so the "fraction" is the speed-up
GOAL = timing.check_goal({"ceiling": "block, op by op", "fraction": 1.5, "best": "block, fused"})


def block_flops(B: int, T: int, C: int) -> int:
    """The four products (2 N C (3C + C + 4C + 4C)) and causal attention (half of 4 B T^2 C)."""
    return 24 * B * T * C * C + 2 * B * T * T * C


def benchmark(scale: float = 1.0, tile: int = 16):
    """The block at GPT-2 small's shapes (batch 8, T = 1024, C = 768, 12 heads), op by op and fused:
    each validated against NumPy (float64) on the first sequence, then every launch timed on its own.
    Prints a table of launches with bytes and time; returns the device copy (for scale) and one row per
    version of the whole block, both counting the block's FLOPs (the op-by-op row is the reference)."""

    B, T, C, NH = GPT2_SMALL["B"], max(16, int(GPT2_SMALL["T"] * scale)), GPT2_SMALL["C"], GPT2_SMALL["NH"]
    rng = np.random.default_rng(4)
    params = random_block_params(rng, C)
    x = rng.normal(0, 1, (B, T, C)).astype(np.float32)
    hs = C // NH
    flash, fb_r = tiled_for_gpu(hs, *TILED_GPU)
    swaps = {
        linear: timing.specialize(linear, TILE=tile),
        linear_gelu: timing.specialize(linear_gelu, TILE=tile, device_functions=(gelu_tanh,)),
    }
    truth = block_ref(x[:1], params, NH, np.float64)[0]
    tol = 8 * float(np.abs(block_ref(x[:1], params, NH, np.float32)[0] - truth).max()) + 1e-6
    rows, totals = [], {}
    for fused in (False, True):
        plan = block_plan(
            B,
            T,
            C,
            NH,
            fused,
            tile=tile,
            att_kernel=flash,
            att_block=(TILED_GPU[0], TILED_GPU[1]),
            fb_r=fb_r,
        )
        plan = [(lab, swaps.get(k, k), g, b, a) for lab, k, g, b, a in plan]
        bufs = block_buffers(x, params, NH, fused, xp=cuda)
        run_block(plan, bufs)
        got = bufs["out"].copy_to_host().reshape(B, T, C)[0]
        timing.validate(f"block, {'fused' if fused else 'op by op'}", got, truth, rtol=0, atol=tol)
        total_s = total_b = 0
        for (label, kern, grid, block, args), (_, nbytes) in zip(plan, plan_bytes(plan, bufs)):
            argv = [bufs[a] if isinstance(a, str) else a for a in args]

            def launch(kern=kern, grid=grid, block=block, argv=argv):
                kern[grid, block](*argv)

            sec = timing.time_gpu(launch, reps=5, batch=3)
            rows.append((("fused" if fused else "op by op"), label, nbytes, sec))
            total_s += sec
            total_b += nbytes
        totals["fused" if fused else "op by op"] = (total_b, total_s)
    print(f"{'version':9s} {'launch':28s} {'MiB':>8s} {'time':>10s} {'GB/s':>7s}")
    for version, label, nbytes, sec in rows:
        print(f"{version:9s} {label:28s} {nbytes / 2**20:8.1f} {sec * 1e3:8.3f} ms {nbytes / sec / 1e9:7.0f}")
    for version, (nbytes, sec) in totals.items():
        print(f"{version:9s} {'whole block':28s} {nbytes / 2**20:8.1f} {sec * 1e3:8.3f} ms")
    flops = block_flops(B, T, C)
    return [timing.copy_ceiling(B * T * C * 4 * 4)] + [
        timing.Measurement(f"block, {v}", s, flops=flops, ceiling=(v == "op by op"))
        for v, (_, s) in totals.items()
    ]
