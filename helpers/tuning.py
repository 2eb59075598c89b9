"""Knobs tuned on the GPU at hand: time a small grid of settings once per device, cache the winner.

A variant's best tile shape, block size or coarsening depends on the GPU (an H100's winner is not a
T4's), so a chapter's benchmark() asks for it instead of hard-coding it:

    from helpers import tuning
    choice = tuning.tune("ch10_reduce_shuffle", {"256 threads": 256, "512 threads": 512},
                         lambda tpb: timing.time_gpu(launcher(tpb)))
    choice.config   # 512: the winner on this device (timed now, or read from the cache)

The cache is one JSON file, `~/.cache/massively-parallel/tuning.json` (`$XDG_CACHE_HOME` is honoured;
`MP_TUNING_CACHE=path` overrides it; `MP_RETUNE=1` ignores what is cached), keyed by device name, then
by knob name. Every choice made in this process is kept in `CHOSEN` so `python -m tools.bench`
and the notebooks' "Measure it" can report the configuration they ran.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Choice:
    name: str  # the knob set, e.g. "ch10_reduce_shuffle"
    device: str
    label: str  # the winning candidate's label, e.g. "512 threads"
    config: Any  # the winning candidate's value
    seconds: float  # its time when it was tuned
    cached: bool  # True: read from the cache, not timed in this run
    timings: dict[str, float] = field(default_factory=dict)  # label -> seconds of the search

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "device": self.device,
            "label": self.label,
            "config": _jsonable(self.config),
            "seconds": self.seconds,
            "cached": self.cached,
            "timings": dict(self.timings),
        }

    def __str__(self) -> str:
        how = "cached" if self.cached else f"best of {len(self.timings)}"
        return f"{self.name}: {self.label} ({how} on {self.device})"


CHOSEN: dict[str, Choice] = {}  # knob name -> the choice made in this process


def cache_path() -> Path:
    """Where winners are cached: $MP_TUNING_CACHE, else the user's cache dir."""
    override = os.environ.get("MP_TUNING_CACHE")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "massively-parallel" / "tuning.json"


def _load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):  # absent or unreadable: tune again rather than fail a benchmark
        return {}
    return data if isinstance(data, dict) else {}


def _save(path: Path, data: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.replace(path)  # atomic: a crash mid-write never leaves half a file
    except OSError:
        pass  # a read-only home still benchmarks; it just tunes every run


def _jsonable(value):
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return None if callable(value) else repr(value)  # a launcher: its label says what it is


def device_name() -> str:
    """The current CUDA device's name (GPU only)."""
    from numba import cuda

    name = getattr(cuda.get_current_device(), "name", None) or "unknown device"
    return name.decode() if isinstance(name, bytes) else str(name)


def tune(
    name: str,
    candidates: Mapping[str, Any],
    measure: Callable[[Any], float],
    *,
    device: str | None = None,
    path: Path | str | None = None,
    retune: bool | None = None,
) -> Choice:
    """The fastest of `candidates` (label -> setting) on this device, from the cache or timed now.

    `measure(setting)` returns seconds (e.g. `timing.time_gpu` of a launch built with the setting);
    the lowest wins. A cached winner is reused only if its label is still among the candidates, so
    changing the grid re-tunes. Validate every candidate before tuning: the search trusts answers.
    """
    if not candidates:
        raise ValueError(f"tune({name!r}): no candidates")
    device = device or device_name()
    path = Path(path) if path is not None else cache_path()
    if retune is None:
        retune = os.environ.get("MP_RETUNE", "") not in ("", "0")
    data = _load(path)
    entry = data.get(device, {}).get(name)
    if not retune and isinstance(entry, dict) and entry.get("label") in candidates:
        label = entry["label"]
        choice = Choice(
            name,
            device,
            label,
            candidates[label],
            float(entry.get("seconds", 0.0)),
            True,
            entry.get("timings", {}),
        )
    else:
        timings = {label: float(measure(setting)) for label, setting in candidates.items()}
        label = min(timings, key=timings.get)
        choice = Choice(name, device, label, candidates[label], timings[label], False, timings)
        data.setdefault(device, {})[name] = {
            "label": label,
            "config": _jsonable(candidates[label]),
            "seconds": timings[label],
            "timings": timings,
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        _save(path, data)
    CHOSEN[name] = choice
    return choice


def tuned_time(
    name: str, candidates: Mapping[str, Any], measure: Callable[[Any], float], **options
) -> tuple[Choice, float]:
    """`tune`, then the winner's seconds in this run: the search's time where it searched now, a fresh
    `measure` of the cached winner otherwise (a benchmark reports what it measured today)."""
    choice = tune(name, candidates, measure, **options)
    return choice, measure(choice.config) if choice.cached else choice.seconds
