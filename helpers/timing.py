"""GPU timing for the chapters' benchmarks: CUDA events, ceilings and peers measured in the same run,
goals, tables, charts. (Over 400 lines: the one module every bench.py calls, as `timing.<name>`.)

The pattern (after llm.c's dev/cuda): validate each variant against NumPy on
fresh random data, then time it, then compare it with what the hardware can do
measured in the same run (a device-to-device copy for bandwidth-bound kernels,
cuBLAS SGEMM for matmul):

    from helpers import timing
    if timing.skip_reason():
        print(timing.skip_reason())
    else:
        rows = chNN.benchmark()
        print(timing.table(rows)); timing.bar_chart(rows, title="...")

Everything that touches the GPU is behind `skip_reason()`; the table, goal and chart
functions are plain Python and run anywhere. The convention a chapter's bench.py follows
(rows, ceilings, peers, GOAL, GOALS, tuning) is written once, in CONTRIBUTING.md.
"""

from __future__ import annotations

import statistics
import types
from dataclasses import dataclass

import numpy as np


@dataclass
class Measurement:
    name: str
    seconds: float  # median per launch
    bytes: int = 0  # minimum bytes the variant must move (read + write)
    flops: int = 0
    ceiling: bool = False  # this row is the hardware ceiling measured in the same run
    peer: bool = False  # this row is the library call a user would make instead (CuPy, cuBLAS, torch)
    config: str = ""  # the configuration this variant ran with (e.g. chosen by helpers.tuning)
    intensity: float = 0.0  # FLOP per byte of global traffic the algorithm requests (0: flops / bytes)

    @property
    def gbps(self) -> float:
        return self.bytes / self.seconds / 1e9 if self.seconds > 0 else 0.0

    @property
    def gflops(self) -> float:
        return self.flops / self.seconds / 1e9 if self.seconds > 0 else 0.0

    @property
    def flop_per_byte(self) -> float:
        """Arithmetic intensity: the algorithm's, where given, else flops over the minimum bytes."""
        if self.intensity:
            return self.intensity
        return self.flops / self.bytes if self.bytes else 0.0


# ---------------------------------------------------------------------------- GPU side


def skip_reason() -> str | None:
    """None where timing can run (a real CUDA GPU and the GPU engine), else one line saying why not.

    Asks the engine state (helpers.engine.STATE): `helpers.use("sim")` skips timing as MP_ENGINE=sim does."""
    from . import engine

    try:
        from numba import cuda  # noqa: F401
    except ImportError:
        return "numba-cuda is not installed: timing skipped."
    # is_available() swallows driver errors itself and answers False
    if not engine.gpu_present():
        return "No CUDA GPU here (kernels run on the simulator): timing skipped."
    if engine.current() == "sim":
        return "Engine set to the simulator (helpers.use('sim') or MP_ENGINE=sim): timing skipped."
    return None


def _require_gpu():
    reason = skip_reason()
    if reason:
        raise RuntimeError(reason)


def time_gpu(fn, *, warmup=3, reps=15, batch=10) -> float:
    """Median seconds per `fn()` call: CUDA events around `batch` back-to-back calls, `reps` times.

    `fn` launches work (a kernel, a copy) and returns without synchronising.
    The warm-up calls also compile Numba kernels on their first launch. Timing a
    batch keeps the GPU busy while Python launches the next call, as in a real
    pipeline; one call between two events would count the host's launch overhead
    (tens of microseconds in Numba) as GPU time.
    """
    _require_gpu()
    from numba import cuda

    for _ in range(warmup):
        fn()
    cuda.synchronize()
    start, end = cuda.event(timing=True), cuda.event(timing=True)
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        times.append(cuda.event_elapsed_time(start, end) / 1e3 / batch)
    _progress_tick()
    return statistics.median(times)


def specialize(kernel, device_functions=(), jit_options=None, **constants):
    """The same kernel compiled with other values for its module constants (e.g. TILE=32).

    The puzzles size shared memory with small module constants so the simulator stays fast; Numba
    freezes the globals a kernel reads at compile time, so a copy of the Python function with a
    modified globals dict is a new kernel: the code the harness checked, at GPU sizes. Device
    functions it calls are recompiled against the same globals; `jit_options` go to `cuda.jit`
    (e.g. `{"max_registers": 128}`).
    """
    from numba import cuda

    root = getattr(kernel, "py_func", kernel)
    g = dict(root.__globals__)
    g.update(constants)

    def copy(f):
        return types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)

    for dev in device_functions:
        f = getattr(dev, "py_func", dev)
        opts = getattr(dev, "targetoptions", {})  # keep an inline="always" (its local arrays stay registers)
        keep = {k: opts[k] for k in ("inline", "forceinline") if opts.get(k) not in (None, False, "never")}
        g[f.__name__] = cuda.jit(device=True, **keep)(copy(f))
    return cuda.jit(**(jit_options or {}))(copy(root))


