"""What a scaling rank ran on, saved next to its numbers: the GPU (PCI bus id as CuPy/NCCL see it and
as Numba's context does), the CPUs the process may use, and the host's cost of the calls a step makes
(a Numba launch, a stream synchronisation, the launcher's state record), measured on every rank at
once. A table that looks wrong is then told apart: two ranks on one GPU, a CPU quota shared by the
ranks, or a step bound by the host's launches rather than by the GPU."""

import json
import os
import time

from numba import cuda

CALLS = 200  # calls per host-cost figure


@cuda.jit
def _nothing(a):
    if cuda.grid(1) == 0:
        a[0] = 0.0


def cpus() -> str:
    """The CPUs this process may run on, and the cgroup's quota where one is set."""
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    quota = ""
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            q, period = f.read().split()
        if q != "max":
            quota = f", cgroup quota {int(q) / int(period):.1f} CPUs"
    except (OSError, ValueError):
        pass
    return f"{n} CPUs{quota}"


def _per_call(fn, calls: int = CALLS) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def host_costs(comm) -> dict:
    """Microseconds per call on this rank's host: an empty kernel's launch (not waited), a
    synchronisation of an idle GPU, a state record (what every NCCL call writes first), a one-float
    NCCL all-reduce enqueued (not waited), and one waited for (its latency across the ranks)."""
    from helpers.dist import state

    a = cuda.device_array(1, "float32")
    launch = _per_call(lambda: _nothing[1, 32](a))
    cuda.synchronize()
    sync = _per_call(cuda.synchronize)
    record = _per_call(lambda: state.enter(comm.rank, "probe"))
    state.leave(comm.rank)
    one = comm.xp.zeros(1, "float32")
    comm.barrier()
    enqueue = _per_call(lambda: comm.allreduce(one))  # what the host spends per NCCL call
    cuda.synchronize()
    comm.xp.cuda.runtime.deviceSynchronize()
    comm.barrier()
    wall = _per_call(lambda: (comm.allreduce(one), comm.xp.cuda.runtime.deviceSynchronize()), 50)
    us = dict(launch=launch, sync=sync, state=record, allreduce=enqueue, allreduce_wall=wall)
    return {f"{k}_us": v * 1e6 for k, v in us.items()}


def save(comm, out: str) -> None:
    """This rank's GPU, CPUs and host costs, as `out`.rank<r>.json (the driver reads them)."""
    comm.barrier()  # every rank measures its host costs at the same time, as it runs its steps
    info = {
        "rank": comm.rank,
        "gpu": getattr(comm, "pci_bus_id", None),
        "numba_gpu": getattr(comm, "numba_bus_id", None),
        "cpus": cpus(),
        **host_costs(comm),
    }
    with open(f"{out}.rank{comm.rank}.json", "w") as f:
        json.dump(info, f)


def load(out: str, n: int) -> list:
    infos = []
    for r in range(n):
        with open(f"{out}.rank{r}.json") as f:
            infos.append(json.load(f))
    return infos


def shared_gpus(infos) -> list:
    """[(bus id, [ranks])] for every GPU more than one rank's kernels ran on (Numba's, else CuPy's)."""
    by = {}
    for i in infos:
        key = (i.get("numba_gpu") or i.get("gpu") or "").upper()
        if key:
            by.setdefault(key, []).append(i["rank"])
    return [(k, v) for k, v in by.items() if len(v) > 1]


def line(info: dict) -> str:
    numba = info.get("numba_gpu")
    both = "" if numba and numba.upper() == str(info.get("gpu")).upper() else f" (Numba: {numba})"
    return (
        f"rank {info['rank']}: GPU {info.get('gpu')}{both}, {info['cpus']}; host per call: launch "
        f"{info['launch_us']:.1f} us, sync {info['sync_us']:.1f} us, state record {info['state_us']:.1f} us, "
        f"1-float all-reduce {info['allreduce_us']:.1f} us (waited: {info['allreduce_wall_us']:.1f} us)"
    )
