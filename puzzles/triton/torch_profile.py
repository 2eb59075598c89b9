"""GPU only: PyTorch's profiler and compiler on the GPT-2 block of Transformer kernels 4.

    NumbaBlock(params, B, T, NH)    an nn.Module whose forward runs the course's fused plan of Numba
                                    launches on torch tensors (cuda.as_cuda_array: no copy), each launch
                                    inside torch.profiler.record_function(label)
    torch_block(x, P, NH)           the same block in PyTorch (eager), the formulas of torch_model.py
    profile_blocks(...)             both under torch.profiler: (table text, kernel intervals, profiler)
    timeline(intervals, path)       the kernels of one forward of each, as bars on a time axis (PNG)
    generated_kernels(fn, *args)    torch.compile's generated Triton kernels: {name: source}
    fused_comparison(...)           residual + LayerNorm and linear + GELU: torch.compile's kernels
                                    against the course's fused Numba kernels and the Triton kernel,
                                    validated, then timed in the same run

On a CPU none of this runs (`skip_reason()` says so): `torch.compile` there writes C++/OpenMP
kernels, not Triton, and the profiler has no GPU kernels to show.
"""

from __future__ import annotations

import math
import re

import numpy as np

from helpers import timing
from puzzles.llm.gpt2_block.common import EPS
from puzzles.triton import lang


def skip_reason() -> str | None:
    """None on a GPU with Triton and PyTorch; else one line saying why this section cannot run."""
    if lang.why_not():
        return f"Profiler and torch.compile section not run ({lang.short_why()})."
    if lang.mode() != "gpu":
        return (
            "PyTorch sees no CUDA GPU: the profiler and torch.compile section needs one (on a CPU, "
            "torch.compile writes C++ kernels, not Triton, and there are no GPU kernels to profile)."
        )
    return timing.skip_reason()


def _torch():
    torch, why = timing.torch_or_reason()  # TF32 off: FP32 as the Numba kernels
    if torch is None:
        raise RuntimeError(why)
    return torch


def torch_block(x, P: dict, NH: int):
    """The GPT-2 block in PyTorch, as `puzzles/llm/training/torch_model.py` writes a layer."""
    import torch

    F = torch.nn.functional
    B, T, C = x.shape
    a = F.layer_norm(x, (C,), P["ln1_w"], P["ln1_b"], eps=float(EPS))
    q, k, v = (a @ P["w_qkv"] + P["b_qkv"]).split(C, dim=-1)
    q, k, v = (t.reshape(B, T, NH, C // NH).transpose(1, 2) for t in (q, k, v))
    s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(C // NH))
    s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=x.device).tril(), float("-inf"))
    y = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)
    h = x + y @ P["w_proj"] + P["b_proj"]
    a = F.layer_norm(h, (C,), P["ln2_w"], P["ln2_b"], eps=float(EPS))
    return h + F.gelu(a @ P["w_fc"] + P["b_fc"], approximate="tanh") @ P["w_fcproj"] + P["b_fcproj"]


