"""Strong and weak scaling on 1, 2 and 4 GPUs (NCCL, one process per GPU): the stencil of stencil.py
(blocking halo exchange and overlapped) and the data-parallel GPT-2 step of data_parallel.py, the
exercises' reference solutions run unchanged on device arrays. Each run first validates (the stencil
bit for bit against one GPU's run of the same kernel; the training step against the single process
on the full batch, to data_parallel.py's derived tolerance), then times.

    python -m puzzles.dist.scaling                       # both, on every GPU count up to 4 present
    python -m puzzles.dist.scaling --only dp --json dp.json
    python -m tools.bench --only dist                    # the same rows, judged by GOALS

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


def _timed(comm, fn, reps: int = REPS) -> float:
    """Median over `reps` of the slowest rank's wall time of fn() (the GPU synchronised)."""
    import cupy
    from numba import cuda

    fn()  # warm-up: compiles the kernels, sets up NCCL's channels
    cuda.synchronize()
    times = []
    for _ in range(reps):
        comm.barrier()
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        cupy.cuda.runtime.deviceSynchronize()
        worst = cupy.array([time.perf_counter() - t0], cupy.float64)
        comm.allreduce(worst, op="max")
        cupy.cuda.runtime.deviceSynchronize()  # the all-reduce may be on a non-blocking stream
        times.append(float(worst.get()[0]))
    return float(np.median(times))


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
    seconds = _timed(comm, lambda: fn(comm, grid, steps)) / steps

    def compute_only():  # the same sweeps, no message: what the exchange adds is the difference
        for _ in range(steps):
            grid.sweep(1, grid.n + 1)
            grid.swap()

    compute = _timed(comm, compute_only) / steps
    if comm.rank == 0:
        with open(out, "w") as f:
            json.dump({"seconds": seconds, "compute": compute, "points": nz * ny * nx}, f)


def dp_rank(comm, size: str, batch, steps, out: str):
    """One rank of a training run: validate one step against the single process (NumPy, full batch),
    then time `steps` steps of `batch` windows in all."""
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
    tokens = rng.integers(0, cfg.V, (batch, cfg.T)).astype(np.int32)
    targets = rng.integers(0, cfg.V, (batch, cfg.T)).astype(np.int32)
    seconds = (
        _timed(comm, lambda: [dp_step(comm, model, tokens, targets, 1e-3) for _ in range(steps)]) / steps
    )
    lo, hi = split(batch, comm.size)[comm.rank]

    def compute_only():  # the rank's step without the all-reduce: the gradient's traffic is the rest
        for _ in range(steps):
            model.forward(tokens[lo:hi], targets[lo:hi])
            model.backward()
            model.scale_grad((hi - lo) / batch)
            model.step(1e-3)

    compute = _timed(comm, compute_only) / steps
    if comm.rank == 0:
        with open(out, "w") as f:
            json.dump({"seconds": seconds, "compute": compute, "tokens": batch * cfg.T}, f)


# ---------------------------------------------------------------------------- the driver


def _launch(n: int, target: str, *args, timeout: float = 300.0) -> dict:
    from helpers.dist.launch import launch

    with tempfile.TemporaryDirectory(prefix="mp-scaling-") as d:
        path = os.path.join(d, "out.json")
        launch(n, f"puzzles.dist.scaling:{target}", engine="nccl", timeout=timeout, args=(*args, path))
        with open(path) as f:
            return json.load(f)


def gpu_counts(limit=GPUS) -> list:
    from helpers.dist.missing import gpus

    return [n for n in limit if n <= gpus()]


def stencil_runs(counts, scale: float = 1.0, variants=("halo", "overlap"), modes=("weak", "strong")) -> list:
    """[(variant, mode, gpus, seconds per step, points, seconds of its sweeps alone)] for each
    variant and mode."""
    ny = nx = max(32, round(STENCIL["ny"] * scale ** (1 / 3)))
    planes = max(8, round(STENCIL["planes"] * scale ** (1 / 3)))
    rows = []
    for variant in variants:
        for mode in modes:
            for n in counts:
                nz = planes * n if mode == "weak" else 2 * planes
                r = _launch(n, "stencil_rank", variant, nz, ny, nx, STENCIL["steps"])
                rows.append((variant, mode, n, r["seconds"], r["points"], r["compute"]))
                print(
                    f"stencil {variant:7s} {mode:6s} {n} GPU(s): {r['seconds'] * 1e3:8.3f} ms/step",
                    file=sys.stderr,
                )
    return rows


def dp_runs(counts, scale: float = 1.0, modes=("weak", "strong")) -> list:
    """[("dp", mode, gpus, seconds per step, tokens, seconds without the all-reduce)] per mode."""
    per = max(1, round(DP["batch"] * scale))
    rows = []
    for mode in modes:
        for n in counts:
            batch = per * n if mode == "weak" else per * max(GPUS)
            r = _launch(n, "dp_rank", DP["size"], batch, DP["steps"])
            rows.append(("dp", mode, n, r["seconds"], r["tokens"], r["compute"]))
            print(f"dp step {mode:6s} {n} GPU(s): {r['seconds'] * 1e3:8.3f} ms/step", file=sys.stderr)
    return rows


def efficiency(rows) -> list:
    """Rows with the speed-up and efficiency against the same variant and mode on one GPU."""
    base = {(r[0], r[1]): r[3] for r in rows if r[2] == 1}
    out = []
    for v, m, n, s, work, *compute in rows:
        t1 = base.get((v, m))
        speedup = None if t1 is None else (t1 / s if m == "strong" else n * t1 / s)
        eff = None if speedup is None else speedup / n
        c = compute[0] if compute else None
        out.append(
            dict(variant=v, mode=m, gpus=n, seconds=s, work=work, speedup=speedup, efficiency=eff, compute=c)
        )
    return out


def table(rows) -> str:
    """Per run: time per step, speed-up and efficiency against one GPU, and where the time goes: the
    time without communication and the share of the step the communication adds (not hidden)."""
    head = f"{'run':16s} {'mode':6s} {'GPUs':>4s} {'ms/step':>9s} {'speed-up':>8s} {'efficiency':>10s}"
    lines = [head + f" {'no-comm ms':>10s} {'comm adds':>9s}"]
    for r in rows:
        sp = "-" if r["speedup"] is None else f"{r['speedup']:.2f}x"
        ef = "-" if r["efficiency"] is None else f"{r['efficiency']:.0%}"
        c = r.get("compute")
        cm = "-" if c is None else f"{c * 1e3:.3f}"
        share = "-" if c is None else f"{max(r['seconds'] - c, 0) / r['seconds']:.0%}"
        line = (
            f"{r['variant']:16s} {r['mode']:6s} {r['gpus']:4d} {r['seconds'] * 1e3:9.3f} {sp:>8s} {ef:>10s}"
        )
        lines.append(line + f" {cm:>10s} {share:>9s}")
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
    for v, m, n, s, work, _ in stencil_runs(counts, scale) + dp_runs(counts, scale):
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
