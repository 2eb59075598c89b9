"""GPU only: each op of the Triton notebook timed three ways in one run, the course's Numba kernel,
the Triton kernel and the torch call a user would make, each validated against the NumPy spec first.

    agreement()        the Triton vector add timed by helpers.timing (CUDA events around batches)
                       and by triton.testing.do_bench: the two timers must agree before either is
                       trusted (within AGREE, a ratio)
    benchmark(scale)   {op: {"Numba": Measurement, "Triton": ..., "torch": ..., "CUDA C++": ...}}
    comparison(res)    one text table: op, unit, then the rate of each column

Every array is a torch tensor; the Numba kernels read them through `__cuda_array_interface__`
(`cuda.as_cuda_array`, no copy), so all three run on the same memory. TF32 is off (torch) and
`tl.dot(..., input_precision="ieee")` (Triton): every product is FP32. The CUDA C++ column is filled
where `helpers.cpp` offers `bench_row(op, arrays)` (helper "cpp"'s module, merged separately); else
it says why not.
"""

from __future__ import annotations

import math

from helpers import timing
from puzzles.triton import flash_attention, lang, layernorm, matmul, softmax, vector_add

AGREE = 1.15  # helpers.timing and do_bench within 15% of each other on a quiet GPU


def skip_reason() -> str | None:
    """None where the table can be measured (a GPU, Triton compiling for it, PyTorch); else one line."""
    if lang.why_not():
        return f"Timing skipped ({lang.short_why()})."
    if lang.mode() != "gpu":
        return "Timing skipped: Triton runs in its interpreter here (no GPU)."
    return timing.skip_reason()


def _need():
    why = timing.skip_reason() or lang.why_not()
    if why or lang.mode() != "gpu":
        raise RuntimeError(why or "Triton runs in its interpreter here: no GPU timing.")
    torch, why = timing.torch_or_reason()  # TF32 off
    if torch is None:
        raise RuntimeError(why)
    triton, _, _ = lang.load()
    return torch, triton


def _check(name, got, want, rtol, atol):
    timing.validate(
        name, got.detach().cpu().numpy() if hasattr(got, "cpu") else got, want, rtol=rtol, atol=atol
    )


def agreement(n: int = 1 << 26) -> tuple[float, float]:
    """(seconds by helpers.timing, seconds by triton.testing.do_bench) of one Triton vector add."""
    torch, triton = _need()
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(a)
    blk = 1024

    def go():
        vector_add.add_kernel[(triton.cdiv(n, blk),)](out, a, b, n, BLOCK=blk)

    go()
    _check("triton vector add", out, (a + b).cpu().numpy(), 0, 0)
    ours = timing.time_gpu(go)
    theirs = triton.testing.do_bench(go, warmup=25, rep=200) / 1e3  # ms -> s
    return ours, theirs


def _cpp(op: str, arrays: dict):
    """The CUDA C++ row where helper cpp's module offers one; else None (the reason printed once)."""
    import importlib

    try:  # helper cpp's module, merged from another branch; its layer is set there, not guessed here
        cpp = importlib.import_module("helpers.cpp")
    except ImportError:
        _say_once("CUDA C++ column: helpers.cpp is not in this checkout.")
        return None
    row = getattr(cpp, "bench_row", None)
    if row is None:
        _say_once("CUDA C++ column: helpers.cpp has no bench_row(op, arrays) yet.")
        return None
    return row(op, arrays)


_SAID: set = set()


def _say_once(line: str) -> None:
    if line not in _SAID:
        _SAID.add(line)
        print(line)


def _row(name, fn, **units) -> timing.Measurement:
    return timing.Measurement(name, timing.time_gpu(fn), **units)