class NumbaBlock:
    """The course's fused GPT-2 block (its plan of Numba launches) on torch tensors. Every buffer is
    a torch tensor; the kernels see it through `cuda.as_cuda_array` (`__cuda_array_interface__`, the
    same memory)."""

    def __init__(self, params: dict, B: int, T: int, NH: int, tile: int = 16):
        from numba import cuda

        from puzzles.llm.attention.flash_tiled import TILED_GPU, tiled_for_gpu
        from puzzles.llm.gpt2_block.matmul import gelu_tanh, linear, linear_gelu
        from puzzles.llm.gpt2_block.pipeline import block_plan, block_shapes

        torch = _torch()
        C = params["ln1_w"].shape[0]
        flash, fb_r = tiled_for_gpu(C // NH, *TILED_GPU)
        swaps = {
            linear: timing.specialize(linear, TILE=tile),
            linear_gelu: timing.specialize(linear_gelu, TILE=tile, device_functions=(gelu_tanh,)),
        }
        plan = block_plan(B, T, C, NH, True, tile=tile, att_kernel=flash, att_block=TILED_GPU[:2], fb_r=fb_r)
        self.plan = [(lab, swaps.get(k, k), g, b, a) for lab, k, g, b, a in plan]
        shapes = block_shapes(B, T, C, NH)
        for gone in ("s", "p", "fc"):
            shapes.pop(gone)
        self.t = {n: torch.empty(s, device="cuda") for n, s in shapes.items()}
        self.t.update({n: torch.as_tensor(v, device="cuda") for n, v in params.items()})
        self.views = {n: cuda.as_cuda_array(t) for n, t in self.t.items()}
        for n in ("x", "h", "proj", "m", "out"):
            self.views[n + "_flat"] = cuda.as_cuda_array(self.t[n].view(-1))
        self.B, self.T, self.C = B, T, C

    def __call__(self, x):
        import torch

        self.t["x"].copy_(x.reshape(-1, self.C))
        for label, kernel, grid, block, args in self.plan:
            with torch.profiler.record_function(f"numba: {label}"):
                kernel[grid, block](*[self.views[a] if isinstance(a, str) else a for a in args])
        return self.t["out"].view(self.B, self.T, self.C)


def numba_module(params: dict, B: int, T: int, NH: int):
    """NumbaBlock as a torch.nn.Module (built here: torch is imported only when asked for)."""
    torch = _torch()

    class NumbaGPT2Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = NumbaBlock(params, B, T, NH)

        def forward(self, x):
            return self.block(x)

    return NumbaGPT2Block()


def block_inputs(B=4, T=256, C=768, NH=12, seed=4):
    from puzzles.llm.gpt2_block.pipeline import block_ref, random_block_params

    torch = _torch()
    rng = np.random.default_rng(seed)
    params = random_block_params(rng, C)
    x = rng.normal(0, 1, (B, T, C)).astype(np.float32)
    truth = block_ref(x[:1], params, NH, np.float64)[0]
    tol = 8 * float(np.abs(block_ref(x[:1], params, NH, np.float32)[0] - truth).max()) + 1e-6
    tp = {k: torch.as_tensor(v, device="cuda") for k, v in params.items()}
    return params, tp, torch.as_tensor(x, device="cuda"), truth, tol


def profile_blocks(B=4, T=256, C=768, NH=12, reps=3):
    """Both blocks, validated against NumPy, then `reps` forwards of each under torch.profiler.
    Returns (key_averages table, {"Numba block": [(name, start_us, end_us)], "torch block": [...]},
    the profiler)."""
    torch = _torch()
    from torch.profiler import ProfilerActivity, profile, record_function

    params, tp, x, truth, tol = block_inputs(B, T, C, NH)
    nb = numba_module(params, B, T, NH)
    for name, fn in (("Numba block", lambda: nb(x)), ("torch block", lambda: torch_block(x, tp, NH))):
        timing.validate(name, fn()[0].cpu().numpy(), truth, rtol=0, atol=tol)  # also compiles (Numba)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            with record_function("Numba block"):
                nb(x)
            torch.cuda.synchronize()
            with record_function("torch block"):
                torch_block(x, tp, NH)
            torch.cuda.synchronize()
    table = prof.key_averages().table(sort_by="device_time_total", row_limit=18, max_name_column_width=48)
    return table, last_forward_kernels(prof), prof


def last_forward_kernels(prof) -> dict:
    """The GPU kernels of the last forward of each block: {block: [(kernel name, start, end)]} in us
    from that forward's first kernel. The blocks ran one after the other with a synchronisation in
    between, so a kernel belongs to the block whose range started last before it."""
    events = list(prof.events())
    marks = sorted(
        (e for e in events if e.name in ("Numba block", "torch block")), key=lambda e: e.time_range.start
    )
    kernels = [e for e in events if "CUDA" in str(getattr(e, "device_type", ""))]
    out = {}
    for block in ("Numba block", "torch block"):
        idx = [i for i, e in enumerate(marks) if e.name == block]
        if not idx:
            continue
        lo = marks[idx[-1]].time_range.start
        hi = marks[idx[-1] + 1].time_range.start if idx[-1] + 1 < len(marks) else float("inf")
        mine = sorted((k for k in kernels if lo <= k.time_range.start < hi), key=lambda k: k.time_range.start)
        if mine:
            t0 = mine[0].time_range.start
            out[block] = [(k.name, k.time_range.start - t0, k.time_range.end - t0) for k in mine]
    return out


def timeline(intervals: dict, path=None, title="One forward of the GPT-2 block: GPU kernels"):
    """Each block's kernels as bars along time (one lane per block), the longest labelled."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.9 * len(intervals)))
    colors = plt.get_cmap("tab20").colors
    xmax = max(k[2] for ks in intervals.values() for k in ks)
    chars_per_us = 11 * 0.8 * 72 / 6.5 / xmax  # a 7-point character is about 6.5 points wide
    for lane, ks in enumerate(intervals.values()):
        for i, (name, s, e) in enumerate(ks):
            ax.barh(lane, e - s, left=s, height=0.6, color=colors[i % len(colors)], edgecolor="black", lw=0.3)
            fit = int((e - s) * chars_per_us)
            if fit >= 4:  # a label only where it fits inside its bar
                ax.text((s + e) / 2, lane, _short(name)[:fit], ha="center", va="center", fontsize=7)
        ax.text(ks[-1][2], lane, f"  {ks[-1][2]:.0f} us, {len(ks)} kernels", va="center", fontsize=8)
    ax.set_yticks(range(len(intervals)), list(intervals))
    ax.set_xlabel("time from the forward's first kernel (us)")
    ax.set_title(title)
    fig.tight_layout()
    if path:
        fig.savefig(path, dpi=110)
    return fig


def _short(name: str) -> str:
    name = re.sub(r"[\[(].*", "", name)  # C++ signatures, Numba's [abi:...] tags
    name = name.replace("cudapy::", "").split("::")[-1]
    return name[:18]


def generated_kernels(fn, *args) -> tuple:
    """(result, {kernel name: Triton source}) of `torch.compile(fn)(*args)`, read from Inductor's
    generated module (`torch._inductor.utils.run_and_get_code`)."""
    torch = _torch()
    from torch._inductor.utils import run_and_get_code

    result, codes = run_and_get_code(torch.compile(fn), *args)
    kernels = {}
    for code in codes:
        for name, src in re.findall(r"async_compile\.triton\('(\w+)', '''(.*?)'''", code, flags=re.S):
            kernels[name] = src.strip()
    return result, kernels


def fused_comparison(rows_=16384, C=768, tile=16):
    """Residual + LayerNorm and linear + bias + GELU: the course's fused Numba kernels, the Triton
    kernel (residual + LayerNorm) and torch.compile's kernels, each validated, then timed in the same
    run. Returns (list of Measurement, {kernel name: generated Triton source})."""
    torch = _torch()
    from numba import cuda

    from puzzles.llm.gpt2_block.common import ROWS_PER_BLOCK, WARP, gelu_ref
    from puzzles.llm.gpt2_block.matmul import gelu_tanh, linear_gelu
    from puzzles.llm.gpt2_block.residual_norm import RESIDUAL_LAYERNORM, residual_layernorm
    from puzzles.triton.layernorm import residual_layernorm_kernel

    F = torch.nn.functional
    x, y = torch.randn(rows_, C, device="cuda"), torch.randn(rows_, C, device="cuda")
    w, b = torch.rand(C, device="cuda") + 0.5, torch.rand(C, device="cuda") - 0.5
    res, out = torch.empty_like(x), torch.empty_like(x)
    mean, rstd = torch.empty(rows_, device="cuda"), torch.empty(rows_, device="cuda")
    sub = slice(0, 64)
    want = RESIDUAL_LAYERNORM.spec(*(t.cpu().numpy() for t in (x[sub], y[sub], w, b)), 64, C)["out"]
    tol = dict(rtol=RESIDUAL_LAYERNORM.rtol, atol=RESIDUAL_LAYERNORM.atol)

    def res_ln(x, y, w, b):
        h = x + y
        return h, F.layer_norm(h, (C,), w, b, eps=float(EPS))

    (_, got), kernels = generated_kernels(res_ln, x, y, w, b)
    timing.validate("torch.compile residual + LayerNorm", got[sub].cpu().numpy(), want, **tol)
    compiled = torch.compile(res_ln)
    nv = [cuda.as_cuda_array(t) for t in (res, out, mean, rstd, x, y, w, b)]
    grid = (rows_ + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
    blk = 1 << (C - 1).bit_length()
    runs = {
        "residual + LayerNorm: course's Numba kernel": lambda: residual_layernorm[
            grid, ROWS_PER_BLOCK * WARP
        ](*nv, rows_, C),
        "residual + LayerNorm: Triton kernel (this notebook)": lambda: residual_layernorm_kernel[(rows_,)](
            res, out, mean, rstd, x, y, w, b, rows_, C, float(EPS), BLOCK=blk
        ),
    }
    for name, fn in runs.items():
        out.fill_(float("nan"))
        fn()
        timing.validate(name, out[sub].cpu().numpy(), want, **tol)
    runs["residual + LayerNorm: torch.compile (Inductor's Triton)"] = lambda: compiled(x, y, w, b)
    runs["residual + LayerNorm: torch eager (2 kernels)"] = lambda: res_ln(x, y, w, b)
    rows = [timing.Measurement(n, timing.time_gpu(fn), bytes=4 * 4 * rows_ * C) for n, fn in runs.items()]

    # linear + bias + GELU: N x C times C x 4C
    n4 = 4 * C
    a = torch.randn(rows_ // 4, C, device="cuda")
    W, bias = torch.randn(C, n4, device="cuda") * 0.03, torch.randn(n4, device="cuda") * 0.1
    f = torch.empty(rows_ // 4, n4, device="cuda")

    def lin_gelu(a, W, bias):
        return F.gelu(a @ W + bias, approximate="tanh")

    got, more = generated_kernels(lin_gelu, a, W, bias)
    kernels.update(more)
    want = gelu_ref(a[:64].double().cpu().numpy() @ W.double().cpu().numpy() + bias.double().cpu().numpy())
    bound = 2 * C * 2.0**-24 * float((a[:64].abs() @ W.abs()).max()) + 1e-6  # |err| <= C u sum |a||w|
    timing.validate("torch.compile linear + GELU", got[:64].cpu().numpy(), want, rtol=1e-4, atol=bound)
    lg = timing.specialize(linear_gelu, TILE=tile, device_functions=(gelu_tanh,))
    nf, na, nW, nb_ = (cuda.as_cuda_array(t) for t in (f, a, W, bias))
    g2 = ((n4 + tile - 1) // tile, (rows_ // 4 + tile - 1) // tile)
    lg[g2, (tile, tile)](nf, na, nW, nb_)
    timing.validate("course's linear_gelu", f[:64].cpu().numpy(), want, rtol=1e-4, atol=bound)
    compiled2 = torch.compile(lin_gelu)
    flops = 2 * (rows_ // 4) * C * n4
    rows += [
        timing.Measurement("linear + GELU: course's Numba kernel (GELU in the epilogue)",
                           timing.time_gpu(lambda: lg[g2, (tile, tile)](nf, na, nW, nb_)), flops=flops),
        timing.Measurement("linear + GELU: torch.compile (cuBLAS + Inductor's Triton)",
                           timing.time_gpu(lambda: compiled2(a, W, bias)), flops=flops),
        timing.Measurement("linear + GELU: torch eager",
                           timing.time_gpu(lambda: lin_gelu(a, W, bias)), flops=flops),
    ]  # fmt: skip
    return rows, kernels


def block_times(B=4, T=256, C=768, NH=12) -> list:
    """One forward of the whole block: the course's Numba kernels, torch eager, torch.compile."""
    torch = _torch()
    params, tp, x, truth, tol = block_inputs(B, T, C, NH)
    nb = numba_module(params, B, T, NH)
    compiled = torch.compile(torch_block)
    runs = {
        "GPT-2 block: course's Numba kernels (fused plan)": lambda: nb(x),
        "GPT-2 block: torch eager": lambda: torch_block(x, tp, NH),
        "GPT-2 block: torch.compile": lambda: compiled(x, tp, NH),
    }
    rows = []
    for name, fn in runs.items():
        timing.validate(name, fn()[0].cpu().numpy(), truth, rtol=0, atol=tol)
        rows.append(timing.Measurement(name, timing.time_gpu(fn, reps=7, batch=3)))
    return rows
