"""What limits each profiled kernel, one line per launch: Nsight Compute on `python -m tools.profile`'s
launches, or a CSV it wrote before.

    python -m tools.ncu_summary ch05 ch08 ch11 ch12 ch14 ch18 [--out DIR]   # profile now (ncu on PATH)
    python -m tools.ncu_summary DIR/ncu-ch14.csv                           # read a saved CSV again

For each study ncu runs `python -m tools.profile <study>` once under its sections (SpeedOfLight,
Occupancy, LaunchStats, WarpStateStats, ComputeWorkloadAnalysis) plus the instruction counts, and
leaves its raw-page CSV as DIR/ncu-<study>.csv. Each launch's line, in launch order (the study's
docstring says which is which): time, SM, memory and DRAM throughput (% of peak), issue slots busy,
achieved and theoretical occupancy, registers per thread, the two busiest pipes (fma, xu = the
special-function unit, lsu, ...), the top three stall reasons (cycles per issued instruction;
"selected" and "not_selected" are no stall) and, where tools.profile.ELEMENTS knows the study (taken
from the CSV's name when read back), warp and thread instructions per element. A metric the CSV
lacks shows as "-". Without ncu it says so and fails.
"""

from __future__ import annotations

import argparse
import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "ComputeWorkloadAnalysis")
# (column title, metric names to try in order); the first names are also asked for by --metrics
COLUMNS = [
    ("SM %", ("sm__throughput.avg.pct_of_peak_sustained_elapsed",)),
    ("mem %", ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",)),
    (
        "DRAM %",
        (
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        ),
    ),
    (
        "issue %",
        (
            "smsp__issue_active.avg.pct_of_peak_sustained_active",
            "sm__inst_issued.avg.pct_of_peak_sustained_active",
        ),
    ),
    ("occ %", ("sm__warps_active.avg.pct_of_peak_sustained_active",)),
    ("theo %", ("sm__maximum_warps_per_active_cycle_pct",)),
    ("regs", ("launch__registers_per_thread",)),
]
TIME = "gpu__time_duration.sum"
INSTR = {"warp": "smsp__inst_executed.sum", "thread": "smsp__thread_inst_executed.sum"}
METRICS = [TIME, *(names[0] for _, names in COLUMNS), *INSTR.values()]
PIPE = re.compile(r"^sm__inst_executed_pipe_([a-z0-9_]+)\.avg\.pct_of_peak_sustained_active$")
STALL = re.compile(r"^smsp__average_warps?_issue_stalled_([a-z_]+)_per_issue_active\.ratio$")
NOT_STALLS = {"selected", "not_selected"}  # issuing, or ready while another warp issued
# microseconds per unit; "" is --print-units base's nanoseconds
TIME_UNITS = {"": 1e-3, "ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
TIME_UNITS.update({"s": 1e6, "second": 1e6})


def command(study: str, csv_path: str | Path) -> list[str]:
    """The ncu command line that profiles `python -m tools.profile <study>` into the CSV `csv_path`."""
    sections = [arg for s in SECTIONS for arg in ("--section", s)]
    return [
        "ncu", "--clock-control", "none", *sections, "--metrics", ",".join(METRICS),
        "--csv", "--page", "raw", "--print-units", "base", "--log-file", str(csv_path),
        sys.executable, "-m", "tools.profile", study,
    ]  # fmt: skip


def _table(lines: list[str]) -> tuple[list[str], list[str], list[list[str]]]:
    """Header, units row and launch rows of a raw-page CSV (ncu's own ==PROF== messages skipped)."""
    rows = list(csv.reader(ln for ln in lines if ln.startswith('"')))
    start = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if start is None:
        raise ValueError('no ncu raw-page CSV header (a line starting with "ID"): did ncu profile anything?')
    header, rest = rows[start], rows[start + 1 :]
    units = rest[0] if rest and not rest[0][0].strip() else [""] * len(header)
    return header, units, [r for r in rest if len(r) == len(header) and r[0].strip()]


def rows_of(lines: list[str]) -> list[dict]:
    """The launches of a raw-page CSV, each as {column: text}."""
    header, _, data = _table(lines)
    return [dict(zip(header, r, strict=True)) for r in data]


def _number(text: str | None) -> float | None:
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def short_name(name: str) -> str:
    """numba's kernel name without its module path, ABI tags, argument types (ncu demangles it:
    `puzzles::...::dcs_split_kernel[abi:v1][abi:cw51...](Array<...>)`, newer numba-cuda
    `lookback32::lookback_u32[v5,cw51...](Array<...>)`) or, mangled, the same
    from its length-prefixed parts (`_ZN7puzzles...16dcs_split_kernelB2v1...`)."""
    if name.startswith("_ZN"):
        parts, rest = [], name[3:]
        while (m := re.match(r"(\d+)", rest)) is not None and int(m.group(1)) <= len(rest) - m.end():
            n = int(m.group(1))
            parts.append(rest[m.end() : m.end() + n])
            rest = rest[m.end() + n :]
        return parts[-1] if parts else name[:40]
    base = name.split("(")[0].split("::")[-1].split("[")[0]  # [abi:..] or [v5,cw51..] tags go too
    return re.sub(r"\$\d+$", "", base) or name[:40]


def summarise(csv_text: str, elements: int | None = None) -> list[dict]:
    """One dict per launch: id, name, block, grid, time_us, the COLUMNS, pipes [(name, %)] (two
    busiest), stalls [(reason, cycles)] (top three) and, given `elements`, "warp/elem" and
    "thread/elem" (instructions per element)."""
    header, units, data = _table(csv_text.splitlines())
    col = {name: i for i, name in enumerate(header)}
    out = []
    for row in data:

        def get(name, row=row):
            return _number(row[col[name]]) if name in col else None

        entry = {"id": row[col.get("ID", 0)], "name": short_name(row[col["Kernel Name"]])}
        entry["block"] = row[col["Block Size"]] if "Block Size" in col else "-"
        entry["grid"] = row[col["Grid Size"]] if "Grid Size" in col else "-"
        t = get(TIME)
        entry["time_us"] = None if t is None else t * TIME_UNITS.get(units[col[TIME]], float("nan"))
        for title, names in COLUMNS:
            entry[title] = next((get(n) for n in names if get(n) is not None), None)
        pipes = [(m.group(1), get(h)) for h in header if (m := PIPE.match(h)) and get(h) is not None]
        stalls = [(m.group(1), get(h)) for h in header if (m := STALL.match(h)) and get(h) is not None]
        entry["pipes"] = sorted(pipes, key=lambda p: -p[1])[:2]
        entry["stalls"] = sorted((s for s in stalls if s[0] not in NOT_STALLS), key=lambda s: -s[1])[:3]
        for kind, metric in INSTR.items():
            n = get(metric)
            entry[f"{kind}/elem"] = None if n is None or not elements else n / elements
        out.append(entry)
    return out


def render(rows: list[dict]) -> str:
    """The table: a header, then one line per launch."""

    def fmt(v, spec=".0f"):
        return "-" if v is None else format(v, spec)

    titles = [t for t, _ in COLUMNS]
    head = f"{'#':>3} {'kernel':<28} {'block':>12} {'time us':>9} " + " ".join(f"{t:>7}" for t in titles)
    lines = [head + f" {'instr/elem warp':>15} {'thread':>7}  busiest pipes; top stalls (cycles/issue)"]
    for r in rows:
        cells = " ".join(f"{fmt(r[t]):>7}" for t in titles)
        per = f"{fmt(r['warp/elem'], '.2f'):>15} {fmt(r['thread/elem'], '.2f'):>7}"
        pipes = ", ".join(f"{p} {v:.0f}%" for p, v in r["pipes"]) or "-"
        stalls = ", ".join(f"{s} {v:.2f}" for s, v in r["stalls"]) or "-"
        launch = f"{r['id']:>3} {r['name'][:28]:<28} {r['block']:>12} {fmt(r['time_us'], '.1f'):>9}"
        lines.append(f"{launch} {cells} {per}  {pipes}; {stalls}")
    return "\n".join(lines)


def _elements(study: str | None) -> int | None:
    from tools.profile import ELEMENTS

    return ELEMENTS.get(study) if study else None


def report(csv_path: Path, study: str | None) -> str:
    """The summary of one saved CSV: a title line and the table."""
    elements = _elements(study)
    rows = summarise(csv_path.read_text(), elements)
    each = f", {elements:,} elements each" if elements else ""
    return f"{study or csv_path.name}: {len(rows)} kernel launches{each}\n{render(rows)}"


def run(studies: list[str], out: str | Path) -> int:
    """Profile each study under ncu into out/ncu-<study>.csv and print its summary; 1 when ncu is
    missing or fails."""
    if shutil.which("ncu") is None:
        print("ncu (Nsight Compute) is not on PATH: nothing profiled", file=sys.stderr)
        return 1
    Path(out).mkdir(parents=True, exist_ok=True)
    status = 0
    for study in studies:
        path = Path(out) / f"ncu-{study}.csv"
        done = subprocess.run(command(study, path))
        if done.returncode != 0 or not path.exists():
            print(f"{study}: ncu exited with {done.returncode} (its messages: {path})", file=sys.stderr)
            status = 1
            continue
        print(report(path, study))
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="+", help="tools.profile studies (ch05 ch18 ...) or saved .csv files")
    parser.add_argument("--out", default="ncu-results", help="where the CSV files go (default ncu-results)")
    args = parser.parse_args(argv)
    saved = [w for w in args.what if w.endswith(".csv")]
    for path in map(Path, saved):
        study = path.stem.removeprefix("ncu-")
        print(report(path, study if _elements(study) else None))
    studies = [w for w in args.what if w not in saved]
    return run(studies, args.out) if studies else 0


if __name__ == "__main__":
    sys.exit(main())
