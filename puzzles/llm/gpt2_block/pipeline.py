"""The GPT-2 block as a plan of launches, op by op or fused, and its NumPy truth:

    block_ref            the block in NumPy (float64: the truth; float32: float32's own error)
    block_plan           the launches, in order, with their grids and buffers (op by op or fused)
    block_buffers        the device (or host) arrays a plan reads and writes
    run_block            runs a plan; gpt2_block(x, params, nh, fused) runs the whole block
    plan_bytes           the bytes each launch must move (the fusion lesson counts them)
    block_tolerance      8 times float32 NumPy's largest error, plus 1e-6 (the package docstring)

LayerNorm (one warp per row), GELU and the residual add (grid-stride loops) are the kernels of
Transformer kernels 1 and 2, imported as they are; attention is Transformer kernels 3's.
"""

import math

import numpy as np

from puzzles.llm.attention.flash_tiled import FB_R, TX, TY, attn_flash_tiled
from puzzles.llm.attention.naive import attn_pv, attn_scores, attn_softmax
from puzzles.llm.gpt2_block.common import ROWS_PER_BLOCK, TILE, WARP, _blocks, gelu_ref, layernorm_ref
from puzzles.llm.gpt2_block.heads import merge_heads, split_heads
from puzzles.llm.gpt2_block.matmul import linear, linear_gelu
from puzzles.llm.gpt2_block.residual_norm import residual_layernorm
from puzzles.llm.small_ops.gelu import gelu_forward
from puzzles.llm.small_ops.residual import residual_add
from puzzles.llm.softmax_layernorm.layernorm import layernorm_forward

# LayerNorm (one warp per row), GELU and the residual add (grid-stride loops) are the kernels of
# Transformer kernels 1 and 2, imported as they are.
LAYERNORM, GELU, RESIDUAL = layernorm_forward, gelu_forward, residual_add


