"""Chapters 16-18 beyond the generic exercise checks: the derived tolerances hold and separate the
mutants, the geometry the lessons claim (bins, chunks, constant-memory sizes), and the GPU
benchmarks' kernels compile for a GPU at their benchmark sizes (no GPU needed: PTX only)."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest

from helpers import ptx
from puzzles.pmpp import ch16_deep_learning as ch16
from puzzles.pmpp import ch17_mri as ch17
from puzzles.pmpp import ch18_electrostatics as ch18

# ------------------------------------------------------------------ tolerances


def _float32_sequential(terms: np.ndarray) -> float:
    acc = np.float32(0.0)
    for t in terms.astype(np.float32):
        acc = np.float32(acc + t)
    return float(acc)


@pytest.mark.parametrize("n", [1, 7, 28, 360])
def test_sum_tolerance_bounds_float32_sums(n):
    # sums of n terms of size <= 2, in an adversarial order (largest first, all one sign) and at random
    rng = np.random.default_rng(n)
    bound = ch16.sum_tolerance(n, 2.0)
    for terms in (
        np.sort(rng.uniform(0, 2, n))[::-1],
        rng.uniform(-2, 2, n),
        np.full(n, 2.0) - 1e-3 * rng.random(n),
    ):
        exact = float(np.sum(terms.astype(np.float32).astype(np.float64)))
        assert abs(_float32_sequential(terms) - exact) <= bound


def test_forward_tolerance_is_far_below_the_smallest_wrong_answer():
    # a forgotten bias is off by |b| >= 0.5; the tolerance is the bound for the largest output sum
    assert ch16.FWD_ATOL == ch16.sum_tolerance(3 * 9 + 1, ch16.X_MAX * ch16.W_MAX)
    assert ch16.FWD_ATOL < 1e-3 * 0.5
    rng = np.random.default_rng(0)
    for case in ch16.cases_forward(rng):
        assert np.abs(case.args["b"]).min() >= 0.5


def test_forward_reference_in_float32_stays_within_the_derived_tolerance():
    rng = np.random.default_rng(3)
    for case in ch16.cases_forward(rng):
        x, w, b = case.args["x"], case.args["w"], case.args["b"]
        exact = ch16.conv_ref(x, w, b)
        # the same sum in float32, taps in the kernel's order
        k_out, c_in, fs, _ = w.shape
        ho, wo = exact.shape[2], exact.shape[3]
        y = np.broadcast_to(b[None, :, None, None], exact.shape).astype(np.float32).copy()
        for c in range(c_in):
            for p in range(fs):
                for q in range(fs):
                    prod = np.einsum("nhw,k->nkhw", x[:, c, p : p + ho, q : q + wo], w[:, c, p, q]).astype(
                        np.float32
                    )
                    y = (y + prod).astype(np.float32)
        assert np.abs(y - exact).max() <= ch16.FWD_ATOL


def test_weight_gradient_tolerance_covers_the_largest_case():
    # N * HO * WO products: at most 2 images of 18 x 10 outputs in the cases
    rng = np.random.default_rng(1)
    most = max(
        c.args["dy"].shape[0] * c.args["dy"].shape[2] * c.args["dy"].shape[3]
        for c in ch16.cases_wgrad_reduce(rng)
    )
    assert most <= 2 * 18 * 10


def test_coulomb_terms_are_bounded_and_the_tolerance_is_derived():
    rng = np.random.default_rng(2)
    for case in ch18.cases_gather(rng):
        atoms, z = case.args["atoms"], float(case.args["z"])
        assert np.abs(atoms[:, 2] - z).min() >= ch18.Z_GAP - 1e-6  # no term above Q_MAX / Z_GAP
        assert np.abs(atoms[:, 3]).max() <= ch18.Q_MAX
        assert atoms.shape[0] <= ch18.N_ATOMS_MAX
    n = ch18.N_ATOMS_MAX
    assert ch18.DCS_ATOL == pytest.approx((n + 8) * 2.0**-24 * n * ch18.Q_MAX / ch18.Z_GAP)


def test_mri_angles_stay_within_arg_max():
    rng = np.random.default_rng(4)
    for case in ch17.cases_gather(rng):
        arg = 2 * np.pi * case.args["pos"].astype(np.float64) @ case.args["k"].astype(np.float64).T
        assert np.abs(arg).max() <= ch17.ARG_MAX
    # float32 angles near ARG_MAX really are off by about eps * ARG_MAX: the reason the bound has that term
    a = np.float64(ch17.ARG_MAX) - 1e-3
    assert abs(float(np.float32(a)) - a) <= 2.0**-24 * ch17.ARG_MAX


# ------------------------------------------------------------------ geometry and memory sizes


def test_every_atom_within_the_cutoff_is_in_the_three_by_three_bins():
    rng = np.random.default_rng(5)
    nx, ny = 37, 23
    atoms = ch18.make_atoms(rng, 300, nx, ny, 0.0)
    bins = ch18.bin_atoms(atoms, nx, ny)
    assert (bins[..., 3] != 0).sum() == 300  # every atom binned once, empty slots have no charge
    cutoff = float(ch18.CUTOFF)
    for i, j in [(0, 0), (nx - 1, ny - 1), (17, 9), (4, 22), (36, 3)]:
        x, y = i * float(ch18.SPACING), j * float(ch18.SPACING)
        bx, by = int(x / cutoff), int(y / cutoff)
        near = bins[max(by - 1, 0) : by + 2, max(bx - 1, 0) : bx + 2].reshape(-1, 4)
        d2 = (atoms[:, 0] - x) ** 2 + (atoms[:, 1] - y) ** 2 + (atoms[:, 2]) ** 2
        within = {tuple(a) for a in atoms[d2 < cutoff**2]}
        assert within <= {tuple(a) for a in near}


def test_cutoff_cases_have_atoms_across_bin_edges():
    # the "neighbourhood one bin too small" mutant is caught only if some atom within the cutoff lies
    # in a neighbouring bin: check that every case has one
    rng = np.random.default_rng(0)
    for case in ch18.cases_cutoff(rng):
        bins = case.args["bins"]
        assert bins.shape[0] * bins.shape[1] > 1


def test_constant_memory_sizes():
    # the puzzles' banks fit; the ResNet layer's does not (why ch16's benchmark splits it); the MRI
    # benchmark's chunk fits
    assert ch16.BANK.nbytes + ch16.BANK_BIAS.nbytes <= 64 * 1024
    assert 64 * 64 * 3 * 3 * 4 > 64 * 1024
    assert 16 * 64 * 3 * 3 * 4 <= 64 * 1024
    assert ch17.K_TRAJ.nbytes <= ch17.CONST_BYTES
    assert 4096 * 3 * 4 <= ch17.CONST_BYTES
    assert ch17.M_TRAJ > 2 * ch17.CHUNK and ch17.M_TRAJ % ch17.CHUNK  # a middle and a short last chunk


def test_const_cases_cover_every_chunk():
    rng = np.random.default_rng(0)
    chunks = {c.args["chunk"] for c in ch17.cases_const(rng)}
    assert chunks == set(range(math.ceil(ch17.M_TRAJ / ch17.CHUNK)))


def test_const_outputs_start_at_the_earlier_chunks_sums():
    # issue 23 (2): a launch adds its chunk to what the chunks before it left; a kernel that stores its
    # part instead loses them, on every seed (chunks 1 and 2 are in every case list)
    for seed in range(10):
        for case in ch17.cases_const(np.random.default_rng(seed)):
            a = case.args
            start = np.stack([a["r_fhd"], a["i_fhd"]])
            assert (a["chunk"] == 0) == (not start.any())
            want = ch17.const.spec_const(**{k: v for k, v in a.items()})
            lo = a["chunk"] * ch17.CHUNK
            part_r, _ = ch17.fhd_ref(
                ch17.K_TRAJ[lo : lo + ch17.CHUNK], a["mu"][lo : lo + ch17.CHUNK], a["pos"]
            )
            np.testing.assert_allclose(want["r_fhd"], a["r_fhd"] + part_r, rtol=1e-6, atol=1e-5)


def test_wgrad_reduce_cases_have_fewer_positions_than_threads():
    # issue 23 (19): one case per seed where N * HO * WO < TPB (threads with no product at all)
    for seed in range(10):
        totals = [
            c.args["dy"].shape[0] * c.args["dy"].shape[2] * c.args["dy"].shape[3]
            for c in ch16.cases_wgrad_reduce(np.random.default_rng(seed))
        ]
        assert min(totals) < ch16.TPB < max(totals)


def test_conv_layer_flop_count():
    # the benchmark's layer: 2 * N * K * HO * WO * C * 9 = 7.4 GFLOP
    assert 2 * 32 * 64 * 56 * 56 * 64 * 9 == 7_398_752_256


def test_goals_name_rows_the_benchmarks_produce():
    assert ch16.GOAL["best"] == "ch16 im2col + SGEMM" and ch16.GOAL["fraction"] == 0.5
    assert ch18.GOAL["best"] == "ch18_dcs_coarsened (rsqrtf)" and ch18.GOAL["fraction"] == 0.6
    assert ch17.GOAL is None


# ------------------------------------------------------------------ benchmark kernels compile at GPU sizes


def _compile(kernel, args, fastmath=False, **constants):
    from numba import cuda

    if not ptx.available():
        pytest.skip("NVVM is not installed: no PTX compilation here")
    fn = getattr(kernel, "py_func", kernel)
    g = dict(fn.__globals__)
    g.update(constants)
    f = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    with ptx._device_functions_without_gpu(ptx.T4):
        text, _ = cuda.compile_ptx(f, ptx.arg_types(args), cc=(8, 0), fastmath=fastmath)
    return text


def _f32(*shape):
    return np.zeros(shape, np.float32)


def test_ch16_benchmark_kernels_compile():
    from puzzles.pmpp import ch05_memory_tiling as ch05

    assert ".f64" not in _compile(
        ch16.conv_forward, (_f32(1, 1, 1, 1), _f32(1, 1, 1, 1), _f32(1, 1, 1, 1), _f32(1))
    )
    text = _compile(
        ch16.conv_tiled,
        (_f32(1, 1, 1, 1)[:, 0:1], _f32(1, 1, 1, 1)),
        BANK=_f32(16, 64, 3, 3),
        BANK_BIAS=_f32(16),
        BANK_K=16,
        BANK_C=64,
        BANK_FS=3,
        TILE=16,
        IN_TILE=18,
    )
    assert ".const" in text  # the filter bank really is in constant memory
    _compile(ch16.bench._im2col_batch, (_f32(1, 1, 1), _f32(1, 1, 1, 1), 3))
    _compile(ch16.bench._add_row_bias, (_f32(1, 1), _f32(1)))
    consts = ch05.regtile_constants(64, 64, 8, 4, 4)
    _compile(ch05.regtile_matmul_kernel, (_f32(1, 1), _f32(1, 1), _f32(1, 1, 1)[0], 1, 1, 1), **consts)


def test_ch17_benchmark_kernels_compile():
    args = (_f32(1), _f32(1), _f32(1, 3), _f32(1, 2), _f32(1, 3))
    _compile(ch17.fhd_gather, args)  # IEEE sinf/cosf: their slow path for huge angles uses f64 (libdevice)
    fast = _compile(ch17.fhd_gather, args, fastmath=True)
    assert ".f64" not in fast  # float32 all the way in our own arithmetic
    assert "sin.approx" in fast and "cos.approx" in fast  # what fastmath buys: the SFU instructions
    traj = _f32(4096, 3)
    text = _compile(
        ch17.fhd_const, (_f32(1), _f32(1), _f32(1, 2), _f32(1, 3), 0), K_TRAJ=traj, M_TRAJ=4096, CHUNK=4096
    )
    assert ".const" in text
    _compile(ch17.bench._trig_probe, (_f32(1), _f32(1), _f32(1)), fastmath=True)


def test_ch18_benchmark_kernels_compile():
    args = (_f32(1, 1), _f32(1, 4), np.float32(0.3), 1, 1)
    assert ".f64" not in _compile(ch18.dcs_gather, args)
    text = _compile(ch18.dcs_coarsened, args, COARSEN=8)
    assert ".f64" not in text  # float32 all the way: no double-precision arithmetic slipped in
    _compile(ch18.dcs_coarsened, args, fastmath=True, COARSEN=8)
    text = _compile(ch18.dcs_coarsened_rsqrt, args, COARSEN=8)
    assert "rsqrt.approx.f32" in text and "div" not in text and ".f64" not in text
    assert ".f64" not in _compile(ch18.dcs_cutoff, (_f32(1, 1), _f32(1, 1, 1, 4), np.float32(0.3), 1, 1))


def test_ch18_split_kernel_matches_float64_on_the_simulator(sim_engine):
    """dcs_fast.py's kernel (a benchmark candidate: atoms split over threadIdx.y, partial sums added
    in shared memory) at small constants, every row against the float64 map: rows shorter than a
    block, several blocks, atoms not a multiple of the slices."""
    from numba import cuda

    from helpers.timing import specialize
    from puzzles.pmpp.ch18_electrostatics import dcs_fast as f

    rng = np.random.default_rng(18)
    for (txf, split, cf, soft), (nx, ny, n) in (
        ((8, 4, 2, 0), (37, 3, 13)),
        ((4, 3, 2, 0), (5, 2, 7)),
        ((8, 2, 4, 0), (70, 2, 16)),
        ((8, 2, 4, 1), (40, 2, 9)),  # one point in 4 through rsqrt_fma
    ):
        k = specialize(f.dcs_split_kernel, **f.fast_constants(txf, split, cf, soft))
        z = np.float32(0.2)
        atoms = ch18.make_atoms(rng, n, nx, ny, z)
        energy = cuda.to_device(np.full((ny, nx), np.nan, np.float32))
        k[(math.ceil(nx / (txf * cf)), ny), (txf, split)](energy, cuda.to_device(atoms.ravel()), z, nx, ny)
        want = ch18.potential(atoms, z, nx, ny)
        # rsqrt_fma's relative error (< 5e-6, two Newton steps) on up to n terms of at most Q_MAX / Z_GAP
        atol = ch18.coulomb_tolerance(n) + (5e-6 * n * ch18.Q_MAX / ch18.Z_GAP if soft else 0)
        np.testing.assert_allclose(energy.copy_to_host(), want, rtol=1e-5, atol=atol)
    with pytest.raises(AssertionError, match="SOFT"):
        f.fast_constants(32, 8, 8, 8)


def test_ch18_rsqrt_fma_is_within_its_bound():
    """The FMA-pipe 1/sqrt (the bit-trick guess and two Newton steps) over the benchmark's range of
    squared distances (Z_GAP^2 to the map's diagonal): relative error below 5e-6."""
    from puzzles.pmpp.ch18_electrostatics import dcs_fast as f

    x = np.geomspace(0.25, 1e5, 2000).astype(np.float32)
    got = np.array([f.rsqrt_fma.py_func(v) for v in x], np.float64)
    assert np.abs(got * np.sqrt(x.astype(np.float64)) - 1).max() < 5e-6


@pytest.mark.parametrize("cc, soft", [((7, 5), 0), ((9, 0), 0), ((9, 0), 1)])
def test_ch18_split_kernel_is_one_rsqrt_per_term(cc, soft):
    """At a benchmark shape: one rsqrt.approx.ftz.f32 (MUFU.RSQ, no denormal fix-up) per term (but
    the `soft` ones: no MUFU), no division or square root, one 16-byte load per atom, nothing in
    local memory, no float64."""
    from numba import cuda, types

    from helpers.timing import specialize
    from puzzles.pmpp.ch18_electrostatics import dcs_fast as f

    if not ptx.available():
        pytest.skip("NVVM is not installed: no PTX compilation here")
    k = specialize(f.dcs_split_kernel, **f.fast_constants(32, 8, 8, soft))
    sig = (types.float32[:, ::1], types.float32[::1], types.float32, types.int64, types.int64)
    with ptx._device_functions_without_gpu(cc):
        text, _ = cuda.compile_ptx(k.py_func, sig, cc=cc)
    assert text.count("rsqrt.approx.ftz.f32") >= 8 - soft and "ld.global.v4.f32" in text
    assert "div." not in text and "sqrt.rn" not in text and "rsqrt.approx.f32" not in text
    assert "ld.local" not in text and "st.local" not in text and ".f64" not in text


# ------------------------------------------------------------------ benchmarks: a dry run on the simulator


@pytest.fixture
def fake_timing(sim_engine, monkeypatch):
    """timing.time_gpu runs the launch once (on the simulator) and reports 1 ms; no SGEMM ceiling."""
    from helpers import timing

    def once(fn, **_):
        fn()
        return 1e-3

    monkeypatch.setattr(timing, "time_gpu", once)
    monkeypatch.setattr(timing, "sgemm_ceiling", lambda *a, **k: None)
    return timing


def _names(rows):
    return [r.name for r in rows]


def test_ch16_benchmark_dry_run(fake_timing, monkeypatch):
    from helpers import sim, tuning

    # the searched GEMMs include chapter 5's 8 x 8-per-thread kernel: 64 outputs a thread, many steps
    monkeypatch.setattr(sim.config, "steps_per_thread", sim.config.steps_per_thread * 8)
    monkeypatch.setattr(tuning, "device_name", lambda: "simulator")  # the GEMM search, read-only cache
    rows = ch16.benchmark(layer=(1, 2, 3, 7, 6))  # validation runs on every variant
    assert _names(rows) == ["ch16 direct", "ch16 tiled, constant filter bank", ch16.GOAL["best"]]
    assert all(r.flops == 2 * 1 * 3 * 7 * 6 * 2 * 9 for r in rows)


def test_ch17_benchmark_dry_run(fake_timing):
    rows = ch17.benchmark(sizes=(40, 20, 8, 64))
    assert _names(rows) == [
        "ch17_fhd_gather",
        "ch17_fhd_const",
        "ch17_fhd_gather (fastmath)",
        "ch17_fhd_const (fastmath)",
    ]
    assert all(r.flops == ch17.FLOPS_PER_PAIR * 40 * 20 for r in rows)


def test_ch18_benchmark_dry_run(fake_timing):
    rows = ch18.benchmark(size=(12, 9), rsqrt=False)
    assert "ch18_dcs_coarsened (fastmath)" in _names(rows)
    assert _names(rows)[-1] == "ch18_dcs_cutoff (direct-sum FLOPs)"


def test_ch18_launch_shapes_fit_the_map():
    """A block row of tx * coarsening points wider than the map computes terms nobody stores: the first
    launch (128 x 8 on 512 points) did half its work so. Every searched shape fits; the old one did not."""
    from puzzles.pmpp.ch18_electrostatics import bench

    assert bench.fit_coarsening(512, 128, 8) == 4 and bench.fit_coarsening(512, 64, 8) == 8
    grid = bench.rsqrt_grid(512)
    assert list(grid.values())[0] == (128, 2, 4)
    assert all(tx * c <= 512 for tx, _, c in grid.values()) and (128, 2, 8) not in grid.values()
