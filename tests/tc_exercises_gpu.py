"""The tensor-core exercises' checks on a real GPU, seeds 0-11 (not collected by pytest): the full
harness (simulator + PTX + GPU) passes every reference and variant and rejects every mutant for its
stated reason; and, per mutant, whether the GPU alone (its output against the spec, no simulator)
would have caught it (a race may not show on a GPU: the simulator's diagnostics are why it fails).

    python tests/tc_exercises_gpu.py                     # tc_mma_reg_gemm and tc_int8_gemm
    python tests/tc_exercises_gpu.py tc_mma_gemm ...     # any puzzles with a mutants file

Exit 0 when every verdict is as expected, 1 otherwise, 2 without a GPU (nothing was run)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import puzzles
from helpers import check, engine

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/: support and the mutants package
from support import controls  # noqa: E402
from test_exercises import assert_rejected  # noqa: E402

SEEDS = range(12)
DEFAULT = ("tc_mma_reg_gemm", "tc_int8_gemm")


def gpu_alone_passes(puzzle, kernel, seed) -> bool:
    """True if every case gives the right output on the GPU alone (poisoned outputs, no simulator)."""
    from numba import cuda

    for case in puzzle.cases_for(kernel, np.random.default_rng(seed)):
        args, _, _, pristine = check.prepare_args(puzzle, case)
        dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        engine.gpu_launch(kernel, case.grid, case.block, dev, case.shared_bytes)
        cuda.synchronize()
        want = check.expected(puzzle, case, pristine)
        for n in puzzle.outputs:
            if check.compare(want[n], dev[puzzle.signature.index(n)].copy_to_host(), puzzle):
                return False
    return True


def main(names) -> int:
    if not engine.gpu_present():
        print("no CUDA GPU here: nothing was run")
        return 2
    bad = 0
    for name in names:
        p = puzzles.get(name)
        c = controls(puzzles.module_of(name))
        for label, kernel in [("reference", p.reference), *c.VARIANTS.get(name, ())]:
            try:
                for seed in SEEDS:
                    r = check.check(p, kernel, seed=seed, gpu=True)
                print(f"ok    {name} {label}: passes seeds 0-11 on {' + '.join(r.engines)}")
            except Exception as e:
                bad += 1
                print(f"FAIL  {name} {label} (seed {seed}): {type(e).__name__}: {str(e)[:400]}")
        for label, kernel, exc, detail in c.MUTANTS.get(name, ()):
            try:
                for seed in SEEDS:  # the harness with the GPU stage on, as a learner's check runs
                    got = check.check(p, kernel, seed=seed, gpu=True)
                    raise AssertionError(f"passed: {got!r}")
            except check.PuzzleFailure:
                pass  # judged below with the test's own assertion (simulator verdict, every seed)
            except Exception as e:
                bad += 1
                print(f"FAIL  {name} {label} (seed {seed}): {type(e).__name__}: {str(e)[:300]}")
                continue
            try:
                for seed in SEEDS:
                    assert_rejected(name, label, kernel, exc, detail, seed)
                alone = "caught" if not any(gpu_alone_passes(p, kernel, s) for s in SEEDS) else "MISSED"
                print(f"ok    {name} {label}: rejected ({exc.__name__}) on seeds 0-11; GPU alone: {alone}")
            except Exception as e:
                bad += 1
                print(f"FAIL  {name} {label}: {type(e).__name__}: {str(e)[:300]}")
    print(f"problems: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or DEFAULT))
