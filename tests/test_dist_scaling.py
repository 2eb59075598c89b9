"""The scaling script's bookkeeping, on the CPU: the sizes of weak and strong runs (one rank of a
weak run does the one-GPU run's work; a strong run's total is fixed), the efficiency arithmetic,
each rank's device index, two ranks on one GPU caught, and the ranks' state record."""

import os

import pytest

from helpers.dist import state
from helpers.dist.errors import BadCall
from helpers.dist.nccl import bus_id, rank_device, same_gpu
from puzzles.dist import probe, scaling
from puzzles.dist.slabs import slab


@pytest.mark.parametrize("scale", [1.0, 0.05])
def test_weak_runs_give_each_rank_the_one_gpu_work_and_strong_runs_cut_it(scale):
    one_weak = scaling.stencil_grid("weak", 1, scale)
    one_strong = scaling.stencil_grid("strong", 1, scale)
    for n in (1, 2, 4):
        nz, ny, nx = scaling.stencil_grid("weak", n, scale)
        assert (ny, nx) == one_weak[1:]
        assert {z1 - z0 for z0, z1 in (slab(nz, n, r) for r in range(n))} == {one_weak[0]}
        assert scaling.stencil_grid("strong", n, scale) == one_strong
        assert scaling.dp_batch("weak", n, scale) == n * scaling.dp_batch("weak", 1, scale)
        assert scaling.dp_batch("strong", n, scale) == scaling.dp_batch("strong", 1, scale)
    assert scaling.dp_batch("strong", 1, scale) % max(scaling.GPUS) == 0  # 4 GPUs share it evenly


def test_efficiency_weak_and_strong_with_host_and_compute_columns():
    rows = [
        ("dp", "weak", 1, 0.010, 1, 0.009, 0.004),
        ("dp", "weak", 2, 0.0125, 2, 0.010, 0.005),  # twice the work in 1.25x the time: 80%
        ("dp", "strong", 1, 0.020, 4, 0.019, 0.004),
        ("dp", "strong", 4, 0.008, 4, 0.006, 0.002),  # 2.5x faster on 4 GPUs: 62.5%
        ("halo", "weak", 1, 0.5, 8),  # rows without the no-comm and host columns still work
    ]
    got = {(r["mode"], r["gpus"]): r for r in scaling.efficiency(rows) if r["variant"] == "dp"}
    assert got[("weak", 2)]["efficiency"] == pytest.approx(0.8)
    assert got[("weak", 2)]["speedup"] == pytest.approx(1.6)
    assert got[("strong", 4)]["efficiency"] == pytest.approx(0.625)
    assert got[("weak", 2)]["host"] == 0.005 and got[("weak", 1)]["compute"] == 0.009
    text = scaling.table(scaling.efficiency(rows))
    assert "host ms" in text.splitlines()[0]
    line = next(x for x in text.splitlines() if x.split()[:3] == ["dp", "weak", "2"])
    assert line.split()[-3:] == ["10.000", "20%", "5.000"]  # no-comm ms, comm adds, host ms


def test_each_rank_takes_its_own_device():
    assert [rank_device(r, 4) for r in range(4)] == [0, 1, 2, 3]
    assert rank_device(3, 1) == 0  # a process given one GPU (CUDA_VISIBLE_DEVICES) uses it
    with pytest.raises(BadCall, match="sees 2 GPU.*at most that many ranks"):
        rank_device(2, 2)
    with pytest.raises(BadCall, match="sees none"):
        rank_device(0, 0)
    assert bus_id(0, 0x1B, 0) == "0000:1B:00.0"
    assert same_gpu("0000:1b:00.0", "0000:1B:00.0") and not same_gpu("0000:1B:00.0", "0000:2C:00.0")
    assert same_gpu(None, "0000:1B:00.0")  # Numba without a GPU: nothing to compare


def test_two_ranks_on_one_gpu_are_named():
    infos = [
        {"rank": 0, "gpu": "0000:1B:00.0", "numba_gpu": "0000:1B:00.0"},
        {"rank": 1, "gpu": "0000:2C:00.0", "numba_gpu": "0000:1b:00.0"},  # Numba left on GPU 0
        {"rank": 2, "gpu": "0000:3D:00.0", "numba_gpu": None},
    ]
    assert probe.shared_gpus(infos) == [("0000:1B:00.0", [0, 1])]
    assert probe.shared_gpus(infos[::2]) == []
    info = dict(infos[1], cpus="32 CPUs", launch_us=5, sync_us=3, state_us=2, allreduce_us=9,
                allreduce_wall_us=30)  # fmt: skip
    assert "GPU 0000:2C:00.0 (Numba: 0000:1b:00.0)" in probe.line(info)


def test_state_record_is_overwritten_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("MP_DIST_STATE", str(tmp_path))
    state.enter(0, "a long description of a call " * 5)
    state.leave(0, "finished")  # shorter: nothing of the longer record may remain
    state.enter(1, "allreduce (enqueued)")
    got = state.read(str(tmp_path), 3)
    assert got[0] == "finished"
    assert got[1].startswith("allreduce (enqueued) at line ") and got[1].endswith("s)")
    assert got[2] == "not started (no state written)"
    assert os.path.getsize(tmp_path / "rank0") == state.RECORD


class _Log:
    """A fake of what GpuSlab touches on a GPU (the kernel, the streams, CuPy's events), logging the
    order the GPU would be told: launches, event records and waits."""

    def __init__(self):
        self.calls = []
        log = self

        class Event:
            def __init__(self, disable_timing=False):
                self.name = f"event{sum(c[0] == 'record' for c in log.calls)}"

            def record(self, stream):
                log.calls.append(("record", self.name, stream.name))

        class Stream:
            def __init__(self, name):
                self.name = name

            def __int__(self):
                return 7

            def wait_event(self, e):
                log.calls.append(("wait", self.name, e.name))

            def synchronize(self):
                log.calls.append(("host waits", self.name))

        class cuda:
            pass

        cuda.Event = Event
        cuda.ExternalStream = lambda ptr: Stream("compute")
        self.cuda, self.Stream = cuda, Stream

    def __getitem__(self, config):  # slab_sweep[grid, block, stream](out, u, lo, hi, z0, nz)
        return lambda out, u, lo, hi, z0, nz: self.calls.append(("sweep", lo, hi))


def test_gpu_slab_orders_sweeps_and_messages_on_the_gpu(monkeypatch):
    """An edge sweep makes the messages' stream wait for it, swap makes the sweeps wait for the
    messages: events, never a host wait (which idled the GPU once per step); without messages an
    edge sweep still waits on the host."""
    import sys

    import numpy as np

    from puzzles.dist import slabs

    fake = _Log()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(slabs, "slab_sweep", fake)
    grid = object.__new__(slabs.GpuSlab)
    grid.u = grid.out = np.zeros((6, 4, 4), np.float32)
    grid.n, grid.z0, grid.nz, grid.sweeps = 4, 0, 8, []
    grid.stream, grid.after = fake.Stream("compute"), fake.Stream("messages")
    grid.sweep(1, 2)
    grid.sweep(2, 4)
    grid.swap()
    assert fake.calls == [
        ("sweep", 1, 2),
        ("record", "event0", "compute"),
        ("wait", "messages", "event0"),
        ("sweep", 2, 4),  # the interior: nothing waits for it
        ("record", "event1", "messages"),
        ("wait", "compute", "event1"),
    ]
    fake.calls.clear()
    grid.after = None
    grid.sweep(4, 5)
    assert fake.calls == [("sweep", 4, 5), ("host waits", "compute")]
