"""Compile every registered reference kernel with each compiler of the check and print a table.

    python -m tools.compilers [--compilers numba-cuda,mlir] [--cc 7.5] [--markdown] [NAME ...]

For each puzzle: the CUDA features its reference uses (shared/local arrays, atomics, shuffles,
votes, grid sync...), and per compiler "ok" (with seconds) or the first line of its refusal. A compiler
that is not installed gets one line and no column. Needs no GPU (PTX for the T4, sm_75, by default);
on a GPU machine the same command is the GPU side's check. Exit 1 when a reference fails under
numba-cuda (the course's compiler); numba-cuda-mlir's failures are what the table is for.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time

import numpy as np

FEATURES = (  # (column text, what in the kernel's source shows it)
    ("shared", r"cuda\.shared\.array"),
    ("local", r"cuda\.local\.array"),
    ("const", r"cuda\.const\.array_like"),
    ("atomic", r"cuda\.atomic\."),
    ("shfl", r"cuda\.shfl_"),
    ("vote", r"cuda\.(all|any|ballot|eq)_sync|cuda\.activemask"),
    ("grid sync", r"this_grid\(\)|\.sync\(\)"),
    ("barrier", r"cuda\.syncthreads"),
    ("device fn", r"device=True"),
)


def features(kernel) -> str:
    import inspect

    from helpers.sim.kernel import py_func

    fn = py_func(kernel)
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return "?"
    # device functions it calls: their source counts too
    for name in fn.__code__.co_names:
        g = fn.__globals__.get(name)
        if hasattr(g, "py_func"):
            try:
                source += inspect.getsource(g.py_func) + "device=True"
            except (OSError, TypeError):
                pass
    return ", ".join(label for label, pattern in FEATURES if re.search(pattern, source)) or "-"


def compile_one(name: str, compiler: str, cc) -> tuple[bool, str, float]:
    """(worked, first error line or "", seconds) for puzzle `name`'s reference."""
    import puzzles
    from helpers import ptx
    from helpers.runs import prepare_args

    os.environ[ptx.COMPILER_ENV] = compiler
    p = puzzles.get(name)
    cases = p.cases_for(p.reference, np.random.default_rng(0))
    args = prepare_args(p, cases[0])[0]
    t0 = time.perf_counter()
    try:
        ptx.ptx_check(p.reference, args, cc=cc)
        return True, "", time.perf_counter() - t0
    except ptx.NumbaRejected as e:
        said = [ln.strip() for ln in str(e).split("Numba says:\n", 1)[-1].splitlines() if ln.strip()]
        best = [ln for ln in said if "error:" in ln or "Untyped" in ln]
        best = best or [ln for ln in said if ln.startswith("Cause:")] or said or ["?"]
        return False, best[-1].removeprefix("Cause: ")[:160], time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001 - a crash in a compiler is a row of the table, not the end
        return False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:120], 0.0


def run_one(name: str, compiler: str) -> str:
    """Puzzle `name`'s reference run on the GPU (case 0) compiled by `compiler`, against the spec."""
    import puzzles
    from helpers import device, mlir
    from helpers.compare import compare
    from helpers.runs import expected, prepare_args

    p = puzzles.get(name)
    case = p.cases_for(p.reference, np.random.default_rng(0))[0]
    args, _, _, pristine = prepare_args(p, case)
    try:
        if compiler == "mlir":
            after = mlir.run(p.reference, case.grid, case.block, args, case.shared_bytes)
        else:
            to_device = device.STATE.real("to_device")
            dev = [to_device(a) if isinstance(a, np.ndarray) else a for a in args]
            device.gpu_launch(p.reference, case.grid, case.block, dev, case.shared_bytes)
            device.STATE.real("synchronize")()
            after = [d.copy_to_host() if isinstance(a, np.ndarray) else a for a, d in zip(args, dev)]
    except Exception as e:  # noqa: BLE001 - a failed launch is a row of the table
        return f"FAILS: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:120]}"
    want = expected(p, case, pristine)
    for n in p.outputs:
        problem = compare(want[n], after[p.signature.index(n)], p)
        if problem:
            return f"WRONG {n}: {problem.splitlines()[0][:120]}"
    return "runs right"


@contextlib.contextmanager
def _quiet_stderr():
    """numba-cuda-mlir's MLIR prints a failing kernel's whole IR on file descriptors 1 and 2."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved, null = [os.dup(1), os.dup(2)], os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="puzzles (default: every registered one)")
    ap.add_argument("--compilers", default="numba-cuda,mlir")
    ap.add_argument("--cc", default="7.5", help="compute capability of the PTX (default 7.5, the T4)")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table (helpers/README.md)")
    ap.add_argument("--run", action="store_true", help="also run each reference on the GPU (GPU only)")
    args = ap.parse_args(argv)
    import puzzles
    from helpers import ptx

    cc = tuple(int(x) for x in args.cc.split("."))
    if args.run:
        from helpers.device import gpu_present

        if not gpu_present():
            print("--run needs a CUDA GPU and numba-cuda finds none here: nothing was run.")
            return 2
    names = args.names or puzzles.names()
    compilers = []
    for c in args.compilers.split(","):
        os.environ[ptx.COMPILER_ENV] = c
        if ptx.available():
            compilers.append(c)
        else:
            print(f"{c}: not installed here (or no NVVM): skipped")
    rows, failed = [], {c: 0 for c in compilers}
    for name in names:
        cells = []
        for c in compilers:
            with _quiet_stderr():
                ok, why, sec = compile_one(name, c, cc)
            failed[c] += not ok
            cells.append(f"ok ({sec:.1f} s)" if ok else f"FAILS: {why}")
            if args.run and ok:
                with _quiet_stderr():
                    ran = run_one(name, c)
                failed[c] += ran != "runs right"
                cells[-1] += f"; {ran}"
        rows.append((name, features(puzzles.get(name).reference), *cells))
    head = ("puzzle", "uses", *compilers)
    if args.markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    else:
        for r in [head, *rows]:
            print("  ".join(f"{c:<24}" if i < 2 else c for i, c in enumerate(r)))
    counts = "; ".join(f"{c}: {len(names) - n}/{len(names)} compile" for c, n in failed.items())
    print(f"sm_{cc[0]}{cc[1]}: {counts}")
    return int(failed.get("numba-cuda", 0) > 0)


if __name__ == "__main__":
    sys.exit(main())