def copy_ceiling(nbytes=1 << 30) -> Measurement:
    """Device-to-device copy of `nbytes`: what streaming memory can do.

    cudaMemcpy through CuPy where it is installed (the hardware's copy engine path),
    else a grid-stride Numba copy kernel. bytes = 2 * nbytes: every byte is read
    once and written once.
    """
    _require_gpu()
    n = nbytes // 4
    try:
        import cupy as cp
    except ImportError:
        cp = None
    if cp is not None:
        src, dst = cp.ones(n, cp.float32), cp.empty(n, cp.float32)
        seconds = time_gpu(lambda: cp.copyto(dst, src))
        name = "device copy (ceiling)"
    else:
        from numba import cuda

        src, dst = cuda.to_device(np.ones(n, np.float32)), cuda.device_array(n, np.float32)
        blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * 8
        seconds = time_gpu(lambda: _copy_kernel()[blocks, 256](dst, src))
        name = "device copy, Numba kernel (ceiling)"
    return Measurement(name, seconds, bytes=2 * n * 4, ceiling=True)


_COPY = []


def _copy_kernel():
    if not _COPY:
        from numba import cuda

        @cuda.jit
        def copy(dst, src):
            start, stride = cuda.grid(1), cuda.gridsize(1)
            for i in range(start, src.size, stride):
                dst[i] = src[i]

        _COPY.append(copy)
    return _COPY[0]


def torch_or_reason():
    """(torch, None) where PyTorch with CUDA is importable, else (None, why not). TF32 is turned off:
    FP32 means FP32, the same arithmetic as the kernels under test."""
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed: its row is skipped."
    except Exception as e:  # an install that fails on import (seen: torch 2.11 parsing its own op schema)
        return (
            None,
            f"PyTorch fails on import ({type(e).__name__}: {str(e).splitlines()[0]}): its row is skipped.",
        )
    if not torch.cuda.is_available():
        return None, "PyTorch sees no CUDA GPU: its row is skipped."
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch, None


def sgemm_ceiling(n=8192) -> Measurement | None:
    """cuBLAS FP32 SGEMM of two n x n matrices, the FLOP/s ceiling: through CuPy, else through PyTorch
    (TF32 off), else None (the reason printed)."""
    _require_gpu()
    try:
        import cupy as cp
    except ImportError:
        torch, why = torch_or_reason()
        if torch is None:
            print(f"no SGEMM ceiling: CuPy is not installed; {why}")
            return None
        a = torch.randn(n, n, device="cuda")
        b = torch.randn(n, n, device="cuda")
        seconds = time_gpu(lambda: torch.matmul(a, b), batch=2, reps=5)
        return Measurement("torch SGEMM (ceiling)", seconds, flops=2 * n**3, ceiling=True)
    rng = cp.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=cp.float32)
    b = rng.standard_normal((n, n), dtype=cp.float32)
    c = cp.empty((n, n), cp.float32)
    # CuPy's default (CUPY_TF32 unset) is true FP32, the same arithmetic as the kernels under test.

    def launch():
        cp.matmul(a, b, out=c)

    for _ in range(3):
        launch()
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(10):
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return Measurement("cuBLAS SGEMM (ceiling)", statistics.median(times), flops=2 * n**3, ceiling=True)


