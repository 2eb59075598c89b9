"""The course's tile-moving intrinsics (helpers/tensor_cores.py: ldmatrix, cp.async) and the pipelined
GEMM candidate built on them (puzzles/tensor_cores/fast_gemm.py: fast_gemm_pipe). What the PTX holds
is checked by compiling for sm_75/80/90 on the CPU; what the instructions mean, on the simulator,
against the PTX ISA's ldmatrix layout written out here on its own (lane 8 m + r addresses row r of
matrix m; lane 4 r + w receives elements (r, 2w) and (r, 2w + 1) of each matrix, or (2w, r) and
(2w + 1, r) with .trans); and each misuse gets its message."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda
from numba.core.errors import TypingError

from helpers import ptx, sim, tensor_cores
from helpers.tensor_cores import (
    cp_async_16,
    cp_async_commit,
    cp_async_wait,
    ldmatrix_x1,
    ldmatrix_x2,
    ldmatrix_x4,
    ldmatrix_x4_trans,
    mma_m16n8k16_packed,
)


@cuda.jit
def load_matrices(out, src):
    """Four 8x8 uint16 matrices (matrix m at element 64 m, rows of 8) through every ldmatrix form."""
    s = cuda.shared.array(256, numba.uint16, alignment=16)
    lane = cuda.threadIdx.x
    for i in range(8):
        s[8 * lane + i] = src[8 * lane + i]
    cuda.syncthreads()
    row = 64 * (lane >> 3) + 8 * (lane & 7)  # lane 8 m + r: row r of matrix m
    r4 = ldmatrix_x4(s, row)
    t4 = ldmatrix_x4_trans(s, row)
    r2 = ldmatrix_x2(s, row)
    r1 = ldmatrix_x1(s, row)
    for j in range(4):
        out[lane, j] = r4[j]
        out[lane, 4 + j] = t4[j]
    out[lane, 8] = r2[0]
    out[lane, 9] = r2[1]
    out[lane, 10] = r1[0]


def _isa_layout(mats: np.ndarray) -> np.ndarray:
    """What each lane should hold (the PTX ISA's figures for ldmatrix, x4 / x4.trans / x2 / x1)."""
    want = np.zeros((32, 11), np.uint32)
    for lane in range(32):
        r, w = lane >> 2, lane & 3
        for m in range(4):
            a = mats[m].astype(np.uint32)
            want[lane, m] = a[r, 2 * w] | a[r, 2 * w + 1] << 16
            want[lane, 4 + m] = a[2 * w, r] | a[2 * w + 1, r] << 16
        want[lane, 8:10] = want[lane, 0:2]
        want[lane, 10] = want[lane, 0]
    return want


def test_ldmatrix_layout_is_the_isa_one():
    mats = np.arange(256, dtype=np.uint16).reshape(4, 8, 8) * 7 + 1  # every element different
    out = np.zeros((32, 11), np.uint32)
    sim.launch(load_matrices, 1, 32, (out, mats.ravel()), engine="greenlet")
    np.testing.assert_array_equal(out, _isa_layout(mats))


@cuda.jit
def tile_product(c, a32, bt32):
    """A (16x16 fp16) @ B (16x8, given as Bt 8x16), copied in with cp.async, fragments by ldmatrix."""
    sa = cuda.shared.array(128, numba.uint32, alignment=16)  # 16 rows of 8 words
    sb = cuda.shared.array(64, numba.uint32, alignment=16)  # 8 rows of 8 words
    lane = cuda.threadIdx.x
    cp_async_16(sa, 4 * lane, a32, 4 * lane)  # 32 chunks of 16 bytes: one a lane
    if lane < 16:
        cp_async_16(sb, 4 * lane, bt32, 4 * lane)
    cp_async_commit()
    cp_async_wait(0)
    cuda.syncthreads()
    # A: rows lane % 16, k half lane // 16 (matrices: rows 0-7/8-15 x k 0-7, then k 8-15)
    a = ldmatrix_x4(sa, 8 * (lane & 15) + 4 * (lane >> 4))
    # B: columns lane % 8 of Bt's rows, k half (lane // 8) % 2 (lanes 16-31 are not read)
    b = ldmatrix_x2(sb, 8 * (lane & 7) + 4 * ((lane >> 3) & 1))
    z = numba.float32(0.0)
    d = mma_m16n8k16_packed(a[0], a[1], a[2], a[3], b[0], b[1], z, z, z, z)
    g, t = lane >> 2, lane & 3
    for i in range(4):
        c[g + 8 * (i >> 1), 2 * t + (i & 1)] = d[i]


def _tile_args(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    c = np.full((16, 8), np.nan, np.float32)
    return c, a, b, (c, a.view(np.uint32).ravel(), np.ascontiguousarray(b.T).view(np.uint32).ravel())


def test_ldmatrix_fragments_feed_the_mma():
    """ldmatrix.x4 of a 16x16 tile is the m16n8k16 A fragment, .x2 of Bt the B fragment."""
    c, a, b, args = _tile_args()
    sim.launch(tile_product, 1, 32, args, engine="auto")
    assert np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max() < 1e-5


@pytest.mark.parametrize("cc", [(7, 5), (8, 0), (9, 0)])
def test_instructions_in_the_ptx(cc):
    if not ptx.available():
        pytest.skip("no compile check here")
    text = ptx.ptx_check(load_matrices, (np.zeros((32, 11), np.uint32), np.zeros(256, np.uint16)), cc=cc)
    for form in ("x4.shared", "x4.trans.shared", "x2.shared", "x1.shared"):
        assert f"ldmatrix.sync.aligned.m8n8.{form}.b16" in text
    if cc >= (8, 0):
        text = ptx.ptx_check(tile_product, _tile_args()[3], cc=cc)
        assert "cp.async.cg.shared.global" in text and "cp.async.commit_group" in text
        assert "cp.async.wait_group 0" in text and "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in text


def test_cp_async_refused_before_sm80(monkeypatch):
    # (numba-cuda caches an intrinsic's typing per signature: the refusal is tested at the typer's question)
    monkeypatch.setattr(tensor_cores, "_target_cc", lambda: (7, 5))
    with pytest.raises(
        TypingError, match=r"cp.async\) needs a GPU of compute capability 8.0 or newer, and this one is 7.5"
    ):
        tensor_cores._require("cp_async_16 (cp.async)", tensor_cores.CP_ASYNC_ARCH)
    tensor_cores._require("ldmatrix_x4", tensor_cores.LDMATRIX_ARCH)  # sm_75 has ldmatrix
    assert "Use an A100, L4 or H100 (8.0 or newer; Colab's T4 is 7.5)" in tensor_cores.arch_error(
        "cp_async_16", tensor_cores.CP_ASYNC_ARCH, (7, 5)
    )


@cuda.jit
def misaligned(out, src):
    s = cuda.shared.array(128, numba.uint16, alignment=16)
    lane = cuda.threadIdx.x
    s[lane] = src[lane]
    cuda.syncthreads()
    r = ldmatrix_x1(s, 4 * lane)  # 8-byte steps: rows must start on 16 bytes
    out[lane] = r[0]


@cuda.jit
def from_global(out, src):
    r = ldmatrix_x1(src, 8 * (cuda.threadIdx.x & 7))
    out[cuda.threadIdx.x] = r[0]


@cuda.jit
def wait_on_a_variable(out, n):
    cp_async_wait(n)
    out[0] = 1


def test_misuse_is_named():
    out, src = np.zeros(32, np.uint32), np.ones(128, np.uint16)
    with pytest.raises(
        Exception, match=r"ldmatrix_x1: lane 1's element offset 4 .* byte 8, not a multiple of 16"
    ):
        sim.launch(misaligned, 1, 32, (out, src), engine="greenlet")
    with pytest.raises(Exception, match="must be a cuda.shared.array"):
        sim.launch(from_global, 1, 32, (out, src), engine="greenlet")
    with pytest.raises(Exception, match="ldmatrix_x4 is one instruction for a whole warp .* only 16 threads"):
        sim.launch(
            load_matrices, 1, 16, (np.zeros((32, 11), np.uint32), np.zeros(256, np.uint16)), engine="greenlet"
        )
    with pytest.raises(Exception, match="ldmatrix and cp.async .* run on the reference engine only"):
        sim.launch(
            load_matrices, 1, 32, (np.zeros((32, 11), np.uint32), np.zeros(256, np.uint16)), engine="lockstep"
        )
    if ptx.available():
        with pytest.raises(ptx.NumbaRejected, match="n must be a constant integer"):
            ptx.ptx_check(wait_on_a_variable, (out, 1), cc=(8, 0))


@pytest.mark.parametrize(
    "name, ldmatrix, mma, k, wait, simulate",
    [
        ("fast_gemm_pipe", 12, 32, 128, 1, True),
        ("fast_gemm_pipe_64x64", 16, 64, 128, 1, False),  # (its warp shape and tile: the other two's)
        ("fast_gemm_pipe_256", 16, 64, 96, 0, True),
    ],
)
def test_pipelined_gemm_matches_numpy_and_keeps_its_registers(
    name, ldmatrix, mma, k, wait, simulate, monkeypatch
):
    """A pipelined candidate on one block, k-slices enough for its stages to wrap (~12 s each on the
    simulator), and its sm_90 PTX: per slice `ldmatrix` ldmatrix.x4 and `mma` mma, cp.async, no local
    memory (its arrays live in registers)."""
    from puzzles.tensor_cores import fast_gemm as fg

    kernel = getattr(fg, name)
    rng = np.random.default_rng(5)
    m, n = 128, fg.tile_n(kernel)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    args = (c, fg.words(a), fg.words(b.T), m, n, k)
    if simulate:
        budget = sim.config.steps_per_thread * 4  # a whole tile's work per thread
        monkeypatch.setattr(sim.config, "steps_per_thread", budget)
        sim.launch(kernel, (1, 1), fg.threads_of(kernel), args, engine="greenlet", timeout=60)
        assert np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max() < 1e-4
    if ptx.available():
        # (compile_ptx, not ptx_check: the two kernels share one code object, ptx_check's cache key)
        text, _ = cuda.compile_ptx(kernel.py_func, ptx.arg_types(args), cc=(9, 0))
        assert text.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == ldmatrix
        assert text.count("mma.sync.aligned.m16n8k16") == mma
        assert "cp.async.cg.shared.global" in text and f"cp.async.wait_group {wait}" in text
        assert "ld.local" not in text and "st.local" not in text


def test_gemm_race_ceiling_kernel_compiles_to_mma_only():
    """gemm_race's mma.sync ceiling: 8 independent mma a loop step, no memory but the result."""
    if not ptx.available():
        pytest.skip("no compile check here")
    from puzzles.tensor_cores import gemm_race

    text, _ = cuda.compile_ptx(gemm_race.mma_peak.py_func, (numba.float32[:], numba.int64), cc=(9, 0))
    assert text.count("mma.sync.aligned.m16n8k16") == gemm_race.CHAINS
    assert "ld.local" not in text and "ld.global" not in text
