"""Wrong order and wrong environment: each gets one plain message naming the fix (no GPU needed)."""

import subprocess
import sys
import types
import warnings

import pytest

from helpers import environment as env


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(env, "_setup_ran", False)
    return env


def in_notebook(monkeypatch):
    shell = types.SimpleNamespace(kernel=object())  # a Jupyter/Colab kernel's shell has one
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))


def test_check_before_setup_in_a_notebook_names_the_setup_cell(fresh, monkeypatch):
    in_notebook(monkeypatch)
    with pytest.raises(env.EnvironmentProblem, match="first code cell \\(the setup cell\\) first"):
        env.require_setup()
    env.prepare(install=False)
    env.require_setup()  # after the setup cell: silent


def test_puzzles_check_before_setup_names_the_setup_cell(fresh, monkeypatch):
    import puzzles

    in_notebook(monkeypatch)
    p = puzzles.get("map")
    with pytest.raises(env.EnvironmentProblem, match="setup cell"):
        puzzles.check("map", p.reference, seed=0, gpu=False)
    env.prepare(install=False)
    assert puzzles.check("map", p.reference, seed=0, gpu=False).cases >= 5


def test_outside_a_notebook_no_setup_cell_is_needed(fresh, monkeypatch):
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    env.require_setup()


def test_launch_before_setup_without_gpu_names_the_setup_cell(fresh, monkeypatch):
    in_notebook(monkeypatch)
    CudaSupportError = type("CudaSupportError", (ImportError,), {})
    assert env.explain(CudaSupportError("Error at driver init: no driver")) == env.SETUP_FIRST
    env.prepare(install=False)
    assert env.explain(CudaSupportError("Error at driver init: no driver")) == env.NO_GPU


def test_missing_numba_cuda(fresh, monkeypatch, capsys):
    monkeypatch.setattr(env, "has_numba_cuda", lambda: False)
    assert env.prepare(install=False) == [env.NUMBA_CUDA_MISSING]
    assert "numba-cuda is not installed" in capsys.readouterr().out
    err = ModuleNotFoundError("No module named 'numba_cuda'", name="numba_cuda")
    with pytest.raises(env.EnvironmentProblem, match="pip install -r requirements-runtime.txt") as e:
        env.reraise(err)
    assert e.value.__cause__ is err


def test_missing_nvvm():
    for text in (
        "libNVVM cannot be found. Please install the cuda-toolkit",
        'Failure finding "libnvrtc.so": No such file: libnvrtc.so*',
    ):
        assert env.explain(RuntimeError(text)) == env.NVVM_MISSING