def validate(name, got, expected, *, rtol=1e-5, atol=1e-6) -> None:
    """Raise an AssertionError naming the variant where `got` differs from `expected`."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        raise AssertionError(f"{name}: output shape {got.shape}, expected {expected.shape}")
    bad = ~np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=False)
    if bad.any():
        first = tuple(int(i) for i in np.unravel_index(int(np.flatnonzero(bad)[0]), got.shape))
        idx = first if len(first) > 1 else first[0]
        raise AssertionError(
            f"{name}: {int(bad.sum())} of {got.size} elements wrong; first at index {idx}: "
            f"got {got[first].item()!r}, expected {expected[first].item()!r} (rtol={rtol}, atol={atol})"
        )


# ---------------------------------------------------------------------------- progress and library peers

_PROGRESS: list = []  # at most one callback, called after every time_gpu measurement


def set_progress(callback=None) -> None:
    """Call `callback()` after each `time_gpu` measurement (None: stop). tools.bench draws its bar."""
    _PROGRESS.clear()
    if callback is not None:
        _PROGRESS.append(callback)


def _progress_tick():
    for callback in _PROGRESS:
        callback()


SKIPPED_PEERS: list[tuple[str, str]] = []  # (peer name, why it was not measured) in this process


def library_peer(name, candidates, *, bytes=0, flops=0, check=None, **time_options) -> Measurement | None:
    """Time the library call a user would make instead of the chapter's kernels, as a `peer` row.

    `candidates` is a list of `(label, make)`, tried in order: `make()` imports its library (CuPy,
    then PyTorch, say) and returns `(launch, result)`, where `launch()` queues the call without
    synchronising and `result()` gives its output as a NumPy array after a launch. `check(got)`
    raises AssertionError where the output is wrong. A candidate whose library is missing, or which
    fails or gives a wrong answer, is passed over with its reason; with none left, the peer is
    skipped (None) and the reasons are printed and kept in `SKIPPED_PEERS`.
    """
    reason = skip_reason()
    reasons = [reason] if reason else []
    for label, make in [] if reason else candidates:
        try:
            launch, result = make()
            launch()
            if check is not None:
                check(result())
            seconds = time_gpu(launch, **time_options)
        except ImportError as e:
            reasons.append(f"{label}: {e.name or e} not installed")
            continue
        except Exception as e:  # a library's failure must not fail the chapter's own validation
            reasons.append(f"{label}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            continue
        return Measurement(f"{label} (peer)", seconds, bytes=bytes, flops=flops, peer=True)
    why = "; ".join(reasons) or "no candidate"
    SKIPPED_PEERS.append((name, why))
    print(f"peer {name} skipped: {why}")
    return None


def via(library: str, label: str, fn, *arrays):
    """A `library_peer` candidate: `fn(lib, *views)` where `lib` is the module `library` ("cupy" or
    "torch") and `views` are zero-copy views of the Numba device `arrays` (both libraries read
    `__cuda_array_interface__`); what `fn` returns is the output that is checked."""

    def make():
        import importlib

        lib = importlib.import_module(library)
        if library == "torch":
            views = [lib.as_tensor(a, device="cuda") for a in arrays]

            def to_host(x):
                return x.cpu().numpy()
        else:
            views = [lib.asarray(a) for a in arrays]
            to_host = lib.asnumpy
        last = []

        def launch():
            last[:] = [fn(lib, *views)]

        return launch, lambda: to_host(last[0])

    return label, make


# ---------------------------------------------------------------------------- reporting (CPU)


def _unit(row: Measurement) -> str | None:
    """The unit a row is judged in: FLOP/s where it counts flops, else bytes/s where it counts bytes."""
    if row.flops:
        return "flops"
    if row.bytes:
        return "bytes"
    return None


def _ceiling_for(rows, unit):
    for r in rows:
        if r.ceiling and _unit(r) == unit:
            return r
    return None


def _rate(row: Measurement, unit) -> float:
    return row.gflops if unit == "flops" else row.gbps


def fraction_of_ceiling(rows, name) -> float:
    """Row `name`'s rate divided by the ceiling row of the same unit (FLOP/s or bytes/s)."""
    matches = [r for r in rows if r.name == name]
    if not matches:
        raise KeyError(f"no row named {name!r}; have {[r.name for r in rows]}")
    row = matches[0]
    unit = _unit(row)
    if unit is None:
        raise ValueError(f"row {name!r} counts neither bytes nor flops")
    ceil = _ceiling_for(rows, unit)
    if ceil is None:
        raise ValueError(f"no ceiling row measured in {'FLOP/s' if unit == 'flops' else 'bytes/s'}")
    return _rate(row, unit) / _rate(ceil, unit)


def peer_for(rows, name) -> Measurement | None:
    """The peer row that row `name` is compared with: a peer row of the same unit (the first one)."""
    row = next((r for r in rows if r.name == name), None)
    if row is None:
        raise KeyError(f"no row named {name!r}; have {[r.name for r in rows]}")
    unit = _unit(row)
    return next((r for r in rows if r.peer and _unit(r) == unit), None)


