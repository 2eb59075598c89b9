"""Knobs tuned on the GPU at hand: time a small grid of settings per device, cache the winner, and
check on every run that the cached winner still beats the default.

A variant's best tile shape, block size or coarsening depends on the GPU (an H100's winner is not a
T4's), so a chapter's benchmark() asks for it instead of hard-coding it:

    from helpers import tuning
    choice = tuning.tune("ch10_reduce_shuffle", {"256 threads": 256, "512 threads": 512},
                         lambda tpb: timing.time_gpu(launcher(tpb)))
    choice.config   # 512: the winner on this device (searched now, or read from the cache)

The first candidate is the default (`default=label` names another). A search times every candidate
in ROUNDS interleaved rounds and keeps each one's median and spread ((max - min) / median); a spread
above NOISY means another process shared the GPU: the search is not cached, the default is used, and
one line says so. A cached winner is timed against the default for RECHECK_ROUNDS rounds on every
run; if the default is faster by more than LOST, the cache is stale and the grid is searched again
(a noisy re-check keeps the cached winner and says so; an entry without a spread, written before
these checks, is searched again).

The cache is one JSON file, `~/.cache/massively-parallel/tuning.json` (`$XDG_CACHE_HOME` is honoured;
`MP_TUNING_CACHE=path` overrides it; `MP_RETUNE=1` ignores what is cached; `MP_TUNING_READONLY=1`
reads it but never writes it, as the test suite does: conftest.py), keyed by device name, then by
knob name. Every choice made in this process is kept in `CHOSEN` so `python -m tools.bench` and the
notebooks' "Measure it" can report the configuration they ran, its spread and where it came from.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROUNDS = 3  # a search times every candidate this many times, interleaved
RECHECK_ROUNDS = 3  # a cached winner and the default, interleaved, on every run
NOISY = 0.15  # a spread above this: the GPU was shared (a quiet GPU repeats within a few %)
LOST = 0.03  # the default faster than the cached winner by more than this: the cache is stale
READONLY_ENV = "MP_TUNING_READONLY"

# how a Choice was made (Choice.how)
SEARCHED = "searched"  # every candidate timed now, the winner cached (unless read-only)
CACHED = "cached"  # the cached winner, re-checked against the default now
RESEARCHED = "searched again"  # the cached winner lost the re-check: searched now
SHARED = "default (shared GPU)"  # the search was too noisy to trust: the default, nothing cached


@dataclass
class Choice:
    name: str  # the knob set, e.g. "ch10_reduce_shuffle"
    device: str
    label: str  # the chosen candidate's label, e.g. "512 threads"
    config: Any  # the chosen candidate's value
    seconds: float  # its median time in this run (search or re-check)
    cached: bool  # True: the winner was read from the cache (and re-checked), not searched now
    timings: dict[str, float] = field(default_factory=dict)  # label -> median seconds timed now
    spread: float = 0.0  # the largest (max - min) / median of the rounds timed now
    how: str = SEARCHED  # SEARCHED, CACHED, RESEARCHED or SHARED
    default: str = ""  # the default candidate's label
    saved: bool = False  # this run wrote the choice to the cache
    rounds: dict[str, list[float]] = field(default_factory=dict)  # label -> seconds of each round

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "device": self.device,
            "label": self.label,
            "config": _jsonable(self.config),
            "seconds": self.seconds,
            "cached": self.cached,
            "timings": dict(self.timings),
            "spread": self.spread,
            "how": self.how,
            "default": self.default,
            "saved": self.saved,
            "rounds": {label: list(t) for label, t in self.rounds.items()},
        }

    def summary(self) -> str:
        """How the choice was made, in a few words, e.g. "cached, spread 1.2%"."""
        return f"{self.how}, spread {100 * self.spread:.1f}%"

    def __str__(self) -> str:
        return f"{self.name}: {self.label} ({self.summary()}, {len(self.timings)} timed on {self.device})"


CHOSEN: dict[str, Choice] = {}  # knob name -> the choice made in this process


def cache_path() -> Path:
    """Where winners are cached: $MP_TUNING_CACHE, else the user's cache dir."""
    override = os.environ.get("MP_TUNING_CACHE")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "massively-parallel" / "tuning.json"


def _flag(env: str) -> bool:
    return os.environ.get(env, "") not in ("", "0")


def _load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):  # absent or unreadable: tune again rather than fail a benchmark
        return {}
    return data if isinstance(data, dict) else {}


def _save(path: Path, data: dict) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")  # one per process: two writers never share it
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.replace(path)  # atomic: a crash mid-write never leaves half a file
        return True
    except OSError:
        return False  # a read-only home still benchmarks; it just tunes every run


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


def time_rounds(candidates: Mapping[str, Any], measure: Callable[[Any], float], rounds: int) -> dict:
    """label -> the seconds of each round; the rounds interleave the candidates, so a neighbour's load
    that comes and goes shows in every candidate's spread instead of slowing one of them. Stops after
    the second round whose spread already shows a shared GPU (the rest would not be trusted either)."""
    times: dict[str, list[float]] = {label: [] for label in candidates}
    for r in range(rounds):
        for label, setting in candidates.items():
            times[label].append(float(measure(setting)))
        if r >= 1 and max(map(spread, times.values())) > NOISY:
            break
    return times


