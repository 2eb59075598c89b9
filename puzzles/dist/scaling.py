"""Strong and weak scaling on 1, 2 and 4 GPUs (NCCL, one process per GPU): the stencil of stencil.py
(blocking halo exchange and overlapped) and the data-parallel GPT-2 step of data_parallel.py, the
exercises' reference solutions run unchanged on device arrays. Each run first validates (the stencil
bit for bit against one GPU's run of the same kernel; the training step against the single process
on the full batch, to data_parallel.py's derived tolerance), then times.

    python -m puzzles.dist.scaling                       # both, on every GPU count up to 4 present
    python -m puzzles.dist.scaling --only dp --json dp.json
    python -m tools.bench --only dist                    # the same rows, judged by GOALS

Each launch prints, per rank, the GPU it ran on (PCI bus id, CuPy's and Numba's) and the host's cost
of a launch, a synchronisation, a state record and a one-float all-reduce (probe.py); two ranks on
one GPU stop the run. The table's "host ms" is the time the step's calls took to return: near
ms/step, the host's launches set the pace, not the GPU.

Strong scaling: one global problem cut over p GPUs (speed-up t1 / tp, efficiency t1 / (p tp)).
Weak scaling: p times the problem on p GPUs (efficiency t1 / tp). The goal: the training step keeps
>= 90% weak-scaling efficiency at 4 GPUs (GPT-2 "medium" of the course, 4 layers, width 128, context
128, 16 windows per GPU: about 0.9 M parameters, 3.4 MB of gradient all-reduced per step).
"""

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

from helpers import timing

STENCIL = dict(planes=256, ny=512, nx=512, steps=20)  # weak: planes per GPU; strong: 2x planes in all
DP = dict(size="medium", batch=16, steps=10)  # weak: windows per GPU; strong: 4x windows in all
GPUS = (1, 2, 4)
REPS = 5


# ---------------------------------------------------------------------------- on every rank


def _timed(comm, fns: dict, reps: int = REPS) -> dict:
    """{name: (seconds, host seconds)} of each fn(): the median over `reps` of the slowest rank's
    wall time (the GPU synchronised) and of the time fn() took to return (the host's share: close to
    the wall time when the step is bound by its launches). The fns take turns within each rep, so a
    drift (clocks, a neighbour's job) falls on all of them alike, not on whichever ran last."""
    import cupy
    from numba import cuda

    for fn in fns.values():  # warm-up: compiles the kernels, sets up NCCL's channels
        fn()
    cuda.synchronize()
    times = {k: [] for k in fns}
    for _ in range(reps):
        for k, fn in fns.items():
            comm.barrier()
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            cuda.synchronize()
            cupy.cuda.runtime.deviceSynchronize()
            worst = cupy.array([time.perf_counter() - t0, t1 - t0], cupy.float64)
            comm.allreduce(worst, op="max")
            cupy.cuda.runtime.deviceSynchronize()  # the all-reduce may be on a non-blocking stream
            times[k].append(worst.get())
    return {k: tuple(float(x) for x in np.median(np.array(v), axis=0)) for k, v in times.items()}


def _save(comm, out: str, **row) -> None:
    from .probe import save

    save(comm, out)
    if comm.rank == 0:
        with open(out, "w") as f:
            json.dump(row, f)


def _streams(comm):
    """The sweep's stream and NCCL's, both apart from the legacy default stream (which would order
    every kernel after every message and undo the overlap)."""
    import cupy
    from numba import cuda

    compute, messages = cuda.stream(), cupy.cuda.Stream(non_blocking=True)
    comm.stream = messages
    return compute, messages


def _slab(a_or_shape, comm, compute, messages, seed=None):
    from .slabs import GpuSlab, slab

    if seed is None:  # the validation grid, cut from the global array
        grid = GpuSlab.of(a_or_shape, comm.size, comm.rank, stream=compute)
    else:  # the timing grid: this rank's planes only, random (the values do not matter)
        nz, ny, nx = a_or_shape
        z0, z1 = slab(nz, comm.size, comm.rank)
        u = np.random.default_rng(seed + comm.rank).standard_normal((z1 - z0 + 2, ny, nx)).astype(np.float32)
        grid = GpuSlab(u, z0, nz, stream=compute)
    grid.after = messages  # swap() waits for the halos' messages
    return grid