def fraction_of_peer(rows, name) -> float | None:
    """Row `name`'s rate divided by its peer's (see `peer_for`), or None where no peer ran.

    Above 1.0: faster than the library call a user would make instead."""
    row = next((r for r in rows if r.name == name), None)
    if row is None:
        raise KeyError(f"no row named {name!r}; have {[r.name for r in rows]}")
    other, unit = peer_for(rows, name), _unit(row)
    if other is None or unit is None or _rate(other, unit) <= 0:
        return None
    return _rate(row, unit) / _rate(other, unit)


# ---------------------------------------------------------------------------- goals (CPU)

# A chapter's GOAL: {"best": variant, "ceiling": "copy" | "sgemm" | the ceiling row's label,
# "fraction": of the ceiling's rate, optional "peer": of the library peer's rate}; None: no goal.
GOAL_KEYS = {"best": str, "ceiling": str, "fraction": (int, float), "peer": (int, float)}
GOAL_REQUIRED = ("best", "ceiling", "fraction")


def check_goal(goal: dict | None) -> dict | None:
    """`goal` itself, after checking its keys and values (a ValueError names the wrong one): every
    chapter's `GOAL = timing.check_goal({...})`, so a typo fails at import, not in a GPU run."""
    if goal is None:
        return None
    if not isinstance(goal, dict):
        raise ValueError(f"a GOAL is a dict or None, not {type(goal).__name__}")
    unknown = sorted(set(goal) - set(GOAL_KEYS))
    if unknown:
        raise ValueError(f"GOAL has unknown key(s) {unknown}; the keys are {list(GOAL_KEYS)}")
    missing = [k for k in GOAL_REQUIRED if k not in goal]
    if missing:
        raise ValueError(f"GOAL {goal} lacks {missing}: it needs {list(GOAL_REQUIRED)}")
    for key, value in goal.items():
        if not isinstance(value, GOAL_KEYS[key]) or isinstance(value, bool):
            raise ValueError(f"GOAL[{key!r}] = {value!r}: expected {GOAL_KEYS[key]}")
        if isinstance(value, str) and not value:
            raise ValueError(f"GOAL[{key!r}] is empty")
        if not isinstance(value, str) and not value > 0:
            raise ValueError(f"GOAL[{key!r}] = {value!r}: a fraction above 0")
    return goal


CEILING_WORDS = ("copy", "sgemm", "ceiling")  # `against` words meaning the ceiling row of the variant's unit


def goal_rows(rows, goals) -> list[tuple]:
    """Further goals of a chapter (its `GOALS`, beside the one `GOAL` the goals table judges), judged
    on the rows of one run: `goals` is [(variant, against, need)], `against` a row's name or one of
    CEILING_WORDS; returns [(variant, against, ratio, need, met)], ratio the variant's rate over the
    other's (None and met "?" where either row is missing), met "yes" or "NO"."""
    by = {r.name: r for r in rows}
    out = []
    for name, against, need in goals:
        row = by.get(name)
        unit = _unit(row) if row is not None else None
        other = _ceiling_for(rows, unit) if against in CEILING_WORDS else by.get(against)
        if row is None or other is None or unit is None or _rate(other, unit) <= 0:
            out.append((name, against, None, need, "?"))
            continue
        ratio = _rate(row, unit) / _rate(other, unit)
        out.append((name, against, ratio, need, "yes" if ratio >= need else "NO"))
    return out


def _row_label(r: Measurement) -> str:
    label = r.name + (f" [{r.config}]" if r.config else "")
    if r.peer and "(peer)" not in r.name:  # cuBLAS: the ceiling and the peer at once
        label += " (peer)"
    return label + (" *" if r.ceiling else "")


def _fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    return f"{s * 1e6:.1f} us"


def table(rows) -> str:
    """A fixed-width text table: name, time, GB/s, GFLOP/s, % of the ceiling of the same unit, and
    for a tuned variant how its config was chosen (cached or searched now, the timings' spread)."""
    from helpers import tuning

    header = ("variant", "time", "GB/s", "GFLOP/s", "% of ceiling")
    body = []
    tuned = [tuning.choice_for(r.name, r.config) for r in rows]
    for r in rows:
        unit = _unit(r)
        ceil = _ceiling_for(rows, unit) if unit else None
        pct = f"{100 * _rate(r, unit) / _rate(ceil, unit):.1f}%" if ceil and _rate(ceil, unit) > 0 else "-"
        body.append(
            (
                _row_label(r),
                _fmt_time(r.seconds),
                f"{r.gbps:.1f}" if r.bytes else "-",
                f"{r.gflops:.1f}" if r.flops else "-",
                pct,
            )
        )
    if any(tuned):
        header += ("tuning",)
        body = [(*line, c.summary() if c else "-") for line, c in zip(body, tuned, strict=True)]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def fmt(line):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))

    lines = [fmt(header), "  ".join("-" * w for w in widths), *map(fmt, body)]
    if any(r.ceiling for r in rows):
        lines.append("* measured ceiling")
    if any(r.peer for r in rows):
        lines.append("(peer) the library call a user would make instead, measured in the same run")
    if any(tuned):
        lines.append("tuning: the config [in brackets] was searched now or cached (and re-checked against")
        lines.append("the default); spread = (max - min) / median of its timing rounds")
    return "\n".join(lines)


