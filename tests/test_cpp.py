"""CUDA C++ beside Numba (helpers.cpp, puzzles/cpp/): what runs without a GPU. Every twin compiles
for the T4 with NVRTC and passes its compile check (saying it did not run), every stub is
NotSolvedYet, every known-wrong twin that is a compile-time mistake is rejected for its reason, and
each kind of bad input gets its one clear message. The GPU runs are in tests/test_cpp_gpu.py."""

from __future__ import annotations

import time

import numpy as np
import pytest
from mutants.cpp import CPP_MUTANTS, mutate

import puzzles
from helpers import cpp as hcpp
from helpers.check import CompileRejected, NotSolvedYet
from helpers.sim.errors import LaunchError
from puzzles import cpp

pytestmark = pytest.mark.skipif(hcpp.available() is not None, reason=str(hcpp.available()))

MAP = r"""
extern "C" __global__ void map_kernel(float* out, const float* a) {
    int i = threadIdx.x;
    out[i] = a[i] + 10.0f;
}
"""


def test_every_puzzle_has_a_twin_and_wrong_ones():
    assert set(CPP_MUTANTS) == {n for n in cpp.names() if puzzles.get(n).chapter == "puzzles"}
    assert len(CPP_MUTANTS) == 14
    assert all(any(m[2] is not CompileRejected for m in ms) for ms in CPP_MUTANTS.values())


@pytest.mark.parametrize("name", cpp.names())
def test_twin_compiles_and_says_it_did_not_run(name):
    result = cpp.check(name, cpp.solution(name), seed=0, gpu=False)
    assert not result.ran and "not run" in repr(result) and "puzzles.check" in repr(result)
    if cpp.stub(name) != cpp.solution(name):  # the 14 puzzles' exercises (Rosetta twins are shown)
        with pytest.raises(NotSolvedYet):
            cpp.check(name, cpp.stub(name), seed=0, gpu=False)


COMPILE_TIME = [(n, m) for n, ms in CPP_MUTANTS.items() for m in ms if m[2] is CompileRejected]


@pytest.mark.parametrize("name, mutant", COMPILE_TIME, ids=[f"{n}-{m[0]}" for n, m in COMPILE_TIME])
def test_compile_time_mistake_is_rejected_for_its_reason(name, mutant):
    label, edits, _, phrase = mutant
    with pytest.raises(CompileRejected) as e:
        cpp.check(name, mutate(cpp.solution(name), edits), seed=0, gpu=False)
    assert phrase in str(e.value), str(e.value)


GPU_TIME = [(n, m) for n, ms in CPP_MUTANTS.items() for m in ms if m[2] is not CompileRejected]


@pytest.mark.parametrize("name, mutant", GPU_TIME, ids=[f"{n}-{m[0]}" for n, m in GPU_TIME])
def test_the_child_runs_the_mutants_own_code(name, mutant, monkeypatch):
    """A known-wrong twin differs from the reference in code, not only in a comment (zip's "a used
    twice" once edited the first line's comment and passed on the GPU), and the job sent to the
    child holds that source, which NVRTC compiles to other machine code than the reference's."""
    from helpers.cpp import nvrtc
    from helpers.cpp.check import _words
    from helpers.cpp.gpu import ChildResult

    source, reference = mutate(cpp.solution(name), mutant[1]), cpp.solution(name)
    assert _words(source) != _words(reference)
    assert nvrtc.compile_source(source).cubin != nvrtc.compile_source(reference).cubin
    sent = []
    _fake_gpu(monkeypatch, lambda job, tool: sent.append(job) or ChildResult(None, "", "stopped here"))
    with pytest.raises(RuntimeError, match="stopped here"):
        cpp.check(name, source, seed=0, gpu=True)
    assert sent and all(job["source"] == source and job["cubin"] is None for job in sent)