def stencil_rank(comm, variant: str, nz, ny, nx, steps, out: str):
    """One rank of a stencil run: validate on a small grid, then time `steps` steps of nz x ny x nx."""
    from . import stencil
    from .slabs import GpuSlab, slab

    fn = {"halo": stencil.halo_stencil, "overlap": stencil.overlap_stencil}[variant]
    nz, ny, nx, steps = int(nz), int(ny), int(nx), int(steps)
    compute, messages = _streams(comm)
    a = np.random.default_rng(7).standard_normal((max(3 * comm.size, 11), 37, 45)).astype(np.float32)
    got = fn(comm, _slab(a, comm, compute, messages), 3)
    one = GpuSlab.of(a, 1, 0, stream=compute)  # the serial run: this GPU, one slab, the same kernel
    for _ in range(3):
        one.sweep(1, one.n + 1)
        one.swap()
    z0 = slab(a.shape[0], comm.size, comm.rank)[0]
    want = one.owned()[z0 : z0 + got.shape[0]]
    if not np.array_equal(got, want):
        raise AssertionError(
            f"stencil {variant} on {comm.size} GPUs: rank {comm.rank}'s planes differ from one GPU's"
        )
    grid = _slab((nz, ny, nx), comm, compute, messages, seed=1)
    grid.host = False  # the timed loop ends on the device (no copy of the slab back)

    def compute_only():  # the same sweeps, no message: what the exchange adds is the difference
        for _ in range(steps):
            grid.sweep(1, grid.n + 1)
            grid.swap()

    t = _timed(comm, {"step": lambda: fn(comm, grid, steps), "compute": compute_only})
    seconds, host = (x / steps for x in t["step"])
    compute = t["compute"][0] / steps
    _save(comm, out, seconds=seconds, compute=compute, host=host, points=nz * ny * nx)


def dp_rank(comm, size: str, batch, steps, out: str):
    """One rank of a training run: validate one step against the single process (NumPy, full batch),
    then time `steps` steps of `batch` windows in all."""
    from numba import cuda

    from helpers.dist import split
    from puzzles.llm.training import reference

    from .data_parallel import dp_step, truth
    from .replica import KernelReplica

    cfg = reference.CONFIGS[size]
    batch, steps = int(batch), int(steps)
    params = reference.init_params(cfg, seed=0)
    rng = np.random.default_rng(3)
    B = 2 * comm.size
    tokens = rng.integers(0, cfg.V, (B, cfg.T)).astype(np.int32)
    targets = rng.integers(0, cfg.V, (B, cfg.T)).astype(np.int32)
    model = KernelReplica(cfg, params)
    model.record = True
    dp_step(comm, model, tokens, targets, 1e-3)
    t = truth(params, tokens, targets, 1e-3, cfg=cfg)
    g, p = model.stepped[0], model.params.copy_to_host()
    bad_g = np.abs(g.astype(np.float64) - t["grad"]) > t["tol_g"]
    bad_p = np.abs(p.astype(np.float64) - t["params"]) > t["tol_p"]
    if bad_g.any() or bad_p.any():
        raise AssertionError(
            f"dp step on {comm.size} GPUs, rank {comm.rank}: {int(bad_g.sum())} gradient and "
            f"{int(bad_p.sum())} "
            "parameter elements outside data_parallel.py's tolerance of the single process's step"
        )
    model = KernelReplica(cfg, params)
    # the batch's copy in, asynchronous: from pinned memory on a stream of its own (a blocking one: the
    # all-reduce on the legacy stream stays ordered with it). A copy from pageable memory, or on the
    # legacy stream, waits for the GPU first, so no step's launches would overlap the last one's work
    model.kb.stream = cuda.stream()
    tokens, targets = cuda.pinned_array((batch, cfg.T), np.int32), cuda.pinned_array((batch, cfg.T), np.int32)
    tokens[...] = rng.integers(0, cfg.V, (batch, cfg.T))
    targets[...] = rng.integers(0, cfg.V, (batch, cfg.T))
    lo, hi = split(batch, comm.size)[comm.rank]

    def with_comm():
        for _ in range(steps):
            dp_step(comm, model, tokens, targets, 1e-3)

    def compute_only():  # the rank's step without the all-reduce: the gradient's traffic is the rest
        for _ in range(steps):
            model.forward(tokens[lo:hi], targets[lo:hi])
            model.backward()
            model.scale_grad((hi - lo) / batch)
            model.step(1e-3)

    t = _timed(comm, {"step": with_comm, "compute": compute_only})
    seconds, host = (x / steps for x in t["step"])
    compute = t["compute"][0] / steps
    _save(comm, out, seconds=seconds, compute=compute, host=host, tokens=batch * cfg.T)


