"""What limits each profiled kernel, in one command: Nsight Compute on `python -m tools.profile`'s
launches, one line per launch.

    python -m tools.ncu_summary ch05 ch18        # any studies tools.profile knows

prints, per kernel launch in launch order (the study's docstring says which is which): its time,
SM and memory throughput (% of peak), issue slots busy, the two busiest pipes (fma, xu = the
special-function unit, lsu, ...), achieved and theoretical occupancy, registers per thread and the
top three stall reasons (cycles per issued instruction). ncu runs the launches under its standard
sections (SpeedOfLight, Occupancy, LaunchStats, WarpStateStats, ComputeWorkloadAnalysis), then
reads its own report back as CSV; a metric this ncu does not name
so shows as "-". Without ncu it says so and fails.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "ComputeWorkloadAnalysis")

# (column title, metric names to try in order)
COLUMNS = [
    ("SM %", ("sm__throughput.avg.pct_of_peak_sustained_elapsed",)),
    ("mem %", ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",)),
    (
        "DRAM %",
        (
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        ),
    ),
    (
        "issue %",
        (
            "sm__inst_issued.avg.pct_of_peak_sustained_active",
            "smsp__issue_active.avg.pct_of_peak_sustained_active",
        ),
    ),
    ("occ %", ("sm__warps_active.avg.pct_of_peak_sustained_active",)),
    ("theo %", ("sm__maximum_warps_per_active_cycle_pct",)),
    ("regs", ("launch__registers_per_thread",)),
]
PIPE = re.compile(r"^sm__inst_executed_pipe_([a-z0-9_]+)\.avg\.pct_of_peak_sustained_active$")
STALL = re.compile(r"^smsp__average_warps?_issue_stalled_([a-z_]+)_per_issue_active\.ratio$")
TIME_UNITS = {
    "ns": 1e-3,
    "nsecond": 1e-3,
    "us": 1.0,
    "usecond": 1.0,
    "ms": 1e3,
    "msecond": 1e3,
    "s": 1e6,
    "second": 1e6,
}


def command(studies: list[str], report: Path) -> list[str]:
    """The ncu command line that profiles tools.profile's launches of `studies` into `report`."""
    sections = [arg for s in SECTIONS for arg in ("--section", s)]
    return [
        "ncu", "--clock-control", "none", *sections, "--export", str(report), "--force-overwrite",
        sys.executable, "-m", "tools.profile", *studies,
    ]  # fmt: skip


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def short_name(name: str) -> str:
    """numba's kernel name without its module path, ABI tags, argument types (ncu demangles it:
    `puzzles::...::dcs_split_kernel[abi:v1][abi:cw51...](Array<...>)`) or, mangled, the same
    from its length-prefixed parts (`_ZN7puzzles...16dcs_split_kernelB2v1...`)."""
    if name.startswith("_ZN"):
        parts, rest = [], name[3:]
        while (m := re.match(r"(\d+)", rest)) is not None:
            n = int(m.group(1))
            parts.append(rest[m.end() : m.end() + n])
            rest = rest[m.end() + n :]
        return parts[-1] if parts else name[:40]
    base = re.sub(r"\[abi:[^\]]*\]", "", name.split("(")[0]).split("::")[-1]
    return re.sub(r"\$\d+$", "", base) or name[:40]


def summarise(csv_text: str) -> list[dict]:
    """One dict per launch from `ncu --import REPORT --csv --page raw` output: name, block, grid,
    time_us, the COLUMNS, pipes [(name, %)] (busiest first) and stalls [(reason, cycles)]."""
    lines = csv_text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError('no CSV header (a line starting with "ID") in ncu\'s output')
    table = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, units, data = table[0], table[1], table[2:]
    col = {name: i for i, name in enumerate(header)}
    out = []
    for row in data:
        if len(row) != len(header):
            continue

        def get(name, row=row):
            return _number(row[col[name]]) if name in col else None

        entry = {"id": row[col.get("ID", 0)], "name": short_name(row[col["Kernel Name"]])}
        entry["block"] = row[col.get("Block Size", 0)]
        entry["grid"] = row[col.get("Grid Size", 0)]
        t = col.get("gpu__time_duration.sum")
        entry["time_us"] = (
            None if t is None else (get(header[t]) or 0) * TIME_UNITS.get(units[t], float("nan"))
        )
        for title, names in COLUMNS:
            entry[title] = next((get(n) for n in names if get(n) is not None), None)
        pipes = [(m.group(1), get(h)) for h in header if (m := PIPE.match(h)) and get(h) is not None]
        stalls = [(m.group(1), get(h)) for h in header if (m := STALL.match(h)) and get(h) is not None]
        entry["pipes"] = sorted(pipes, key=lambda p: -p[1])[:2]
        entry["stalls"] = sorted((s for s in stalls if s[0] != "selected"), key=lambda s: -s[1])[:3]
        out.append(entry)
    return out


def render(rows: list[dict]) -> str:
    """The table: one line per launch."""

    def fmt(v, spec=".0f"):
        return "-" if v is None else format(v, spec)

    titles = [t for t, _ in COLUMNS]
    head = f"{'#':>3} {'kernel':<28} {'block':>12} {'time us':>9} " + " ".join(f"{t:>7}" for t in titles)
    lines = [head + "  busiest pipes; top stalls (cycles/issue)"]
    for r in rows:
        cells = " ".join(f"{fmt(r[t]):>7}" for t in titles)
        pipes = ", ".join(f"{p} {v:.0f}%" for p, v in r["pipes"]) or "-"
        stalls = ", ".join(f"{s} {v:.2f}" for s, v in r["stalls"]) or "-"
        launch = f"{r['id']:>3} {r['name'][:28]:<28} {r['block']:>12} {fmt(r['time_us'], '.1f'):>9}"
        lines.append(f"{launch} {cells}  {pipes}; {stalls}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("studies", nargs="+", help="tools.profile's studies, e.g. ch05 ch18")
    args = parser.parse_args(argv)
    if shutil.which("ncu") is None:
        print("ncu (Nsight Compute) is not on PATH: nothing profiled", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "profile"
        run = subprocess.run(command(args.studies, report), capture_output=True, text=True)
        if run.returncode != 0 or not report.with_suffix(".ncu-rep").exists():
            print(run.stdout[-4000:], run.stderr[-4000:], sep="\n", file=sys.stderr)
            print(f"ncu failed (exit {run.returncode})", file=sys.stderr)
            return 1
        raw = subprocess.run(
            ["ncu", "--import", str(report.with_suffix(".ncu-rep")), "--csv", "--page", "raw"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    print(render(summarise(raw)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
