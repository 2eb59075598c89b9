"""The tensor-core GEMM candidates alone, against cuBLAS HGEMM, on the GPU at hand (issue 27's 50%
goal): `python -m puzzles.tensor_cores.gemm_race [n [text]]` (n = 4096, a multiple of 256; text:
only the kernels whose row name contains it, e.g. "64x64", for a profiler run). Each kernel is
validated on small shapes and on 8 rows of the n^3 product first; one that fails prints one line
and is left out. Prints, per kernel: time, TFLOP/s and the fraction of cuBLAS HGEMM measured in the
same run, and the registers each kernel got (from Numba's compile). The full chapter table stays
`python -m tools.bench --only tc`."""

import sys

import numpy as np
from numba import cuda, float32, uint32

from helpers import timing
from helpers.tensor_cores import mma_m16n8k16_packed

from . import bench


def _registers(kernel) -> str:
    try:
        regs = kernel.get_regs_per_thread()
        return str(regs if isinstance(regs, int) else max(regs.values()))
    except Exception:  # noqa: BLE001 - older numba-cuda spells it differently: the figure is a nicety
        return "?"


CHAINS = 8  # independent accumulators a warp: enough mma in flight to hide the instruction's latency
PEAK_ITERS = 4096


@cuda.jit
def mma_peak(out, iters):
    """mma.sync m16n8k16 alone, operands in registers: the instruction's own ceiling on this GPU
    (what no mma.sync GEMM can pass; Hopper's full fp16 rate needs wgmma)."""
    ones = uint32(0x24002400)  # two fp16 1/64: sums stay small
    acc = cuda.local.array((CHAINS, 4), float32)
    for q in range(CHAINS):
        for r in range(4):
            acc[q, r] = 0.0
    for _ in range(iters):
        for q in range(CHAINS):
            d = mma_m16n8k16_packed(
                ones, ones, ones, ones, ones, ones, acc[q, 0], acc[q, 1], acc[q, 2], acc[q, 3]
            )
            for r in range(4):
                acc[q, r] = d[r]
    total = float32(0.0)
    for q in range(CHAINS):
        for r in range(4):
            total += acc[q, r]
    out[cuda.grid(1)] = total


def _peak_seconds_and_flops():
    """Seconds and FLOPs of mma_peak over 8 blocks of 4 warps a SM (None on GPUs before sm_80)."""
    dev = cuda.get_current_device()
    if tuple(dev.compute_capability) < (8, 0):
        return None
    blocks, threads = 8 * dev.MULTIPROCESSOR_COUNT, 128
    out = cuda.device_array(blocks * threads, np.float32)
    seconds = timing.time_gpu(lambda: mma_peak[blocks, threads](out, PEAK_ITERS))
    want = PEAK_ITERS * 16 * (1 / 64) ** 2  # every element: iters x k = 16 products of 1/64 x 1/64
    if not np.allclose(out.copy_to_host(), CHAINS * 4 * want, rtol=1e-3):
        raise AssertionError(f"mma_peak: sums {out.copy_to_host()[:4]}, expected {CHAINS * 4 * want}")
    return seconds, blocks * threads // 32 * PEAK_ITERS * CHAINS * 2 * 16 * 8 * 16


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    n = int(argv[0]) if argv else 4096
    only = argv[1] if len(argv) > 1 else ""
    why = timing.skip_reason()
    if why:
        print(f"gemm_race skipped: {why}")
        return 0
    rng = np.random.default_rng(27)
    ops = bench.Operands(n, rng)
    # cuBLAS first: a candidate that faults (a misaligned address) leaves the CUDA context unusable
    hgemm = bench._hgemm_peer(n, ops.da, ops.dbt, ops.check)
    if hgemm is None:
        print("no cuBLAS HGEMM (neither CuPy nor torch): fractions left out")
    ref = hgemm.seconds if hgemm is not None else None
    kernels = {f"{bench.MMA128} [{k}]": v for k, v in bench._fast_kernels().items()}
    capped = bench._capped_kernel()
    if capped is not None:
        kernels[bench.CAPPED] = capped
    kernels.update(bench._pipe_kernels())
    kernels = {name: kern for name, kern in kernels.items() if only in name}
    shapes = (*bench.FAST_SHAPES, bench.PIPE_SHAPE)
    rows, regs = [], {}
    for name, kernel in kernels.items():
        try:
            seconds = bench.race(name, kernel, shapes, rng, ops)
        except Exception as e:  # noqa: BLE001 - one line per failed candidate, the others go on
            print(f"FAILED, left out: {name}: {type(e).__name__}: {e}")
            continue
        regs[name] = _registers(kernel)
        rows.append((name, seconds))
    flops = 2 * n**3
    try:
        peak = _peak_seconds_and_flops()
    except Exception as e:  # noqa: BLE001 - the table below matters more than this line
        peak = None
        print(f"mma.sync ceiling not measured: {type(e).__name__}: {e}")
    if peak is not None:
        print(
            f"mma.sync m16n8k16 alone (registers only): {peak[1] / peak[0] / 1e12:.1f} TFLOP/s, "
            "the ceiling of this route"
        )
    dev = cuda.get_current_device().name
    print(f"GEMM {n}^3, {dev.decode() if isinstance(dev, bytes) else dev}")
    print(f"{'kernel':<100} {'regs':>4} {'ms':>8} {'TFLOP/s':>8} {'of cuBLAS':>9}")
    for name, s in rows + ([(hgemm.name, ref)] if ref else []):
        frac = f"{ref / s:8.1%}" if ref else "-"
        print(f"{name:<100} {regs.get(name, ''):>4} {s * 1e3:8.3f} {flops / s / 1e12:8.1f} {frac:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
