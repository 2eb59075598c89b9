"""The 32-bit-index kernels the GPU benchmarks search (issue 28): right on the simulator, on the shapes
that stress their edges (faces, ragged tiles, ties, empty sides, blocks too full for CSR-Stream's
buffer), with a known-wrong launch rejected; and their PTX (sm_75, no GPU) has what they rely on:
integer work on 32 bits, against the old kernels that fail the same check. Also the counting tool
on small inputs (the ncu summary's tests are in test_bench.py).
"""

import math

import numpy as np
import pytest

from helpers import sim
from helpers.timing import specialize
from puzzles.pmpp.ch08_stencil import columns, columns32
from puzzles.pmpp.ch08_stencil.common import stencil
from puzzles.pmpp.ch11_scan import lookback32, single_pass
from puzzles.pmpp.ch12_merge import bench as merge_bench
from puzzles.pmpp.ch12_merge import partitioned32
from puzzles.pmpp.ch12_merge.common import co_rank, sorted_pair
from puzzles.pmpp.ch12_merge.merge import merge_sequential, merge_spec
from puzzles.pmpp.ch14_sparse import bench as sparse_bench
from puzzles.pmpp.ch14_sparse import csr, csr_fast
from tools import ptx_count


def _run(kernel, grid, block, args, **kw):
    sim.launch(kernel, grid, block, args, trace=False, **kw)


# ---------------------------------------------------------------------------- ch14