# ---------------------------------------------------------------------------- the driver


def _launch(n: int, target: str, *args, timeout: float = 300.0) -> dict:
    """Run `target` on n GPUs; its row, with `ranks`: what each rank ran on (probe.py), printed."""
    from helpers.dist.launch import launch

    from . import probe

    with tempfile.TemporaryDirectory(prefix="mp-scaling-") as d:
        path = os.path.join(d, "out.json")
        launch(n, f"puzzles.dist.scaling:{target}", engine="nccl", timeout=timeout, args=(*args, path))
        with open(path) as f:
            row = json.load(f)
        row["ranks"] = probe.load(path, n)
    for info in row["ranks"]:
        print("  " + probe.line(info), file=sys.stderr)
    shared = probe.shared_gpus(row["ranks"])
    if shared:
        raise RuntimeError(
            f"{target} on {n} GPUs: "
            + "; ".join(f"ranks {v} all ran on the GPU at {k}" for k, v in shared)
            + ": the timings would measure one GPU shared, not several"
        )
    return row


def gpu_counts(limit=GPUS) -> list:
    from helpers.dist.missing import gpus

    return [n for n in limit if n <= gpus()]


def stencil_grid(mode: str, n: int, scale: float = 1.0) -> tuple:
    """(nz, ny, nx) of the global grid on n GPUs: weak, STENCIL["planes"] planes per GPU (n times the
    one-GPU grid); strong, twice that in all whatever n (the one-GPU grid, cut in n)."""
    ny = nx = max(32, round(STENCIL["ny"] * scale ** (1 / 3)))
    planes = max(8, round(STENCIL["planes"] * scale ** (1 / 3)))
    return (planes * n if mode == "weak" else 2 * planes), ny, nx


def dp_batch(mode: str, n: int, scale: float = 1.0) -> int:
    """Windows per step in all on n GPUs: weak, DP["batch"] per GPU; strong, that times max(GPUS)."""
    per = max(1, round(DP["batch"] * scale))
    return per * n if mode == "weak" else per * max(GPUS)


def _say(name: str, r: dict) -> None:
    print(
        f"{name}: {r['seconds'] * 1e3:8.3f} ms/step (no comm {r['compute'] * 1e3:.3f}, host "
        f"{r['host'] * 1e3:.3f})",
        file=sys.stderr,
    )


def stencil_runs(counts, scale: float = 1.0, variants=("halo", "overlap"), modes=("weak", "strong")) -> list:
    """[(variant, mode, gpus, seconds per step, points, seconds of its sweeps alone, host seconds)]
    for each variant and mode."""
    rows = []
    for variant in variants:
        for mode in modes:
            for n in counts:
                nz, ny, nx = stencil_grid(mode, n, scale)
                r = _launch(n, "stencil_rank", variant, nz, ny, nx, STENCIL["steps"])
                rows.append((variant, mode, n, r["seconds"], r["points"], r["compute"], r["host"]))
                _say(f"stencil {variant:7s} {mode:6s} {n} GPU(s)", r)
    return rows


def dp_runs(counts, scale: float = 1.0, modes=("weak", "strong")) -> list:
    """[("dp", mode, gpus, seconds per step, tokens, seconds without the all-reduce, host seconds)]."""
    rows = []
    for mode in modes:
        for n in counts:
            r = _launch(n, "dp_rank", DP["size"], dp_batch(mode, n, scale), DP["steps"])
            rows.append(("dp", mode, n, r["seconds"], r["tokens"], r["compute"], r["host"]))
            _say(f"dp step {mode:6s} {n} GPU(s)", r)
    return rows


def efficiency(rows) -> list:
    """Rows with the speed-up and efficiency against the same variant and mode on one GPU."""
    base = {(r[0], r[1]): r[3] for r in rows if r[2] == 1}
    out = []
    for v, m, n, s, work, *more in rows:
        t1 = base.get((v, m))
        speedup = None if t1 is None else (t1 / s if m == "strong" else n * t1 / s)
        eff = None if speedup is None else speedup / n
        c, h = (list(more) + [None, None])[:2]
        out.append(
            dict(
                variant=v, mode=m, gpus=n, seconds=s, work=work, speedup=speedup, efficiency=eff, compute=c,
                host=h,
            )
        )  # fmt: skip
    return out