def spread(times: list[float]) -> float:
    """(max - min) / median of one candidate's rounds: 0 on a quiet GPU, large on a shared one."""
    mid = statistics.median(times)
    return (max(times) - min(times)) / mid if mid > 0 else 0.0


def _summarise(times: dict) -> tuple[dict[str, float], float]:
    return {label: statistics.median(t) for label, t in times.items()}, max(map(spread, times.values()))


def _say(name: str, message: str) -> None:
    print(f"tuning {name}: {message}", flush=True)  # one line, in the notebook or the bench log


def tune(
    name: str,
    candidates: Mapping[str, Any],
    measure: Callable[[Any], float],
    *,
    default: str | None = None,
    device: str | None = None,
    path: Path | str | None = None,
    retune: bool | None = None,
    readonly: bool | None = None,
) -> Choice:
    """The fastest of `candidates` (label -> setting) on this device, searched now or read from the
    cache and re-checked against the default (the first candidate unless `default` names one).

    `measure(setting)` returns seconds (e.g. `timing.time_gpu` of a launch built with the setting);
    the lowest median wins. A cached winner is reused only if its label is still among the candidates
    (changing the grid searches again) and it still beats the default. Validate every candidate
    before tuning: the search trusts answers.
    """
    if not candidates:
        raise ValueError(f"tune({name!r}): no candidates")
    default = next(iter(candidates)) if default is None else default
    if default not in candidates:
        raise ValueError(f"tune({name!r}): the default {default!r} is not a candidate")
    device = device or device_name()
    path = Path(path) if path is not None else cache_path()
    retune = _flag("MP_RETUNE") if retune is None else retune
    readonly = _flag(READONLY_ENV) if readonly is None else readonly
    data = _load(path)
    entry = data.get(device, {}).get(name)
    how = SEARCHED
    # an entry without a spread was written before searches were checked for a shared GPU
    if not retune and isinstance(entry, dict) and entry.get("label") in candidates and "spread" in entry:
        choice = _recheck(name, device, candidates, measure, entry["label"], default)
        if choice is not None:
            CHOSEN[name] = choice
            return choice
        how = RESEARCHED
    choice = _search(name, device, candidates, measure, default, how)
    if choice.how != SHARED and not readonly:
        choice.saved = _save(path, _with_entry(_load(path), choice))  # read again: others may have written
    CHOSEN[name] = choice
    return choice


def _search(name, device, candidates, measure, default, how) -> Choice:
    """Every candidate, ROUNDS interleaved rounds: the lowest median, or the default if too noisy."""
    times = time_rounds(candidates, measure, ROUNDS)
    medians, worst = _summarise(times)
    label = min(medians, key=medians.get)
    if worst > NOISY:
        _say(
            name,
            f"timings spread {100 * worst:.0f}% across rounds (a shared GPU?): "
            f"not cached, using the default {default!r}",
        )
        label, how = default, SHARED
    return _choice(name, device, candidates, label, times, how, default)


def _recheck(name, device, candidates, measure, label, default) -> Choice | None:
    """The cached winner, timed against the default; None when the default beat it (stale cache)."""
    pair = {label: candidates[label], default: candidates[default]}  # one entry if they are the same
    times = time_rounds(pair, measure, RECHECK_ROUNDS)
    medians, worst = _summarise(times)
    if worst > NOISY:  # a shared GPU now: trust the quiet search that made the cache, say so
        _say(name, f"re-check spread {100 * worst:.0f}% (a shared GPU?): keeping the cached {label!r}")
    elif medians[default] < medians[label] * (1 - LOST):
        _say(
            name,
            f"the default {default!r} beat the cached {label!r} "
            f"({_ms(medians[default])} vs {_ms(medians[label])}): searching again",
        )
        return None
    return _choice(name, device, candidates, label, times, CACHED, default)


def _choice(name, device, candidates, label, times, how, default) -> Choice:
    medians, worst = _summarise(times)
    cached = how == CACHED
    args = (name, device, label, candidates[label], medians[label], cached, medians, worst, how, default)
    return Choice(*args, rounds=times)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def _with_entry(data: dict, choice: Choice) -> dict:
    data.setdefault(choice.device, {})[choice.name] = {
        "label": choice.label,
        "config": _jsonable(choice.config),
        "seconds": choice.seconds,
        "timings": choice.timings,
        "rounds": choice.rounds,
        "spread": choice.spread,
        "default": choice.default,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    return data


def tuned_time(
    name: str, candidates: Mapping[str, Any], measure: Callable[[Any], float], **options
) -> tuple[Choice, float]:
    """`tune`, then the chosen setting's median seconds timed in this run (by the search or by the
    re-check of a cached winner): a benchmark reports what it measured today."""
    choice = tune(name, candidates, measure, **options)
    return choice, choice.seconds


def choice_for(row_name: str, config: str) -> Choice | None:
    """The choice of this process that a table row ran with: its label is in the row's config, and
    its knob is named as the row, or is the one such knob whose name contains the row's (or the one
    with that label at all)."""
    if not config:
        return None
    by_label = [c for c in CHOSEN.values() if c.label and c.label in config]
    exact = [c for c in by_label if c.name == row_name]
    related = [c for c in by_label if row_name in c.name or c.name in row_name]
    pool = exact or related or by_label
    return pool[0] if len(pool) == 1 else None
