"""GPU-sized launches of the Rosetta kernels (the chapters' kernels with a CUDA C++ twin in
puzzles/cpp/), and one Numba-against-C++ timing of each: the same algorithm, module constants and
launch, both validated against the puzzle's spec before they are timed. Used by tools/cpp_gpu.py.
"""

from __future__ import annotations

import numpy as np

import puzzles
from helpers.puzzle import Case
from helpers.runs import expected, prepare_args


def _rng():
    return np.random.default_rng(0)


def _vecadd():
    n = (1 << 24) + 3
    a, b = (_rng().uniform(-1, 1, n).astype(np.float32) for _ in range(2))
    args = {"out": np.empty(n, np.float32), "a": a, "b": b, "n": n}
    return Case(grid=(n + 255) // 256, block=256, args=args), f"n={n}"


def _matmul():
    from puzzles.pmpp.ch05_memory_tiling.common import TILE

    r, k, c = 1000, 1001, 999
    m, n = _rng().uniform(-1, 1, (r, k)).astype(np.float32), _rng().uniform(-1, 1, (k, c)).astype(np.float32)
    args = {"p": np.empty((r, c), np.float32), "m": m, "n": n, "rows": r, "inner": k, "cols": c}
    grid = ((c + TILE - 1) // TILE, (r + TILE - 1) // TILE)
    return Case(grid=grid, block=(TILE, TILE), args=args), f"{r}x{k} @ {k}x{c}, TILE {TILE}"


def _reduce():
    n = 1 << 24
    a = _rng().uniform(-2, 2, n).astype(np.float32)
    # out as the puzzle's cases hand it over (float64, see ch10_reduce_shuffle.cu)
    return Case(grid=1024, block=256, args={"out": np.zeros(1, np.float64), "a": a, "n": n}), f"n={n}"


def _scan():
    from puzzles.pmpp.ch11_scan.common import TPB

    n = (1 << 22) + 5
    a = _rng().uniform(-1, 1, n).astype(np.float32)
    args = {"out": np.zeros(n, np.float32), "a": a, "n": n}
    return Case(grid=(n + TPB - 1) // TPB, block=TPB, args=args), f"n={n}, sections of {TPB}"


def _softmax():
    from puzzles.llm.softmax_layernorm.common import ROWS_PER_BLOCK, WARP
    from puzzles.llm.softmax_layernorm.softmax import SOFTMAX_MAX_COLS

    rows, cols = 8192, SOFTMAX_MAX_COLS
    x = _rng().normal(0, 3, (rows, cols)).astype(np.float32)
    args = {"out": np.zeros((rows, cols), np.float32), "x": x, "rows": rows, "cols": cols}
    grid = (rows + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
    return Case(grid=grid, block=ROWS_PER_BLOCK * WARP, args=args), f"{rows} rows x {cols}"


def _flash():
    from puzzles.llm.attention.common import BR, MAX_D

    bh, t, d = 32, 1024, MAX_D
    q, k, v = (_rng().normal(0, 1, (bh, t, d)).astype(np.float32) for _ in range(3))
    args = {"out": np.zeros((bh, t, d), np.float32), "q": q, "k": k, "v": v, "causal": True}
    return Case(grid=((t + BR - 1) // BR, bh), block=BR, args=args), f"{bh} heads, T={t}, d={d}, causal"


BIG: dict = {
    "ch02_vecadd": _vecadd,
    "ch05_matmul_tiled": _matmul,
    "ch10_reduce_shuffle": _reduce,
    "ch11_kogge_stone": _scan,
    "llm1_softmax_warp": _softmax,
    "llm3_attn_flash": _flash,
}


def time_pair(name: str, big) -> tuple[float, float, str]:
    """(Numba seconds, C++ seconds, size label) for puzzle `name` at the size `big()` builds."""
    from numba import cuda

    from helpers import timing
    from helpers.compare import compare
    from helpers.cpp import driver, module, nvrtc
    from helpers.cpp.source import bind
    from puzzles import cpp

    p = puzzles.get(name)
    case, label = big()
    args, _, _, pristine = prepare_args(p, case)
    want = expected(p, case, pristine)
    shared = case.shared_bytes

    def validated(dev, who):
        cuda.synchronize()
        for n in p.outputs:
            problem = compare(want[n], dev[p.signature.index(n)].copy_to_host(), p)
            if problem:
                raise AssertionError(f"{name} ({who}) is wrong at {label}:\n{problem}")

    dev_n = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel = p.reference

    def numba_launch():
        kernel[case.grid, case.block, 0, shared](*dev_n)

    numba_launch()
    validated(dev_n, "Numba")

    cuda.current_context()  # Numba's primary context, which the driver calls below share
    _, arch = driver.device()
    source = cpp.solution(name)
    built = module.build(source, getattr(kernel, "py_func", kernel).__name__, None)
    compiled = nvrtc.compile_source(source, arch)
    fn = driver.Function(compiled.cubin, built.name)
    dev_c = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in prepare_args(p, case)[0]]
    values, problem = bind(built.params, p.signature, args)
    if problem:
        raise AssertionError(problem)
    params = [
        int(d.__cuda_array_interface__["data"][0]) if isinstance(v, np.ndarray) else v
        for v, d in zip(values, dev_c + [None] * (len(values) - len(dev_c)))
    ]

    def cpp_launch():
        driver.launch(fn, case.grid, case.block, params, shared)

    cpp_launch()
    validated(dev_c, "CUDA C++")
    return timing.time_gpu(numba_launch), timing.time_gpu(cpp_launch), label