def table(rows) -> str:
    """Per run: time per step, speed-up and efficiency against one GPU, and where the time goes: the
    time without communication, the share of the step the communication adds (not hidden), and the
    host's time to launch the step (near ms/step: the host's launches, not the GPU, set the pace)."""
    head = f"{'run':16s} {'mode':6s} {'GPUs':>4s} {'ms/step':>9s} {'speed-up':>8s} {'efficiency':>10s}"
    lines = [head + f" {'no-comm ms':>10s} {'comm adds':>9s} {'host ms':>8s}"]
    for r in rows:
        sp = "-" if r["speedup"] is None else f"{r['speedup']:.2f}x"
        ef = "-" if r["efficiency"] is None else f"{r['efficiency']:.0%}"
        c, h = r.get("compute"), r.get("host")
        cm = "-" if c is None else f"{c * 1e3:.3f}"
        share = "-" if c is None else f"{max(r['seconds'] - c, 0) / r['seconds']:.0%}"
        hm = "-" if h is None else f"{h * 1e3:.3f}"
        line = (
            f"{r['variant']:16s} {r['mode']:6s} {r['gpus']:4d} {r['seconds'] * 1e3:9.3f} {sp:>8s} {ef:>10s}"
        )
        lines.append(line + f" {cm:>10s} {share:>9s} {hm:>8s}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- python -m tools.bench


GOAL = None  # judged by GOALS: weak-scaling throughput ratios (4 GPUs do 4x the work)
GOALS = [("dp weak, 4 GPUs", "dp weak, 1 GPU", 0.9 * 4)]


def skip_reason() -> str | None:
    """One line where the scaling rows cannot run (tools.bench prints it and goes on), else None."""
    from helpers.dist import missing

    reason = timing.skip_reason() or missing("nccl")
    if reason:
        return reason
    counts = gpu_counts()
    return (
        None
        if len(counts) >= 2
        else f"scaling needs at least 2 GPUs, this machine has {max(counts, default=0)}"
    )


def benchmark(scale: float = 1.0):
    """The scaling runs as rows: bytes = the stencil's grid read and written, flops = 6 x parameters x
    tokens for the training step, so that a row's rate over the 1-GPU row is p x efficiency."""
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    counts = gpu_counts()
    if len(counts) < 2:
        raise RuntimeError(
            f"scaling needs at least 2 GPUs; this machine has {max(counts, default=0)}: skipped"
        )
    from puzzles.llm.training.reference import CONFIGS

    n_params = CONFIGS[DP["size"]].n_params()
    rows = []
    for v, m, n, s, work, *_ in stencil_runs(counts, scale) + dp_runs(counts, scale):
        name = f"{'stencil ' + v if v != 'dp' else 'dp'} {m}, {n} GPU{'s' if n > 1 else ''}"
        if v == "dp":
            rows.append(timing.Measurement(name, s, flops=6 * n_params * work))
        else:
            rows.append(timing.Measurement(name, s, bytes=8 * work))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m puzzles.dist.scaling", description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=("stencil", "dp"), action="append", default=[])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--json", default="scaling.json")
    a = ap.parse_args(argv)
    counts = gpu_counts()
    if not counts:
        print("No GPU (or no CuPy for NCCL): scaling skipped.")
        return 0
    only = a.only or ["stencil", "dp"]
    rows = []
    if "stencil" in only:
        rows += stencil_runs(counts, a.scale)
    if "dp" in only:
        rows += dp_runs(counts, a.scale)
    rows = efficiency(rows)
    print(table(rows))
    sizes = dict(stencil=STENCIL, dp=DP, scale=a.scale)
    with open(a.json, "w") as f:
        json.dump({"sizes": sizes, "gpus": counts, "rows": rows}, f, indent=1)
    weak = [r for r in rows if r["variant"] == "dp" and r["mode"] == "weak" and r["gpus"] == 4]
    if weak and weak[0]["efficiency"] is not None:
        met = "met" if weak[0]["efficiency"] >= 0.9 else "NOT met"
        print(f"goal: dp weak-scaling efficiency at 4 GPUs {weak[0]['efficiency']:.0%} (>= 90%): {met}")
    print(f"Results: {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
