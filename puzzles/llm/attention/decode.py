"""Attention, the serving side: one new token per sequence attends over a KV cache (decode), one rung.

    llm3_attn_decode   one block of DB threads per (sequence, head): append the new token's key and
                       value to the cache at position `pos`, then attend over cache rows 0..pos. The
                       threads split the rows (thread t takes rows t, t + DB, ...), each keeps its own
                       online-softmax state (max m, sum l, accumulator acc), and a shared-memory
                       reduction merges the DB states into the output

When a model generates text, each step adds one token. Recomputing attention for the whole prefix
repeats all the work of the step before; a **KV cache** keeps every earlier token's keys and values
(they never change: a token sees only the tokens before it), so a step computes the new token's
query, key and value and one row of attention: O(pos d) work instead of O(pos^2 d). Causal by
construction: the cache holds nothing after `pos` that belongs to this sequence (rows past `pos` are
stale, left from an earlier, longer sequence, and must not be read).

Merging two online-softmax states (m1, l1, a1) and (m2, l2, a2) is exact: with M = max(m1, m2),
l = l1 exp(m1 - M) + l2 exp(m2 - M) and a = a1 exp(m1 - M) + a2 exp(m2 - M). The same merge over
blocks instead of threads, through global memory, is flash-decoding's split-K (Dao et al., 2023),
which a long cache and few heads need to fill a GPU.

Layouts, as the sampler (puzzles/llm/training/decode.py) launches it: `qkv` (B, 3C) is the new
token's row of the QKV projection (head h's query at columns h*hs .. h*hs + hs, its key at C + h*hs,
its value at 2C + h*hs); the caches are (B, NH, TMAX, hs); the output `y` (B, C) has the heads merged
back (head h at columns h*hs ..). Tolerance: common.py's docstring (scores up to S_MAX with hs <= 8).
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from puzzles.llm.attention.common import _TOL, CHAPTER, MAX_D, NEG_INF, S_MAX

DB = 8  # threads per block of the decode kernel (the GPU uses a warp or more: a recompiled copy)


STALE = 3.0  # cache rows past pos hold junk of this size: reading one changes the answer


def decode_spec(k_cache, v_cache, qkv, pos):
    """float64 truth: the caches with the new key/value at row pos, and each head's attention output."""
    B, NH, _, hs = k_cache.shape
    C = NH * hs
    k, v = k_cache.astype(np.float64), v_cache.astype(np.float64)
    row = qkv.astype(np.float64).reshape(B, 3, NH, hs)
    k[:, :, pos], v[:, :, pos] = row[:, 1], row[:, 2]
    s = np.einsum("bhd,bhjd->bhj", row[:, 0], k[:, :, : pos + 1]) / math.sqrt(hs)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = np.einsum("bhj,bhjd->bhd", w, v[:, :, : pos + 1]).reshape(B, C)
    return dict(y=out.astype(np.float32), k_cache=k.astype(np.float32), v_cache=v.astype(np.float32))


def _shapes(rng):
    """(B, NH, hs, TMAX, pos, big): the first case has room after pos (an append one row late is a
    wrong answer there, not an out-of-bounds write) and two heads (a wrong head stride shows)."""
    t1 = int(rng.integers(2 * DB + 3, 3 * DB))
    t3 = int(rng.integers(2 * DB + 2, 3 * DB + 2))
    hs1, pos1 = int(rng.integers(DB + 1, MAX_D + 1)), int(rng.integers(DB + 1, t1 - 2))
    return [
        (2, int(rng.integers(2, 4)), hs1, t1, pos1, 0),
        (1, 1, int(rng.integers(1, 6)), int(rng.integers(2, DB)), 0, 0),  # the first token: only itself
        (1, 2, int(rng.integers(2, 9)), t3, t3 - 1, 1),  # a full cache; scores up to S_MAX
        (int(rng.integers(1, 3)), 2, MAX_D, 2 * DB + 1, 2 * DB - 1, 0),  # pos + 1 a multiple of DB
    ]  # fmt: skip


def decode_inputs(rng, B, NH, hs, tmax, pos, big):
    """The caches (rows < pos: earlier tokens; rows >= pos: stale junk) and the new token's qkv row;
    `big` scales the query so that its largest score is +S_MAX (exp overflows float32 without the
    maximum subtracted)."""
    C = NH * hs
    k = rng.uniform(-1, 1, (B, NH, tmax, hs))
    v = rng.uniform(-2, 2, (B, NH, tmax, hs))
    k[:, :, pos:] = rng.uniform(-STALE, STALE, (B, NH, tmax - pos, hs))
    v[:, :, pos:] = rng.uniform(-STALE, STALE, (B, NH, tmax - pos, hs))
    row = rng.uniform(-1, 1, (B, 3, NH, hs))
    if big:
        keys = np.concatenate([k[:, :, :pos], row[:, 1, :, None]], axis=2)  # what the query sees
        s = np.einsum("bhd,bhjd->bhj", row[:, 0], keys)
        b, h, j = np.unravel_index(np.abs(s).argmax(), s.shape)
        row[b, 0, h] *= np.sign(s[b, h, j]) * S_MAX * math.sqrt(hs) / abs(s[b, h, j])
    f32 = np.float32
    return k.astype(f32), v.astype(f32), row.reshape(B, 3 * C).astype(f32)


