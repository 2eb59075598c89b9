"""Known-wrong and known-right kernels for puzzles/llm/small_ops/embedding.py.

Mutants are the reference with one learner's mistake edited in (`mutate`: exact replacements, each
required to match once); variants are correct kernels written differently.
"""

import numpy as np
from numba import cuda

from mutants.common import OOB, RACE, WRONG, M, over
from puzzles.llm.small_ops import embedding as m

EMB_FORWARD = [
    M(m.embedding_forward, "emb_position_not_wrapped", OOB, ("wpe[i % T, c]", "wpe[i, c]")),
    M(
        m.embedding_forward,
        "emb_forgets_position",
        WRONG,
        ("wte[tokens[i], c] + wpe[i % T, c]", "wte[tokens[i], c]"),
    ),
]


ea = m.embedding_backward_atomic


EMB_ATOMIC = [
    M(
        ea,
        "emb_token_rows_plain_add",
        RACE,  # dwte[tok, c] += g: two positions holding one token lose an update (the fix: an atomic)
        ("cuda.atomic.add(dwte, (tokens[i], c), g)", "dwte[tokens[i], c] += g"),
    ),
    M(
        ea,
        "emb_no_atomics",
        RACE,  # two positions with the same token collide
        ("cuda.atomic.add(dwte, (tokens[i], c), g)", "dwte[tokens[i], c] += g"),
        ("cuda.atomic.add(dwpe, (i % T, c), g)", "dwpe[i % T, c] += g"),
    ),
    M(
        ea,
        "emb_positions_plain_store",
        RACE,  # every sequence of the batch writes dwpe[t, c]
        ("cuda.atomic.add(dwpe, (i % T, c), g)", "dwpe[i % T, c] = g"),
    ),
    M(
        ea,
        "emb_position_not_wrapped",
        OOB,
        ("cuda.atomic.add(dwpe, (i % T, c), g)", "cuda.atomic.add(dwpe, (i, c), g)"),
    ),
    M(ea, "emb_forgets_positions", WRONG, ("        cuda.atomic.add(dwpe, (i % T, c), g)\n", "")),
    M(ea, "emb_if_not_while", WRONG, ("    while k < n * C:\n", "    if k < n * C:\n")),
    M(
        ea,
        "emb_guard_rows_not_elements",
        WRONG,  # the loop stops at n, not n * C
        ("    while k < n * C:\n", "    while k < n:\n"),
    ),
]


@cuda.jit
def emb_rows(dwte, dwpe, dout, tokens, n, T, C):
    # 2-D walk: rows over blockIdx, channels over threads
    for i in range(cuda.blockIdx.x, n, cuda.gridDim.x):
        tok = tokens[i]
        t = i % T
        for c in range(cuda.threadIdx.x, C, cuda.blockDim.x):
            g = dout[i, c]
            cuda.atomic.add(dwte, (tok, c), g)
            cuda.atomic.add(dwpe, (t, c), g)


@cuda.jit
def emb_positions_without_atomics(dwte, dwpe, dout, tokens, n, T, C):
    # tokens by atomics; positions summed over the batch by the threads of the first sequence
    k = cuda.grid(1)
    step = cuda.gridsize(1)
    while k < n * C:
        i = k // C
        c = k % C
        cuda.atomic.add(dwte, (tokens[i], c), dout[i, c])
        if i < T:
            s = np.float32(0.0)
            for b in range(n // T):
                s += dout[b * T + i, c]
            dwpe[i, c] = s
        k += step


eb = m.embedding_backward_buckets


EMB_BUCKETS = [
    M(
        eb,
        "bk_atomics",
        over("global_atomics_per_block"),
        ("dwte[bucket_token[y], c] = s", "cuda.atomic.add(dwte, (bucket_token[y], c), s)"),
    ),
    M(
        eb,
        "bk_end_inclusive",
        OOB,  # the last bucket reads order[n]
        ("range(bucket_start[y], bucket_start[y + 1])", "range(bucket_start[y], bucket_start[y + 1] + 1)"),
    ),
    M(eb, "bk_rows_not_through_order", WRONG, ("s += dout[order[k], c]", "s += dout[k, c]")),
    M(eb, "bk_bucket_index_as_token", WRONG, ("dwte[bucket_token[y], c] = s", "dwte[y, c] = s")),
    M(eb, "bk_positions_transposed", WRONG, ("s += dout[b * T + t, c]", "s += dout[b + t * B, c]")),
    M(eb, "bk_no_guard", OOB, ("    if c >= C:\n        return\n", "")),
]


@cuda.jit
def bk_reverse(dwte, dwpe, dout, order, bucket_start, bucket_token, n_buckets, B, T, C):
    # the same buckets summed last to first: another fixed order (other bits, just as deterministic)
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y
    if c < C:
        s = np.float32(0.0)
        if y >= n_buckets:
            t = y - n_buckets
            for b in range(B - 1, -1, -1):
                s += dout[b * T + t, c]
            dwpe[t, c] = s
        else:
            k = bucket_start[y + 1] - 1
            while k >= bucket_start[y]:
                s += dout[order[k], c]
                k -= 1
            dwte[bucket_token[y], c] = s


@cuda.jit
def bk_pairs(dwte, dwpe, dout, order, bucket_start, bucket_token, n_buckets, B, T, C):
    # two accumulators (even and odd members), added at the end
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y
    if c >= C:
        return
    even = np.float32(0.0)
    odd = np.float32(0.0)
    if y < n_buckets:
        lo = bucket_start[y]
        for k in range(lo, bucket_start[y + 1]):
            if (k - lo) % 2 == 0:
                even += dout[order[k], c]
            else:
                odd += dout[order[k], c]
        dwte[bucket_token[y], c] = even + odd
    else:
        for b in range(B):
            if b % 2 == 0:
                even += dout[b * T + y - n_buckets, c]
            else:
                odd += dout[b * T + y - n_buckets, c]
        dwpe[y - n_buckets, c] = even + odd


MUTANTS = {
    "llm2_embedding_forward": EMB_FORWARD,
    "llm2_embedding_backward_atomic": EMB_ATOMIC,
    "llm2_embedding_backward_buckets": EMB_BUCKETS,
}

VARIANTS = {
    "llm2_embedding_backward_atomic": [
        ("rows", emb_rows),
        ("positions_without_atomics", emb_positions_without_atomics),
    ],
    "llm2_embedding_backward_buckets": [("reverse", bk_reverse), ("pairs", bk_pairs)],
}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
