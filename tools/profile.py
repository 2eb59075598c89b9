"""Launch the kernels the notebooks' profiler findings are about, once each, at benchmark size, so a
profiler sees exactly those launches:

    ncu --clock-control none --section SpeedOfLight --section WarpStateStats \\
        --section ComputeWorkloadAnalysis --metrics dram__bytes_read.sum,dram__bytes_write.sum \\
        python -m tools.profile ch08   # or ch05 ch06 ch07 ch09 ch11 ch12 ch14 ch18 tc, several; none: all

Each launch is the configuration the notebook's table names (and, for ch08, ch11, ch12 and ch14, the
32-bit-index candidates beside the old kernels). Without a GPU it prints why and exits.
`python -m tools.ncu_summary ch08` runs ncu on these launches and prints one line per kernel;
ELEMENTS gives each study's elements per launch for per-element counts.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def ch05(rng):
    from numba import cuda

    from puzzles.pmpp import ch05_memory_tiling as c5
    from puzzles.pmpp.ch05_memory_tiling.bench import v4_launcher

    s = 4096
    dm = cuda.to_device(rng.standard_normal((s, s)).astype(np.float32))
    dn = cuda.to_device(rng.standard_normal((s, s)).astype(np.float32))
    dp = cuda.device_array((s, s), np.float32)
    c5.prefetch_launcher(128, 8, 128)(dp, dm, dn, s, s, s)
    c5.prefetch_launcher(128, 8, 128, two_stage=True)(dp, dm, dn, s, s, s)  # sgemm_fast.py
    v4_launcher(128, 8, None)(dp, dm, dn, s, s, s)  # sgemm_v4.py: 16-byte loads
    try:  # cuBLAS, for the comparison in notebook 04
        import cupy as cp

        cp.matmul(cp.asarray(dm), cp.asarray(dn))
    except ImportError:
        print("no CuPy: cuBLAS not launched", file=sys.stderr)


def ch06(rng):
    from numba import cuda

    from puzzles.pmpp import ch06_performance as c6

    a = cuda.to_device(rng.standard_normal((8192, 8192 + 64)).astype(np.float32))
    out = cuda.device_array((8192 + 64, 8192), np.float32)
    c6.variants(32, 4)["ch06_transpose_coarse"](out, a)
    c6.variants(32, 8)["ch06_transpose_batched"](out, a)


def ch07(rng):
    from numba import cuda

    from puzzles.pmpp import ch07_convolution as c7

    a = cuda.to_device(rng.standard_normal((8192, 8192 + 96)).astype(np.float32))
    out, f = cuda.device_array(a.shape, np.float32), cuda.to_device(c7.FILTER)
    for cfg in ((16, (32, 4)), (16, (32, 8), 4), (16, (32, 8), 8)):
        c7.register_launcher(*cfg)(out, a, f)


def ch08(rng):
    from numba import cuda

    from puzzles.pmpp import ch08_stencil as c8

    a = cuda.to_device(rng.standard_normal((408, 408, 416)).astype(np.float32))
    out = cuda.device_array(a.shape, np.float32)
    c8.basic_launcher((32, 4))(out, a)
    c8.march_launcher(c8.stencil_register, 16, 32)(out, a)
    c8.column_launcher((32, 8), 32, 4)(out, a)
    c8.column_launcher((32, 8), 32, 4, flat=True)(out, a)
    for cols in (1, 2):  # the 32-bit march
        c8.bench.u32_launcher((32, 8), 32, 4, cols)(out, a)


def ch09(rng):
    from numba import cuda

    from puzzles.pmpp import ch09_histogram as c9

    data = cuda.to_device(rng.integers(0, c9.MAX_VALUE, (64 << 20) + 3).astype(np.int32))
    for unsigned in (False, True):
        c9.unrolled_launcher(8, 1024, 2, unsigned=unsigned)(
            cuda.to_device(np.zeros(c9.NUM_BINS, np.int32)), data
        )


def ch11(rng):
    from numba import cuda

    from helpers.timing import specialize
    from puzzles.pmpp import ch11_scan as c11

    n = 64 << 20
    a = cuda.to_device(rng.integers(-8, 9, n).astype(np.float32))
    out = cuda.device_array(n, np.float32)
    shuffle = specialize(c11.lookback_scan, ITEMS=48, LB_TPB=256, LB_TILE=256 * 48)
    c11._single_pass(shuffle, 256 * 48, 256, out, a, two_sums=True)()
    raked = specialize(
        c11.lookback_raked, ITEMS=16, LB_TPB=512, LB_TILE=512 * 16, RAKED_BUF=512 * 16 * 33 // 32
    )
    c11._single_pass(raked, 512 * 16, 512, out, a, two_sums=True)()
    u32 = specialize(c11.lookback32.lookback_u32, ITEMS=48, LB_TPB=256, LB_TILE=256 * 48)
    c11._single_pass(u32, 256 * 48, 256, out, a, two_sums=True)()


def ch12(rng):
    from numba import cuda

    from helpers.timing import specialize
    from puzzles.pmpp import ch12_merge as c12

    a, b = c12._merge_inputs(rng, 32 << 20, (32 << 20) + 1)
    m, n = len(a), len(b)
    da, db, c = cuda.to_device(a), cuda.to_device(b), cuda.device_array(m + n, np.float32)
    tiled = specialize(c12.merge_tiled, [c12.co_rank, c12.merge_sequential], TILE=1024)
    tiled[64 * cuda.get_current_device().MULTIPROCESSOR_COUNT, 128](c, da, db, m, n)
    kernels = c12._partitioned_kernels(128, 23)
    bounds = cuda.device_array((m + n + kernels[2] - 1) // kernels[2] + 1, np.int32)
    c12.partitioned_merge(c, da, db, m, n, bounds, kernels)
    c12.partitioned_merge(c, da, db, m, n, bounds, c12.bench._partitioned_kernels(128, 23, u32=True))


def ch14(rng):
    """SpMV on the 2048^2 Poisson matrix: the CSR kernels one by one, then cuSPARSE (CuPy)."""
    from numba import cuda

    from helpers.timing import specialize
    from puzzles.pmpp import ch14_sparse as c14

    row_ptr, col, val = c14.poisson_csr(2048)
    n = row_ptr.size - 1
    csr = [cuda.to_device(v) for v in (row_ptr, col, val)]
    x = cuda.to_device(rng.uniform(-1, 1, n).astype(np.float32))
    y = cuda.device_array(n, np.float32)
    c14.spmv_csr[-(-n // 256), 256](y, *csr, x, n)
    c14.spmv_csr_vector[-(-n // 8), 256](y, *csr, x, n)
    specialize(c14.spmv_csr_lanes, LANES=8)[-(-n * 8 // 256), 256](y, *csr, x, n)
    for launch in c14.bench.csr_fast_launchers(n).values():  # scalar32, sub-warp 2/4/8, stream
        launch(y, *csr, x)
    try:
        import cupy as cp
        import cupyx.scipy.sparse as cusparse

        a = cusparse.csr_matrix((cp.asarray(val), cp.asarray(col), cp.asarray(row_ptr)), shape=(n, n))
        a @ cp.asarray(x)
    except ImportError:
        print("no CuPy: cuSPARSE not launched", file=sys.stderr)


def ch18(rng):
    """The benchmark's map (512 x 512 points, 4000 atoms): the rsqrtf kernel (IEEE, then fastmath)
    and dcs_fast.py's split-atoms kernel at two shapes, and with one point in 8 on the FMA pipe."""
    import math

    from numba import cuda

    from helpers.timing import specialize
    from puzzles.pmpp import ch18_electrostatics as c18
    from puzzles.pmpp.ch18_electrostatics import dcs_fast

    nx = ny = 512
    z = np.float32(0.3)
    atoms = cuda.to_device(c18.make_atoms(rng, 4000, nx, ny, z))
    energy = cuda.device_array((ny, nx), np.float32)
    for jit in ({}, {"fastmath": True}):
        k = specialize(c18.dcs_coarsened_rsqrt, COARSEN=4, jit_options=jit or None)
        k[(nx // 512, ny // 2), (128, 2)](energy, atoms, z, nx, ny)
    for txf, split, cf, soft in ((32, 8, 8, 0), (32, 4, 8, 0), (32, 8, 8, 1)):
        k = specialize(dcs_fast.dcs_split_kernel, **dcs_fast.fast_constants(txf, split, cf, soft))
        k[(math.ceil(nx / (txf * cf)), ny), (txf, split)](energy, atoms.reshape(atoms.size), z, nx, ny)


def tc(rng):
    """The tensor-core GEMM at 4096^3 and cuBLAS HGEMM beside it (notebook 28)."""
    from numba import cuda

    from puzzles.tensor_cores import fast_gemm

    s = 4096
    a = rng.standard_normal((s, s)).astype(np.float16)
    bt = rng.standard_normal((s, s)).astype(np.float16)
    a32, bt32 = cuda.to_device(fast_gemm.words(a)), cuda.to_device(fast_gemm.words(bt))
    c = cuda.device_array((s, s), np.float32)
    fast_gemm.launch(c, a32, bt32, s, s, s)  # m16n8k8
    if cuda.get_current_device().compute_capability >= (8, 0):
        fast_gemm.launch(c, a32, bt32, s, s, s, fast_gemm.fast_gemm_k16)
    try:  # cuBLAS HGEMM, the comparison
        import cupy as cp

        cp.matmul(cp.asarray(a), cp.asarray(bt).T)
    except ImportError:
        print("no CuPy: cuBLAS not launched", file=sys.stderr)


STUDIES = {
    "ch05": ch05,
    "ch06": ch06,
    "ch07": ch07,
    "ch08": ch08,
    "ch09": ch09,
    "ch11": ch11,
    "ch12": ch12,
    "ch14": ch14,
    "ch18": ch18,
    "tc": tc,
}
ELEMENTS = {  # what one launch of a study handles: grid points, outputs, nonzeros (per-element counts)
    "ch08": 408 * 408 * 416,
    "ch11": 64 << 20,
    "ch12": (64 << 20) + 1,
    "ch14": 5 * 2048 * 2048 - 4 * 2048,  # the Poisson matrix's nonzeros
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help=f"any of {', '.join(STUDIES)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [c for c in args.chapters if c not in STUDIES]
    if unknown:
        parser.error(f"no profiling study for {', '.join(unknown)}: choose from {', '.join(STUDIES)}")
    from helpers import timing

    reason = timing.skip_reason()
    if reason:
        print(f"profiling launches skipped: {reason}")
        return 0
    from numba import cuda

    rng = np.random.default_rng(0)
    for tag in args.chapters or STUDIES:
        STUDIES[tag](rng)
    cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