def _spmv(kernel, threads, tpb, mat, x):
    row_ptr, col, val = mat
    n = row_ptr.size - 1
    y = np.full(n, np.nan, np.float32)  # a row no thread writes stays NaN
    _run(kernel, -(-threads // tpb), tpb, (y, row_ptr, col, val, x, n))
    return y


@pytest.mark.parametrize("which", ["Poisson", "power-law"])
def test_csr_search_kernels_agree_with_the_reference(which):
    rng = np.random.default_rng(5)
    mat = sparse_bench.poisson_csr(12) if which == "Poisson" else sparse_bench.power_law_csr(rng, 300, 200)
    row_ptr = mat[0]
    n = row_ptr.size - 1
    x = rng.uniform(-1, 1, n).astype(np.float32)
    want = sparse_bench._csr_ref(*mat, x)
    runs = {"scalar32": (csr_fast.spmv_csr_scalar32, n, 64)}
    for lanes in (2, 4, 8):
        runs[f"subwarp {lanes}"] = (specialize(csr_fast.spmv_csr_subwarp, LANES=lanes), n * lanes, 64)
    rows = 32
    runs["stream"] = (specialize(csr_fast.spmv_csr_stream, STREAM_ROWS=rows, STREAM_BUF=8 * rows), n, rows)
    for name, (kernel, threads, tpb) in runs.items():
        np.testing.assert_allclose(
            _spmv(kernel, threads, tpb, mat, x), want, rtol=1e-3, atol=1e-2, err_msg=name
        )
    per_block = np.diff(row_ptr[np.minimum(np.arange(0, n + rows, rows), n)])
    if which == "power-law":  # some blocks overflow the buffer: the thread-per-row fallback ran
        assert (per_block > 8 * rows).any() and (per_block <= 8 * rows).any()
    # a known-wrong launch: half the lanes a row needs, so half the rows are never written
    wrong = _spmv(specialize(csr_fast.spmv_csr_subwarp, LANES=4), n * 2, 64, mat, x)
    assert np.isnan(wrong).any()


# ---------------------------------------------------------------------------- ch08


@pytest.mark.parametrize("cols", [1, 2])
@pytest.mark.parametrize("shape", [(9, 7, 40), (3, 3, 3), (12, 5, 70)])
def test_march_u32_agrees_with_the_stencil(shape, cols):
    a = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    nz, ny, nx = shape
    kernel = specialize(columns32.stencil_march_u32, COLS=cols, Z_STEPS=4, BATCH=4)
    out = np.full(shape, np.nan, np.float32)
    grid = (math.ceil(nx / (16 * cols)), math.ceil(ny / 4), math.ceil(nz / 4))
    _run(kernel, grid, (16, 4), (out.reshape(-1), a.reshape(-1), nz, ny, nx))
    np.testing.assert_allclose(out, stencil(a), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------- ch11


@pytest.mark.parametrize("kernel", ["lookback_u32", "lookback_overlap"])
@pytest.mark.parametrize("n", [777, 4096])
def test_lookback_32bit_kernels_scan(n, kernel):
    a = np.random.default_rng(2).integers(-8, 9, n).astype(np.float32)
    tpb, items = 64, 4
    nb = -(-n // (tpb * items))
    out, flags = np.full(n, np.nan, np.float32), np.zeros(nb, np.int32)
    args = (out, flags, np.zeros((nb, 2), np.float32), np.zeros(1, np.int32), a, n)
    _run(specialize(getattr(lookback32, kernel), ITEMS=items), nb, tpb, args, cross_block_races=False)
    np.testing.assert_array_equal(out, np.cumsum(a))
    assert (flags == 2).all()


# ---------------------------------------------------------------------------- ch12


@pytest.mark.parametrize("m,n", [(301, 203), (0, 100), (99, 1), (64, 64)])
def test_merge_partitioned_u32_merges(m, n):
    a, b = sorted_pair(np.random.default_rng(3), m, n)  # many ties between A and B
    tpb, items = 32, 7
    tile = tpb * items
    part = specialize(merge_bench.merge_partition, [co_rank, merge_sequential], PART_TILE=tile)
    consts = {"PART_TPB": tpb, "PART_ITEMS": items, "PART_TILE": tile}
    merge = specialize(partitioned32.merge_partitioned_u32, [partitioned32.co_rank_tile], **consts)
    tiles = -(-(m + n) // tile)
    bounds = np.zeros(tiles + 1, np.int32)
    _run(part, -(-(tiles + 1) // 32), 32, (bounds, a, b, m, n))
    c = np.full(m + n, np.nan, np.float32)
    _run(merge, tiles, tpb, (c, a, b, m, n, bounds))
    np.testing.assert_array_equal(c, merge_spec(a, b, m, n))


# ---------------------------------------------------------------------------- PTX (sm_75)


def _int64_share(kernel, sig):
    k = ptx_count.count(ptx_count.ptx_of(kernel, sig, cc=(7, 5))).kernel
    return k.int64 / k.n, k.div_rem


def test_32bit_kernels_do_their_integer_work_on_32_bits():
    from numba import types as t

    from helpers.ptx import available

    if not available():
        pytest.skip("NVVM not installed: no PTX compile here")
    arr = ptx_count._arr
    f32, i32 = arr(t.float32), arr(t.int32)
    spmv = (f32, i32, i32, f32, f32, t.int64)
    flat = (f32, f32, t.int64, t.int64, t.int64)
    scan = (f32, i32, arr(t.float32, 2), i32, f32, t.int64)
    merge = (f32, f32, f32, t.int64, t.int64, i32)
    lb = {"ITEMS": 4, "LB_TPB": 128, "LB_TILE": 512}  # small: a quick compile, the same code shape
    pairs = {  # new kernel, the old one it replaces (which must fail the check: the check can fail)
        "ch14 sub-warp": (
            specialize(csr_fast.spmv_csr_subwarp, LANES=8),
            specialize(csr.spmv_csr_lanes, LANES=8),
            spmv,
        ),
        "ch14 scalar": (csr_fast.spmv_csr_scalar32, csr.spmv_csr, spmv),
        "ch08 march": (
            specialize(columns32.stencil_march_u32, Z_STEPS=32, BATCH=4, COLS=2),
            specialize(columns.stencil_march_flat, Z_STEPS=32, BATCH=4),
            flat,
        ),
        "ch11 look-back": (
            specialize(lookback32.lookback_u32, **lb),
            specialize(single_pass.lookback_scan, **lb),
            scan,
        ),
        "ch12 merge": (
            merge_bench._partitioned_kernels(128, 7, u32=True)[1],
            merge_bench._partitioned_kernels(128, 7)[1],
            merge,
        ),
    }
    for name, (new, old, sig) in pairs.items():
        share, div_rem = _int64_share(new, sig)
        assert share < 0.25 and div_rem == 0, (name, share, div_rem)
        assert _int64_share(old, sig)[0] > 0.3, name
    # the sub-warp tree: log2(LANES) shuffles, never a whole warp's five
    ptx = ptx_count.ptx_of(specialize(csr_fast.spmv_csr_subwarp, LANES=8), spmv, cc=(7, 5))
    assert ptx_count.count(ptx).kernel.n and ptx.count("shfl.sync.down") == 3


# ---------------------------------------------------------------------------- the tools


def test_ptx_count_finds_the_innermost_loop():
    ptx = """
.visible .entry k(
)
{
\tmov.u32 %r1, 0;
$L__BB0_1:
\tadd.s64 %rd1, %rd1, 4;
$L__BB0_2:
\tld.global.f32 %f1, [%rd1];
\tadd.s32 %r1, %r1, 1;
\tsetp.lt.u32 %p1, %r1, 8;
\t@%p1 bra $L__BB0_2;
\tdiv.s64 %rd2, %rd1, %rd3;
\tbra.uni $L__BB0_1;
\tret;
}
"""
    c = ptx_count.count(ptx)
    assert c.kernel.n == 9 and c.kernel.int64 == 2 and c.kernel.div_rem == 1
    assert [(t.n, t.memory, t.int64) for t in c.loops] == [(4, 1, 0)]
