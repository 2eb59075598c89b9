"""CUDA C++ twins on a GPU, for the lead's device run (prints tables; exit 1 if any verdict is wrong).

    python -m tools.cpp_gpu              # every twin's reference and known-wrong kernels, then timings
    python -m tools.cpp_gpu --no-timing  # verdicts only

1. Every C++ twin in puzzles/cpp/ (the 14 puzzles and the chapters' Rosetta kernels) against its
   puzzle on the GPU: the reference must pass on two seeds; every known-wrong twin of
   tests/mutants/cpp.py must get its verdict (compile-time ones too).
2. Numba against CUDA C++ for the Rosetta kernels, the same algorithm, constants and launch at GPU
   sizes: both validated against the puzzle's spec first, then timed with helpers.timing.time_gpu
   (CUDA events around batches of launches, median of 15), the C++ one launched in-process through
   the driver on Numba's own context.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the known-wrong twins

import puzzles  # noqa: E402
from helpers import cpp as hcpp  # noqa: E402
from helpers.check import CompileRejected, KernelDiagnosed  # noqa: E402
from helpers.cpp import gpu  # noqa: E402
from puzzles import cpp  # noqa: E402
from tools import cpp_sizes  # noqa: E402


def verdicts() -> bool:
    from mutants.cpp import CPP_MUTANTS, mutate

    ok = True
    print(f"compute-sanitizer: {gpu.sanitizer() or 'not found'}; NVRTC {hcpp.version()}")
    print(f"{'twin':<24} {'kernel':<44} {'expected':<28} {'got':<28} ok")
    for name in cpp.names():
        rows = [("reference", cpp.solution(name), None, None)]
        rows += [(m[0], mutate(cpp.solution(name), m[1]), m[2], m[3]) for m in CPP_MUTANTS.get(name, [])]
        for label, source, expected, detail in rows:
            got, good = _verdict(name, source, expected, detail)
            want = (
                "pass"
                if expected is None
                else expected.__name__ + (f"({detail.__name__})" if isinstance(detail, type) else "")
            )
            ok &= good
            print(f"{name:<24} {label[:44]:<44} {want:<28} {got[:28]:<28} {'yes' if good else 'NO'}")
    return ok


def _verdict(name, source, expected, detail) -> tuple[str, bool]:
    for seed in (0, 1):
        t0 = time.perf_counter()
        try:
            r = cpp.check(name, source, seed=seed)
            got, good = f"pass ({r.cases} cases)", expected is None and r.ran
        except Exception as e:  # noqa: BLE001 - every verdict is reported, none stops the run
            got = type(e).__name__
            if isinstance(e, KernelDiagnosed):
                got += f"({type(e.diagnostic).__name__})"
            good = expected is not None and isinstance(e, expected)
            if good and isinstance(detail, type):
                good = isinstance(e.diagnostic, detail)
            if good and isinstance(detail, str) and expected is CompileRejected:
                good = detail in str(e)
            if not good:
                notes = [ln for ln in str(e).splitlines() if ln.startswith("Note: ")]
                print(f"    {name} seed {seed}: {str(e)[:600]}" + "".join(f"\n    {n}" for n in notes))
        if not good:
            return got, False
        if seed == 0 and expected is CompileRejected:
            break  # a compile-time verdict does not depend on the seed
        got += f" {time.perf_counter() - t0:.1f}s"
    return got, True


def timings() -> bool:
    from helpers import timing

    if timing.skip_reason():
        print(timing.skip_reason())
        return True
    ok = True
    print(f"\n{'kernel':<28} {'size':<28} {'Numba':>11} {'CUDA C++':>11} {'C++/Numba':>10}")
    for name, big in cpp_sizes.BIG.items():
        try:
            numba_s, cpp_s, label = cpp_sizes.time_pair(name, big)
            times = f"{numba_s * 1e6:>9.1f}us {cpp_s * 1e6:>9.1f}us {cpp_s / numba_s:>9.2f}x"
            print(f"{name:<28} {label:<28} {times}")
        except Exception:  # noqa: BLE001 - a failing row is printed, the others still run
            ok = False
            print(f"{name:<28} FAILED\n{traceback.format_exc()}")
    return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args(argv)
    from helpers.device import gpu_present

    if not gpu_present():
        print("No GPU here: the C++ twins are compile-checked by tests/test_cpp.py; nothing to run.")
        return 0
    puzzles.get("map")
    ok = verdicts()
    if not args.no_timing:
        ok &= timings()
    print("\nall verdicts as expected" if ok else "\nSOME VERDICTS OR TIMINGS FAILED (see above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
