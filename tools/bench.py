"""Run every chapter's GPU benchmark in one process and check the course's goals.

    python -m tools.bench                 # every chapter's benchmark() (puzzles/pmpp/ch*, puzzles/llm/*)
    python -m tools.bench --only ch10     # one chapter (repeat --only for several)
    python -m tools.bench --only llm3     # one transformer-kernels module (llm1 ... llm4)
    python -m tools.bench --only dist     # scaling on 1, 2 and 4 GPUs (NCCL; skipped with one line below 2)
    python -m tools.bench --only tc       # the tensor-core chapter (puzzles/tensor_cores)
    python -m tools.bench --scale 0.25    # smaller inputs (quick look; goals are judged at scale 1)
    python -m tools.bench --json out.json # where the results go (default: bench-<device>-<date>.json)
    MP_RETUNE=1 python -m tools.bench     # search every tuned knob again instead of using the cache
    python -m tools.bench --assume t4 [--from out.json]   # no GPU: a T4's roofs, the goals on it, and
                                          # a results file's rows scaled by datasheet (bench_assume.py)

Each chapter validates its variants against NumPy before timing them and measures its ceiling
(device copy or cuBLAS SGEMM; for the transformer kernels a peer row marked as the ceiling: torch's
FP32 SDPA, the GPT-2 block op by op) and, where CuPy or PyTorch is installed, the library call a user
would make instead (the peer) in the same run; a chapter's GOAL is judged in the goals table, its
further GOALS (if any) by `timing.goal_rows`. Progress goes to stderr; the goals table to stdout;
every row, the device, versions, tuned configurations and verdicts to a JSON file. Exit status: 0
when every validation passed (missed goals are reported, not fatal), 1 when a chapter failed
validation or crashed, and 0 with one line saying why where there is no GPU.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import time
import traceback

from tools.bench_results import GOAL_HEADER, default_json_path, device_info, results


def benchmark_of(chapter):
    """What holds a chapter's `benchmark()`, `GOAL` and optional `GOALS`: a chapter package's `bench`
    submodule where it has one (all three live there, whatever its __init__ re-exports), else the
    chapter itself (a module, or a package defining them); None where there is no benchmark()."""
    if hasattr(chapter, "__path__"):  # a package
        try:
            sub = importlib.import_module(f"{chapter.__name__}.bench")
        except ModuleNotFoundError as e:
            if e.name != f"{chapter.__name__}.bench":
                raise
        else:
            if callable(getattr(sub, "benchmark", None)):
                return sub
    return chapter if callable(getattr(chapter, "benchmark", None)) else None


def chapter_modules(only=()):
    """(chapter tag, what holds its benchmark) for every chapter with a benchmark(), in order:
    puzzles/pmpp/chNN_* (tag "ch10"), then puzzles/llm/* (tag from its CHAPTER: "llm-3" -> "llm3").
    A chapter is a module or a package (see `benchmark_of`)."""
    from helpers import timing
    from puzzles import llm, pmpp

    found = []
    for name in sorted(m.name for m in pkgutil.iter_modules(pmpp.__path__)):
        if not name.startswith("ch"):
            continue
        tag = name.split("_")[0]  # "ch10"
        if only and tag not in only:
            continue
        holder = benchmark_of(importlib.import_module(f"puzzles.pmpp.{name}"))
        if holder is not None:
            found.append((tag, holder))
    if not only or "tc" in only:  # the tensor-core chapter (notebook 28)
        holder = benchmark_of(importlib.import_module("puzzles.tensor_cores"))
        if holder is not None:
            found.append(("tc", holder))
    last = []  # many GPUs: scaling over NCCL (its own processes, one per GPU), after the rest
    if not only or "dist" in only:
        last.append(("dist", importlib.import_module("puzzles.dist.scaling")))
    if only and not any(t.startswith("llm") for t in only):
        return _checked(found + last, timing)  # the llm chapters import each other: load them only when asked
    llm_found = []
    for name in (m.name for m in pkgutil.iter_modules(llm.__path__)):
        chapter = importlib.import_module(f"puzzles.llm.{name}")
        tag = getattr(chapter, "CHAPTER", name).replace("-", "")  # "llm3"
        holder = benchmark_of(chapter)
        if (not only or tag in only) and holder is not None:
            llm_found.append((tag, holder))
    return _checked(found + sorted(llm_found, key=lambda tm: tm[0]) + last, timing)


def _checked(found, timing):
    """`found`, after checking every chapter's GOAL (timing.check_goal): a typo fails before any GPU run."""
    for tag, holder in found:
        try:
            timing.check_goal(getattr(holder, "GOAL", None))
        except ValueError as e:
            raise ValueError(f"{tag} ({holder.__name__}): {e}") from None
    return found


def goal_row(tag, module, rows):
    """One line of the goals table, GOAL_HEADER's columns.

    GOAL keys (checked by `timing.check_goal`): "best" (the variant judged), "ceiling" ("copy",
    "sgemm" or the ceiling row's label) and "fraction" (of the ceiling measured in the same run);
    optional "peer": the fraction of the library peer's rate the best variant must reach (1.0: as
    fast as the call a user would make instead). Without "peer" the ratio to the peer is reported,
    not judged."""
    from helpers import timing

    goal = timing.check_goal(getattr(module, "GOAL", None))
    if not goal:
        mine = [r for r in rows if not (r.ceiling or r.peer)]
        best = max(mine, key=lambda r: r.gflops or r.gbps, default=None)
        rate = "-" if best is None else _rate_text(best)
        peer, vs = _peer_texts(rows, best)
        return (tag, best.name if best else "-", rate, _ceiling_text(rows), "-", peer, vs, "no goal", "-")
    best = next((r for r in rows if r.name == goal["best"]), None)
    goal_text = f">= {goal['fraction']:.0%} of {goal['ceiling']}"
    if goal.get("peer"):
        goal_text += f", >= {goal['peer']:.0%} of peer"
    if best is None:
        return (tag, goal["best"], "missing", _ceiling_text(rows), "-", "-", "-", goal_text, "NO")
    peer, vs = _peer_texts(rows, best)
    verdicts = []
    try:
        frac = timing.fraction_of_ceiling(rows, best.name)
        frac_text = f"{frac:.1%}"
        verdicts.append(frac >= goal["fraction"])
    except ValueError as e:  # e.g. no SGEMM ceiling without CuPy
        frac_text, goal_text = "-", f"{goal_text} ({e})"
        verdicts.append(None)
    if goal.get("peer"):
        ratio = timing.fraction_of_peer(rows, best.name)
        verdicts.append(None if ratio is None else ratio >= goal["peer"])
    met = "NO" if False in verdicts else "?" if None in verdicts else "yes"
    name = best.name + (f" [{best.config}]" if best.config else "")  # which one, where tuned or picked
    return (tag, name, _rate_text(best), _ceiling_text(rows), frac_text, peer, vs, goal_text, met)


def _peer_texts(rows, best):
    """(the peer's name and rate, the best variant's rate as a fraction of it), or dashes."""
    from helpers import timing

    if best is None:
        return "-", "-"
    peer = timing.peer_for(rows, best.name)
    if peer is None:
        return "-", "-"
    ratio = timing.fraction_of_peer(rows, best.name)
    return f"{peer.name} {_rate_text(peer)}", "-" if ratio is None else f"{ratio:.0%}"


def _rate_text(r):
    return f"{r.gflops:.0f} GFLOP/s" if r.flops else f"{r.gbps:.0f} GB/s"


def _ceiling_text(rows):
    ceilings = [r for r in rows if r.ceiling]  # cuBLAS is ceiling and peer at once in ch05
    return ", ".join(_rate_text(r) for r in ceilings) or "-"


def format_table(header, body):
    widths = [max(len(str(line[i])) for line in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)) for line in [header, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


class Progress:
    """A text progress bar on stderr: one line per chapter, a dot per timed measurement."""

    def __init__(self, total: int, stream=None, width: int = 20):
        self.total, self.done, self.width = total, 0, width
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()

    def _bar(self) -> str:
        filled = round(self.width * self.done / self.total) if self.total else self.width
        return f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total}"

    def begin(self, tag: str) -> None:
        self.stream.write(f"{self._bar()} {tag} ")
        self.stream.flush()

    def tick(self) -> None:
        self.stream.write(".")
        self.stream.flush()

    def end(self, tag: str, status: str) -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.start
        self.stream.write(f" {status}\n{self._bar()} {tag} done ({elapsed:.0f} s so far)\n")
        self.stream.flush()


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="input size factor (goals assume 1.0)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="TAG",
        help="run only this chapter (repeatable), e.g. --only ch10 or --only llm3",
    )
    parser.add_argument(
        "--json", metavar="PATH", help="write the results here (default: bench-<device>-<date>.json)"
    )
    parser.add_argument(
        "--assume", choices=("t4",), help="no GPU needed: what each row would give on this GPU (datasheet)"
    )
    parser.add_argument(
        "--from", dest="results", metavar="PATH", help="with --assume: a results file to scale"
    )
    args = parser.parse_args(argv)
    if args.results and not args.assume:
        parser.error("--from goes with --assume")
    if args.assume:
        from tools import bench_assume

        return bench_assume.report(args.assume, args.results, chapter_modules(set(args.only)))

    from helpers import timing, tuning

    reason = timing.skip_reason()
    if reason:
        print(reason)
        return 0

    device = device_info()
    name = device["name"]
    print(
        f"Device: {name} (compute {device['compute_capability']}, {device['multiprocessors']} SMs), "
        f"driver {device['driver']}, runtime {device['runtime']}, scale {args.scale}"
    )
    modules = chapter_modules(set(args.only))
    if not modules:
        print(f"No chapter benchmark matches {args.only}.")
        return 1

    progress = Progress(len(modules))
    timing.set_progress(progress.tick)
    goals, failed, chapters = [], [], []
    start = time.perf_counter()
    try:
        for tag, module in modules:
            print(f"\n== {tag}: {module.__name__} ==")
            sys.stdout.flush()
            progress.begin(tag)
            skip = getattr(module, "skip_reason", lambda: None)()
            if skip:  # e.g. a benchmark of several GPUs on a machine with one: one line, not a failure
                progress.end(tag, "skipped")
                print(f"skipped: {skip}")
                continue
            before = set(tuning.CHOSEN)
            try:
                rows = module.benchmark(scale=args.scale)
            except AssertionError as e:  # a variant gave a wrong answer on the GPU
                progress.end(tag, "VALIDATION FAILED")
                print(f"VALIDATION FAILED: {e}")
                failed.append(tag)
                goals.append((tag, "-", "validation failed", "-", "-", "-", "-", "-", "NO"))
                chapters.append((tag, module.__name__, None, f"validation failed: {e}", []))
                continue
            except Exception as e:
                progress.end(tag, "crashed")
                traceback.print_exc()
                failed.append(tag)
                goals.append((tag, "-", "crashed", "-", "-", "-", "-", "-", "NO"))
                chapters.append((tag, module.__name__, None, f"crashed: {type(e).__name__}: {e}", []))
                continue
            progress.end(tag, "ok")
            print(timing.table(rows))
            for knob in [k for k in tuning.CHOSEN if k not in before]:
                print(f"tuned {tuning.CHOSEN[knob]}")
            goals.append(goal_row(tag, module, rows))
            further = timing.goal_rows(rows, getattr(module, "GOALS", ()))  # beside the one GOAL
            chapters.append((tag, module.__name__, rows, None, further))
            for gname, against, ratio, need, met in further:
                rate = "-" if ratio is None else f"{ratio:.2f}x"
                print(f"goal: {gname} vs {against}: {rate} (goal >= {need:.2f}x): {met}")
    finally:
        timing.set_progress(None)

    print(f"\n== goals on {name} ==")
    print(format_table(GOAL_HEADER, goals))
    path = args.json or default_json_path(name)
    data = results(device, argv, chapters, goals, time.perf_counter() - start)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
    print(f"\nResults: {path}")
    if failed:
        print(f"\nFailed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
