"""Read an Nsight Compute CSV (`--csv --page raw`) of `tools.profile` launches and print, per kernel,
what limits it: time, SM and memory throughput (% of peak), DRAM throughput, achieved occupancy,
issue slots used, registers, the top three stall reasons, and instructions per element.

    ncu --clock-control none --section WarpStateStats --metrics "$(python -m tools.ncu_summary --metrics)" \\
        --csv --page raw --print-units base --log-file ncu-ch14.csv python -m tools.profile ch14
    python -m tools.ncu_summary ncu-ch14.csv --study ch14

or both steps for several studies in one command (ncu on PATH; the CSVs stay in --out):

    python -m tools.ncu_summary --run ch08 ch11 ch12 ch14 [--out DIR]

`--study` names the tools.profile study, whose ELEMENTS (points, outputs or nonzeros a launch handles)
turn instruction counts into per-element ones.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys

METRICS = {  # column -> what the table calls it
    "gpu__time_duration.sum": "time",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "SM %",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": "mem %",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM %",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy %",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue %",
    "launch__registers_per_thread": "regs",
    "smsp__inst_executed.sum": "warp instr",
    "smsp__thread_inst_executed.sum": "thread instr",
}
_STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")


def rows_of(lines) -> list[dict]:
    """The kernels' rows of a raw-page CSV (ncu's own messages and the units row skipped)."""
    text = [ln for ln in lines if ln.startswith('"')]
    rows = list(csv.reader(text))
    start = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if start is None:
        raise ValueError('no ncu raw-page CSV header (a row starting with "ID") in the file')
    header = rows[start]
    out = []
    for r in rows[start + 1 :]:
        if len(r) != len(header) or not r[0].strip():  # the units row has an empty ID
            continue
        out.append(dict(zip(header, r, strict=True)))
    return out


def _number(s: str) -> float | None:
    try:
        return float(s.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def short_name(name: str) -> str:
    """The function's own name from a demangled ("a::b::f[abi:..](...)") or Itanium-mangled
    ("_ZN1a1b1fB2v1..") kernel name; anything else as it is."""
    if name.startswith("_ZN"):
        parts, s = [], name[3:]
        while (m := re.match(r"(\d+)", s)) and int(m.group(1)) <= len(s) - len(m.group(1)):
            n = int(m.group(1))
            parts.append(s[len(m.group(1)) : len(m.group(1)) + n])
            s = s[len(m.group(1)) + n :]
        return parts[-1] if parts else name
    return name.split("(")[0].split("::")[-1].split("[")[0] or name


def summary(row: dict, elements: int | None) -> str:
    name = short_name(row.get("Kernel Name", "?"))[:40]
    parts = [f"{row.get('ID', '?'):>3s} {name:40s}"]
    for col, label in METRICS.items():
        v = _number(row.get(col, ""))
        if v is None:
            continue
        if label == "time":  # nanoseconds (--print-units base)
            parts.append(f"{v / 1000:8.1f} us")
        elif label.endswith("instr"):
            if elements:
                parts.append(f"{v / elements:6.2f} {label}/elem")
        else:
            parts.append(f"{label} {v:5.1f}")
    stalls = sorted(
        ((_number(v) or 0.0, m.group(1)) for k, v in row.items() if (m := _STALL.match(k))), reverse=True
    )
    if stalls:
        parts.append("stalls: " + ", ".join(f"{name} {v:.1f}" for v, name in stalls[:3]))
    return " | ".join(parts)


def ncu_command(study: str, csv_path: str) -> list[str]:
    """The ncu command line that profiles `python -m tools.profile <study>` into `csv_path`."""
    return [
        "ncu",
        "--clock-control",
        "none",
        "--section",
        "WarpStateStats",
        "--metrics",
        ",".join(METRICS),
        "--csv",
        "--page",
        "raw",
        "--print-units",
        "base",
        "--log-file",
        csv_path,
        sys.executable,
        "-m",
        "tools.profile",
        study,
    ]


def run(studies: list[str], out: str) -> int:
    """Profile each study under ncu and print its summary; 1 when ncu is missing or fails."""
    import shutil
    import subprocess
    from pathlib import Path

    if shutil.which("ncu") is None:
        print("ncu (Nsight Compute) is not on PATH: nothing profiled", file=sys.stderr)
        return 1
    from tools.profile import ELEMENTS

    Path(out).mkdir(parents=True, exist_ok=True)
    status = 0
    for study in studies:
        path = str(Path(out) / f"ncu-{study}.csv")
        done = subprocess.run(ncu_command(study, path))
        if done.returncode != 0:
            print(f"{study}: ncu exited with {done.returncode} (its messages are in {path})", file=sys.stderr)
            status = 1
            continue
        with open(path) as f:
            rows = rows_of(f.read().splitlines())
        print(f"{study}: {len(rows)} kernel launches, {ELEMENTS[study]:,} elements each")
        for row in rows:
            print(summary(row, ELEMENTS[study]))
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="?", help="ncu --csv --page raw output (its --log-file)")
    parser.add_argument("--study", help="the tools.profile study: its ELEMENTS give per-element counts")
    parser.add_argument("--metrics", action="store_true", help="print the --metrics list for ncu and exit")
    parser.add_argument("--run", nargs="+", metavar="STUDY", help="profile these tools.profile studies now")
    parser.add_argument("--out", default="ncu-results", help="where --run leaves its CSV files")
    args = parser.parse_args(argv)
    if args.run:
        return run(args.run, args.out)
    if args.metrics:
        print(",".join(METRICS))
        return 0
    if not args.csv:
        parser.error("give the CSV file (or --metrics)")
    elements = None
    if args.study:
        from tools.profile import ELEMENTS

        elements = ELEMENTS.get(args.study)
    with open(args.csv) as f:
        rows = rows_of(f.read().splitlines())
    print(f"{len(rows)} kernel launches" + (f", {elements:,} elements each" if elements else ""))
    for row in rows:
        print(summary(row, elements))
    return 0


if __name__ == "__main__":
    sys.exit(main())
