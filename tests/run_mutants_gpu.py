"""Run every puzzle mutant and variant on a real GPU (not collected by pytest).

    python tests/run_mutants_gpu.py

For each mutant: the full harness verdict (simulator + PTX + GPU), and whether
the GPU alone, on the harness's own random cases with poisoned outputs, would
have passed it. Those are the mistakes that only the simulator's diagnostics
and budgets catch. Every variant and reference must pass the full harness.
"""
import sys
import warnings

import numpy as np
from mutants import MUTANTS, VARIANTS

import puzzles
from helpers import check, engine

warnings.filterwarnings("ignore", message=r"Grid size \d+ will likely")


def gpu_alone_passes(puzzle, kernel, seed):
    """True if every case gives the right output on the GPU (no simulator involved)."""
    from numba import cuda
    k = kernel if hasattr(kernel, "py_func") else cuda.jit(kernel)
    for case in puzzle.cases(np.random.default_rng(seed)):
        args, _, outputs, pristine = check.prepare_args(puzzle, case)
        dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        try:
            engine.gpu_launch(k, case.grid, case.block, dev, case.shared_bytes)
            cuda.synchronize()
        except Exception:
            return False
        want = check.expected(puzzle, case, pristine)
        for n in puzzle.outputs:
            if check.compare(want[n], dev[puzzle.signature.index(n)].copy_to_host(), puzzle):
                return False
    return True


def main():
    if not engine.gpu_present():
        print("No CUDA GPU here: nothing to do.")
        return 0
    bad = 0
    gpu_only = []
    # variants first: a mutant's stray access on the GPU could poison the CUDA context
    for name, vs in VARIANTS.items():
        p = puzzles.get(name)
        for label, kernel in vs + [("reference", p.reference)]:
            try:
                r = check.check(p, kernel, seed=7, gpu=True)
                print(f"variant {name:11s} {label:28s} ok on {' + '.join(r.engines)}")
            except Exception as e:
                bad += 1
                print(f"variant {name:11s} {label:28s} FAILED {type(e).__name__}: {str(e)[:300]}")
    for name, muts in MUTANTS.items():
        p = puzzles.get(name)
        for label, kernel, exc, _ in muts:
            try:
                check.check(p, kernel, seed=7, gpu=True)
                verdict = "PASSED (harness bug)"
                bad += 1
            except exc as e:
                diag = getattr(e, "diagnostic", None)
                verdict = type(e).__name__ + (f"/{type(diag).__name__}" if diag is not None else "")
            except Exception as e:
                verdict = f"wrong reason: {type(e).__name__}"
                bad += 1
            alone = gpu_alone_passes(p, kernel, seed=7)
            if alone:
                gpu_only.append(f"{name}-{label}")
            print(f"mutant  {name:11s} {label:28s} {verdict:40s} GPU alone: {'passes' if alone else 'fails'}")
    print(f"\n{len(gpu_only)} mutants a GPU alone would have passed: {', '.join(gpu_only)}")
    print(f"problems: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
