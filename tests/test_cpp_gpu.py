"""CUDA C++ twins on a real GPU: every reference passes its puzzle's cases (in a child process, under
compute-sanitizer where installed), every known-wrong twin that compiles is rejected for its reason
(WrongAnswer naming the cells; OutOfBounds from memcheck, DataRace from racecheck), and a learner's
own launch copies its results back. Skipped, in one line, without a GPU."""

from __future__ import annotations

import numpy as np
import pytest
from mutants.cpp import CPP_MUTANTS, mutate

from helpers import cpp as hcpp
from helpers.check import CompileRejected, KernelDiagnosed, WrongAnswer
from helpers.cpp import gpu
from helpers.device import gpu_present
from puzzles import cpp

if not gpu_present():  # one line for the whole file
    pytest.skip(
        "no GPU: the CUDA C++ twins were compile-checked (test_cpp.py), not run", allow_module_level=True
    )

SEEDS = (0, 1)


@pytest.mark.parametrize("name", cpp.names())
def test_twin_passes_on_the_gpu(name):
    for seed in SEEDS:
        result = cpp.check(name, cpp.solution(name), seed=seed)
        assert result.ran and result.cases >= 5, repr(result)


ON_GPU = [(n, m) for n, ms in CPP_MUTANTS.items() for m in ms if m[2] is not CompileRejected]


@pytest.mark.parametrize("name, mutant", ON_GPU, ids=[f"{n}-{m[0]}" for n, m in ON_GPU])
def test_wrong_twin_is_rejected_for_its_reason(name, mutant):
    label, edits, expected, detail = mutant
    if expected is KernelDiagnosed and gpu.sanitizer() is None:
        pytest.skip(gpu.NO_SANITIZER)
    for seed in SEEDS:
        with pytest.raises(expected) as e:
            cpp.check(name, mutate(cpp.solution(name), edits), seed=seed)
        if detail is not None:
            assert isinstance(e.value.diagnostic, detail), str(e.value)
        if expected is WrongAnswer:
            assert "is wrong" in str(e.value) and "case " in str(e.value)


def test_a_learners_launch_copies_results_back():
    k = hcpp.kernel(cpp.solution("guard"))
    a = np.arange(5, dtype=np.float32) * 1.5
    out = np.full(5, np.nan, np.float32)
    k[1, 8](out, a, 5)
    np.testing.assert_allclose(out, a + 10)


def test_the_gpu_refuses_a_block_this_kernel_cannot_hold():
    source = r"""
extern "C" __global__ void __launch_bounds__(128) small(float* out) { out[threadIdx.x] = 1.0f; }
"""
    with pytest.raises(Exception, match="at most 128 threads per block"):
        hcpp.kernel(source)[1, 256](np.zeros(256, np.float32))


def test_compile_errors_come_before_any_run():
    with pytest.raises(CompileRejected):
        cpp.check("map", cpp.solution("map").replace("a[i]", "a[i"))
