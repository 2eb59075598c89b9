"""`python -m tools.train --sample-speed`: tokens/s of sampling with and without the KV cache.

The same model (the backend of --device: NumPy on cpu, the course's kernels on gpu or sim), the same
prompt, the same seed. Without the cache every token is a forward pass over the whole prefix
(`reference.sample`); with it, one decode step (`kv_cache.generate`). The text stays inside the
context (n = T - len(prompt) tokens), where the cache applies to every token. Both are run once first
(compilation), then timed. Checked before any number is printed: the tokens are the same (greedy and
sampled at temperature 1), and each decode step's logits equal the full forward pass's last row
within LOGIT_TOL.
"""

from __future__ import annotations

import time

import numpy as np

LOGIT_TOL = 1e-4  # float32 logits of size ~10 through two different attention paths: a few ulps each


def sample_speed(args, cfg) -> dict:
    from puzzles.llm.training import data, kv_cache, reference
    from tools.train import backend_for

    be = backend_for(args, cfg, reference.init_params(cfg, args.seed))
    sync = _sync(args.device)
    prompt = data.encode("\n")
    n = cfg.T - len(prompt)
    dec = kv_cache.decoder_for(be)

    def recompute(temperature):
        return reference.sample(be.logits, prompt, n, cfg.T, seed=args.seed, temperature=temperature)

    def cached(temperature, logits_out=None):
        return kv_cache.generate(dec, prompt, n, cfg.T, args.seed, temperature, logits_out=logits_out)

    logits = []
    same = all(np.array_equal(recompute(t), cached(t)) for t in (0.0, 1.0))
    toks = cached(1.0, logits)
    seq = np.concatenate([prompt, toks])
    full = be.logits(seq[None, : cfg.T].astype(np.int32))[0]  # row i: the logits after token i
    diff = max(float(np.abs(full[len(prompt) - 1 + i] - z).max()) for i, z in enumerate(logits))
    ok = same and diff <= LOGIT_TOL
    print(
        f"KV cache against recomputing: tokens {'the same' if same else 'DIFFERENT'} (greedy and "
        f"sampled); largest logit difference {diff:.1e} (tolerance {LOGIT_TOL})"
    )
    out = dict(n_tokens=n, same_tokens=ok, max_logit_diff=diff)
    for name, fn in (("recompute", recompute), ("kv cache", cached)):
        sync()
        t0 = time.perf_counter()
        fn(1.0)
        sync()
        out[f"{name} tokens/s"] = n / (time.perf_counter() - t0)
    size = f"L={cfg.L}, C={cfg.C}, NH={cfg.NH}, T={cfg.T}"
    print(f"sampling {n} tokens on {args.device} ({size}):")
    for name in ("recompute", "kv cache"):
        print(f"  {name:10s} {out[f'{name} tokens/s']:10.1f} tokens/s")
    print(f"  speed-up {out['kv cache tokens/s'] / out['recompute tokens/s']:.2f}x")
    if not ok:
        print("sample-speed: the KV-cache path did NOT match: its timing is not a valid comparison")
    return out


def _sync(device):
    if device != "gpu":
        return lambda: None
    from numba import cuda

    return cuda.synchronize
