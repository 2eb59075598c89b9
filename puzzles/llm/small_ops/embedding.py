"""Token and position embeddings, three rungs:

    llm2_embedding_forward           out[i, c] = wte[tokens[i], c] + wpe[i % T, c], grid-stride over n * C
    llm2_embedding_backward_atomic   dwte and dwpe by atomics (tokens repeat: their rows collide)
    llm2_embedding_backward_buckets  deterministic: the host groups the positions of each token
                                     (`bucket_tokens`), block (bx, y) sums one token's bucket
                                     (y < n_buckets) or one position

Tolerances (u = 2**-24): the forward pass is one addition (2u); the backward sums at most n terms, in
any order: (n + 4)u relative to the sum of the magnitudes, at most n * DOUT_MAX.
"""

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.small_ops.common import _ELT, TPB, U

EMB_MAX_N = 64


DOUT_MAX = 4.0


EMB_RTOL = (EMB_MAX_N + 4) * U


EMB_ATOL = (EMB_MAX_N + 4) * U * EMB_MAX_N * DOUT_MAX / 4  # the collisions of one row: n / 4 at most


def embedding_spec(tokens, wte, wpe, n, T, C):
    return (wte.astype(np.float64)[tokens] + wpe.astype(np.float64)[np.arange(n) % T]).astype(np.float32)


def embedding_grads_ref(dout, tokens, V, T):
    dwte = np.zeros((V, dout.shape[1]))
    np.add.at(dwte, tokens, dout.astype(np.float64))
    dwpe = dout.astype(np.float64).reshape(-1, T, dout.shape[1]).sum(axis=0)
    return dwte, dwpe


def bucket_tokens(tokens: np.ndarray):
    """Host side: positions grouped by token. (order, bucket_start, bucket_token), int32: the positions
    of bucket_token[b] are order[bucket_start[b]:bucket_start[b + 1]], in increasing order."""
    order = np.argsort(tokens, kind="stable").astype(np.int32)
    uniq, counts = np.unique(tokens, return_counts=True)
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return order, start, uniq.astype(np.int32)


def emb_shapes(rng):
    # (B, T, C, V): one token; one channel; channels not a multiple of the block; few tokens, many repeats
    return [
        (1, 1, int(rng.integers(5, 40)), int(rng.integers(2, 9))),
        (int(rng.integers(2, 4)), int(rng.integers(2, 6)), 1, int(rng.integers(2, 5))),
        # channels past one block of TPB on every seed: a kernel assuming one block covers C fails
        (2, int(rng.integers(3, 9)), int(rng.choice([33, 47])), int(rng.integers(3, 7))),
        (
            int(rng.integers(2, 5)),
            int(rng.integers(4, 12)),
            int(rng.integers(8, 20)),
            int(rng.integers(5, 30)),
        ),
        (4, 16, 3, 4),
    ]


def emb_forward_cases(rng):
    out = []
    for B, T, C, V in emb_shapes(rng):
        n = B * T
        out.append(
            Case(
                int(rng.integers(1, 4)),
                TPB,
                dict(
                    out=np.zeros((n, C), np.float32),
                    tokens=rng.integers(0, V, n).astype(np.int32),
                    wte=rng.normal(0, 1, (V, C)).astype(np.float32),
                    wpe=rng.normal(0, 1, (T, C)).astype(np.float32),
                    n=n,
                    T=T,
                    C=C,
                ),
            )
        )
    return out


def emb_backward_cases(rng):
    out = []
    for B, T, C, V in emb_shapes(rng):
        n = B * T
        tokens = rng.integers(0, V, n).astype(np.int32)
        tokens[-1] = tokens[0]  # at least one repeated token whenever n > 1
        V = int(tokens.max()) + 1
        out.append(
            Case(
                int(rng.integers(1, 4)),
                TPB,
                dict(
                    dwte=np.zeros((V, C), np.float32),
                    dwpe=np.zeros((T, C), np.float32),
                    dout=rng.uniform(-DOUT_MAX, DOUT_MAX, (n, C)).astype(np.float32),
                    tokens=tokens,
                    n=n,
                    T=T,
                    C=C,
                ),
            )
        )
    return out


