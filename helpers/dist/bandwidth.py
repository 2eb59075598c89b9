"""All-reduce bandwidth inside launched ranks, the same on every engine: the engine's own
all-reduce against an all-reduce function (the ring), validated against each other first, each
size timed as the slowest rank saw it, and where the ring's time goes (its point-to-point steps and
its additions, each timed alone). Bus bandwidth, as nccl-tests reports it: bytes / seconds *
2 (size - 1) / size, what each rank's links carry, comparable across rank counts."""

from __future__ import annotations

import time

import numpy as np

from .split import split

MIB = 1 << 20


def busbw(nbytes: int, seconds: float, size: int) -> float:
    return nbytes / seconds * 2 * (size - 1) / size if size > 1 else 0.0


def _sync(comm) -> None:
    if comm.xp is not np:
        comm.xp.cuda.runtime.deviceSynchronize()


def _host(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)


def timed(comm, step, iters: int, reps: int = 3) -> float:
    """Seconds per call of step(), the slowest rank's, median of `reps` runs of `iters` calls."""
    step()  # warm up (first-call setup, allocator)
    runs = []
    for _ in range(reps):
        _sync(comm)
        comm.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            step()
        _sync(comm)
        t = comm.xp.asarray(np.array([time.perf_counter() - t0]))
        comm.allreduce(t, op="max")
        runs.append(float(_host(t)[0]) / iters)
    return float(np.median(runs))


def validate(comm, ring, n: int) -> None:
    """The ring against the engine on random data; raises naming the first wrong element."""
    rng = np.random.default_rng(1234 + comm.rank)
    data = rng.uniform(-1, 1, n).astype(np.float32)
    mine, theirs = comm.xp.asarray(data), comm.xp.asarray(data)
    ring(comm, mine)
    comm.allreduce(theirs)
    got, want = _host(mine), _host(theirs)
    bad = ~np.isclose(got, want, rtol=1e-4, atol=1e-4)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AssertionError(f"rank {comm.rank}: the ring is wrong at {i} of {n}: {got[i]} vs {want[i]}")


def row(comm, ring, mib: float, budget_bytes: float = 8 * 2**30, extra=None) -> dict:
    """One size (MiB of float32): engine and ring times and bus bandwidths, and the ring's parts: a
    neighbour exchange of one chunk (sendrecv) and the addition of one chunk."""
    xp, size = comm.xp, comm.size
    n = int(mib * MIB) // 4
    nbytes = n * 4
    iters = int(max(3, min(50, budget_bytes // max(nbytes, 1) // 4)))
    validate(comm, ring, n)
    buf = xp.zeros(n, np.float32)
    engine_s = timed(comm, lambda: comm.allreduce(buf), iters)
    ring_s = timed(comm, lambda: ring(comm, buf), iters)
    lo, hi = split(n, size)[0]
    out, into = xp.zeros(hi - lo, np.float32), xp.zeros(hi - lo, np.float32)
    right, left = (comm.rank + 1) % size, (comm.rank - 1) % size
    p2p_s = timed(comm, lambda: comm.sendrecv(out, right, into, left), iters) if size > 1 else 0.0

    def add():
        out[...] += into

    add_s = timed(comm, add, iters)
    more = {}
    for label, fn in (extra or {}).items():  # further rings: a wrong one is reported, not fatal
        try:
            validate(comm, fn, n)
            t = timed(comm, lambda f=fn: f(comm, buf), iters)
            more.update({f"{label}_s": t, f"{label}_vs_engine": engine_s / t})
        except Exception as e:
            more[f"{label}_error"] = f"{type(e).__name__}: {e}"
    return more | {
        "mib": mib,
        "bytes": nbytes,
        "iters": iters,
        "engine_s": engine_s,
        "engine_busbw": busbw(nbytes, engine_s, size),
        "ring_s": ring_s,
        "ring_busbw": busbw(nbytes, ring_s, size),
        "ring_vs_engine": engine_s / ring_s,
        "chunk_sendrecv_s": p2p_s,
        "chunk_sendrecv_GBps": (hi - lo) * 4 / p2p_s / 1e9 if p2p_s else 0.0,
        "chunk_add_s": add_s,
        "ring_model_s": 2 * (size - 1) * p2p_s + (size - 1) * add_s,
    }


def measure(comm, ring, sizes_mib=(1, 4, 16, 64, 256, 1024), extra=None) -> list[dict]:
    """A row per size, smallest first; `extra`: {label: further all-reduce function} timed too."""
    return [row(comm, ring, mib, extra=extra) for mib in sizes_mib]


def table(rows: list[dict], engine: str, size: int) -> str:
    head = (
        f"{'MiB':>6} {engine + ' ms':>10} {'busbw GB/s':>10} {'ring ms':>10} {'busbw GB/s':>10} "
        f"{'ring/' + engine:>10} {'chunk xchg':>11} {'chunk add':>10} {'model ms':>9}"
    )
    lines = [f"all-reduce of float32 on {size} ranks ({engine}); bus bandwidth = bytes/s * 2(n-1)/n", head]
    for r in rows:
        lines.append(
            f"{r['mib']:>6} {r['engine_s'] * 1e3:>10.3f} {r['engine_busbw'] / 1e9:>10.1f} "
            f"{r['ring_s'] * 1e3:>10.3f} {r['ring_busbw'] / 1e9:>10.1f} {r['ring_vs_engine']:>10.1%} "
            f"{r['chunk_sendrecv_GBps']:>7.1f}GB/s {r['chunk_add_s'] * 1e6:>8.0f}us "
            f"{r['ring_model_s'] * 1e3:>9.3f}"
        )
        for key in sorted(k for k in r if k.endswith("_vs_engine") and k != "ring_vs_engine"):
            label = key[: -len("_vs_engine")]
            lines[-1] += f"   {label}: {r[label + '_s'] * 1e3:.3f} ms, {r[key]:.1%} of {engine}"
        for key in sorted(k for k in r if k.endswith("_error")):
            lines[-1] += f"   {key[:-6]}: {r[key]}"
    lines.append(
        "chunk xchg: one neighbour exchange of a 1/n chunk (sendrecv), as GB/s one way; chunk add: adding "
        "one chunk; model: 2(n-1) exchanges + (n-1) adds, the ring's time if nothing overlapped."
    )
    return "\n".join(lines)
