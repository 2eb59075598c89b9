"""Transformer kernels 4: a GPT-2 block from your kernels. (Over 500 lines: one notebook, one
module: the fused kernels, the block's plan, its NumPy truth and benchmark together.)

A GPT-2 transformer block maps the residual stream x (B x T x C) to

    h = x + proj(attention(ln1(x)))          attention: causal, NH heads of size C / NH
    y = h + fcproj(gelu(fc(ln2(h))))          fc: C -> 4C, fcproj: 4C -> C

Every step is a kernel of the course: LayerNorm and GELU and the residual add (Transformer kernels 1
and 2), a tiled matrix product with a bias (PMPP chapter 5), attention (Transformer kernels 3), and two
small kernels that move the heads in and out of the (B * NH, T, hs) layout attention wants.

The fusion lesson: most of these kernels do a handful of FLOPs per byte, so their time is the bytes
they move. Fusing two of them into one kernel removes a write and a read of the array between them.
This module adds two fused kernels (a matrix product whose epilogue applies the bias and GELU; the
residual add fused with the LayerNorm that follows it) and counts the bytes of the whole block, op by
op and fused.

Tolerances. Each output element of the block is a chain of float32 dot products (length C or 4C),
LayerNorms and exponentials. Rather than bound each chain by hand, the block is compared with two
NumPy evaluations of the same formulas: one in float64 (the truth), one in float32 (what float32
arithmetic costs on these very inputs, summing in NumPy's order). A correct kernel sums in another
order, so its error is of the same size as NumPy's float32 error, not equal to it; the check allows
8 times the float32 reference's largest error plus 1e-6 (a wrong kernel is off by O(1) of the output
scale). The single kernels have their own tolerances, derived beside them.
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm import attention as la
from puzzles.llm import small_ops as llm2
from puzzles.llm import softmax_layernorm as llm1

CHAPTER = "llm-4"
TILE = 4  # matrix product tiles (TILE x TILE threads); 16 or 32 on the GPU
WARP = 32
FULL_MASK = 0xFFFFFFFF
EPS = np.float32(1e-5)  # LayerNorm epsilon, as GPT-2 and PyTorch
GELU_K = np.float32(math.sqrt(2.0 / math.pi))
GELU_C = np.float32(0.044715)
ROWS_PER_BLOCK = 2  # warp-per-row kernels: rows (warps) per block

# what `from puzzles.llm.gpt2_block import *` gives a notebook: constants only, never a kernel
__all__ = ["TILE", "WARP", "FULL_MASK", "EPS", "GELU_K", "GELU_C", "ROWS_PER_BLOCK"]


# ------------------------------------------------------------------ the matrix product and its fusion


@cuda.jit
def linear(out, inp, w, bias):
    # out[n, o] = inp[n, :] . w[:, o] + bias[o]: the tiled product of PMPP chapter 5, bias at the end
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    w_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    n = cuda.blockIdx.y * TILE + ty
    rows, cin = inp.shape
    cout = w.shape[1]
    acc = np.float32(0.0)
    for c0 in range(0, cin, TILE):
        a_t[ty, tx] = inp[n, c0 + tx] if n < rows and c0 + tx < cin else 0.0
        w_t[ty, tx] = w[c0 + ty, o] if c0 + ty < cin and o < cout else 0.0
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[ty, kk] * w_t[kk, tx]
        cuda.syncthreads()
    if n < rows and o < cout:
        out[n, o] = acc + bias[o]


@cuda.jit(device=True)
def gelu_tanh(x):
    """GPT-2's GELU: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    return np.float32(0.5) * x * (np.float32(1.0) + math.tanh(GELU_K * (x + GELU_C * x * x * x)))


@cuda.jit
def linear_gelu(out, inp, w, bias):
    # the same product; its epilogue adds the bias and applies GELU before the only write
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    w_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    n = cuda.blockIdx.y * TILE + ty
    rows, cin = inp.shape
    cout = w.shape[1]
    acc = np.float32(0.0)
    ### BEGIN SOLUTION
    for c0 in range(0, cin, TILE):
        a_t[ty, tx] = inp[n, c0 + tx] if n < rows and c0 + tx < cin else 0.0
        w_t[ty, tx] = w[c0 + ty, o] if c0 + ty < cin and o < cout else 0.0
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[ty, kk] * w_t[kk, tx]
        cuda.syncthreads()
    if n < rows and o < cout:
        out[n, o] = gelu_tanh(acc + bias[o])
    ### END SOLUTION


