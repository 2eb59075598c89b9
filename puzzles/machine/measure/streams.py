"""Streams: chunks of copies and kernels on several streams, recorded as a timeline of events, and
its plot (runs on the simulator too, synchronously, so without overlap).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .kernels import busy_kernel


def overlap_timeline(n: int, chunks: int, streams: int, reps: int, threads: int = 256) -> list:
    """Run chunks of `busy_kernel` with their copies on `streams` streams; return the events.

    Each chunk: copy in (host -> device), kernel, copy out, in its stream, events recorded between
    the stages. Returns [(chunk, stream, stage, start ms, end ms)] relative to the first event.
    On a GPU, copies of one stream overlap kernels of another; on the simulator every call runs
    at once, in order, so the same code draws a staircase with no overlap.
    """
    size = n // chunks
    host_in = [cuda.pinned_array(size, np.float32) for _ in range(chunks)]
    host_out = [cuda.pinned_array(size, np.float32) for _ in range(chunks)]
    rng = np.random.default_rng(0)
    for h in host_in:
        h[:] = rng.uniform(-1, 1, size)
    dev_in = [cuda.device_array(size, np.float32) for _ in range(chunks)]
    dev_out = [cuda.device_array(size, np.float32) for _ in range(chunks)]
    ss = [cuda.stream() for _ in range(streams)]
    grid = max(1, min(64, -(-size // threads)))
    busy_kernel[grid, threads, ss[0]](dev_out[0], dev_in[0], 1)  # compile outside the timeline
    cuda.synchronize()
    t0 = cuda.event()
    t0.record(ss[0])
    marks = []
    for c in range(chunks):
        s = ss[c % streams]
        ev = [cuda.event() for _ in range(4)]
        ev[0].record(s)
        dev_in[c].copy_to_device(host_in[c], stream=s)
        ev[1].record(s)
        busy_kernel[grid, threads, s](dev_out[c], dev_in[c], reps)
        ev[2].record(s)
        dev_out[c].copy_to_host(host_out[c], stream=s)
        ev[3].record(s)
        marks.append((c, c % streams, ev))
    cuda.synchronize()
    want = host_in[0].copy()
    for _ in range(reps):
        want = want * np.float32(0.999) + np.float32(0.001)
    if not np.allclose(host_out[0], want, rtol=1e-4, atol=1e-5):
        raise AssertionError("overlap_timeline: chunk 0 came back wrong")
    rows = []
    for c, s, ev in marks:
        for stage, (a, b) in zip(("copy in", "kernel", "copy out"), zip(ev, ev[1:])):
            rows.append((c, s, stage, cuda.event_elapsed_time(t0, a), cuda.event_elapsed_time(t0, b)))
    return rows


def plot_timeline(rows, title: str):
    import matplotlib.pyplot as plt

    colors = {"copy in": "tab:blue", "kernel": "tab:orange", "copy out": "tab:green"}
    nstreams = max(r[1] for r in rows) + 1
    fig, ax = plt.subplots(figsize=(8, 0.6 * nstreams + 1.5))
    for c, s, stage, a, b in rows:
        ax.barh(s, max(b - a, 1e-4), left=a, color=colors[stage], edgecolor="black", linewidth=0.3)
        ax.text((a + b) / 2, s, str(c), ha="center", va="center", fontsize=7)
    ax.set_yticks(range(nstreams), [f"stream {s}" for s in range(nstreams)])
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds since the first event")
    ax.set_title(title)
    ax.legend(
        handles=[plt.Rectangle((0, 0), 1, 1, color=v) for v in colors.values()],
        labels=list(colors),
        loc="lower right",
        fontsize="small",
    )
    fig.tight_layout()
    return fig