def test_a_syntax_error_names_the_line_of_the_cell():
    source = r"""
extern "C" __global__ void map_kernel(float* out, const float* a) {
    int i = threadIdx.x;
    out[i] = a[i] + 10.0f x;
}
"""
    first = source_line = None
    for n, text in enumerate(open(__file__).read().splitlines(), 1):
        if text.startswith('extern "C" __global__ void map_kernel') and first is None and n > 40:
            first = n
        if "10.0f x;" in text and source_line is None and n > 40:
            source_line = n
    with pytest.raises(CompileRejected) as e:
        cpp.check("map", source, gpu=False)
    text = str(e.value)
    assert f"line {source_line} of your cell (line 4 of the C++ source): `out[i] = a[i] + 10.0f x;`" in text
    assert 'expected a ";"' in text


def test_missing_extern_c_and_wrong_name_list_the_kernels():
    with pytest.raises(CompileRejected, match=r'_Z10map_kernelPfPKf.*extern "C"'):
        hcpp.kernel(MAP.replace('extern "C" ', ""), "map_kernel")
    two = MAP + MAP.replace("map_kernel", "other_kernel")
    with pytest.raises(
        CompileRejected, match="no kernel named `mapk` in this source; it has `map_kernel`, `other_kernel`"
    ):
        hcpp.kernel(two, "mapk")
    with pytest.raises(CompileRejected, match="say which one"):
        hcpp.kernel(two)
    with pytest.raises(CompileRejected, match="defines no kernel"):
        hcpp.kernel("__device__ float f(float x) { return x; }")


def test_too_many_threads_and_wrong_arguments_are_launch_errors():
    k = hcpp.kernel(MAP)
    with pytest.raises(LaunchError, match=r"64 x 32 = 2048 threads.*at most 1024"):
        k[1, (64, 32)]
    with pytest.raises(LaunchError, match="block.z = 128"):
        k[1, (1, 1, 128)]
    with pytest.raises(LaunchError, match="takes 2 arguments"):
        k[1, 4](np.zeros(4, np.float32))
    with pytest.raises(LaunchError, match="`a` holds float64, so it must be `double\\*`"):
        k[1, 4](np.zeros(4, np.float32), np.zeros(4))


def test_a_launch_without_a_gpu_says_it_did_not_run(capsys, monkeypatch):
    from helpers import device

    monkeypatch.setattr(device.STATE, "gpu", False)
    out = np.zeros(3, np.float32)
    hcpp.kernel(MAP)[1, 3](out, np.ones(3, np.float32))
    assert capsys.readouterr().out.startswith("Not run: this machine has no GPU")


def test_parameters_past_the_puzzles_name_array_axes():
    from helpers.cpp.source import bind, kernel_params

    params = kernel_params(
        'extern "C" __global__ void f(float* o, const float* q, int q_dim0, int q_dim1) {}', "f"
    )
    q = np.zeros((5, 7), np.float32)
    values, problem = bind(params, ("o", "q"), [np.zeros(5, np.float32), q])
    assert problem is None and values[2:] == [5, 7] and values[2].dtype == np.int32
    params = kernel_params('extern "C" __global__ void f(float* o, const float* q, int n) {}', "f")
    _, problem = bind(params, ("o", "q"), [np.zeros(5, np.float32), q])
    assert "ARRAY_dimK" in problem


def test_a_compile_check_costs_milliseconds():
    """Measured, not assumed: a fresh NVRTC compile of a twin for sm_75 (the notebook's cost)."""
    from helpers.cpp import nvrtc

    source = cpp.solution("matmul") + "\n// fresh\n"
    start = time.perf_counter()
    assert nvrtc.compile_source(source).ok
    assert time.perf_counter() - start < 2.0


# ------------------------------------------------------------------ the GPU path, with the child faked
# (tests/test_cpp_gpu.py runs it for real; here the verdicts drawn from a child's answer are tested)

