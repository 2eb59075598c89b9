"""The Triton notebook's GPU part, unattended (not collected by pytest):

    python tests/run_triton_gpu.py [--scale 1.0] [--out triton_gpu_out] [--skip-profile]

1. versions; 2. every Triton kernel checked on the GPU (3 seeds), every known-wrong one rejected for
its reason, every variant passing; 3. helpers.timing against triton.testing.do_bench; 4. the table
Numba / Triton / torch (/ CUDA C++ where helpers.cpp offers it); 5. torch.profiler over the GPT-2
block with the course's Numba kernels inside a torch module (table, timeline PNG, Chrome trace) and
torch.compile's generated Triton kernels for residual + LayerNorm and linear + GELU, timed beside the
course's fused kernels. Exits 1 where something failed or there is no GPU.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/: the Triton mutants
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout


def _v(dist):
    try:
        return version(dist)
    except PackageNotFoundError:
        return "absent"


def checks(failures: list) -> None:
    from triton_mutants import TRITON_MUTANTS, TRITON_VARIANTS

    from puzzles.triton import check

    for name, op in check.OPS.items():
        for seed in range(3):
            r = check.check(name, op.REFERENCE, seed=seed)
        print("  reference:", r)
        for label, kernel in TRITON_VARIANTS.get(name, []):
            for seed in range(3):
                check.check(name, kernel, seed=seed)
            print(f"  variant passes: {name} / {label}")
        for label, kernel, exc in TRITON_MUTANTS.get(name, []):
            for seed in range(3):
                try:
                    check.check(name, kernel, seed=seed)
                except exc:
                    continue
                except Exception as e:
                    failures.append(f"mutant {name}/{label} seed {seed}: {type(e).__name__}: {e}")
                    break
                failures.append(f"mutant {name}/{label} seed {seed}: PASSED (should be {exc.__name__})")
                break
            else:
                print(f"  mutant rejected ({exc.__name__}, seeds 0-2): {name} / {label}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--out", default="triton_gpu_out")
    ap.add_argument("--skip-profile", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    from helpers import timing
    from puzzles.triton import bench, lang, torch_profile

    why = timing.skip_reason() or lang.why_not() or (None if lang.mode() == "gpu" else "no GPU for Triton")
    if why:
        print(f"run_triton_gpu: cannot run: {why}")
        return 1
    print("== 1.", lang.versions(), f"| numba-cuda {_v('numba-cuda')}, numba {_v('numba')}")
    import torch

    print("   GPU:", torch.cuda.get_device_name(), "| CUDA (torch):", torch.version.cuda)
    failures: list = []
    t0 = time.perf_counter()

    print("\n== 2. Triton kernels checked on the GPU; known-wrong ones rejected")
    try:
        checks(failures)
    except Exception:
        failures.append("checks: " + traceback.format_exc())

    print("\n== 3. the two timers on one Triton vector add (2^26 floats)")
    ours, theirs = bench.agreement()
    ratio = max(ours, theirs) / min(ours, theirs)
    print(f"   helpers.timing.time_gpu {ours * 1e6:.1f} us, triton.testing.do_bench {theirs * 1e6:.1f} us, "
          f"ratio {ratio:.3f} ({'agree' if ratio <= bench.AGREE else 'DISAGREE'})")  # fmt: skip
    if ratio > bench.AGREE:
        failures.append(f"timers disagree: {ours} vs {theirs}")

    print(f"\n== 4. Numba / Triton / torch, validated then timed (scale {args.scale})")
    results = bench.benchmark(args.scale)
    print(bench.comparison(results))
    print()
    print(timing.table(bench.rows_of(results)))

    if not args.skip_profile:
        print(
            "\n== 5a. torch.profiler: the GPT-2 block (B=4, T=256, C=768, 12 heads), "
            "Numba kernels in a torch module"
        )
        try:
            table, intervals, prof = torch_profile.profile_blocks()
            print(table)
            torch_profile.timeline(intervals, out / "timeline.png")
            prof.export_chrome_trace(str(out / "trace.json"))
            for block, ks in intervals.items():
                print(
                    f"   {block}: {len(ks)} kernels, {ks[-1][2]:.0f} us from first kernel start to last end"
                )
            print(f"   wrote {out / 'timeline.png'} and {out / 'trace.json'} (open in ui.perfetto.dev)")
        except Exception:
            failures.append("profiler: " + traceback.format_exc())
        print("\n== 5b. torch.compile: its Triton kernels beside the course's fused kernels")
        try:
            rows, kernels = torch_profile.fused_comparison()
            print(timing.table(rows))
            for name, src in kernels.items():
                print(f"\n--- generated by Inductor: {name} ({len(src.splitlines())} lines)")
                print(src if len(src) < 6000 else src[:6000] + "\n...")
            (out / "inductor_kernels.py").write_text(
                "\n\n".join(f"# {n}\n{s}" for n, s in kernels.items()) + "\n"
            )
            print("\n== 5c. one forward of the whole block")
            print(timing.table(torch_profile.block_times()))
        except Exception:
            failures.append("compile: " + traceback.format_exc())

    print(f"\n== done in {time.perf_counter() - t0:.0f} s; {len(failures)} failure(s)")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
