"""The global-memory traffic of each attention version: the formulas (`traffic`) and the same
accesses counted in the simulator's trace (`counted_accesses`; a test holds the two equal)."""

import numpy as np

from helpers.puzzle import Case
from puzzles.llm.attention import flash, naive
from puzzles.llm.attention.common import BR, TPB, _blocks, _qkv, scores_spec
from puzzles.llm.attention.naive import softmax_spec


def traffic(bh: int, t: int, d: int, version: str, br: int = BR) -> dict:
    """Global-memory bytes each version's threads request (float32, no causal mask), and the memory it
    allocates beyond Q, K, V and O. The simulator's trace counts exactly these accesses
    (`counted_accesses`); on a GPU the L1 and L2 caches absorb part of the repeated reads, which is
    why the FlashAttention-style kernel keeps its reuse in shared memory instead of hoping for it.

    naive: scores read a row of Q and of K per score (2d) and write S; softmax reads S three times
    (max, sum, normalise) and writes P; P V reads a row of P and a column of V per output (2T).
    row: each query reads its row of Q once, then every row of K and V. flash: each block of `br`
    queries reads every row of K and V once.
    """
    f = 4
    tt = bh * t * t
    if version == "naive":
        reads = tt * 2 * d + 3 * tt + bh * t * d * 2 * t
        writes = 2 * tt + bh * t * d
        return {"bytes": (reads + writes) * f, "reads": reads, "writes": writes, "extra": 2 * tt * f}
    if version == "row":
        reads = bh * t * (d + 2 * t * d)
    elif version == "flash":
        reads = bh * t * d + bh * _blocks(t, br) * 2 * t * d
    else:
        raise ValueError(f"version must be naive, row or flash; got {version!r}")
    writes = bh * t * d
    return {"bytes": (reads + writes) * f, "reads": reads, "writes": writes, "extra": 0}


def counted_accesses(t: int = 32, d: int = 8, causal: int = 0, seed: int = 0) -> dict:
    """Global-memory elements read and written by each version on one head, counted in the simulator's
    trace (what the threads request, before any cache): {version: (reads, writes)}."""
    from helpers.check import run_case

    rng = np.random.default_rng(seed)
    q, k, v = _qkv(rng, 1, t, d)
    blocks = _blocks(t, TPB)
    out = np.zeros((1, t, d), np.float32)
    s = scores_spec(q, k, causal).astype(np.float32)
    p = softmax_spec(s)
    runs = {
        "naive": [
            ("llm3_attn_scores", Case((blocks, blocks, 1), (TPB, TPB), dict(s=s, q=q, k=k, causal=causal))),
            ("llm3_attn_softmax", Case((blocks, 1), TPB, dict(p=p, s=s))),
            ("llm3_attn_pv", Case((_blocks(d, TPB), blocks, 1), (TPB, TPB), dict(out=out, p=p, v=v))),
        ],
        "row": [("llm3_attn_row", Case((blocks, 1), TPB, dict(out=out, q=q, k=k, v=v, causal=causal)))],
        "flash": [
            ("llm3_attn_flash", Case((_blocks(t, BR), 1), BR, dict(out=out, q=q, k=k, v=v, causal=causal)))
        ],
    }
    by_name = {p.name: p for p in naive.PUZZLES + flash.PUZZLES}
    counts = {}
    for version, launches in runs.items():
        reads = writes = 0
        for name, case in launches:
            launch, _ = run_case(by_name[name], by_name[name].reference, case)
            acc = launch.trace.select(space="global")
            reads += int((acc["kind"] == 0).sum())
            writes += int((acc["kind"] == 1).sum())
        counts[version] = (reads, writes)
    return counts