def emb_buckets_cases(rng):
    out = []
    for B, T, C, V in emb_shapes(rng):
        n = B * T
        tokens = rng.integers(0, V, n).astype(np.int32)
        tokens[-1] = tokens[0]
        V = int(tokens.max()) + 1
        order, start, tok = bucket_tokens(tokens)
        out.append(
            Case(
                ((C + TPB - 1) // TPB, len(tok) + T),
                TPB,
                dict(
                    dwte=np.zeros((V, C), np.float32),
                    dwpe=np.zeros((T, C), np.float32),
                    dout=rng.uniform(-DOUT_MAX, DOUT_MAX, (n, C)).astype(np.float32),
                    order=order,
                    bucket_start=start,
                    bucket_token=tok,
                    n_buckets=len(tok),
                    B=B,
                    T=T,
                    C=C,
                ),
            )
        )
    return out


def emb_atomic_spec(dout, tokens, n, T, C):
    return _emb_grads(dout, tokens, T)


def emb_buckets_spec(dout, order, bucket_start, bucket_token, n_buckets, B, T, C):
    tokens = np.empty(B * T, np.int64)
    for b in range(n_buckets):
        tokens[order[bucket_start[b] : bucket_start[b + 1]]] = bucket_token[b]
    return _emb_grads(dout, tokens, T)


def _emb_grads(dout, tokens, T):
    # the cases size the vocabulary as the largest token + 1 (the spec sees inputs only)
    dwte, dwpe = embedding_grads_ref(dout, tokens, int(tokens.max()) + 1, T)
    return dict(dwte=dwte.astype(np.float32), dwpe=dwpe.astype(np.float32))


@cuda.jit
def embedding_forward(out, tokens, wte, wpe, n, T, C):
    # thread k handles out[k // C, k % C]: neighbouring threads, neighbouring channels
    k = cuda.grid(1)
    step = cuda.gridsize(1)
    while k < n * C:
        i = k // C
        c = k % C
        out[i, c] = wte[tokens[i], c] + wpe[i % T, c]
        k += step


EMBEDDING_FORWARD = Puzzle(
    name="llm2_embedding_forward",
    title="Embedding forward: token plus position",
    statement="""`out[i, :] = wte[tokens[i], :] + wpe[i % T, :]` for the `n = B * T` tokens of a batch
(sequences of length `T`, one after another). Thread `k` of a grid-stride loop computes element
`(k // C, k % C)`, so neighbouring threads read neighbouring channels of the same rows.""",
    outputs=("out",),
    spec=embedding_spec,
    cases=emb_forward_cases,
    reference=embedding_forward,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    rtol=2 * U,
    atol=0.0,
    **_ELT,
)


@cuda.jit
def embedding_backward_atomic(dwte, dwpe, dout, tokens, n, T, C):
    k = cuda.grid(1)
    step = cuda.gridsize(1)
    while k < n * C:
        ### BEGIN SOLUTION
        i = k // C
        c = k % C
        g = dout[i, c]
        # a token that appears twice, and every sequence of the batch at position t, add to one row
        cuda.atomic.add(dwte, (tokens[i], c), g)
        cuda.atomic.add(dwpe, (i % T, c), g)
        ### END SOLUTION
        k += step


EMBEDDING_BACKWARD_ATOMIC = Puzzle(
    name="llm2_embedding_backward_atomic",
    title="Embedding backward with atomics",
    statement="""`dwte[v, :]` is the sum of `dout[i, :]` over every position `i` whose token is `v`;
`dwpe[t, :]` the sum over the batch of `dout[b * T + t, :]`. A token that appears twice, and every
sequence at position `t`, add into the same row: `cuda.atomic.add` (`dwte` and `dwpe` start at zero).
Grid-stride over the `n * C` elements of `dout`.""",
    outputs=("dwte", "dwpe"),
    zeroed=("dwte", "dwpe"),
    spec=emb_atomic_spec,
    cases=emb_backward_cases,
    reference=embedding_backward_atomic,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    hints=(
        "Element k of dout is row i = k // C, channel c = k % C.",
        "cuda.atomic.add takes a tuple index for a 2-D array: cuda.atomic.add(dwte, (row, c), value).",
        "The position of row i is i % T.",
    ),
    rtol=EMB_RTOL,
    atol=EMB_ATOL,
    **_ELT,
)


@cuda.jit
def embedding_backward_buckets(dwte, dwpe, dout, order, bucket_start, bucket_token, n_buckets, B, T, C):
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y
    if c >= C:
        return
    ### BEGIN SOLUTION
    s = np.float32(0.0)
    if y < n_buckets:
        # every occurrence of one token, in a fixed order: one thread owns dwte[token, c]
        for k in range(bucket_start[y], bucket_start[y + 1]):
            s += dout[order[k], c]
        dwte[bucket_token[y], c] = s
    else:
        t = y - n_buckets
        for b in range(B):
            s += dout[b * T + t, c]
        dwpe[t, c] = s
    ### END SOLUTION


EMBEDDING_BACKWARD_BUCKETS = Puzzle(
    name="llm2_embedding_backward_buckets",
    title="Embedding backward, deterministic: buckets per token",
    statement="""The same gradients without atomics, in a fixed order. On the host, `bucket_tokens`
groups the positions by token: the positions of token `bucket_token[b]` are `order[bucket_start[b]:
bucket_start[b + 1]]`, increasing. Block `(bx, y)` has one thread per channel `c`: for `y < n_buckets`
it sums its bucket's rows of `dout` and writes `dwte[bucket_token[y], c]` once; for `y >= n_buckets`
it sums position `t = y - n_buckets` over the `B` sequences into `dwpe[t, c]`. Tokens that never occur
keep their zero gradient. No atomics (budget).""",
    outputs=("dwte", "dwpe"),
    zeroed=("dwte",),
    spec=emb_buckets_spec,
    cases=emb_buckets_cases,
    reference=embedding_backward_buckets,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(global_atomics_per_block=0),
    hints=(
        "blockIdx.y picks the job: a token's bucket, or (past n_buckets) a position.",
        "The rows of bucket y are order[k] for k in range(bucket_start[y], bucket_start[y + 1]).",
        "Each output element has exactly one owner thread: a plain store, after the loop.",
    ),
    rtol=EMB_RTOL,
    atol=EMB_ATOL,
    **_ELT,
)


PUZZLES = [EMBEDDING_FORWARD, EMBEDDING_BACKWARD_ATOMIC, EMBEDDING_BACKWARD_BUCKETS]
