"""The course's tensor-core intrinsics (helpers/tensor_cores.py): the instruction is in the PTX for
sm_75 and sm_90; on the simulator the warp's mma equals NumPy's product on both engines ("auto"
hands it to the reference engine and says why), dp4a equals NumPy's on both; and each misuse gets
its diagnostic: a partial warp, a lane that skips the call, an unwritten fragment value, a fragment of
the wrong type, an architecture without the instruction."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda
from numba.core.errors import TypingError

from helpers import ptx, sim, tensor_cores
from helpers.sim import errors as E
from helpers.sim.mma import position
from helpers.tensor_cores import arch_error, dp4a, mma_m16n8k8, mma_m16n8k8_packed, mma_m16n8k16_packed

F16 = numba.types.float16


@cuda.jit
def one_tile(A, B, C):
    lane = cuda.threadIdx.x
    g, t = lane >> 2, lane & 3
    a = cuda.local.array(4, F16)
    b = cuda.local.array(2, F16)
    c = cuda.local.array(4, numba.float32)
    for i in range(4):
        a[i] = A[g + 8 * (i >> 1), 2 * t + (i & 1)]
        c[i] = 0.0
    for i in range(2):
        b[i] = B[2 * t + i, g]
    mma_m16n8k8(a, b, c)
    for i in range(4):
        C[g + 8 * (i >> 1), 2 * t + (i & 1)] = c[i]


@cuda.jit
def half_the_warp(A, B, C):
    lane = cuda.threadIdx.x
    a = cuda.local.array(4, F16)
    b = cuda.local.array(2, F16)
    c = cuda.local.array(4, numba.float32)
    for i in range(4):
        a[i] = A[0, 0]
        c[i] = 0.0
    for i in range(2):
        b[i] = B[0, 0]
    if lane < 16:
        mma_m16n8k8(a, b, c)
    if lane == 0:
        C[0, 0] = c[0]


@cuda.jit
def no_accumulator(A, B, C):
    a = cuda.local.array(4, F16)
    b = cuda.local.array(2, F16)
    c = cuda.local.array(4, numba.float32)
    for i in range(4):
        a[i] = A[0, 0]
    for i in range(2):
        b[i] = B[0, 0]
    mma_m16n8k8(a, b, c)
    C[0, 0] = c[0]


@cuda.jit
def fp32_fragment(A, B, C):
    a = cuda.local.array(4, numba.float32)
    b = cuda.local.array(2, F16)
    c = cuda.local.array(4, numba.float32)
    for i in range(4):
        a[i] = A[0, 0]
        c[i] = 0.0
    for i in range(2):
        b[i] = B[0, 0]
    mma_m16n8k8(a, b, c)
    C[0, 0] = c[0]


@cuda.jit
def dot4(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = dp4a(x[i], y[i], 7)


def _tile_inputs(seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((16, 8)).astype(np.float16)
    B = rng.standard_normal((8, 8)).astype(np.float16)
    return A, B, np.zeros((16, 8), np.float32)


def test_layout_covers_each_element_once():
    for frag, shape, n in (("a", (16, 8), 4), ("b", (8, 8), 2), ("c", (16, 8), 4)):
        seen = [position(frag, lane, i) for lane in range(32) for i in range(n)]
        assert sorted(seen) == [(r, c) for r in range(shape[0]) for c in range(shape[1])]


@pytest.mark.parametrize("engine", ["greenlet", "auto"])
def test_one_tile_matches_numpy(engine):
    A, B, C = _tile_inputs()
    launch = sim.launch(one_tile, 1, 32, (A, B, C), engine=engine)
    want = A.astype(np.float64) @ B.astype(np.float64)
    assert np.abs(C - want).max() < 1e-5
    assert launch.engine == "greenlet"  # lockstep hands it over, saying why
    if engine == "auto":
        assert "mma_m16n8k8" in launch.fallback and "reference engine" in launch.fallback


def test_lockstep_alone_refuses_the_mma_by_name():
    with pytest.raises(E.Unsupported, match="mma_m16n8k8"):
        sim.launch(one_tile, 1, 32, _tile_inputs(), engine="lockstep")


def test_partial_warp_is_named():
    with pytest.raises(E.WarpDivergence, match="do not exist in this block"):
        sim.launch(one_tile, 1, 16, _tile_inputs(), engine="greenlet")


def test_divergent_mma_is_named():
    with pytest.raises(E.WarpDivergence, match="mma_m16n8k8 with mask 0xffffffff needs every lane"):
        sim.launch(half_the_warp, 1, 32, _tile_inputs(), engine="greenlet")


def test_unwritten_accumulator_is_named():
    with pytest.raises(E.UninitializedRead):
        sim.launch(no_accumulator, 1, 32, _tile_inputs(), engine="greenlet", defer_uninit=False)


def test_fp32_fragment_is_named_on_the_simulator_and_refused_by_numba():
    want = "fragment A .* must be cuda.local.array\\(4, numba.types.float16\\)"
    with pytest.raises(E.KernelException, match=want):
        sim.launch(fp32_fragment, 1, 32, _tile_inputs(), engine="greenlet")
    if ptx.available():
        with pytest.raises(ptx.NumbaRejected, match="fragment A must be a 1-D local array of float16"):
            ptx.ptx_check(fp32_fragment, _tile_inputs())


@pytest.mark.parametrize("cc", [(7, 5), (9, 0)])
def test_instructions_in_the_ptx(cc):
    if not ptx.available():
        pytest.skip("NVVM is not installed: no PTX compile check here")
    text = ptx.ptx_check(one_tile, _tile_inputs(), cc=cc)
    assert "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32" in text
    x = np.zeros(4, np.int32)
    assert "dp4a.s32.s32" in ptx.ptx_check(dot4, (x, x, x), cc=cc)


def test_architecture_without_mma(monkeypatch):
    assert arch_error("mma_m16n8k8", (7, 5), (7, 5)) is None
    assert "compute capability 7.5 or newer, and this one is 6.0" in arch_error("mma_m16n8k8", (7, 5), (6, 0))
    # the typer asks for the target's compute capability (numba-cuda caches a device function's
    # typing per signature, so the refusal is tested at the typer's question, not by recompiling)
    monkeypatch.setattr(tensor_cores, "_target_cc", lambda: (7, 0))
    with pytest.raises(TypingError, match="this one is 7.0"):
        tensor_cores._require("mma_m16n8k8", tensor_cores.MMA_ARCH)


@pytest.mark.parametrize("engine", ["greenlet", "auto", "lockstep"])
def test_dp4a_matches_numpy(engine):
    rng = np.random.default_rng(1)
    xb = rng.integers(-128, 128, (40, 4), dtype=np.int8)
    yb = rng.integers(-128, 128, (40, 4), dtype=np.int8)
    xb[0], yb[0] = -128, -128  # the largest products
    x, y = xb.view(np.int32).ravel(), yb.view(np.int32).ravel()
    out = np.zeros(40, np.int32)
    launch = sim.launch(dot4, 2, 32, (x, y, out), engine=engine)
    want = (xb.astype(np.int64) * yb.astype(np.int64)).sum(1) + 7
    np.testing.assert_array_equal(out, want)
    assert launch.engine == ("greenlet" if engine == "greenlet" else "lockstep")


def test_parity_script_is_ready_for_a_gpu():
    """tests/tc_parity.py: its simulator half runs and every kernel compiles for sm_75."""
    import tc_parity

    d = tc_parity.inputs()
    out = tc_parity.on_simulator({k: v.copy() for k, v in d.items()})
    assert set(out) == {"mul", "add", "fma2", "div", "narrow", "half_sum", "mma", "dp4a"}
    assert tc_parity.compare(out, out, d)  # the comparison passes itself ...
    wrong = dict(out, mul=out["mul"] + np.float16(1))
    assert not tc_parity.compare(out, wrong, d)  # ... and can fail
    if ptx.available():
        n = d["a"].size
        h = np.zeros(n, np.float16)
        ptx.ptx_check(tc_parity.half_ops, (d["a"], d["b"], d["c"], h, h, h, h, h))
        ptx.ptx_check(tc_parity.half_sum, (d["sums"], np.zeros(256, np.float16)))
        ptx.ptx_check(tc_parity.mma_tiles, (d["mc"], d["ma"], d["mb"]))
        ptx.ptx_check(tc_parity.dp4a_all, (d["x"], d["y"], d["z"], np.zeros(n, np.int32)))


@cuda.jit
def packed_tiles(c8, c16, a32, bt32):
    """One 16x16 @ 16x8 product two ways: two m16n8k8 steps, and one m16n8k16 (words: fp16 pairs)."""
    lane = cuda.threadIdx.x
    g, t = lane >> 2, lane & 3
    z = numba.float32(0.0)
    d = mma_m16n8k8_packed(a32[g, t], a32[g + 8, t], bt32[g, t], z, z, z, z)
    d = mma_m16n8k8_packed(a32[g, 4 + t], a32[g + 8, 4 + t], bt32[g, 4 + t], d[0], d[1], d[2], d[3])
    e = mma_m16n8k16_packed(
        a32[g, t], a32[g + 8, t], a32[g, 4 + t], a32[g + 8, 4 + t], bt32[g, t], bt32[g, 4 + t], z, z, z, z
    )
    for i in range(4):
        c8[g + 8 * (i >> 1), 2 * t + (i & 1)] = d[i]
        c16[g + 8 * (i >> 1), 2 * t + (i & 1)] = e[i]


def test_packed_intrinsics():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    a32, bt32 = a.view(np.uint32), np.ascontiguousarray(b.T).view(np.uint32)
    c8, c16 = np.zeros((16, 8), np.float32), np.zeros((16, 8), np.float32)
    sim.launch(packed_tiles, 1, 32, (c8, c16, a32, bt32), engine="auto")
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c8 - want).max() < 1e-5 and np.abs(c16 - want).max() < 1e-5
    if ptx.available():
        text = ptx.ptx_check(packed_tiles, (c8, c16, a32, bt32), cc=(9, 0))
        assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in text
        assert "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32" in text


def _truncating_mma(a, b, c):
    """A model of the tensor core's sum (Fasi et al. 2021): exact products and accumulator aligned to
    the largest, bits under its 24-bit significand dropped, the sum truncated to fp32."""
    terms = np.concatenate([a.astype(np.float64) * b.astype(np.float64), [float(c)]])
    step = 2.0 ** (np.floor(np.log2(np.abs(terms).max())) - 23)
    s = float(np.sum(np.trunc(terms / step) * step))
    s32 = np.float32(s)
    return np.nextafter(s32, np.float32(0)) if abs(float(s32)) > abs(s) else s32


def test_mma_bound_holds_for_the_hardware_and_rejects_fp16_sums():
    """The mma exercises' tolerance (common.mma_tolerance) follows sum|a b| + |c|: the element an H100
    got 250 result-ulps off passes (the old rtol/atol failed it), a truncating model of the tensor core
    stays inside on sums that cancel, an fp16 accumulator mostly does not."""
    from puzzles.tensor_cores import mma_tile
    from puzzles.tensor_cores.common import mma_tolerance

    case = mma_tile.cases(np.random.default_rng(896273186))[3]  # the seed of the GPU run that failed
    a, b = case.args["a"], case.args["b"]
    want, tol = mma_tile.spec(a, b), mma_tile.tolerance(a, b)
    off = abs(np.float32(-10.8799) - want[5, 2])  # the H100's answer
    assert off <= tol[5, 2] and off > 2e-5 + 2e-5 * abs(want[5, 2])
    rng = np.random.default_rng(0)
    worst, fp16_out = 0.0, 0
    for _ in range(300):
        x = (rng.standard_normal(8) * 4).astype(np.float16)
        y = (rng.standard_normal(8) * 4).astype(np.float16)
        if x[-1]:  # make the sum cancel
            y[-1] = np.float16(-(x[:-1].astype(np.float64) @ y[:-1]) / x[-1])
        c = np.float32(rng.standard_normal())
        truth = np.float32(x.astype(np.float64) @ y + c)
        bound = float(mma_tolerance(x[None], y[:, None], c)[0, 0])
        worst = max(worst, abs(float(_truncating_mma(x, y, c)) - float(truth)) / bound)
        acc = np.float16(c)
        for p in x.astype(np.float32) * y.astype(np.float32):
            acc = np.float16(acc + np.float16(p))
        fp16_out += abs(float(acc) - float(truth)) > bound
    assert worst <= 1
    assert fp16_out > 200, fp16_out


def test_wmma_kernel_needs_no_cffi_and_compiles(monkeypatch):
    """The wmma route hands the C++ function its arrays' data pointers by an intrinsic: the Numba side
    compiles to PTX without a GPU and without cffi (the GPU machine had none)."""
    import sys

    from puzzles.tensor_cores import wmma

    monkeypatch.setitem(sys.modules, "cffi", None)  # importing cffi would fail
    if not ptx.available():
        pytest.skip("no NVVM here to compile PTX")
    k = wmma.kernel(link=False)
    f16, f32 = numba.types.float16[::1], numba.types.float32[::1]
    text, _ = cuda.compile_ptx(k.py_func, (f16, f16, f32), cc=(7, 5))
    assert "wmma_tile" in text


def test_wmma_headers_put_the_crt_folder_first(monkeypatch, tmp_path):
    """A CUDA 13 wheel with mma.h but no crt/mma.h (seen on an H100): the toolkit folder holding both
    comes first, so NVRTC takes mma.h and crt/mma.h from one place."""
    from helpers.cpp import nvrtc
    from puzzles.tensor_cores import wmma

    wheel, toolkit = tmp_path / "wheel", tmp_path / "toolkit"
    (wheel).mkdir()
    (wheel / "mma.h").write_text("")
    (toolkit / "crt").mkdir(parents=True)
    (toolkit / "mma.h").write_text("")
    (toolkit / "crt" / "mma.h").write_text("")
    monkeypatch.setattr(nvrtc, "include_dirs", lambda header="": [str(wheel), str(toolkit)])
    assert wmma.include_dirs() == [str(toolkit), str(wheel)]
    monkeypatch.setattr(nvrtc, "include_dirs", lambda header="": [str(wheel)])
    with pytest.raises(FileNotFoundError, match="crt/mma.h"):
        wmma.include_dirs()
