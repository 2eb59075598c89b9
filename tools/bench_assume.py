"""What the benchmark's rows would give on another GPU, from its datasheet (no such GPU needed):

    python -m tools.bench --assume t4                          # the T4's roofs and every goal on it
    python -m tools.bench --assume t4 --from bench-h100.json   # and each measured row, scaled

The model is first order and says so: a row keeps its fraction of its roof, the roof being the
datasheet's memory bandwidth (rows counted in bytes) or FP32 rate (rows counted in FLOPs), so a row's
rate scales by the ratio of the two GPUs' datasheet figures. Goals are fractions of a ceiling
measured in the same run, so they carry over unchanged; what they mean in GB/s or GFLOP/s on the T4
is printed. What the scaling cannot see is listed under every table: a T4 has 40 SMs (a grid sized
for 132 fills them in fewer, fuller waves; one sized for 40 leaves an H100 idle), 64 KiB of shared
memory per SM (48 KiB a block without opting in: larger tiles do not launch), compute capability
7.5, and clocks that drop under its 70 W limit (cuBLAS SGEMM reaches about 4-5 of its 8.1 TFLOP/s).
Rows shorter than SHORT_S are bound by launch latency on the measured GPU, which does not scale:
their T4 figure is flagged as uncertain.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Datasheet:
    name: str
    bandwidth_gbs: float  # DRAM, GB/s
    fp32_tflops: float  # FP32 non-tensor peak, TFLOP/s
    sms: int
    shared_kib_per_sm: int
    memory_gib: int
    compute: str


DATASHEETS = {
    "t4": Datasheet("Tesla T4", 320, 8.1, 40, 64, 15, "7.5"),
    "h100": Datasheet("H100 SXM5", 3350, 67, 132, 228, 80, "9.0"),
    "h200": Datasheet("H200 SXM", 4800, 67, 132, 228, 141, "9.0"),
}
SHORT_S = 20e-6  # below this a row's time is mostly launch latency


def source_sheet(device_name: str) -> Datasheet:
    """The datasheet of the GPU that made a results file, by its name (H100 or H200)."""
    low = device_name.lower()
    for key in ("h200", "h100"):
        if key in low:
            return DATASHEETS[key]
    raise ValueError(f"no datasheet for {device_name!r}: results from an H100 or H200 are scaled")


def roof(sheet: Datasheet, unit: str) -> float:
    """Datasheet rate in the row's unit: bytes/s or FLOP/s."""
    return sheet.fp32_tflops * 1e12 if unit == "flops" else sheet.bandwidth_gbs * 1e9


def _rate_text(rate: float, unit: str) -> str:
    return f"{rate / 1e9:.0f} GFLOP/s" if unit == "flops" else f"{rate / 1e9:.0f} GB/s"


def scale_row(row: dict, src: Datasheet, dst: Datasheet) -> dict | None:
    """A results-file row on `dst`: rate and seconds by the datasheet ratio of its unit; None for a
    row counted in neither bytes nor FLOPs."""
    unit = "flops" if row.get("flops") else "bytes" if row.get("bytes") else None
    if unit is None or not row.get("seconds"):
        return None
    work = row[unit]
    rate = work / row["seconds"] * roof(dst, unit) / roof(src, unit)
    seconds = work / rate
    short = row["seconds"] < SHORT_S
    return dict(name=row["name"], unit=unit, rate=work / seconds, seconds=seconds, short=short)


def goal_lines(chapters: list, sheet: Datasheet) -> list[str]:
    """One line per chapter GOAL: the ceiling, the fraction, what it means on `sheet`."""
    lines = []
    for tag, holder in chapters:
        goal = getattr(holder, "GOAL", None)
        if not goal:
            lines.append(f"{tag:6s} no goal")
            continue
        kind = goal["ceiling"]
        need = f">= {goal['fraction']:.0%} of {kind}"
        if kind in ("copy", "sgemm"):
            unit = "bytes" if kind == "copy" else "flops"
            at = goal["fraction"] * roof(sheet, unit)
            cap, most = _rate_text(roof(sheet, unit), unit), _rate_text(at, unit)
            need += f" measured on the {sheet.name}, which its datasheet caps at {cap}: at most {most}"
        else:
            need += " (a library row measured on the GPU itself: no datasheet figure)"
        lines.append(f"{tag:6s} {goal['best']}: {need}")
    return lines


def report(sheet_key: str, results_path: str | None, chapters: list, out=print) -> int:
    sheet = DATASHEETS[sheet_key]
    out(
        f"Assumed: {sheet.name} (datasheet): {sheet.bandwidth_gbs:.0f} GB/s, {sheet.fp32_tflops} TFLOP/s "
        f"FP32, {sheet.sms} SMs, {sheet.shared_kib_per_sm} KiB shared per SM, {sheet.memory_gib} GB, "
        f"compute {sheet.compute}"
    )
    out("\n== goals (fractions of a ceiling measured in the same run: unchanged on this GPU) ==")
    for line in goal_lines(chapters, sheet):
        out(line)
    if not results_path:
        out("\n(--from RESULTS.json scales each measured row as well)")
        return 0
    try:
        with open(results_path) as f:
            data = json.load(f)
        src = source_sheet(data["device"]["name"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        out(f"error: cannot scale {results_path}: {type(e).__name__}: {e} (a tools.bench results file)")
        return 2
    ratio_b = sheet.bandwidth_gbs / src.bandwidth_gbs
    ratio_f = sheet.fp32_tflops / src.fp32_tflops
    out(
        f"\n== rows of {results_path} ({data['device']['name']}), scaled to {sheet.name}: bandwidth x"
        f"{ratio_b:.3f}, FP32 x{ratio_f:.3f} =="
    )
    out(f"{'chapter':8s} {'row':58s} {'measured':>14s} {'on ' + sheet_key:>14s} {'time':>10s}")
    for tag, entry in data["chapters"].items():
        for row in entry.get("rows") or []:
            s = scale_row(row, src, sheet)
            if s is None:
                continue
            measured = row[s["unit"]] / row["seconds"]
            note = "  (launch-bound where measured: uncertain)" if s["short"] else ""
            out(
                f"{tag:8s} {row['name'][:58]:58s} {_rate_text(measured, s['unit']):>14s} "
                f"{_rate_text(s['rate'], s['unit']):>14s} {s['seconds'] * 1e3:8.3f} ms{note}"
            )
    out(
        "\nNot in this model: SM count (40 vs 132: grid waves), 64 KiB shared per SM (48 KiB a block "
        "without opt-in), compute 7.5, clocks under the 70 W limit, launch latency of short rows."
    )
    return 0