MEMCHECK = """\
========= COMPUTE-SANITIZER
========= Program hit CUDA_ERROR_NOT_FOUND (error 500) on CUDA API call to cuGetProcAddress.
=========
========= Invalid __global__ write of size 4 bytes
=========     at guard_kernel+0x90 in kernel.cu:5
=========     by thread (5,0,0) in block (0,0,0)
=========     Address 0x7f0000000214 is out of bounds
=========
========= ERROR SUMMARY: 2 errors
"""
RACECHECK = """\
========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at dot_kernel+0x120 in kernel.cu:9
=========     and Read access at dot_kernel+0x1c0 in kernel.cu:14 [7 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""


def _fake_gpu(monkeypatch, answer):
    """Make the check believe there is a GPU and a sanitizer, and let `answer(job, tool)` be the child."""
    from helpers.cpp import gpu

    monkeypatch.setattr(gpu, "sanitizer", lambda: "/fake/compute-sanitizer")

    def run(job, tool=None, seconds=0, options=()):
        # racecheck listing every hazard (`--racecheck-report hazard`) answers as "racecheck-hazard"
        child = answer(job, tool + "-hazard" if "hazard" in options else tool)
        child.report = gpu._errors_of(child.report)  # as the real run reads the sanitizer's output
        return child

    monkeypatch.setattr(gpu, "run", run)


def _ran(job, transform=lambda k, arrays: arrays):
    """What a correct child returns: each run's arrays after the kernel, computed with NumPy."""
    return {
        "arch": "sm_90",
        "error": None,
        "max_threads": 1024,
        "runs": [transform(k, r["args"]) for k, r in enumerate(job["runs"])],
    }


def _guard(k, args):
    out, a, size = args
    out = out.copy()
    out[:size] = a[:size] + np.float32(10)
    return [out, a, None]


def test_gpu_answers_are_compared_with_the_spec(monkeypatch):
    from helpers.check import WrongAnswer
    from helpers.cpp.gpu import ChildResult

    _fake_gpu(monkeypatch, lambda job, tool: ChildResult(_ran(job, _guard), ""))
    result = cpp.check("guard", cpp.solution("guard"), seed=3, gpu=True)
    assert result.ran and "Passed: guard in CUDA C++" in repr(result) and "sm_90" in repr(result)
    assert "compute-sanitizer memcheck found nothing" in repr(result)

    def off_by_one(k, args):
        out, a, _ = _guard(k, args)
        out[-1] += 1
        return [out, a, None]

    _fake_gpu(monkeypatch, lambda job, tool: ChildResult(_ran(job, off_by_one), ""))
    with pytest.raises(WrongAnswer, match=r"(?s)failed on the GPU, case 0 .*`out` is wrong"):
        cpp.check("guard", cpp.solution("guard"), seed=3, gpu=True)


def test_sanitizer_reports_become_diagnostics_at_cell_lines(monkeypatch):
    from helpers.check import KernelDiagnosed
    from helpers.cpp.gpu import ChildResult
    from helpers.sim.errors import DataRace, OutOfBounds

    _fake_gpu(
        monkeypatch, lambda job, tool: ChildResult(_ran(job, _guard), MEMCHECK if tool == "memcheck" else "")
    )
    with pytest.raises(KernelDiagnosed) as e:
        cpp.check("guard", cpp.solution("guard"), gpu=True)
    assert isinstance(e.value.diagnostic, OutOfBounds) and e.value.diagnostic.thread == (5, 0, 0)
    assert (
        "Invalid __global__ write of size 4 bytes at line 5 of the source: `out[i] = a[i] + 10.0f;`"
        in str(e.value)
    )
    assert "cuGetProcAddress" not in str(e.value)  # an API call's error code is not the kernel's

    def dot(k, args):
        out, a, b, size = args
        return [np.array([np.dot(a[:size].astype(np.float64), b[:size])], np.float32), a, b, None]

    _fake_gpu(
        monkeypatch, lambda job, tool: ChildResult(_ran(job, dot), RACECHECK if tool == "racecheck" else "")
    )
    with pytest.raises(KernelDiagnosed) as e:
        cpp.check("dot", cpp.solution("dot"), gpu=True)
    assert isinstance(e.value.diagnostic, DataRace) and "line 9 of the source" in str(e.value)