def block_ref(x, p, nh, dtype=np.float64):
    """The GPT-2 block in NumPy, every operation in `dtype`: float64 is the truth, float32 the
    measure of float32's own rounding on these inputs."""
    x = x.astype(dtype)
    p = {k: v.astype(dtype) for k, v in p.items()}
    B, T, C = x.shape
    hs = C // nh
    a, _, _ = layernorm_ref(x, p["ln1_w"], p["ln1_b"])
    qkv = a @ p["w_qkv"] + p["b_qkv"]
    q, k, v = (qkv[..., i * C : (i + 1) * C].reshape(B, T, nh, hs).transpose(0, 2, 1, 3) for i in range(3))
    s = q @ k.transpose(0, 1, 3, 2) / dtype(math.sqrt(hs))
    s = np.where(np.tri(T, dtype=bool), s, -np.inf)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    att = (w @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    h = x + att @ p["w_proj"] + p["b_proj"]
    a2, _, _ = layernorm_ref(h, p["ln2_w"], p["ln2_b"])
    f = gelu_ref(a2 @ p["w_fc"] + p["b_fc"])
    return h + f @ p["w_fcproj"] + p["b_fcproj"]


def random_block_params(rng, C: int) -> dict:
    """GPT-2's initialisation: weights N(0, 0.02), the output projections scaled down, LayerNorm near 1
    (perturbed so that a kernel ignoring weight or bias is caught), biases small and nonzero."""

    def n(*shape, std=0.02):
        return rng.normal(0, std, shape).astype(np.float32)

    return {
        "ln1_w": (1 + n(C, std=0.1)),
        "ln1_b": n(C, std=0.1),
        "w_qkv": n(C, 3 * C),
        "b_qkv": n(3 * C),
        "w_proj": n(C, C, std=0.02 / math.sqrt(2)),
        "b_proj": n(C),
        "ln2_w": (1 + n(C, std=0.1)),
        "ln2_b": n(C, std=0.1),
        "w_fc": n(C, 4 * C),
        "b_fc": n(4 * C),
        "w_fcproj": n(4 * C, C, std=0.02 / math.sqrt(2)),
        "b_fcproj": n(C),
    }


def kernel_name(kernel) -> str:
    return getattr(kernel, "__name__", None) or kernel.py_func.__name__


def block_plan(
    B: int,
    T: int,
    C: int,
    NH: int,
    fused: bool,
    tile: int = TILE,
    att_kernel=None,
    att_block=None,
    fb_r: int | None = None,
    kernels: dict | None = None,
) -> list:
    """The block's launches in order: (label, kernel, grid, block, arguments), arrays by name.

    Arrays are named; `block_buffers` allocates them. `fused` swaps in the flash attention kernel, the
    matrix product with the GELU epilogue, and the residual add fused with the second LayerNorm.
    `kernels` replaces kernels by name (e.g. {"linear_gelu": yours}).
    """
    N, hs, BH = B * T, C // NH, B * NH
    rpb = ROWS_PER_BLOCK
    ln_grid, ln_block = _blocks(N, rpb), rpb * WARP
    ew = 256 if tile > 8 else 64

    def lin(cout):
        return (_blocks(cout, tile), _blocks(N, tile)), (tile, tile)

    plan = [
        ("ln1", LAYERNORM, (ln_grid,), (ln_block,), ("a1", "mean1", "rstd1", "x", "ln1_w", "ln1_b", N, C))
    ]
    plan.append(("qkv = a1 W + b", linear, *lin(3 * C), ("qkv", "a1", "w_qkv", "b_qkv")))
    plan.append(("split heads", split_heads, (_blocks(3 * C, ew), N), (ew,), ("q", "k", "v", "qkv", T, NH)))
    if fused:
        kern = att_kernel or attn_flash_tiled
        blk = att_block or (TX, TY)
        plan.append(
            ("attention (flash)", kern, (_blocks(T, fb_r or FB_R), BH), blk, ("att", "q", "k", "v", 1))
        )
    else:
        t8 = 8 if tile <= 8 else 16
        plan.append(
            (
                "attention: scores",
                attn_scores,
                (_blocks(T, t8), _blocks(T, t8), BH),
                (t8, t8),
                ("s", "q", "k", 1),
            )
        )
        plan.append(("attention: softmax", attn_softmax, (_blocks(T, ew), BH), (ew,), ("p", "s")))
        plan.append(
            ("attention: P V", attn_pv, (_blocks(hs, t8), _blocks(T, t8), BH), (t8, t8), ("att", "p", "v"))
        )
    plan.append(("merge heads", merge_heads, (_blocks(C, ew), N), (ew,), ("y", "att", T, NH)))
    plan.append(("proj = y W + b", linear, *lin(C), ("proj", "y", "w_proj", "b_proj")))
    if fused:
        plan.append(
            (
                "h = x + proj; a2 = ln2(h)",
                residual_layernorm,
                (ln_grid,),
                (ln_block,),
                ("h", "a2", "mean2", "rstd2", "x", "proj", "ln2_w", "ln2_b", N, C),
            )
        )
        plan.append(("f = gelu(a2 W + b)", linear_gelu, *lin(4 * C), ("f", "a2", "w_fc", "b_fc")))
    else:
        plan.append(
            ("h = x + proj", RESIDUAL, (_blocks(N * C, ew),), (ew,), ("h_flat", "x_flat", "proj_flat", N * C))
        )
        plan.append(
            ("ln2", LAYERNORM, (ln_grid,), (ln_block,), ("a2", "mean2", "rstd2", "h", "ln2_w", "ln2_b", N, C))
        )
        plan.append(("fc = a2 W + b", linear, *lin(4 * C), ("fc", "a2", "w_fc", "b_fc")))
        plan.append(
            ("f = gelu(fc)", GELU, (_blocks(N * 4 * C, ew),), (ew,), ("f_flat", "fc_flat", N * 4 * C))
        )
    plan.append(("m = f W + b", linear, *lin(C), ("m", "f", "w_fcproj", "b_fcproj")))
    plan.append(
        ("out = h + m", RESIDUAL, (_blocks(N * C, ew),), (ew,), ("out_flat", "h_flat", "m_flat", N * C))
    )
    kernels = kernels or {}
    return [(lab, kernels.get(kernel_name(k), k), g, b, a) for lab, k, g, b, a in plan]


def block_shapes(B: int, T: int, C: int, NH: int) -> dict:
    N, hs, BH = B * T, C // NH, B * NH
    return {
        "x": (N, C),
        "a1": (N, C),
        "mean1": (N,),
        "rstd1": (N,),
        "qkv": (N, 3 * C),
        "q": (BH, T, hs),
        "k": (BH, T, hs),
        "v": (BH, T, hs),
        "s": (BH, T, T),
        "p": (BH, T, T),
        "att": (BH, T, hs),
        "y": (N, C),
        "proj": (N, C),
        "h": (N, C),
        "a2": (N, C),
        "mean2": (N,),
        "rstd2": (N,),
        "fc": (N, 4 * C),
        "f": (N, 4 * C),
        "m": (N, C),
        "out": (N, C),
    }


def block_buffers(x: np.ndarray, params: dict, NH: int, fused: bool, xp=None) -> dict:
    """Every array the plan names, on the host (NumPy, for the simulator) or, with xp=cuda, the GPU.
    Flat views (`h_flat`) are the same memory seen as one dimension, for the elementwise kernels."""
    B, T, C = x.shape
    shapes = block_shapes(B, T, C, NH)
    if fused:
        shapes.pop("s"), shapes.pop("p"), shapes.pop("fc")
    bufs = {}
    for name, shape in shapes.items():
        if name == "x":
            host = x.reshape(B * T, C).astype(np.float32)
            bufs[name] = host.copy() if xp is None else xp.to_device(host)
        else:
            bufs[name] = (
                np.full(shape, np.nan, np.float32) if xp is None else xp.device_array(shape, np.float32)
            )
    for name, val in params.items():
        bufs[name] = val.copy() if xp is None else xp.to_device(val)
    for name in ("x", "h", "proj", "m", "out", "fc", "f"):
        if name in bufs:
            bufs[name + "_flat"] = bufs[name].reshape(-1)
    return bufs


def run_block(plan: list, bufs: dict) -> None:
    for (
        _,
        kernel,
        grid,
        block,
        args,
    ) in plan:
        kernel[grid, block](*[bufs[a] if isinstance(a, str) else a for a in args])


def plan_bytes(plan: list, bufs: dict) -> list:
    """(label, bytes) per launch: every array argument read or written once, the least any kernel moves.
    (The naive attention kernels re-read far more, as Transformer kernels 3 counted; this is the floor.)"""
    out = []
    for label, _, _, _, args in plan:
        arrays = [bufs[a] for a in args if isinstance(a, str)]
        out.append((label, int(sum(a.size * 4 for a in arrays))))
    return out


def gpt2_block(x: np.ndarray, params: dict, NH: int, fused: bool = True, kernels: dict | None = None):
    """The block on the current engine (simulator or GPU) with NumPy arrays in and out; `kernels`
    replaces the module's kernels by name."""
    B, T, C = x.shape
    plan = block_plan(B, T, C, NH, fused, kernels=kernels)
    bufs = block_buffers(x, params, NH, fused)
    run_block(plan, bufs)
    return bufs["out"].reshape(B, T, C)


def block_tolerance(x: np.ndarray, params: dict, NH: int) -> float:
    """8x the float32 NumPy evaluation's largest error against float64, plus 1e-6 (see the docstring)."""
    truth = block_ref(x, params, NH, np.float64)
    f32 = block_ref(x, params, NH, np.float32)
    return 8 * float(np.abs(f32 - truth).max()) + 1e-6