def decode_cases(rng):
    cases = []
    for B, NH, hs, tmax, pos, big in _shapes(rng):
        k, v, qkv = decode_inputs(rng, B, NH, hs, tmax, pos, big)
        y = np.zeros((B, NH * hs), np.float32)
        cases.append(Case((NH, B), DB, dict(y=y, k_cache=k, v_cache=v, qkv=qkv, pos=pos)))
    return cases


@cuda.jit
def attn_decode(y, k_cache, v_cache, qkv, pos):
    sm = cuda.shared.array(DB, numba.float32)  # each thread's running maximum ...
    sl = cuda.shared.array(DB, numba.float32)  # ... its sum of exp(score - m) ...
    sacc = cuda.shared.array((DB, MAX_D), numba.float32)  # ... and its accumulator
    qi = cuda.local.array(MAX_D, numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    h = cuda.blockIdx.x
    b = cuda.blockIdx.y
    t = cuda.threadIdx.x
    NH = k_cache.shape[1]
    hs = k_cache.shape[3]
    C = NH * hs
    ### BEGIN SOLUTION
    # 1. append the new token's key and value at row pos, then wait: other threads read that row
    for c in range(t, hs, DB):
        k_cache[b, h, pos, c] = qkv[b, C + h * hs + c]
        v_cache[b, h, pos, c] = qkv[b, 2 * C + h * hs + c]
    cuda.syncthreads()
    # 2. each thread: the online softmax over rows t, t + DB, ... <= pos
    scale = np.float32(1.0) / math.sqrt(np.float32(hs))
    for c in range(hs):
        qi[c] = qkv[b, h * hs + c] * scale
        acc[c] = 0.0
    m = NEG_INF
    lsum = np.float32(0.0)
    for j in range(t, pos + 1, DB):
        x = np.float32(0.0)
        for c in range(hs):
            x += qi[c] * k_cache[b, h, j, c]
        m_new = max(m, x)
        alpha = math.exp(m - m_new)
        p = math.exp(x - m_new)
        lsum = lsum * alpha + p
        for c in range(hs):
            acc[c] = acc[c] * alpha + p * v_cache[b, h, j, c]
        m = m_new
    sm[t] = m  # a thread with no row keeps m = -inf, l = 0: it weighs exp(-inf) = 0 below
    sl[t] = lsum
    for c in range(hs):
        sacc[t, c] = acc[c]
    cuda.syncthreads()
    # 3. merge the DB states, one output column per thread
    for c in range(t, hs, DB):
        mx = sm[0]  # thread 0 always has row 0: the maximum is finite
        for r in range(1, DB):
            mx = max(mx, sm[r])
        total = np.float32(0.0)
        o = np.float32(0.0)
        for r in range(DB):
            w = math.exp(sm[r] - mx)
            total += sl[r] * w
            o += sacc[r, c] * w
        y[b, h * hs + c] = o / total
    ### END SOLUTION


ATTN_DECODE = Puzzle(
    name="llm3_attn_decode",
    title="Decode attention: one new token over a KV cache",
    statement=f"""Generation adds one token per step. Block `(h, b)` (`blockIdx.x` the head, `blockIdx.y`
the sequence), `DB = {DB}` threads, handles head `h` of sequence `b`, whose new token sits at position
`pos` (the same for every sequence; `pos = 0` is the first token). `qkv[b]` is that token's row of the QKV
projection: with `C = NH * hs`, the query of head `h` is `qkv[b, h*hs : h*hs + hs]`, its key starts at
`C + h*hs` and its value at `2*C + h*hs`. The caches `k_cache`, `v_cache` are `(B, NH, TMAX, hs)`; rows
`0 .. pos - 1` hold the earlier tokens' keys and values, rows from `pos` on are stale.

1. **Append**: write the new key and value into row `pos` of both caches (they are outputs too).
2. **Attend** over rows `0 .. pos` (the new token sees itself): score `q . k_j / sqrt(hs)`, softmax,
   weighted sum of the `v_j`. Thread `t` takes rows `t, t + DB, ...` and keeps its own online softmax
   (running maximum `m`, sum `l`, accumulator `acc[:hs]`); `pos + 1` need not be a multiple of `DB`.
3. **Merge** the `DB` states through shared memory (`sm`, `sl`, `sacc`): with `M` the largest `m`,
   `y[b, h*hs + c] = sum_t acc_t[c] exp(m_t - M) / sum_t l_t exp(m_t - M)`.

Scores reach `{S_MAX:.0f}` in one case: `exp` of that overflows float32, so subtract maxima.""",
    outputs=("y", "k_cache", "v_cache"),
    accumulate=("k_cache", "v_cache"),  # the caches start as the case gives them: only row pos changes
    spec=decode_spec,
    cases=decode_cases,
    reference=attn_decode,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    hints=(
        "Rows after pos are not this sequence's: the loop is `for j in range(t, pos + 1, DB)`.",
        "Thread t reads row pos only if pos % DB == t, but another thread wrote it: a barrier after the "
        "append, and another before reading the shared states.",
        "A thread that got no row has m = -inf and l = 0; exp(-inf - M) = 0 removes it from the merge, "
        "as long as M is finite (thread 0 always has row 0).",
        "Head h's key is at column C + h * hs of qkv, not h * 3 * hs + hs: the projection writes all "
        "queries, then all keys, then all values.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


PUZZLES = [ATTN_DECODE]
