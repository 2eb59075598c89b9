"""PMPP chapters 6-9: every reference passes, every stub is NotSolvedYet, known-wrong kernels are
rejected for the right reason, and the GPU benchmark code is right (run on the simulator with the
GPU tile sizes)."""

import importlib

import pytest

import puzzles

MODULES = ["pmpp.ch06_performance", "pmpp.ch07_convolution", "pmpp.ch08_stencil", "pmpp.ch09_histogram"]

CHAPTERS = {m: "pmpp-" + m.split(".")[1][2:4] for m in MODULES}  # "pmpp.ch06_performance" -> "pmpp-06"
NAMES = [n for m in MODULES for n in puzzles.names(CHAPTERS[m])]  # every op file's rungs
EXERCISES = [n for n in NAMES if "### BEGIN SOLUTION" in puzzles.get(n).source]


def test_ladders_complete():
    assert len(NAMES) == 19
    for m in MODULES:
        mod = importlib.import_module(f"puzzles.{m}")
        ex = [n for n in puzzles.names(CHAPTERS[m]) if n in EXERCISES]
        assert len(ex) >= 2, f"{m}: only {len(ex)} exercises"
        if mod.GOAL is not None:  # judged on a puzzle's kernel or a GPU-only variant the benchmark times
            assert mod.GOAL["best"] in puzzles.names(CHAPTERS[m]) + list(mod.variants())
            assert mod.GOAL["ceiling"] == "copy" and 0 < mod.GOAL["fraction"] <= 1


def rejects(name, kernel, exc, diagnostic=None):
    with pytest.raises(exc) as info:
        puzzles.check(name, kernel, seed=5)
    if diagnostic is not None:
        assert isinstance(info.value.diagnostic, diagnostic), repr(info.value.diagnostic)
    return info.value


# ---------------------------------------------------------------------------- ch06


# ---------------------------------------------------------------------------- ch07


# ---------------------------------------------------------------------------- ch08


# ---------------------------------------------------------------------------- ch09


# ---------------------------------------------------------------------------- GPU code, on the simulator


def test_benchmark_variants_on_sim(sim_engine):
    """The GPU versions (32-wide tiles, specialised constants, GPU launch shapes) compute the right thing."""
    from puzzles.pmpp import ch06_performance as c6
    from puzzles.pmpp import ch07_convolution as c7
    from puzzles.pmpp import ch08_stencil as c8
    from puzzles.pmpp import ch09_histogram as c9

    c6.validate_variants(shapes=((37, 45),), configs=((32, 8), (16, 4)))
    c7.validate_variants(shapes=((37, 45),))
    c8.validate_variants(shapes=((7, 31, 33),))
    c9.validate_variants(sizes=(5003,), block=64, blocks=5)


def test_benchmark_without_gpu():
    from helpers import timing

    if timing.skip_reason() is None:
        pytest.skip("a GPU is present: the benchmark is run by tools.bench instead")
    for m in MODULES:
        with pytest.raises(RuntimeError, match="timing skipped"):
            importlib.import_module(f"puzzles.{m}").benchmark(scale=0.01)


def test_validation_catches_wrong_variant(sim_engine):
    """The validation step names a broken variant."""
    from puzzles.pmpp.ch09_histogram import bench as c9

    real = c9.variants

    def broken(block=64, blocks=None):
        v = real(block, blocks)
        v["ch09_hist_unrolled"] = (lambda hist, priv, data: None, False)
        return v

    c9.variants = broken
    try:
        with pytest.raises(AssertionError, match="ch09_hist_unrolled"):
            c9.validate_variants(sizes=(999,), block=64, blocks=3)
    finally:
        c9.variants = real