def bar_chart(rows, title):
    """Bars of each variant's rate; the ceiling of the same unit drawn as a dashed line."""
    import matplotlib.pyplot as plt

    unit = "flops" if any(r.flops for r in rows) else "bytes"
    label = "GFLOP/s" if unit == "flops" else "GB/s"
    bars = [r for r in rows if not r.ceiling and _unit(r) == unit]
    ceil = _ceiling_for(rows, unit)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(bars) + 2), 3.5))
    ax.bar(range(len(bars)), [_rate(r, unit) for r in bars], color="tab:blue")
    ax.set_xticks(range(len(bars)), [r.name for r in bars], rotation=30, ha="right")
    ax.set_ylabel(label)
    ax.set_title(title)
    if ceil is not None:
        ax.axhline(_rate(ceil, unit), color="tab:red", linestyle="--", label=f"{ceil.name}")
        ax.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    return fig


def roofline_points(rows) -> tuple[float | None, float | None, list]:
    """(bandwidth GB/s, peak GFLOP/s, [(name, FLOP/byte, GFLOP/s, roof GFLOP/s)]): the measured
    ceilings of `rows` (a bytes ceiling row and a flops ceiling row; None where missing) and one point
    per variant that counts flops, with the roof above it, min(peak, intensity x bandwidth)."""
    bw = _ceiling_for(rows, "bytes")
    peak = _ceiling_for(rows, "flops")
    bw_v = bw.gbps if bw else None
    peak_v = peak.gflops if peak else None
    points = []
    for r in rows:
        if r.ceiling or not r.flops or not r.flop_per_byte:
            continue
        roofs = [v for v in (peak_v, r.flop_per_byte * bw_v if bw_v else None) if v]
        points.append((r.name, r.flop_per_byte, r.gflops, min(roofs) if roofs else None))
    return bw_v, peak_v, points


def roofline(rows, title):
    """Roofline chart: each variant at (arithmetic intensity, achieved GFLOP/s) on log-log axes, under
    the bandwidth roof (intensity x the measured copy bandwidth) and the FLOP roof (the measured
    library peak), both from the same run."""
    import matplotlib.pyplot as plt

    bw, peak, points = roofline_points(rows)
    if not points:
        raise ValueError("no variant counts flops: a roofline needs FLOP/s and an arithmetic intensity")
    xs = [p[1] for p in points]
    lo, hi = min(xs) / 4, max(xs) * 4
    if bw and peak:
        lo, hi = min(lo, peak / bw / 8), max(hi, peak / bw * 8)
    grid = np.geomspace(lo, hi, 200)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    if bw:
        roof = grid * bw if not peak else np.minimum(grid * bw, peak)
        ax.plot(
            grid,
            roof,
            color="#222222",
            lw=2,
            label=f"roof: {bw:.0f} GB/s copy" + (", FLOP peak" if peak else ""),
        )
    if peak:
        ax.axhline(peak, color="#D55E00", ls="--", lw=1, label=f"measured FLOP peak {peak:.0f} GFLOP/s")
    if bw and peak:
        ax.axvline(peak / bw, color="#999999", ls=":", lw=1, label=f"ridge point: {peak / bw:.0f} FLOP/byte")
    colors = ["#0072B2", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000", "#F0E442"]
    for k, (name, x, y, roof_y) in enumerate(points):
        c = colors[k % len(colors)]
        share = f" ({y / roof_y:.0%} of its roof)" if roof_y else ""
        ax.scatter([x], [y], s=45, color=c, zorder=3, label=f"{name}{share}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte of global traffic)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title)
    ax.grid(True, which="major", color="#EEEEEE")
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize="small", frameon=False)
    fig.tight_layout()
    return fig