def bench_vector_add(torch, cuda, scale):
    n = int((1 << 26) * scale)
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(a)
    want = (a.double() + b.double()).float().cpu().numpy()
    na, nb, nout = (cuda.as_cuda_array(t) for t in (a, b, out))
    units = dict(bytes=3 * 4 * n)
    tpb, blk = 256, 1024
    runs = {
        "Numba": lambda: vector_add.numba_kernel[(n + tpb - 1) // tpb, tpb](nout, na, nb, n),
        "Triton": lambda: vector_add.add_kernel[((n + blk - 1) // blk,)](out, a, b, n, BLOCK=blk),
        "torch": lambda: torch.add(a, b, out=out),
    }
    rows = {}
    for name, fn in runs.items():
        out.fill_(float("nan"))
        fn()
        _check(f"vector add, {name}", out, want, 0, 0)
        rows[name] = _row(f"vector add: {name}", fn, **units)
    return rows, dict(out=out, a=a, b=b, n=n)


def bench_softmax(torch, cuda, scale):
    from puzzles.llm.softmax_layernorm.common import ROWS_PER_BLOCK, WARP
    from puzzles.llm.softmax_layernorm.softmax import softmax_spec

    rows_, cols = int(16384 * scale), 1024
    x = torch.randn(rows_, cols, device="cuda") * 3
    out = torch.empty_like(x)
    nx, nout = cuda.as_cuda_array(x), cuda.as_cuda_array(out)
    sub = slice(0, 64)
    want = softmax_spec(x[sub].cpu().numpy(), 64, cols)
    grid = (rows_ + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
    runs = {
        "Numba": lambda: softmax.numba_kernel[grid, ROWS_PER_BLOCK * WARP](nout, nx, rows_, cols),
        "Triton": lambda: softmax.softmax_kernel[(rows_,)](out, x, rows_, cols, BLOCK=cols),
        "torch": lambda: out.copy_(torch.softmax(x, -1)),
    }
    rows = {}
    for name, fn in runs.items():
        out.fill_(float("nan"))
        fn()
        _check(f"softmax, {name}", out[sub], want, softmax.TWIN.rtol, softmax.TWIN.atol)
    runs["torch"] = lambda: torch.softmax(x, -1)
    for name, fn in runs.items():
        rows[name] = _row(f"softmax: {name}", fn, bytes=2 * 4 * rows_ * cols)
    return rows, dict(out=out, x=x, rows=rows_, cols=cols)


def bench_matmul(torch, cuda, scale):
    from puzzles.pmpp.ch05_memory_tiling.tiled import tiled_matmul_kernel

    s = max(256, int(2048 * scale))
    m, n = torch.randn(s, s, device="cuda"), torch.randn(s, s, device="cuda")
    p = torch.empty(s, s, device="cuda")
    nm, nn_, np_ = (cuda.as_cuda_array(t) for t in (m, n, p))
    m64, n64 = m.double(), n.double()
    want = (m64 @ n64).float().cpu().numpy()
    bound = float((m64.abs() @ n64.abs()).max()) * s * 2.0**-24  # |error| <= inner * u * sum |a||b|
    tile = 32
    numba_k = timing.specialize(tiled_matmul_kernel, TILE=tile)
    g = (s + tile - 1) // tile
    bm, bn, bk = 64, 64, 32
    runs = {
        "Numba": lambda: numba_k[(g, g), (tile, tile)](np_, nm, nn_, s, s, s),
        "Triton": lambda: matmul.matmul_kernel[((s + bn - 1) // bn, (s + bm - 1) // bm)](
            p, m, n, s, s, s, BM=bm, BN=bn, BK=bk
        ),
        "torch": lambda: torch.matmul(m, n, out=p),
    }
    rows = {}
    for name, fn in runs.items():
        p.fill_(float("nan"))
        fn()
        _check(f"matmul, {name}", p, want, 0, bound)
        rows[name] = _row(f"matmul: {name}", fn, flops=2 * s**3)
    return rows, dict(p=p, m=m, n=n, size=s)


def bench_layernorm(torch, cuda, scale):
    from puzzles.llm.gpt2_block.common import EPS, ROWS_PER_BLOCK, WARP

    rows_, cols = int(16384 * scale), 768
    x, y = torch.randn(rows_, cols, device="cuda"), torch.randn(rows_, cols, device="cuda")
    w, b = torch.rand(cols, device="cuda") + 0.5, torch.rand(cols, device="cuda") - 0.5
    res, out = torch.empty_like(x), torch.empty_like(x)
    mean, rstd = torch.empty(rows_, device="cuda"), torch.empty(rows_, device="cuda")
    nv = [cuda.as_cuda_array(t) for t in (res, out, mean, rstd, x, y, w, b)]
    sub = slice(0, 64)
    want = layernorm.TWIN.spec(
        x[sub].cpu().numpy(), y[sub].cpu().numpy(), w.cpu().numpy(), b.cpu().numpy(), 64, cols
    )
    F = torch.nn.functional
    grid = (rows_ + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
    blk = 1 << (cols - 1).bit_length()
    runs = {
        "Numba": lambda: layernorm.numba_kernel[grid, ROWS_PER_BLOCK * WARP](*nv, rows_, cols),
        "Triton": lambda: layernorm.residual_layernorm_kernel[(rows_,)](
            res, out, mean, rstd, x, y, w, b, rows_, cols, float(EPS), BLOCK=blk
        ),
        "torch": lambda: out.copy_(F.layer_norm(res.copy_(x + y), (cols,), w, b, eps=float(EPS))),
    }
    rows = {}
    tol = dict(rtol=layernorm.TWIN.rtol, atol=layernorm.TWIN.atol)
    for name, fn in runs.items():
        out.fill_(float("nan"))
        fn()
        _check(f"residual + LayerNorm, {name}", out[sub], want["out"], **tol)
    runs["torch"] = lambda: F.layer_norm(x + y, (cols,), w, b, eps=float(EPS))
    for name, fn in runs.items():
        rows[name] = _row(f"residual + LayerNorm: {name}", fn, bytes=4 * 4 * rows_ * cols)
    return rows, dict(res=res, out=out, x=x, y=y, weight=w, bias=b, rows=rows_, cols=cols)


def bench_attention(torch, cuda, scale):
    from puzzles.llm.attention.bench import attention_flops
    from puzzles.llm.attention.common import _TOL, attention_spec
    from puzzles.llm.attention.flash_tiled import TILED_GPU, tiled_for_gpu

    bh, t, d = 96, max(64, int(1024 * scale)), 64
    q, k, v = (torch.rand(bh, t, d, device="cuda") * 2 - 1 for _ in range(3))
    out = torch.empty_like(q)
    nq, nk, nv, nout = (cuda.as_cuda_array(a) for a in (q, k, v, out))
    heads = slice(0, 2)
    want = attention_spec(q[heads].cpu().numpy(), k[heads].cpu().numpy(), v[heads].cpu().numpy(), 1)
    kern, fb_r = tiled_for_gpu(d, *TILED_GPU)
    F = torch.nn.functional
    br, bc = 64, 32
    runs = {
        "Numba": lambda: kern[((t + fb_r - 1) // fb_r, bh), (TILED_GPU[0], TILED_GPU[1])](
            nout, nq, nk, nv, 1
        ),
        "Triton": lambda: flash_attention.flash_kernel[((t + br - 1) // br, bh)](
            out, q, k, v, t, d, 1.0 / math.sqrt(d), CAUSAL=True, BR=br, BC=bc, BD=d
        ),
        "torch": lambda: out.copy_(F.scaled_dot_product_attention(q, k, v, is_causal=True)),
    }
    rows = {}
    for name, fn in runs.items():
        out.fill_(float("nan"))
        fn()
        _check(f"flash attention, {name}", out[heads], want, **_TOL)
    runs["torch"] = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
    for name, fn in runs.items():
        rows[name] = _row(f"attention: {name}", fn, flops=attention_flops(bh, t, d, True))
    return rows, dict(out=out, q=q, k=k, v=v, causal=1)


OPS = {
    "vector add": bench_vector_add,
    "softmax": bench_softmax,
    "matmul": bench_matmul,
    "residual + LayerNorm": bench_layernorm,
    "flash attention": bench_attention,
}


def benchmark(scale: float = 1.0, only=()) -> dict:
    torch, _ = _need()
    from numba import cuda

    results = {}
    for op, fn in OPS.items():
        if only and op not in only:
            continue
        rows, arrays = fn(torch, cuda, scale)
        cpp = _cpp(op, arrays)
        if cpp is not None:
            rows["CUDA C++"] = cpp
        results[op] = rows
    return results


COLUMNS = ("Numba", "Triton", "torch", "CUDA C++")


def comparison(results: dict) -> str:
    """One table: per op, each column's time and its rate (GB/s for the memory-bound ops, GFLOP/s for
    the products)."""
    head = ("op", "unit", *COLUMNS)
    body = []
    for op, rows in results.items():
        any_row = next(iter(rows.values()))
        unit = "GFLOP/s" if any_row.flops else "GB/s"
        cells = []
        for c in COLUMNS:
            r = rows.get(c)
            if r is None:
                cells.append("-")
                continue
            rate = r.gflops if any_row.flops else r.gbps
            cells.append(f"{r.seconds * 1e6:.1f} us, {rate:.0f}")
        body.append((op, unit, *cells))
    widths = [max(len(str(line[i])) for line in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)) for line in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def rows_of(results: dict) -> list:
    """Every Measurement, for timing.table or timing.bar_chart."""
    return [r for rows in results.values() for r in rows.values()]