def test_driver_older_than_ptx(monkeypatch):
    monkeypatch.setattr(env, "_driver_cuda", lambda: (12, 2))
    CudaAPIError = type("CudaAPIError", (Exception,), {})
    err = CudaAPIError(222, "Call to cuModuleLoadDataEx results in CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
    err.code = 222
    msg = env.explain(err)
    assert "driver is older" in msg and "supports CUDA 12.2" in msg
    assert "nvidia-cuda-nvcc-cu12==12.2.*" in msg


def test_no_gpu_when_gpu_asked(fresh, monkeypatch):
    from helpers import engine

    monkeypatch.setattr(engine.STATE, "gpu", False)
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        engine.use("gpu")
    monkeypatch.setattr(env, "_setup_ran", True)
    assert "Change runtime type > T4 GPU" in env.explain(type("CudaSupportError", (Exception,), {})("x"))


def test_unrelated_errors_pass_through():
    err = ValueError("index 7 out of range")
    assert env.explain(err) is None
    with pytest.raises(ValueError):
        env.reraise(err)


def test_colab_cpu_installs_the_compile_set_without_restart(fresh, monkeypatch):
    calls = []
    monkeypatch.setattr(env, "runtime_cuda", lambda: 12)  # today's Colab, whatever this machine has
    monkeypatch.setattr(env, "has_numba_cuda", lambda: bool(calls))
    monkeypatch.delitem(sys.modules, "numba.cuda", raising=False)

    def fake_pip(cmd, **kw):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    assert env.prepare(install=True, run=fake_pip) == []
    (cmd,) = calls
    assert cmd[1:5] == ["-m", "pip", "install", "--quiet"] and "--no-deps" in cmd
    assert {"numba-cuda==0.22.2", "nvidia-cuda-nvcc-cu12==12.8.93", "nvidia-cuda-nvrtc-cu12==12.8.93"} <= set(
        cmd
    )


def test_a_cuda_13_runtime_gets_the_cuda_13_compiler(fresh, monkeypatch):
    calls = []
    monkeypatch.setattr(env, "has_numba_cuda", lambda: bool(calls))
    monkeypatch.delitem(sys.modules, "numba.cuda", raising=False)
    monkeypatch.setattr(env, "runtime_cuda", lambda: 13)
    env.prepare(install=True, run=lambda cmd, **kw: calls.append(cmd) or subprocess.CompletedProcess(cmd, 0))
    (cmd,) = calls
    assert {"numba-cuda==0.30.4", "nvidia-nvvm==13.0.88", "cuda-bindings==13.0.3"} <= set(cmd)
    assert not any("cu12" in c for c in cmd)


@pytest.mark.parametrize(
    "driver, wheels, major",
    [
        (None, {}, 12),  # nothing says: today's Colab
        (13, {"torch": "2.11.0+cu128"}, 13),  # the driver wins on a GPU runtime
        (12, {}, 12),
        (None, {"torch": "2.12.0+cu130", "cuda-bindings": "12.9.7"}, 13),  # CPU runtime: torch's CUDA
        (None, {"torch": "2.11.0+cu128"}, 12),
        (None, {"cupy-cuda13x": "14.2.0"}, 13),
        (None, {"cuda-bindings": "13.0.3"}, 13),
        (None, {"torch": "2.14.0+cu142"}, 13),  # a CUDA 14 stack: the newest compiler set there is
        (11, {}, 12),
    ],
)
def test_runtime_cuda_reads_the_driver_then_the_wheels(driver, wheels, major):
    assert env.runtime_cuda(lambda: driver, lambda: env._wheels_major(wheels)) == major


def test_driver_older_than_cuda_13_ptx_names_the_cuda_13_wheel(monkeypatch):
    monkeypatch.setattr(env, "_driver_cuda", lambda: (13, 0))
    err = RuntimeError("CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
    assert 'pip install "nvidia-nvvm==13.0.*"' in env.explain(err)


def test_colab_cpu_with_cuda_target_already_imported_says_restart(fresh, monkeypatch):
    monkeypatch.setattr(env, "has_numba_cuda", lambda: False)
    monkeypatch.setitem(sys.modules, "numba.cuda", types.ModuleType("numba.cuda"))
    assert env.prepare(install=True, run=None) == [env.NEEDS_RESTART]


def test_colab_cpu_install_failure_is_one_paragraph(fresh, monkeypatch):
    monkeypatch.setattr(env, "has_numba_cuda", lambda: False)
    monkeypatch.delitem(sys.modules, "numba.cuda", raising=False)
    fail = lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution")  # noqa: E731
    (note,) = env.prepare(install=True, run=fail)
    assert "No matching distribution" in note and "simulator" in note


def test_host_array_warning_is_silenced_only_inside():
    text = "Host array used in CUDA kernel will incur copy overhead to/from device."
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with env.quiet_host_arrays():
            warnings.warn(text, stacklevel=1)
        warnings.warn(text, stacklevel=1)
    assert [str(w.message) for w in got] == [text]


def test_banner_survives_missing_numba_cuda(monkeypatch):
    import importlib.metadata as md

    real = md.version
    monkeypatch.setattr(
        md,
        "version",
        lambda d: (_ for _ in ()).throw(md.PackageNotFoundError(d)) if d == "numba-cuda" else real(d),
    )
    assert "numba-cuda missing" in env.versions()