# ------------------------------------------------------------------ LayerNorm, GELU, residual

# LayerNorm (one warp per row), GELU and the residual add (grid-stride loops) are the kernels of
# Transformer kernels 1 and 2, imported as they are.
LAYERNORM, GELU, RESIDUAL = llm1.layernorm_forward, llm2.gelu_forward, llm2.residual_add


@cuda.jit
def residual_layernorm(res, out, mean, rstd, x, y, weight, bias, rows, cols):
    # res = x + y (the residual stream, kept for the next residual add), out = LayerNorm(res): one
    # read of x and y instead of the residual kernel's write of res and LayerNorm's read of it
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    s = np.float32(0.0)
    for j in range(lane, cols, WARP):
        h = x[r, j] + y[r, j]
        res[r, j] = h
        s += h
    for off in (16, 8, 4, 2, 1):
        s += cuda.shfl_xor_sync(FULL_MASK, s, off)
    mu = s / np.float32(cols)
    sq = np.float32(0.0)
    for j in range(lane, cols, WARP):
        dev = res[r, j] - mu  # this lane's own writes: no barrier needed
        sq += dev * dev
    for off in (16, 8, 4, 2, 1):
        sq += cuda.shfl_xor_sync(FULL_MASK, sq, off)
    rs = np.float32(1.0) / math.sqrt(sq / np.float32(cols) + EPS)
    for j in range(lane, cols, WARP):
        out[r, j] = (res[r, j] - mu) * rs * weight[j] + bias[j]
    if lane == 0:
        mean[r] = mu
        rstd[r] = rs
    ### END SOLUTION


# ------------------------------------------------------------------ heads in and out


