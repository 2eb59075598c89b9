"""Train the course's GPT-2 on the shipped Shakespeare, with the course's kernels or the NumPy reference.

    python -m tools.train                                  # CPU: NumPy reference, size tiny, 200 steps
    python -m tools.train --device sim --size check --steps 2        # the kernels on the simulator
    python -m tools.train --gradcheck --device sim         # kernels' gradients vs float64, tiny model
    python -m tools.train --device gpu --steps 300 --torch-compare --json out.json --plot loss.png
    python -m tools.train --device gpu --gradcheck --size small       # the check at the training size
    python -m tools.train --device gpu --speed --json speed.json      # tokens/s: kernels (one launch per
                                      # op, fused, fused + CUDA graph), PyTorch eager, torch.compile,
                                      # and PyTorch's graph twins (reduce-overhead; eager in a CUDA graph)
    python -m tools.train --device gpu --profile      # where a step's time goes, kernel by kernel
    python -m tools.train --device gpu --fused --graph --steps 300    # train with the fast path
    python -m tools.train --device gpu --report DIR   # all three above, unattended: DIR/gradcheck.json,
                                                      # DIR/train.json, DIR/loss.png, DIR/speed.json
    python -m tools.train --optimizer sf-adamw --warmup 20   # schedule-free AdamW (validation uses x)
    python -m tools.train --kv-cache                  # sample through a KV cache (the same tokens)
    python -m tools.train --device gpu --sample-speed # tokens/s of sampling, with and without the cache

--torch-compare runs the same model in PyTorch (FP32, TF32 off) from the same initial weights on the
same batches: the first 10 losses must agree within LOSS_TOL, the final validation losses within
VAL_MARGIN (see the training notebook for why those numbers). Without PyTorch it says so in one line
and carries on. Exit status: 0 done (and every check passed), 1 a check failed (the gradients, the
PyTorch comparison, a --speed row not validated, a --profile table whose GPU times failed their
check), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

SIZES = ("check", "tiny", "small", "medium")
LOSS_TOL = 2e-3  # |loss_kernels - loss_pytorch| over the first 10 steps, nats
VAL_MARGIN = 0.05  # |validation loss difference| after the run, nats


def parse(argv):
    ap = argparse.ArgumentParser(
        prog="python -m tools.train", description=__doc__.split("\n")[0], allow_abbrev=False
    )
    ap.add_argument("--device", choices=("cpu", "sim", "gpu"), default="cpu")
    ap.add_argument(
        "--size", choices=SIZES, default=None, help="default: tiny on cpu, check on sim, small on gpu"
    )
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--sample-chars", type=int, default=200)
    ap.add_argument("--tile", type=int, default=16, help="matrix-product tile on the GPU")
    ap.add_argument("--data", default=None, help="a plain-text file instead of the shipped plays")
    ap.add_argument("--torch-compare", action="store_true")
    ap.add_argument("--gradcheck", action="store_true", help="check the gradients and exit")
    ap.add_argument("--speed", action="store_true", help="tokens/s of a step: kernels, eager, compiled")
    ap.add_argument("--profile", action="store_true", help="time a step's launches, kernel by kernel")
    ap.add_argument("--fused", action="store_true", help="the fused kernels (puzzles/llm/training/fused.py)")
    ap.add_argument("--graph", action="store_true", help="GPU: replay forward+backward as a CUDA graph")
    ap.add_argument(
        "--optimizer", choices=("adamw", "sf-adamw"), default="adamw", help="sf-adamw: schedule-free AdamW"
    )
    ap.add_argument("--warmup", type=int, default=0, help="sf-adamw: linear warmup steps")
    ap.add_argument("--kv-cache", action="store_true", help="sample through a KV cache (same tokens)")
    ap.add_argument(
        "--sample-speed", action="store_true", help="time sampling with and without the KV cache and exit"
    )
    ap.add_argument("--json", default=None)
    ap.add_argument("--plot", default=None, help="save the loss curve (PNG)")
    ap.add_argument(
        "--report", default=None, metavar="DIR", help="gradient check, 300 steps vs PyTorch, speed"
    )
    return ap.parse_args(argv)


def free_bytes(device):
    if device == "gpu":
        from numba import cuda

        return cuda.current_context().get_memory_info()[0]
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


def backend_for(args, cfg, params):
    from puzzles.llm.training import kernels, loop

    opt = dict(optimizer=args.optimizer, warmup=args.warmup) if args.optimizer != "adamw" else {}
    if args.device == "cpu":
        return loop.NumpyBackend(cfg, params, **opt)
    tile = args.tile if args.device == "gpu" else 4
    return kernels.KernelBackend(cfg, params, tile=tile, fused=args.fused, graph=args.graph, **opt)


def select_engine(device):
    from helpers import engine, environment, sim

    if device == "gpu":
        if not environment.has_numba_cuda() or not _gpu():
            raise SystemExit(
                "--device gpu: no CUDA GPU here (use --device cpu, or --device sim for a tiny model)"
            )
        engine.use("gpu")
    elif device == "sim":
        engine.use("sim")
        sim.config.trace = False


def _gpu():
    from numba import cuda

    try:
        return cuda.is_available()
    except Exception:
        return False


def report(argv, folder) -> int:
    """The GPU run the course's note reports: the gradient check at the training size, 300 steps
    against PyTorch (losses, samples, the loss curve), the speed table; one exit status for all."""
    os.makedirs(folder, exist_ok=True)
    base = [a for a in argv if a not in ("--report", folder)]
    steps = [] if "--steps" in base else ["--steps", "300"]
    train = steps + ["--torch-compare", "--json", f"{folder}/train.json", "--plot", f"{folder}/loss.png"]
    runs = [
        ["--gradcheck", "--json", f"{folder}/gradcheck.json"],
        train,
        ["--speed", "--json", f"{folder}/speed.json"],
    ]
    status = 0
    for extra in runs:
        print(f"=== python -m tools.train {' '.join(base + extra)}", flush=True)
        status = max(status, main(base + extra))
    return status


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse(argv)
    if args.report:
        return report(argv, args.report)
    from puzzles.llm.training import data, gradcheck, loop, reference

    size = args.size or {"cpu": "tiny", "sim": "check", "gpu": "small"}[args.device]
    cfg = reference.CONFIGS[size]
    out = {"device": args.device, "size": size, "config": vars(cfg) if hasattr(cfg, "__dict__") else None}
    out["config"] = dict(L=cfg.L, C=cfg.C, NH=cfg.NH, T=cfg.T, V=cfg.V, params=cfg.n_params())
    try:
        select_engine(args.device)
        if args.device == "sim" and size != "check":
            print(
                f"note: the simulator runs size {size} at minutes a step; --size check takes seconds",
                file=sys.stderr,
            )
        loop.check_config(
            cfg, args.batch, free_bytes(args.device), "the GPU" if args.device == "gpu" else "memory"
        )
        tokens = data.load_tokens(args.data) if not args.gradcheck else None
        ok = True
        if args.warmup < 0 or (args.warmup and args.optimizer != "sf-adamw"):
            raise loop.TrainingError(
                f"--warmup {args.warmup}: give a step count >= 0, with --optimizer sf-adamw only"
            )
        if args.optimizer != "adamw" and args.torch_compare:
            raise loop.TrainingError(
                "--torch-compare runs PyTorch's AdamW: it compares with --optimizer adamw only (run the "
                "two optimizers separately and compare their validation losses)"
            )
        if args.sample_speed:
            from tools.train_sample import sample_speed

            out["sample_speed"] = sample_speed(args, cfg)
            ok = out["sample_speed"]["same_tokens"]
        elif args.gradcheck:
            from puzzles.llm.training import kernels

            t0 = time.perf_counter()
            kw = dict(tile=args.tile) if args.device == "gpu" else {}
            if args.device != "cpu":
                kw.update(fused=args.fused)
            be = kernels.KernelBackend if args.device != "cpu" else loop.NumpyBackend
            rows = gradcheck.check(be, cfg, B=2 if size == "check" else args.batch, seed=args.seed, **kw)
            print(gradcheck.report(rows))
            ok = all(r[4] for r in rows)
            out["gradcheck"] = dict(rows=rows, seconds=time.perf_counter() - t0, ok=ok)
            print(f"gradient check {'passed' if ok else 'FAILED'} in {out['gradcheck']['seconds']:.1f} s")
        elif args.speed:
            out["speed"] = speed(args, cfg)
            ok = all(v is not False for v in out["speed"]["validated"].values())  # None: did not run
        elif args.profile:
            from tools.train_profile import profile

            out["profile"] = profile(args, cfg)
            ok = all(t.get("reliable", True) for t in out["profile"].values() if t)  # GPU times checked
        else:
            params = reference.init_params(cfg, args.seed)
            kw = dict(steps=args.steps, B=args.batch, seed=args.seed, lr=args.lr, eval_every=args.eval_every)
            kw.update(sample_chars=args.sample_chars, tokens=tokens, kv=args.kv_cache)
            run = loop.train(backend_for(args, cfg, params), cfg, **kw)
            out["run"] = run.summary()
            print(
                f"{run.backend}: {args.steps} steps in {run.seconds:.1f} s, "
                f"{out['run']['tokens_per_s']:.0f} tokens/s"
            )
            if run.val:
                print(f"final validation loss ({args.optimizer}): {run.val[-1][1]:.4f}")
            t = out["run"]["seconds_to_target_val"]
            reached = f"reached after {t:.1f} s of training" if t else f"not reached in {args.steps} steps"
            print(f"validation loss {loop.TARGET_VAL}: {reached}")
            for when, text in run.samples.items():
                print(f"--- sample at the {when} ---\n{text}\n")
            runs = [run]
            if args.torch_compare:
                ok, cmp_out, truns = torch_compare(args, cfg, params, kw, run)
                out["torch_compare"] = cmp_out
                runs += truns
            if args.plot:
                loop.loss_curve(runs, args.plot)
                print(f"loss curve: {args.plot}")
    except kv_cache_error() as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except data.DataMissing as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except loop.TrainingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2 if not isinstance(e, loop.NonFinite) else 1
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=float)
        print(f"results: {args.json}")
    return 0 if ok else 1


def kv_cache_error():
    from puzzles.llm.training.kv_cache import CacheError

    return CacheError


def torch_compare(args, cfg, params, kw, run):
    from helpers import timing
    from puzzles.llm.training import loop

    torch, why = timing.torch_or_reason() if args.device == "gpu" else _torch_cpu()
    if torch is None:
        print(f"PyTorch comparison skipped: {why}")
        return True, {"skipped": why}, []
    from puzzles.llm.training.torch_model import TorchBackend

    dev = "cuda" if args.device == "gpu" else "cpu"
    trun = loop.train(TorchBackend(cfg, params, device=dev), cfg, **kw)
    n = min(10, len(run.losses))
    diff = float(np.max(np.abs(np.array(run.losses[:n]) - np.array(trun.losses[:n])))) if n else 0.0
    vdiff = abs(run.val[-1][1] - trun.val[-1][1]) if run.val and trun.val else float("nan")
    ok = diff <= LOSS_TOL and (math.isnan(vdiff) or vdiff <= VAL_MARGIN)
    print(f"first {n} losses: largest difference from PyTorch {diff:.2e} (tolerance {LOSS_TOL})")
    print(
        f"final validation loss: kernels {run.val[-1][1]:.4f}, PyTorch {trun.val[-1][1]:.4f} "
        f"(margin {VAL_MARGIN})"
    )
    print("PyTorch comparison " + ("passed" if ok else "FAILED"))
    res = dict(max_first10_diff=diff, val_diff=vdiff, ok=ok, torch_losses=trun.losses, torch_val=trun.val)
    return ok, res, [trun]


def _torch_cpu():
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed."
    return torch, None


def speed(args, cfg):
    """tokens/s of one training step: the course's kernels (one launch per op, fused, fused + CUDA
    graph) and PyTorch (eager, torch.compile, and the two graph twins: torch.compile's
    reduce-overhead mode and eager captured whole with torch.cuda.graph), graph against graph. Every
    row is validated: its first losses (the warm-up steps, the same batches from the same weights for
    every row) against PyTorch eager's (the NumPy reference's without PyTorch), within LOSS_TOL."""
    from helpers import timing
    from puzzles.llm.training import kernels, loop, reference
    from puzzles.llm.training.torch_model import tokens_per_second

    params = reference.init_params(cfg, args.seed)
    rows, losses, agree = {}, {}, None

    def row(name, make, sync=None):
        losses[name] = []
        try:
            rows[name] = tokens_per_second(make(), cfg, args.batch, sync=sync, losses=losses[name])
        except Exception as e:  # a row that cannot run says why; the others still run
            print(f"{name}: failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            rows[name], losses[name] = float("nan"), None  # not run: said above, not a wrong number

    torch, why = timing.torch_or_reason()
    ref = "pytorch eager fp32"
    if torch is None:
        print(f"PyTorch rows skipped: {why}")
        ref = "numpy reference (cpu)"
        row(ref, lambda: loop.NumpyBackend(cfg, params))
    if args.device == "gpu":
        from numba import cuda

        variants = (
            ("course kernels", {}),
            ("course kernels, fused", dict(fused=True)),
            ("course kernels, fused + CUDA graph", dict(fused=True, graph=True)),
        )
        for name, kw in variants:
            row(
                name, lambda kw=kw: kernels.KernelBackend(cfg, params, tile=args.tile, **kw), cuda.synchronize
            )
        agree = graph_agrees(cfg, params, args)
    if torch is not None:
        from puzzles.llm.training.torch_model import TorchBackend, TorchGraphBackend

        dev = "cuda"  # torch_or_reason: PyTorch with a CUDA GPU
        twins = [  # eager and compiled, then the two that replay CUDA graphs as the course's last row does
            ("pytorch eager fp32", lambda: TorchBackend(cfg, params, device=dev)),
            ("torch.compile fp32", lambda: TorchBackend(cfg, params, device=dev, compile=True)),
            (
                "torch.compile reduce-overhead fp32 (CUDA graphs)",
                lambda: TorchBackend(cfg, params, device=dev, compile="reduce-overhead"),
            ),
            (
                "pytorch eager fp32 + CUDA graph (whole step)",
                lambda: TorchGraphBackend(cfg, params, device=dev),
            ),
        ]
        for name, make in twins:
            row(name, make, torch.cuda.synchronize)
    checks = validate(losses, ref)
    for name, v in rows.items():
        print(f"{name:50s} {v:12.0f} tokens/s   {checks.get(name, '')}")
    out = dict(rows)
    out["validated"] = {
        n: None if c.startswith("not run") else c in ("validated", "the reference") for n, c in checks.items()
    }
    if agree is not None:
        out["graph replay max loss difference"] = agree
    return out


def validate(losses: dict, ref: str) -> dict:
    """Each row's warm-up losses against the reference row's: 'validated', 'the reference', 'not run'
    (losses None: the row failed to run and said why), or why not."""
    want = losses.get(ref) or []
    out = {}
    for name, got in losses.items():
        if got is None and name != ref:
            out[name] = "not run"
            continue
        if name == ref:
            out[name] = "the reference" if want else "no losses (the reference failed)"
        elif not got or not want:
            out[name] = "NOT VALIDATED (no losses)"
        else:
            n = min(len(got), len(want))
            diff = float(np.max(np.abs(np.array(got[:n]) - np.array(want[:n]))))
            out[name] = "validated" if diff <= LOSS_TOL else f"FAILED: first losses differ by {diff:.2e}"
        if out[name] != "validated" and name != ref:
            print(f"{name}: {out[name]} (against {ref}, tolerance {LOSS_TOL})")
    n = min((len(v) for v in losses.values() if v), default=0)  # rows that ran
    print(f"every row's first {n} losses checked against {ref} (tolerance {LOSS_TOL} nats)")
    return out


def graph_agrees(cfg, params, args, steps: int = 4) -> float:
    """The CUDA-graph path against launch by launch, same weights and batches: the largest loss
    difference over `steps` steps (atomics sum in another order, so not exactly 0); nan if it fails."""
    from puzzles.llm.training import data, kernels

    rng = np.random.default_rng(1)
    batches = [data.batch(data.load_tokens(), args.batch, cfg.T, rng) for _ in range(steps)]
    try:
        a, b = (
            kernels.KernelBackend(cfg, params, tile=args.tile, fused=True, graph=g) for g in (False, True)
        )
        diff = max(abs(a.step(x, y, 1e-3) - b.step(x, y, 1e-3)) for x, y in batches)
    except Exception as e:
        print(f"graph replay check failed: {type(e).__name__}: {e}")
        return float("nan")
    print(
        f"graph replay vs launch by launch: {steps} steps, largest loss difference {diff:.2e} (want < 1e-4)"
    )
    return diff


if __name__ == "__main__":
    sys.exit(main())
