"""Attention on the GPU: naive, both flash kernels and torch's FP32 SDPA (the ceiling), causal,
at GPT-2 small's shape, validated then timed. GOAL is judged by `python -m tools.bench`."""

import numpy as np
from numba import cuda

from helpers import timing
from puzzles.llm.attention.common import _TOL, _blocks, _qkv, attention_spec
from puzzles.llm.attention.flash import attn_flash
from puzzles.llm.attention.flash_tiled import TILED_GPU, tiled_for_gpu
from puzzles.llm.attention.memory_traffic import traffic
from puzzles.llm.attention.naive import attn_pv, attn_scores, attn_softmax

GOAL = timing.check_goal({"ceiling": "torch SDPA (FP32)", "fraction": 0.5, "best": "llm3_attn_flash_tiled"})


BENCH_SHAPE = dict(batch=8, heads=12, seq=1024, dim=64)


def attention_flops(bh: int, t: int, d: int, causal: bool) -> int:
    """Q K^T and P V: 2 * T * T * d multiply-adds each per head; causal needs about half."""
    full = 4 * bh * t * t * d
    return full // 2 if causal else full


def benchmark(scale: float = 1.0, configs=(TILED_GPU,)):
    """Validate, then time, naive (three kernels), both flash kernels and torch's FP32 SDPA, causal, in
    the same run.

    The shape is GPT-2 small's attention at a 1024-token context: batch 8, 12 heads, head dim 64
    (`scale` shrinks the sequence). TF32 is off for torch: `torch.backends.cuda.matmul.allow_tf32 =
    False` and `torch.backends.cudnn.allow_tf32 = False`, so every product is a true FP32 one as in
    our kernels. Prints the memory each version allocates beside Q, K, V and O.
    """

    b, h, d = BENCH_SHAPE["batch"], BENCH_SHAPE["heads"], BENCH_SHAPE["dim"]
    t = max(64, int(BENCH_SHAPE["seq"] * scale))
    bh = b * h
    rng = np.random.default_rng(15)
    br, bc = 64, 32
    flash = timing.specialize(attn_flash, BR=br, BC=bc, MAX_D=d)
    scores = timing.specialize(attn_scores)
    softmax = timing.specialize(attn_softmax)
    pv = timing.specialize(attn_pv)
    tpb = 16

    def naive(tt, nbh):
        def run(out, q, k, v, s, p):
            blocks = _blocks(tt, tpb)
            scores[(blocks, blocks, nbh), (tpb, tpb)](s, q, k, 1)
            softmax[(_blocks(tt, 128), nbh), 128](p, s)
            pv[(_blocks(d, tpb), blocks, nbh), (tpb, tpb)](out, p, v)

        return run

    def launcher(kern, per_block, block):
        # make(T, BH) -> run(out, q, k, v): the grid depends on the shape
        def make(tt, nbh):
            return lambda out, q, k, v: kern[(_blocks(tt, per_block), nbh), block](out, q, k, v, 1)

        return make

    fused = {"llm3_attn_flash": launcher(flash, br, br)}
    for cfg in configs:
        kern, fb_r = tiled_for_gpu(d, *cfg)
        name = "llm3_attn_flash_tiled" if cfg == configs[0] else f"llm3_attn_flash_tiled {cfg}"
        fused[name] = launcher(kern, fb_r, (cfg[0], cfg[1]))

    # validation at a small, awkward size first, then at the timed size against NumPy on a few heads
    for tv, bhv in ((77, 3), (t, bh)):
        q, k, v = _qkv(rng, bhv, tv, d)
        dq, dk, dv = (cuda.to_device(a) for a in (q, k, v))
        heads = slice(0, 3)
        want = attention_spec(q[heads], k[heads], v[heads], 1)
        for name, make in fused.items():
            out = cuda.device_array((bhv, tv, d), np.float32)
            make(tv, bhv)(out, dq, dk, dv)
            timing.validate(f"{name} (T={tv})", out.copy_to_host()[heads], want, **_TOL)
        s = cuda.device_array((bhv, tv, tv), np.float32)
        p = cuda.device_array((bhv, tv, tv), np.float32)
        out = cuda.device_array((bhv, tv, d), np.float32)
        naive(tv, bhv)(out, dq, dk, dv, s, p)
        timing.validate(f"naive attention (T={tv})", out.copy_to_host()[heads], want, **_TOL)

    flops = attention_flops(bh, t, d, True)
    q, k, v = _qkv(rng, bh, t, d)
    dq, dk, dv = (cuda.to_device(a) for a in (q, k, v))
    out = cuda.device_array((bh, t, d), np.float32)
    sd = cuda.device_array((bh, t, t), np.float32)
    pd = cuda.device_array((bh, t, t), np.float32)
    run_naive = naive(t, bh)
    rows = [
        timing.Measurement(
            "naive (3 kernels)",
            timing.time_gpu(lambda: run_naive(out, dq, dk, dv, sd, pd), reps=5, batch=2),
            flops=flops,
        )
    ]
    memory = {"naive (3 kernels)": traffic(bh, t, d, "naive")["extra"]}
    for name, make in fused.items():
        run = make(t, bh)
        seconds = timing.time_gpu(lambda run=run: run(out, dq, dk, dv))
        rows.append(timing.Measurement(name, seconds, flops=flops))
        memory[name] = 0
    torch_row, torch_extra = _torch_sdpa(q, k, v, b, h, t, d, flops)
    if torch_row is not None:
        rows.insert(0, torch_row)
        memory["torch SDPA (FP32)"] = torch_extra
    for name, extra in memory.items():
        print(f"  {name}: {extra / 2**20:.1f} MiB of memory beyond Q, K, V and O")
    return rows


def _torch_sdpa(q, k, v, b, h, t, d, flops):
    """torch's F.scaled_dot_product_attention in FP32, causal, validated against NumPy; (row, extra bytes)."""
    torch, why = timing.torch_or_reason()  # TF32 off
    if torch is None:
        print(f"  torch SDPA: {why}")
        return None, 0
    F = torch.nn.functional
    tq, tk, tv = (torch.from_numpy(a.reshape(b, h, t, d)).cuda() for a in (q, k, v))
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    o = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - base - o.numel() * 4
    want = attention_spec(q[:3], k[:3], v[:3], 1)
    timing.validate("torch SDPA (FP32)", o.reshape(b * h, t, d)[:3].cpu().numpy(), want, **_TOL)
    seconds = timing.time_gpu(lambda: F.scaled_dot_product_attention(tq, tk, tv, is_causal=True))
    return timing.Measurement("torch SDPA (FP32)", seconds, flops=flops, ceiling=True), extra
