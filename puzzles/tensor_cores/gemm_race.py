"""The tensor-core GEMM candidates alone, against cuBLAS HGEMM, on the GPU at hand (issue 27's 50%
goal): `python -m puzzles.tensor_cores.gemm_race [n [text]]` (n = 4096, a multiple of 256; text:
only the kernels whose row name contains it, e.g. "64x64", for a profiler run). Each kernel is
validated on small shapes and on 8 rows of the n^3 product first; one that fails prints one line
and is left out. Prints, per kernel: time, TFLOP/s and the fraction of cuBLAS HGEMM measured in the
same run, and the registers each kernel got (from Numba's compile). The full chapter table stays
`python -m tools.bench --only tc`."""

import math
import sys

import numpy as np
from numba import cuda

from helpers import timing

from . import bench, fast_gemm


def _registers(kernel) -> str:
    try:
        regs = kernel.get_regs_per_thread()
        return str(regs if isinstance(regs, int) else max(regs.values()))
    except Exception:  # noqa: BLE001 - older numba-cuda spells it differently: the figure is a nicety
        return "?"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    n = int(argv[0]) if argv else 4096
    only = argv[1] if len(argv) > 1 else ""
    why = timing.skip_reason()
    if why:
        print(f"gemm_race skipped: {why}")
        return 0
    rng = np.random.default_rng(27)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    bt = np.ascontiguousarray(b.T)
    da, dbt = cuda.to_device(a), cuda.to_device(bt)
    a32, bt32 = cuda.to_device(fast_gemm.words(a)), cuda.to_device(fast_gemm.words(bt))
    dc = cuda.device_array((n, n), np.float32)
    pick = rng.choice(n, 8, replace=False)
    want = (a[pick].astype(np.float64) @ b.astype(np.float64)).astype(np.float32)

    def check(got):
        timing.validate(
            f"GEMM {n}^3 (8 rows)", np.asarray(got)[pick], want, rtol=2e-2, atol=2e-2 * math.sqrt(n)
        )

    # cuBLAS first: a candidate that faults (a misaligned address) leaves the CUDA context unusable
    hgemm = bench._hgemm_peer(n, da, dbt, check)
    if hgemm is None:
        print("no cuBLAS HGEMM (neither CuPy nor torch): fractions left out")
    ref = hgemm.seconds if hgemm is not None else None
    kernels = {f"{bench.BEST} [{k}]": v for k, v in bench._fast_kernels().items()}
    capped = bench._capped_kernel()
    if capped is not None:
        kernels[bench.CAPPED] = capped
    kernels.update(bench._pipe_kernels())
    kernels = {name: kern for name, kern in kernels.items() if only in name}
    shapes = (*bench.FAST_SHAPES, bench.PIPE_SHAPE)
    rows, regs = [], {}
    for name, kernel in kernels.items():
        try:
            for m_, n_, k_ in (fast_gemm.fit(kernel, *shape) for shape in shapes):
                sa = rng.standard_normal((m_, k_)).astype(np.float16)
                sb = rng.standard_normal((k_, n_)).astype(np.float16)
                c = cuda.to_device(np.full((m_, n_), np.nan, np.float32))
                fast_gemm.launch(
                    c,
                    cuda.to_device(fast_gemm.words(sa)),
                    cuda.to_device(fast_gemm.words(sb.T)),
                    m_,
                    n_,
                    k_,
                    kernel,
                )
                exact = sa.astype(np.float64) @ sb.astype(np.float64)
                timing.validate(
                    f"{name} ({m_}x{k_} @ {k_}x{n_})", c.copy_to_host(), exact, rtol=1e-4, atol=1e-3
                )
            seconds = timing.time_gpu(lambda k=kernel: fast_gemm.launch(dc, a32, bt32, n, n, n, k))
            check(dc.copy_to_host())
        except Exception as e:  # noqa: BLE001 - one line per failed candidate, the others go on
            print(f"FAILED, left out: {name}: {type(e).__name__}: {e}")
            continue
        regs[name] = _registers(kernel)
        rows.append((name, seconds))
    flops = 2 * n**3
    dev = cuda.get_current_device().name
    print(f"GEMM {n}^3, {dev.decode() if isinstance(dev, bytes) else dev}")
    print(f"{'kernel':<100} {'regs':>4} {'ms':>8} {'TFLOP/s':>8} {'of cuBLAS':>9}")
    for name, s in rows + ([(hgemm.name, ref)] if ref else []):
        frac = f"{ref / s:8.1%}" if ref else "-"
        print(f"{name:<100} {regs.get(name, ''):>4} {s * 1e3:8.3f} {flops / s / 1e12:8.1f} {frac:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