@cuda.jit
def split_heads(q, k, v, qkv, T, NH):
    # qkv[b * T + t, part * C + h * hs + e] -> part[b * NH + h, t, e], one thread per element of qkv
    n = cuda.blockIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    C3 = qkv.shape[1]
    if col < C3:
        C = C3 // 3
        hs = C // NH
        part = col // C
        h = (col - part * C) // hs
        e = col - part * C - h * hs
        bh = (n // T) * NH + h
        t = n % T
        val = qkv[n, col]
        if part == 0:
            q[bh, t, e] = val
        elif part == 1:
            k[bh, t, e] = val
        else:
            v[bh, t, e] = val


@cuda.jit
def merge_heads(y, att, T, NH):
    # att[b * NH + h, t, e] -> y[b * T + t, h * hs + e]
    n = cuda.blockIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    C = y.shape[1]
    if col < C:
        hs = C // NH
        h = col // hs
        y[n, col] = att[(n // T) * NH + h, n % T, col - h * hs]


# ------------------------------------------------------------------ NumPy references


def gelu_ref(x):
    x = np.asarray(x)
    k = x.dtype.type(math.sqrt(2.0 / math.pi))
    return x.dtype.type(0.5) * x * (1 + np.tanh(k * (x + x.dtype.type(0.044715) * x**3)))


def layernorm_ref(x, weight, bias, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    rs = 1 / np.sqrt(var + x.dtype.type(eps))
    return (x - mu) * rs * weight + bias, mu[..., 0], rs[..., 0]


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


# ------------------------------------------------------------------ the block, op by op and fused


def _blocks(n, b):
    return (n + b - 1) // b


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
        kern = att_kernel or la.attn_flash_tiled
        blk = att_block or (la.TX, la.TY)
        plan.append(
            ("attention (flash)", kern, (_blocks(T, fb_r or la.FB_R), BH), blk, ("att", "q", "k", "v", 1))
        )
    else:
        t8 = 8 if tile <= 8 else 16
        plan.append(
            (
                "attention: scores",
                la.attn_scores,
                (_blocks(T, t8), _blocks(T, t8), BH),
                (t8, t8),
                ("s", "q", "k", 1),
            )
        )
        plan.append(("attention: softmax", la.attn_softmax, (_blocks(T, ew), BH), (ew,), ("p", "s")))
        plan.append(
            ("attention: P V", la.attn_pv, (_blocks(hs, t8), _blocks(T, t8), BH), (t8, t8), ("att", "p", "v"))
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


# ------------------------------------------------------------------ puzzles


def _linear_spec(inp, w, bias):
    return (inp.astype(np.float64) @ w.astype(np.float64) + bias).astype(np.float32)


def _linear_gelu_spec(inp, w, bias):
    return gelu_ref(inp.astype(np.float64) @ w.astype(np.float64) + bias).astype(np.float32)


def _linear_cases(rng):
    cases = []
    # rows, in, out: not multiples of the tile, one row, one input feature, one output, several tiles
    for n, cin, cout in [
        (int(rng.integers(5, 12)), int(rng.integers(5, 14)), int(rng.integers(9, 19))),
        (1, int(rng.integers(2, 7)), int(rng.integers(2, 6))),
        (int(rng.integers(2, 9)), 1, int(rng.integers(3, 8))),
        (int(rng.integers(3, 7)), int(rng.integers(TILE + 1, 3 * TILE)), 1),
        (2 * TILE, 3 * TILE, 2 * TILE + 1),
    ]:
        inp = rng.uniform(-2, 2, (n, cin)).astype(np.float32)
        w = rng.uniform(-1, 1, (cin, cout)).astype(np.float32)
        bias = rng.uniform(-1, 1, cout).astype(np.float32)
        cases.append(
            Case(
                (_blocks(cout, TILE), _blocks(n, TILE)),
                (TILE, TILE),
                dict(out=np.zeros((n, cout), np.float32), inp=inp, w=w, bias=bias),
            )
        )
    return cases


def _res_ln_spec(x, y, weight, bias, rows, cols):
    h = x.astype(np.float64) + y
    out, mu, rs = layernorm_ref(h, weight.astype(np.float64), bias.astype(np.float64))
    return {
        "res": (x + y).astype(np.float32),
        "out": out.astype(np.float32),
        "mean": mu.astype(np.float32),
        "rstd": rs.astype(np.float32),
    }


def _res_ln_cases(rng):
    cases = []
    for rows, cols, kind in [
        (int(rng.integers(3, 6)), int(rng.integers(40, 70)), "plain"),
        (1, 1, "plain"),
        (int(rng.integers(2, 5)), int(rng.integers(33, 47)), "offset"),
        (int(rng.integers(2, 4)), int(rng.integers(20, 31)), "flat"),
        (ROWS_PER_BLOCK + 1, WARP, "plain"),
    ]:
        x = rng.uniform(-2, 2, (rows, cols)).astype(np.float32)
        y = rng.uniform(-2, 2, (rows, cols)).astype(np.float32)
        if kind == "offset":  # large mean, unit spread: E[h^2] - E[h]^2 cancels catastrophically
            x += np.float32(300.0)
        elif kind == "flat":  # variance ~1e-8, below eps = 1e-5: the epsilon matters
            x = (np.float32(1.5) + rng.uniform(-1e-4, 1e-4, (rows, cols))).astype(np.float32)
            y = rng.uniform(-1e-4, 1e-4, (rows, cols)).astype(np.float32)
        weight = rng.uniform(0.5, 1.5, cols).astype(np.float32)
        bias = rng.uniform(-0.5, 0.5, cols).astype(np.float32)
        cases.append(
            Case(
                _blocks(rows, ROWS_PER_BLOCK),
                ROWS_PER_BLOCK * WARP,
                dict(
                    res=np.zeros((rows, cols), np.float32),
                    out=np.zeros((rows, cols), np.float32),
                    mean=np.zeros(rows, np.float32),
                    rstd=np.zeros(rows, np.float32),
                    x=x,
                    y=y,
                    weight=weight,
                    bias=bias,
                    rows=rows,
                    cols=cols,
                ),
            )
        )
    return cases


def _split_spec(qkv, T, NH):
    n, c3 = qkv.shape
    C = c3 // 3
    B = n // T
    parts = [
        qkv[:, i * C : (i + 1) * C].reshape(B, T, NH, C // NH).transpose(0, 2, 1, 3).reshape(B * NH, T, -1)
        for i in range(3)
    ]
    return {"q": parts[0], "k": parts[1], "v": parts[2]}


def _split_cases(rng):
    cases = []
    for B, T, NH, hs in [
        (2, int(rng.integers(3, 7)), 2, int(rng.integers(2, 6))),
        (1, 1, 1, 3),
        (1, int(rng.integers(2, 5)), 3, 1),
        (2, 2, 1, int(rng.integers(5, 9))),
    ]:
        C = NH * hs
        qkv = rng.uniform(-1, 1, (B * T, 3 * C)).astype(np.float32)
        z = np.zeros((B * NH, T, hs), np.float32)
        cases.append(
            Case((_blocks(3 * C, 8), B * T), 8, dict(q=z, k=z.copy(), v=z.copy(), qkv=qkv, T=T, NH=NH))
        )
    return cases


def _merge_spec(att, T, NH):
    bh, _, hs = att.shape
    B = bh // NH
    return att.reshape(B, NH, T, hs).transpose(0, 2, 1, 3).reshape(B * T, NH * hs)


def _merge_cases(rng):
    cases = []
    for B, T, NH, hs in [
        (2, int(rng.integers(3, 7)), 2, int(rng.integers(2, 6))),
        (1, 1, 1, 3),
        (1, int(rng.integers(2, 5)), 3, 1),
        (2, 2, 1, int(rng.integers(5, 9))),
    ]:
        att = rng.uniform(-1, 1, (B * NH, T, hs)).astype(np.float32)
        cases.append(
            Case(
                (_blocks(NH * hs, 8), B * T),
                8,
                dict(y=np.zeros((B * T, NH * hs), np.float32), att=att, T=T, NH=NH),
            )
        )
    return cases


# A product of length cin <= 12 of values below 2 and 1: |error| <= cin * eps32 * sum|a w| ~ 12 * 6e-8 * 24,
# under 2e-5; GELU's tanh adds a few ulps. LayerNorm: see Transformer kernels 1; its rows here are at
# most 70 long and the "offset" rows have mean 300: the mean's rounding, 300 * 70 * 6e-8 = 1.3e-3
# absolute in h, divided by a spread of ~1.2, is the dominant term, so the fused LayerNorm is compared
# at 2e-3 absolute (the one-pass-variance mutant is off by O(1) there).
_LIN_TOL = dict(rtol=2e-5, atol=2e-5)
_LN_TOL = dict(rtol=1e-4, atol=2e-3)

PUZZLES = [
    Puzzle(
        name="llm4_linear",
        title="A linear layer: tiled product plus bias",
        statement=f"""`out[n, o] = inp[n, :] . w[:, o] + bias[o]`, with `inp` of shape `(N, C_in)` and `w` of
shape `(C_in, C_out)` (GPT-2 stores its weights this way round). The tiled product of PMPP chapter 5 with
`TILE = {TILE}`: tiles of `inp` and `w` go through shared memory, out-of-range elements load as 0, and
the bias is added once, at the end.""",
        outputs=("out",),
        spec=_linear_spec,
        cases=_linear_cases,
        reference=linear,
        chapter=CHAPTER,
        **_LIN_TOL,
    ),
    Puzzle(
        name="llm4_linear_gelu",
        title="Fused: the product, the bias and GELU in one kernel",
        statement=f"""`out[n, o] = gelu(inp[n, :] . w[:, o] + bias[o])` with GPT-2's GELU (the tanh form,
`gelu_tanh`, is given). Write the tiled product (`TILE = {TILE}`) and apply bias and GELU in its
epilogue, before the only write of `out`: the unfused pair writes the `N x 4C` pre-activation and reads
it straight back. Budget: one global write per thread.""",
        outputs=("out",),
        spec=_linear_gelu_spec,
        cases=_linear_cases,
        reference=linear_gelu,
        budget=Budget(global_writes=1, shared_bytes=2 * TILE * TILE * 4),
        hints=(
            "Two barriers per tile: after loading it, and before the next load overwrites it.",
            "Load 0 for elements past the matrix, but keep every thread in the loop (barriers).",
            "Bias first, then GELU: gelu_tanh(acc + bias[o]).",
        ),
        chapter=CHAPTER,
        **_LIN_TOL,
    ),
    Puzzle(
        name="llm4_residual_layernorm",
        title="Fused: residual add and LayerNorm",
        statement=f"""The residual stream `res = x + y` and its LayerNorm
`out = (res - mean) * rstd * weight + bias`, with `mean` and `rstd = 1 / sqrt(var + eps)` saved per
row (`eps = 1e-5`), in one kernel: one warp per row (`{ROWS_PER_BLOCK}` rows per block), lanes striding
over the columns, sums combined with `shfl_xor_sync` so that every lane has them. Two passes for the
variance (the mean first, then the mean of squared deviations): rows with a mean of 300 are among the
cases. `res` is written too, since the block's last residual add needs it.""",
        outputs=("res", "out", "mean", "rstd"),
        spec=_res_ln_spec,
        cases=_res_ln_cases,
        reference=residual_layernorm,
        hints=(
            "Each lane may read back the res elements it wrote itself: no barrier between the passes.",
            "shfl_xor_sync with offsets 16, 8, 4, 2, 1 leaves the full sum in every lane.",
            "E[h^2] - E[h]^2 loses every digit when the mean is 300 and the spread 1: sum (h - mean)^2.",
        ),
        chapter=CHAPTER,
        **_LN_TOL,
    ),
    Puzzle(
        name="llm4_split_heads",
        title="Heads in: from qkv rows to (B * NH, T, hs)",
        statement="""The QKV product gives row `b * T + t` as `[q | k | v]`, each `C = NH * hs` wide, heads
side by side. Attention wants each head's `(T, hs)` matrix contiguous: `q[b * NH + h, t, e] = qkv[b * T + t,
h * hs + e]`, and likewise `k` (offset `C`) and `v` (offset `2C`). One thread per element of `qkv`,
row `blockIdx.y`.""",
        outputs=("q", "k", "v"),
        spec=_split_spec,
        cases=_split_cases,
        reference=split_heads,
        chapter=CHAPTER,
        rtol=0,
        atol=0,
    ),
    Puzzle(
        name="llm4_merge_heads",
        title="Heads out: from (B * NH, T, hs) to rows",
        statement="""The inverse: `y[b * T + t, h * hs + e] = att[b * NH + h, t, e]`, one thread per element
of `y`, row `blockIdx.y`.""",
        outputs=("y",),
        spec=_merge_spec,
        cases=_merge_cases,
        reference=merge_heads,
        chapter=CHAPTER,
        rtol=0,
        atol=0,
    ),
]


# ------------------------------------------------------------------ GPU benchmark

GPT2_SMALL = dict(B=8, T=1024, C=768, NH=12)
# the fused block against the same block op by op, in the same run: both rows count the block's FLOPs,
# so the "fraction" is the speed-up
GOAL = {"ceiling": "block, op by op", "fraction": 1.5, "best": "block, fused"}


def block_flops(B: int, T: int, C: int) -> int:
    """The four products (2 N C (3C + C + 4C + 4C)) and causal attention (half of 4 B T^2 C)."""
    return 24 * B * T * C * C + 2 * B * T * T * C


def benchmark(scale: float = 1.0, tile: int = 16):
    """The block at GPT-2 small's shapes (batch 8, T = 1024, C = 768, 12 heads), op by op and fused:
    each validated against NumPy (float64) on the first sequence, then every launch timed on its own.
    Prints a table of launches with bytes and time; returns the device copy (for scale) and one row per
    version of the whole block, both counting the block's FLOPs (the op-by-op row is the reference)."""
    from helpers import timing
    from helpers.timing import specialize

    B, T, C, NH = GPT2_SMALL["B"], max(16, int(GPT2_SMALL["T"] * scale)), GPT2_SMALL["C"], GPT2_SMALL["NH"]
    rng = np.random.default_rng(4)
    params = random_block_params(rng, C)
    x = rng.normal(0, 1, (B, T, C)).astype(np.float32)
    hs = C // NH
    flash, fb_r = la.tiled_for_gpu(hs, *la.TILED_GPU)
    swaps = {
        linear: specialize(linear, TILE=tile),
        linear_gelu: specialize(linear_gelu, TILE=tile, device_functions=(gelu_tanh,)),
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
            att_block=(la.TILED_GPU[0], la.TILED_GPU[1]),
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