def test_a_kernel_that_never_ends_and_a_missing_sanitizer_are_said(monkeypatch):
    from helpers.check import KernelDiagnosed
    from helpers.cpp import gpu
    from helpers.cpp.gpu import ChildResult

    _fake_gpu(
        monkeypatch,
        lambda job, tool: ChildResult(None, "", "the kernel had not finished after 120 s and was stopped"),
    )
    with pytest.raises(KernelDiagnosed, match="Runaway: the kernel had not finished"):
        cpp.check("guard", cpp.solution("guard"), gpu=True)
    _fake_gpu(monkeypatch, lambda job, tool: ChildResult(_ran(job, _guard), ""))
    monkeypatch.setattr(gpu, "sanitizer", lambda: None)
    assert "compute-sanitizer was not found" in repr(cpp.check("guard", cpp.solution("guard"), gpu=True))


def test_headers_of_the_pip_wheels_are_found():
    """`<cuda_fp16.h>` comes from the pip CUDA wheels' include folders (raw NVRTC has no default path)."""
    source = r"""
#include <cuda_fp16.h>
extern "C" __global__ void __launch_bounds__(128) halve(__half* out, const __half* a) {
    out[threadIdx.x] = __hmul(a[threadIdx.x], __float2half(0.5f));
}
"""
    k = hcpp.kernel(source)
    assert [p.spelled() for p in k.built.params] == ["__half* out", "__half* a"]


def test_without_nvrtc_a_check_says_so_in_one_line(monkeypatch):
    from helpers.cpp import nvrtc

    def missing():
        raise nvrtc.NvrtcMissing("libnvrtc.so.12 not found")

    monkeypatch.setattr(nvrtc, "version", missing)
    assert repr(cpp.check("map", cpp.solution("map"), gpu=False)).startswith(
        "Not checked: CUDA C++ needs NVRTC, which cannot be loaded (libnvrtc.so.12 not found)"
    )
    with pytest.raises(NotSolvedYet):  # the exercise's stub is still told apart
        cpp.check("map", cpp.stub("map"), gpu=False)


def test_a_race_leads_over_the_wrong_answer_it_caused(monkeypatch):
    from helpers.check import KernelDiagnosed
    from helpers.cpp.gpu import ChildResult
    from helpers.sim.errors import DataRace

    def garbage(k, args):
        return [np.full_like(args[0], 7.0), *args[1:3], None]

    _fake_gpu(
        monkeypatch,
        lambda job, tool: ChildResult(_ran(job, garbage), RACECHECK if tool == "racecheck" else ""),
    )
    with pytest.raises(KernelDiagnosed) as e:
        cpp.check("dot", cpp.solution("dot"), gpu=True)
    assert isinstance(e.value.diagnostic, DataRace)


def test_the_summary_tells_compiled_from_run(capsys):
    import puzzles as facade

    cpp._SESSION.clear()
    cpp.check("zip", cpp.solution("zip"), gpu=False)
    facade.summary("puzzles", cpp=True)
    text = capsys.readouterr().out
    assert text.startswith("CUDA C++: 0 of 14 twins passed on a GPU.")
    assert (
        "1 compiled for the T4 but not run (no GPU here): zip." in text
        and "still to pass: map, guard" in text
    )


