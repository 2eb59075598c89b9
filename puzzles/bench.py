"""Run every chapter's GPU benchmark in one process and check the course's goals.

    python -m puzzles.bench                 # every puzzles/pmpp/ch*.py and puzzles/llm/*.py benchmark()
    python -m puzzles.bench --only ch10     # one chapter (repeat --only for several)
    python -m puzzles.bench --only llm3     # one transformer-kernels module (llm1 ... llm4)
    python -m puzzles.bench --scale 0.25    # smaller inputs (quick look; goals are judged at scale 1)

Each chapter validates its variants against NumPy before timing them and measures its ceiling in
the same run: a device copy or cuBLAS SGEMM, or for the transformer kernels a peer row marked as
the ceiling (torch's FP32 SDPA; the GPT-2 block op by op). Exit status: 0 when every validation passed
(missed goals are reported, not fatal), 1 when a chapter failed validation or crashed, and 0
with one line saying why where there is no GPU.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import traceback

from numba import cuda


def chapter_modules(only=()):
    """(chapter tag, module) for every module with a benchmark(), in order: puzzles/pmpp/chNN_*.py
    (tag "ch10"), then puzzles/llm/*.py (tag from its CHAPTER: "llm-3" -> "llm3")."""
    from puzzles import llm, pmpp

    found = []
    for name in sorted(m.name for m in pkgutil.iter_modules(pmpp.__path__)):
        if not name.startswith("ch"):
            continue
        tag = name.split("_")[0]  # "ch10"
        if only and tag not in only:
            continue
        module = importlib.import_module(f"puzzles.pmpp.{name}")
        if callable(getattr(module, "benchmark", None)):
            found.append((tag, module))
    if only and not any(t.startswith("llm") for t in only):
        return found  # the llm modules import each other: load them only when asked
    llm_found = []
    for name in (m.name for m in pkgutil.iter_modules(llm.__path__)):
        module = importlib.import_module(f"puzzles.llm.{name}")
        tag = getattr(module, "CHAPTER", name).replace("-", "")  # "llm3"
        if (not only or tag in only) and callable(getattr(module, "benchmark", None)):
            llm_found.append((tag, module))
    return found + sorted(llm_found, key=lambda tm: tm[0])


def goal_row(tag, module, rows):
    """One line of the goals table: (chapter, best, achieved, ceiling, fraction, goal, met)."""
    from helpers import timing

    goal = getattr(module, "GOAL", None)
    if not goal:
        best = max((r for r in rows if not r.ceiling), key=lambda r: r.gflops or r.gbps, default=None)
        rate = "-" if best is None else _rate_text(best)
        return (tag, best.name if best else "-", rate, _ceiling_text(rows), "-", "no goal", "-")
    best = next((r for r in rows if r.name == goal["best"]), None)
    if best is None:
        return (tag, goal["best"], "missing", _ceiling_text(rows), "-", f">= {goal['fraction']:.0%}", "NO")
    try:
        frac = timing.fraction_of_ceiling(rows, best.name)
    except ValueError as e:  # e.g. no SGEMM ceiling without CuPy
        return (tag, best.name, _rate_text(best), _ceiling_text(rows), "-", str(e), "?")
    met = "yes" if frac >= goal["fraction"] else "NO"
    return (
        tag,
        best.name,
        _rate_text(best),
        _ceiling_text(rows),
        f"{frac:.1%}",
        f">= {goal['fraction']:.0%} of {goal['ceiling']}",
        met,
    )


def _rate_text(r):
    return f"{r.gflops:.0f} GFLOP/s" if r.flops else f"{r.gbps:.0f} GB/s"


def _ceiling_text(rows):
    ceilings = [r for r in rows if r.ceiling]
    return ", ".join(_rate_text(r) for r in ceilings) or "-"


def format_table(header, body):
    widths = [max(len(str(line[i])) for line in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)) for line in [header, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m puzzles.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="input size factor (goals assume 1.0)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="TAG",
        help="run only this chapter (repeatable), e.g. --only ch10 or --only llm3",
    )
    args = parser.parse_args(argv)

    from helpers import timing

    reason = timing.skip_reason()
    if reason:
        print(reason)
        return 0

    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
    print(f"Device: {name} ({device.MULTIPROCESSOR_COUNT} SMs), scale {args.scale}")
    modules = chapter_modules(set(args.only))
    if not modules:
        print(f"No chapter benchmark matches {args.only}.")
        return 1

    goals, failed = [], []
    for tag, module in modules:
        print(f"\n== {tag}: {module.__name__} ==")
        sys.stdout.flush()
        try:
            rows = module.benchmark(scale=args.scale)
        except AssertionError as e:  # a variant gave a wrong answer on the GPU
            print(f"VALIDATION FAILED: {e}")
            failed.append(tag)
            goals.append((tag, "-", "validation failed", "-", "-", "-", "NO"))
            continue
        except Exception:
            traceback.print_exc()
            failed.append(tag)
            goals.append((tag, "-", "crashed", "-", "-", "-", "NO"))
            continue
        print(timing.table(rows))
        goals.append(goal_row(tag, module, rows))
        if callable(getattr(module, "goals", None)):  # a module's further goals (torch's kernels, ...)
            for name, against, ratio, need, met in module.goals(rows):
                rate = "-" if ratio is None else f"{ratio:.2f}x"
                print(f"goal: {name} vs {against}: {rate} (goal >= {need:.2f}x): {met}")

    print(f"\n== goals on {name} ==")
    print(format_table(("chapter", "best variant", "achieved", "ceiling", "fraction", "goal", "met?"), goals))
    if failed:
        print(f"\nFailed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
