"""Run every puzzle mutant and variant on a real GPU (not collected by pytest).

    python tests/run_mutants_gpu.py

Variants and references: the full harness (simulator + PTX + GPU) must pass.
Mutants: the harness verdict, and whether the GPU alone, on the harness's own
random cases with poisoned outputs, would have passed it. Those are the
mistakes only the simulator's diagnostics and budgets catch. Each GPU-alone run
is its own process: a stray access can kill the CUDA context for good.
"""

import os
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import puzzles
from helpers import check, engine

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/: support and the mutants package
from support import controls  # noqa: E402

MUTANTS, VARIANTS = {}, {}
for _name in puzzles.names():
    _c = controls(puzzles.module_of(_name))
    MUTANTS.update({k: v for k, v in _c.MUTANTS.items() if k == _name})
    VARIANTS.update({k: v for k, v in _c.VARIANTS.items() if k == _name})

warnings.filterwarnings("ignore", message=engine.LOW_OCCUPANCY_WARNING)
SEED = 7


def gpu_alone_passes(puzzle, kernel, seed):
    """True if every case gives the right output on the GPU (no simulator involved)."""
    from numba import cuda

    k = kernel if hasattr(kernel, "py_func") else cuda.jit(kernel)
    for case in puzzle.cases_for(k, np.random.default_rng(seed)):
        args, _, outputs, pristine = check.prepare_args(puzzle, case)
        dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        engine.gpu_launch(k, case.grid, case.block, dev, case.shared_bytes)
        cuda.synchronize()
        want = check.expected(puzzle, case, pristine)
        for n in puzzle.outputs:
            if check.compare(want[n], dev[puzzle.signature.index(n)].copy_to_host(), puzzle):
                return False
    return True


def alone(name, index):
    """GPU-alone verdict of one mutant, in a child process."""
    r = subprocess.run(
        [sys.executable, __file__, "--alone", name, str(index)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=os.path.dirname(os.path.abspath(__file__)),
    )
    last = (r.stdout.strip().splitlines() or ["?"])[-1]
    if r.returncode != 0:
        err = (r.stderr.strip().splitlines() or ["?"])[-1]
        return "fails (crashes: " + err[-70:] + ")"
    return last


def main():
    if "--alone" in sys.argv:
        name, index = sys.argv[2], int(sys.argv[3])
        kernel = MUTANTS[name][index][1]
        try:
            ok = gpu_alone_passes(puzzles.get(name), kernel, SEED)
        except Exception as e:  # a launch error is a failure on the GPU too
            print(f"fails ({type(e).__name__})")
            return 0
        print("PASSES" if ok else "fails")
        return 0
    if not engine.gpu_present():
        print("No CUDA GPU here: nothing to do.")
        return 0
    bad = 0
    for name, vs in VARIANTS.items():
        p = puzzles.get(name)
        for label, kernel in vs + [("reference", p.reference)]:
            try:
                r = check.check(p, kernel, seed=SEED, gpu=True)
                print(f"variant {name:11s} {label:28s} ok on {' + '.join(r.engines)}")
            except Exception as e:
                bad += 1
                print(f"variant {name:11s} {label:28s} FAILED {type(e).__name__}: {str(e)[:300]}")
    jobs = [(name, i) for name, muts in MUTANTS.items() for i in range(len(muts))]
    with ThreadPoolExecutor(max_workers=min(12, os.cpu_count() or 2)) as pool:
        gpu = dict(zip(jobs, pool.map(lambda j: alone(*j), jobs)))
    gpu_only = []
    for name, i in jobs:
        label, kernel, exc, _ = MUTANTS[name][i]
        try:
            check.check(puzzles.get(name), kernel, seed=SEED, gpu=False)
            verdict = "PASSED (harness bug)"
            bad += 1
        except exc as e:
            diag = getattr(e, "diagnostic", None)
            verdict = type(e).__name__ + (f"/{type(diag).__name__}" if diag is not None else "")
        except Exception as e:
            verdict = f"wrong reason: {type(e).__name__}"
            bad += 1
        if gpu[name, i] == "PASSES":
            gpu_only.append(f"{name}-{label}")
        print(f"mutant  {name:11s} {label:28s} {verdict:36s} GPU alone: {gpu[name, i]}")
    print(f"\n{len(gpu_only)} of {len(jobs)} mutants a GPU alone would have passed: {', '.join(gpu_only)}")
    print(f"problems: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