HAZARDS = """\
========= COMPUTE-SANITIZER
========= ERROR: Potential WAR hazard detected at __shared__ 0x120 in block (1, 0, 0) :
=========     Read Thread (3, 1, 0) at matmul_kernel+0x4d0 in kernel.cu:21
=========     Write Thread (3, 5, 0) at matmul_kernel+0x2b0 in kernel.cu:17
=========     Current Value : 1084227584, Incoming Value : 1077936128
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""


def _matmul_wrong(k, args):
    out, a, b, size = args
    out = (a.astype(np.float64) @ b).astype(np.float32)
    out[-1] += 5  # what a missing barrier did to one row
    return [out, a, b, None]


def test_a_wrong_answer_with_shared_memory_gets_racechecks_hazard_listing(monkeypatch):
    """racecheck's analysis passing a kernel that gave a wrong answer is not the last word: its
    hazard-by-hazard listing is read too, and a hazard there is the race that leads."""
    from helpers.check import KernelDiagnosed, WrongAnswer
    from helpers.cpp.gpu import ChildResult
    from helpers.sim.errors import DataRace

    def child(job, tool):
        return ChildResult(_ran(job, _matmul_wrong), HAZARDS if tool == "racecheck-hazard" else "")

    _fake_gpu(monkeypatch, child)
    with pytest.raises(KernelDiagnosed) as e:
        cpp.check("matmul", cpp.solution("matmul"), seed=0, gpu=True)
    assert isinstance(e.value.diagnostic, DataRace)
    assert e.value.diagnostic.thread == (3, 1, 0) and e.value.diagnostic.block == (1, 0, 0)
    assert "Potential WAR hazard" in str(e.value) and "line 17 of the source" in str(e.value)

    def harmless(job, tool):  # an INFO hazard alone is named in the note, not called a race
        report = HAZARDS.replace("ERROR", "INFO") if tool == "racecheck-hazard" else ""
        return ChildResult(_ran(job, _matmul_wrong), report)

    _fake_gpu(monkeypatch, harmless)
    with pytest.raises(WrongAnswer, match=r"only 1 hazard\(s\) it rates harmless \(INFO\), the first: INFO"):
        cpp.check("matmul", cpp.solution("matmul"), seed=0, gpu=True)


def test_a_wrong_answer_racecheck_saw_no_hazard_in_says_so(monkeypatch):
    """The verdict stays the wrong answer, with a line saying racecheck looked (both ways) and saw
    no hazard, quoting its summary: never a silent WrongAnswer that leaves a race unexplained."""
    from helpers.check import WrongAnswer
    from helpers.cpp.gpu import ChildResult

    said = []

    def child(job, tool):
        said.append(tool)
        summary = "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" if tool else ""
        return ChildResult(_ran(job, _matmul_wrong), "", summary=summary)

    _fake_gpu(monkeypatch, child)
    with pytest.raises(WrongAnswer) as e:
        cpp.check("matmul", cpp.solution("matmul"), seed=0, gpu=True)
    assert said == ["memcheck", "racecheck", "racecheck-hazard"]
    assert "`out` is wrong" in str(e.value)
    assert "Note: compute-sanitizer racecheck watched these runs and reported no shared-memory hazard" in str(
        e.value
    )
    assert "(RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings))" in str(e.value)

    def racecheck_dies(job, tool):
        if tool == "racecheck":
            return ChildResult(None, "", "the child process died (exit 1): boom")
        return ChildResult(_ran(job, _matmul_wrong), "")

    _fake_gpu(monkeypatch, racecheck_dies)  # a tool that could not run is said with the verdict
    with pytest.raises(WrongAnswer, match=r"Note: racecheck could not run here \(.*boom\): races not looked"):
        cpp.check("matmul", cpp.solution("matmul"), seed=0, gpu=True)
    said.clear()  # a right answer costs no second racecheck run
    _fake_gpu(monkeypatch, lambda job, tool: said.append(tool) or ChildResult(_ran(job, _matmul_right), ""))
    assert cpp.check("matmul", cpp.solution("matmul"), seed=0, gpu=True).ran
    assert said == ["memcheck", "racecheck"]


def _matmul_right(k, args):
    out, a, b, size = args
    return [(a.astype(np.float64) @ b).astype(np.float32), a, b, None]
