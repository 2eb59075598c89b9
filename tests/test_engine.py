"""helpers.device.STATE (real GPU or simulator) with fakes (no GPU needed): timing asks it, and the
GPU stage of `check` gets numba-cuda's own functions even after `helpers.use("sim")` has replaced
those on `numba.cuda`."""

from __future__ import annotations

import dataclasses

import numba.cuda as cuda
import numpy as np
import pytest

from helpers import device, timing
from helpers.device import DeviceState


@pytest.fixture
def state(monkeypatch):
    """A fresh DeviceState in place of the global one; numba-cuda restored afterwards."""
    s = DeviceState()
    monkeypatch.setattr(device, "STATE", s)
    yield s
    s._unpatch()


def test_sim_engine_keeps_the_real_functions(state):
    real_to_device = cuda.to_device
    state.gpu = False
    assert state.use("sim") == "sim"
    assert cuda.to_device is not real_to_device  # notebook cells now get the simulator's
    assert state.real("to_device") is real_to_device
    assert state.use("auto") == "sim"  # no GPU: auto is the simulator, still patched once
    assert state.real("to_device") is real_to_device
    state._unpatch()
    assert cuda.to_device is real_to_device and state.saved == {}


def test_sim_engine_installs_the_host_api_and_gives_it_back(state):
    from helpers.sim import host

    names = ("stream", "default_stream", "event", "event_elapsed_time", "pinned_array", "pinned_array_like")
    real = {n: getattr(cuda, n) for n in names}
    state.gpu = False
    state.use("sim")
    for n in names:
        assert getattr(cuda, n) is host.HOST_API[n], n
        assert state.real(n) is real[n], n
    s, start, end = cuda.stream(), cuda.event(), cuda.event()  # host code written for a GPU runs as is
    start.record(s)
    pinned = cuda.pinned_array(3, np.float32)
    cuda.to_device(np.ones(3, np.float32), stream=s).copy_to_host(pinned, stream=s)
    end.record(s)
    assert (pinned == 1).all() and cuda.event_elapsed_time(start, end) >= 0
    state.gpu = True  # pretend, to switch back without a GPU
    assert state.use("gpu") == "gpu"
    for n in names:
        assert getattr(cuda, n) is real[n], n
    assert state.saved == {}


def test_gpu_engine_without_a_gpu_is_refused(state):
    state.gpu = False
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        state.use("gpu")


def test_skip_reason_asks_the_engine_state_not_the_environment(state, monkeypatch):
    monkeypatch.delenv("MP_ENGINE", raising=False)
    state.gpu = True  # pretend a GPU is present
    state.name = "gpu"
    assert timing.skip_reason() is None
    state.name = "sim"  # as after helpers.use("sim"), whatever MP_ENGINE says
    monkeypatch.setenv("MP_ENGINE", "gpu")
    assert "simulator" in timing.skip_reason()
    state.gpu = False
    assert "No CUDA GPU" in timing.skip_reason()


def test_gpu_stage_of_check_uses_the_real_functions_after_use_sim(state, monkeypatch):
    """The GPU stage with fake numba-cuda functions: it must call the saved real ones, not the
    simulator's that `use("sim")` put on `numba.cuda`."""
    import puzzles
    from helpers import check

    calls = []

    class FakeDevice:
        def __init__(self, a):
            self.a = np.array(a)

        def copy_to_host(self):
            return self.a

    def fake_to_device(a):
        calls.append("to_device")
        return FakeDevice(a)

    def fake_launch(kernel, grid, block, args, shared_bytes=0):
        calls.append("launch")
        host = [a.a if isinstance(a, FakeDevice) else a for a in args]
        from helpers import sim

        sim.launch(kernel, grid, block, host, shared_bytes=shared_bytes)

    state.gpu = False
    state.use("sim")
    state.saved["to_device"] = fake_to_device  # stands for numba-cuda's own, saved by the patch
    state.saved["synchronize"] = lambda: calls.append("synchronize")
    monkeypatch.setattr(device, "gpu_launch", fake_launch)
    p = puzzles.get("map")
    spec_calls = []

    def counting_spec(**kw):
        spec_calls.append(1)
        return p.spec(**kw)

    counted = dataclasses.replace(p, spec=counting_spec)
    result = check.check(counted, p.reference, seed=0, gpu=True)
    assert result.stages[-1] == "GPU" and result.engines == result.stages  # the old name still reads
    assert len(spec_calls) == result.cases  # the GPU stage reads the expected outputs the record kept
    assert calls.count("to_device") >= 2 and "launch" in calls and "synchronize" in calls
    state.saved.pop("to_device")
    state.saved.pop("synchronize")


def test_helpers_engine_is_the_deprecated_name_of_helpers_device():
    import helpers.engine
    from helpers import engine

    assert helpers.engine is device and engine is device and engine.STATE is device.STATE
    assert device.EngineState is DeviceState
