"""Where a training step's time goes (`python -m tools.train --device gpu --profile`): every launch of
one step of the course's kernels, one launch per op and fused, with the host time its launch call
took and its GPU time (CUDA events, queued behind a kernel that holds the GPU so that an event pair
spans only its kernel: puzzles/llm/training/gpu_timer.py), and a check line: the kernels' sum against
the whole step's GPU time (one event pair around a queued step) and the host's clock, or the word
UNRELIABLE with the reason; then, where PyTorch is installed, the kernels PyTorch eager launches for the
same step (torch.profiler). The verdict line says whether the step is bound by the host (launch
calls) or by the GPU (kernels).

On the simulator (`--device sim`) the same table prints with simulated times: a test of the path,
not a measurement.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np


def table(rows, wall_ms: float, label: str, measured=None) -> dict:
    """Print launches aggregated by kernel (sorted by GPU time) and the totals; return them."""
    agg = defaultdict(lambda: [0, 0.0, 0.0])
    for name, gpu, host in rows:
        a = agg[name]
        a[0] += 1
        a[1] += gpu
        a[2] += host
    gpu_total, host_total = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"--- {label}: {len(rows)} launches, step {wall_ms:.3f} ms wall-clock")
    print(f"{'kernel':32s} {'launches':>8s} {'GPU ms':>9s} {'host ms':>9s} {'GPU us/launch':>14s}")
    for name, (n, gpu, host) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
        print(f"{name:32s} {n:8d} {gpu:9.3f} {host:9.3f} {1e3 * gpu / n:14.1f}")
    print(f"{'total':32s} {len(rows):8d} {gpu_total:9.3f} {host_total:9.3f}")
    bound = "the host (launch calls)" if host_total > gpu_total else "the GPU (kernels)"
    if measured is not None and measured.held is not None and not measured.reliable:
        bound += " (by GPU times the check below calls unreliable)"
    print(
        f"bound by {bound}: launch calls {host_total:.3f} ms, kernels {gpu_total:.3f} ms, "
        f"{1e3 * host_total / max(len(rows), 1):.1f} us of host per launch"
    )
    kernels = {k: dict(launches=v[0], gpu_ms=v[1], host_ms=v[2]) for k, v in agg.items()}
    out = dict(launches=len(rows), wall_ms=wall_ms, gpu_ms=gpu_total, host_ms=host_total, kernels=kernels)
    if measured is not None:
        print(measured.sanity())
        if measured.held is not None:  # a measurement (the simulator's times are not one)
            out.update(reliable=measured.reliable, step_gpu_ms=measured.step_ms, drain_ms=measured.drain_ms)
            out.update(problems=measured.problems)
    return out


def torch_table(cfg, params, B: int, x, y) -> dict | None:
    from helpers import timing

    torch, why = timing.torch_or_reason()
    if torch is None:
        print(f"PyTorch profile skipped: {why}")
        return None
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as tprofile

    from puzzles.llm.training.torch_model import TorchBackend

    tb = TorchBackend(cfg, params, device="cuda")
    for _ in range(3):
        tb.step(x, y, 1e-4)
    torch.cuda.synchronize()
    try:  # the profiler's names moved between releases (cuda_time -> device_time): say so, go on
        with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            tb.step(x, y, 1e-4)
            torch.cuda.synchronize()
        cuda_type = torch.autograd.DeviceType.CUDA
        # kernels and copies only: a GPU-side user annotation (Optimizer.step's range) spans kernels
        # already counted, and counting it too made the sum 1.9 ms where the kernels take 0.5 ms
        events = [
            e
            for e in prof.events()
            if getattr(e, "device_type", None) == cuda_type and not getattr(e, "is_user_annotation", False)
        ]
        gpu_us = sum(getattr(e, "device_time", getattr(e, "cuda_time", 0.0)) for e in events)
        print(
            f"--- pytorch eager fp32: {len(events)} GPU kernels and copies in one step, "
            f"{gpu_us / 1e3:.3f} ms on the GPU"
        )
        for key in ("device_time_total", "cuda_time_total"):
            try:
                print(prof.key_averages().table(sort_by=key, row_limit=12))
                break
            except (KeyError, AttributeError, ValueError):
                continue
    except Exception as e:
        print(f"PyTorch profile failed: {type(e).__name__}: {e}")
        return None
    return dict(gpu_events=len(events), gpu_ms=gpu_us / 1e3)


def profile(args, cfg) -> dict:
    from numba import cuda

    from puzzles.llm.training import data, kernels, reference

    params = reference.init_params(cfg, args.seed)
    x, y = data.batch(data.load_tokens(), args.batch, cfg.T, np.random.default_rng(args.seed))
    gpu = args.device == "gpu"
    out = {}
    for label, fused in (("course kernels, one launch per op", False), ("course kernels, fused", True)):
        be = kernels.KernelBackend(cfg, params, tile=args.tile if gpu else 4, fused=fused)
        for _ in range(2 if gpu else 1):  # compile everything and allocate the buffers first
            be.step(x, y, 1e-4)
        cuda.synchronize()
        rows, m = be.profile_step(x, y, 1e-4, hold=gpu)
        out[label] = table(rows, m.wall_ms, label, m)
    if gpu:
        out["pytorch eager fp32"] = torch_table(cfg, params, args.batch, x, y)
    return out
