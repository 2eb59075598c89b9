"""What a `python -m tools.bench` run measured, as JSON-ready data: the device, the package versions,
every row with its rates and ratios, the goals and the tuned configurations."""

from __future__ import annotations

import re
import sys
import time
from importlib import metadata

GOAL_HEADER = (
    "chapter",
    "best variant",
    "achieved",
    "ceiling",
    "fraction",
    "peer",
    "vs peer",
    "goal",
    "met?",
)


PACKAGES = ("numba", "numba-cuda", "numpy", "cupy", "torch")


def package_versions() -> dict:
    """Installed versions of the packages that decide the numbers (None where absent). CuPy's wheels
    are named per CUDA version (cupy-cuda12x), so any distribution named cupy* counts."""
    found = {name: None for name in PACKAGES}
    for dist in metadata.distributions():
        dist_name = (dist.metadata["Name"] or "").lower()
        key = "cupy" if dist_name.startswith("cupy") else dist_name
        if key in found and found[key] is None:
            found[key] = dist.version
    return found


def device_info() -> dict:
    """The current GPU: name, compute capability, SMs, CUDA driver and runtime versions (GPU only)."""
    from numba import cuda

    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)

    def version(get):
        try:
            return ".".join(str(v) for v in get())
        except Exception:  # an old numba-cuda or driver without the query
            return None

    return {
        "name": name,
        "compute_capability": "%d.%d" % tuple(dev.compute_capability),
        "multiprocessors": dev.MULTIPROCESSOR_COUNT,
        "driver": version(lambda: cuda.cudadrv.driver.driver.get_version()),
        "runtime": version(lambda: cuda.runtime.get_version()),
    }


def row_dict(rows, r) -> dict:
    """One measured row, with its rates, its ratios to the ceiling and the peer of its unit, and how its
    config was tuned (the knob, searched or cached, the spread; the details under "tuning")."""
    from helpers import timing, tuning

    try:
        frac = timing.fraction_of_ceiling(rows, r.name)
    except ValueError:
        frac = None
    tuned = tuning.choice_for(r.name, r.config)
    return {
        "name": r.name,
        "seconds": r.seconds,
        "bytes": r.bytes,
        "flops": r.flops,
        "gbps": r.gbps if r.bytes else None,
        "gflops": r.gflops if r.flops else None,
        "ceiling": r.ceiling,
        "peer": r.peer,
        "config": r.config or None,
        "tuning": tuned
        and {"knob": tuned.name, "how": tuned.how, "cached": tuned.cached, "spread": tuned.spread},
        "fraction_of_ceiling": frac,
        "fraction_of_peer": None if r.ceiling and not r.peer else timing.fraction_of_peer(rows, r.name),
    }


def results(device, args, chapters, goals, seconds) -> dict:
    """Everything a run measured, as JSON-ready data. `chapters`: (tag, module name, rows or None, error
    or None, the chapter's further goals judged by timing.goal_rows)."""
    from helpers import timing, tuning

    out = {
        "schema": 1,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python -m tools.bench " + " ".join(args),
        "device": device,
        "packages": package_versions(),
        "python": sys.version.split()[0],
        "seconds": seconds,
        "chapters": {},
        "goals": [dict(zip(GOAL_HEADER, g, strict=True)) for g in goals],
        "tuning": {name: c.as_dict() for name, c in tuning.CHOSEN.items()},
        "skipped_peers": [{"peer": n, "why": why} for n, why in timing.SKIPPED_PEERS],
    }
    for tag, module_name, rows, error, further in chapters:
        entry = {"module": module_name, "error": error}
        entry["further_goals"] = [
            dict(zip(("variant", "against", "ratio", "goal", "met?"), g, strict=True)) for g in further
        ]
        if rows is not None:
            entry["rows"] = [row_dict(rows, r) for r in rows]
            entry["ceilings"] = [r.name for r in rows if r.ceiling]
            entry["peers"] = [r.name for r in rows if r.peer]
        out["chapters"][tag] = entry
    return out


def default_json_path(device_name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", device_name).strip("-").lower() or "gpu"
    return f"bench-{slug}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}.json"
