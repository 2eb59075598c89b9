"""Softmax over the rows of a float32 matrix, five rungs (kernel signature `(out, x, rows, cols)`):

    llm1_softmax_three_pass   one thread per row, three passes (max, sum, write)
    llm1_softmax_block        one block of TPB threads per row: two tree reductions in shared memory
    llm1_softmax_warp         one warp per row: shuffle butterflies, no shared memory, no barrier
    llm1_softmax_online       one warp per row, max and sum in one pass (two reads per element)
    llm1_softmax_warp_cached  one warp per row, the row in registers (one read per element)

Masked rows: a row whose entries are all -inf (every position masked) has no distribution to
normalise; `exp(-inf - (-inf))` is NaN, and a NaN spreads through everything after it (one padded
sequence would poison a whole batch's loss). These kernels define its output as zeros: the row
attends to nothing. (PyTorch's softmax returns NaN there; FlashAttention-style kernels return zeros.)

Tolerance, derived from float32 arithmetic (unit roundoff u = 2**-24; the NumPy spec computes in
float64, so all the error is the kernel's): each term exp(x - m) carries the rounding of x - m
(relative u|x - m|; only terms with |x - m| < 104 survive underflow), the GPU's expf (2 ulp, CUDA C++
Programming Guide, accuracy of single-precision functions), then a sum of n positive terms in any
order (at most (n - 1)u relative, first order) and one division (u; 2u where a reciprocal is
multiplied). So relative error <= (n + 104 + 4 + 2)u; the bound at the largest rows of the cases is
SOFTMAX_RTOL. Results below FLT_MIN (2**-126) are subnormal and keep fewer bits (or are flushed with
fast math): SOFTMAX_ATOL = FLT_MIN.

The simulator computes float32 array arithmetic in float32, but `math.exp` returns a Python float
(float64, correctly rounded) rounded to float32 at the next operation with a float32 value: 0.5 ulp
where the GPU's expf may be 2 ulp. The tolerance uses the GPU's (larger) error: it covers both.
"""

import math

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.softmax_layernorm.common import (
    CHAPTER,
    FLT_MIN,
    FULL_MASK,
    NEG_INF,
    PER_LANE,
    ROW_THREADS,
    ROWS_PER_BLOCK,
    TPB,
    WARP,
    U,
    warp_per_row,
)

SOFTMAX_MAX_COLS = 256


SOFTMAX_RTOL = (SOFTMAX_MAX_COLS + 104 + 4 + 2) * U  # 2.2e-5


SOFTMAX_ATOL = FLT_MIN


def softmax_rtol(cols: int) -> float:
    """The derived bound of the module docstring at any row length."""
    return (cols + 104 + 4 + 2) * U


def softmax_spec(x, rows, cols):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    masked = np.isneginf(m[:, 0])
    e = np.exp(x - np.where(np.isneginf(m), 0.0, m))
    s = e.sum(axis=1, keepdims=True)
    y = np.where(masked[:, None], 0.0, e / np.where(s == 0, 1.0, s))
    return y.astype(np.float32)


def thread_per_row(rows):
    return (rows + ROW_THREADS - 1) // ROW_THREADS, ROW_THREADS


def block_per_row(rows):
    return rows, TPB


def softmax_rows(rng, rows, cols, kind):
    """Logits of one kind: 'normal', 'masked' (some -inf, one row all -inf), 'large' (|x| ~ 100: exp
    overflows float32 without the max subtracted, or underflows to a zero sum)."""
    if kind == "large":
        # both signs on every draw: rows alternate between +100 (overflow) and -100 (underflow)
        sign = rng.permutation(np.resize([1.0, -1.0], rows))[:, None]
        x = rng.uniform(-12, 12, (rows, cols)) + sign * rng.uniform(95, 110, (rows, 1))
    else:
        x = rng.normal(0, rng.uniform(1, 4), (rows, cols))
    x = x.astype(np.float32)
    if kind == "masked":
        x[rng.random((rows, cols)) < 0.3] = -np.inf
        x[rng.integers(rows)] = -np.inf
    return x


def softmax_cases_for(launch, max_cols=SOFTMAX_MAX_COLS):
    def cases(rng):
        shapes = [
            (1, int(rng.integers(40, 100)), "normal"),  # one row
            (int(rng.integers(3, 6)), 1, "normal"),  # one feature
            (int(rng.integers(3, 6)), int(rng.choice([31, 33, rng.integers(34, 70)])), "masked"),
            (int(rng.integers(2, 5)), int(rng.integers(20, 60)), "large"),
            (2, int(rng.integers(max_cols - 60, max_cols + 1)), "normal"),  # long rows
        ]
        out = []
        for rows, cols, kind in shapes:
            x = softmax_rows(rng, rows, cols, kind)
            grid, block = launch(rows)
            out.append(
                Case(grid, block, dict(out=np.zeros((rows, cols), np.float32), x=x, rows=rows, cols=cols))
            )
        return out

    return cases


_SOFTMAX_TOL = dict(rtol=SOFTMAX_RTOL, atol=SOFTMAX_ATOL)


_SM = dict(outputs=("out",), spec=softmax_spec, chapter=CHAPTER, **_SOFTMAX_TOL)


@cuda.jit
def softmax_three_pass(out, x, rows, cols):
    r = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if r < rows:
        m = NEG_INF
        for j in range(cols):
            m = max(m, x[r, j])
        if m == NEG_INF:
            # every entry masked: no distribution to normalise (and exp(-inf - -inf) is NaN)
            for j in range(cols):
                out[r, j] = 0.0
            return
        # subtracting the max makes every exponent <= 0: no overflow, and the largest term is 1
        s = np.float32(0.0)
        for j in range(cols):
            s += math.exp(x[r, j] - m)
        for j in range(cols):
            out[r, j] = math.exp(x[r, j] - m) / s


SOFTMAX_THREE_PASS = Puzzle(
    name="llm1_softmax_three_pass",
    title="Softmax: three passes, one thread per row",
    statement="""`out[r, :] = softmax(x[r, :])` for every row of a `rows x cols` float32 matrix. One
thread per row makes three passes: the maximum `m`, the sum `s` of `exp(x - m)`, then
`exp(x - m) / s`. A row whose entries are all `-inf` (fully masked) gets zeros.""",
    cases=softmax_cases_for(thread_per_row),
    reference=softmax_three_pass,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    **_SM,
)


@cuda.jit
def softmax_block(out, x, rows, cols):
    part = cuda.shared.array(TPB, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    ### BEGIN SOLUTION
    m = NEG_INF
    for j in range(t, cols, bd):
        m = max(m, x[r, j])
    part[t] = m
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] = max(part[t], part[t + stride])
        stride //= 2
    cuda.syncthreads()
    m = part[0]
    cuda.syncthreads()  # everyone has read the max before part[] is reused for the sum
    s = np.float32(0.0)
    if m != NEG_INF:
        for j in range(t, cols, bd):
            s += math.exp(x[r, j] - m)
    part[t] = s
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    cuda.syncthreads()
    s = part[0]
    for j in range(t, cols, bd):
        out[r, j] = math.exp(x[r, j] - m) / s if m != NEG_INF else np.float32(0.0)
    ### END SOLUTION


SOFTMAX_BLOCK = Puzzle(
    name="llm1_softmax_block",
    title="Softmax: one block per row, block reductions",
    statement=f"""The same softmax with one block of `TPB = {TPB}` threads per row (`grid = rows`). Each
thread covers columns `t, t + blockDim, ...`; the block's maximum and then its sum are tree
reductions in the shared array `part` (the maximum first, the same array reused for the sum). A row
of all `-inf` gets zeros. Budget: `TPB` floats of shared memory.""",
    cases=softmax_cases_for(block_per_row),
    reference=softmax_block,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(shared_bytes=TPB * 4),
    hints=(
        "Two reductions, the same shape: a max tree, then a sum tree over the same shared array.",
        "After the max tree, every thread reads part[0]; a barrier must separate those reads from the "
        "writes of the sum that reuse part[].",
        "If the maximum is -inf the whole row is masked: skip the exponentials and write 0.",
    ),
    **_SM,
)


@cuda.jit
def softmax_warp(out, x, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return  # the whole warp leaves together: r is the same for its 32 lanes
    m = NEG_INF
    for j in range(lane, cols, WARP):
        m = max(m, x[r, j])
    # butterfly: after offsets 16, 8, 4, 2, 1 every lane holds the warp's maximum
    offset = 16
    while offset > 0:
        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, offset))
        offset //= 2
    s = np.float32(0.0)
    if m != NEG_INF:
        for j in range(lane, cols, WARP):
            s += math.exp(x[r, j] - m)
    offset = 16
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2
    for j in range(lane, cols, WARP):
        out[r, j] = math.exp(x[r, j] - m) / s if m != NEG_INF else np.float32(0.0)


SOFTMAX_WARP = Puzzle(
    name="llm1_softmax_warp",
    title="Softmax: one warp per row, shuffles",
    statement=f"""One warp per row (`{ROWS_PER_BLOCK}` rows per block): lane `l` covers columns
`l, l + 32, ...`, and the two reductions are butterflies of `cuda.shfl_xor_sync`, which leave the
result in every lane: no shared memory, no barrier.""",
    cases=softmax_cases_for(warp_per_row),
    reference=softmax_warp,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(shared_bytes=0),
    **_SM,
)


@cuda.jit
def softmax_online(out, x, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    # one pass: m is the running maximum, d the sum of exp(x - m) for the current m
    m = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = x[r, j]
        if v > m:
            d = d * math.exp(m - v) + np.float32(1.0)  # rescale the old sum to the new maximum
            m = v
        elif v != NEG_INF:
            d += math.exp(v - m)
    # combine (m, d) pairs across the warp: rescale both sums to the larger maximum
    offset = 16
    while offset > 0:
        m2 = cuda.shfl_xor_sync(FULL_MASK, m, offset)
        d2 = cuda.shfl_xor_sync(FULL_MASK, d, offset)
        mn = max(m, m2)
        if mn != NEG_INF:
            d = d * math.exp(m - mn) + d2 * math.exp(m2 - mn)
        m = mn
        offset //= 2
    for j in range(lane, cols, WARP):
        out[r, j] = math.exp(x[r, j] - m) / d if m != NEG_INF else np.float32(0.0)
    ### END SOLUTION


SOFTMAX_ONLINE = Puzzle(
    name="llm1_softmax_online",
    title="Online softmax: max and sum in one pass",
    statement="""One warp per row, as before, but the maximum and the sum come from **one** pass over
the row: each lane keeps a running maximum `m` and `d`, the sum of `exp(x - m)` for the current `m`;
when a larger value arrives, `d` is rescaled by `exp(m_old - m_new)`. The lanes' `(m, d)` pairs are
combined with `shfl_xor_sync` the same way; a second pass writes `exp(x - m) / d`. Two reads of each
element instead of three (enforced). A row of all `-inf` gets zeros.""",
    cases=softmax_cases_for(warp_per_row),
    reference=softmax_online,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(global_reads=lambda case: 2 * ((case.args["cols"] + WARP - 1) // WARP), shared_bytes=0),
    hints=(
        "Start from m = -inf, d = 0. For a value v > m: d = d * exp(m - v) + 1, then m = v; otherwise "
        "d += exp(v - m).",
        "exp(-inf - (-inf)) is NaN: a -inf value adds nothing, so skip it rather than exponentiate it.",
        "Merging (m1, d1) and (m2, d2): m = max(m1, m2), d = d1 * exp(m1 - m) + d2 * exp(m2 - m). Use "
        "shfl_xor_sync so that every lane ends with the row's pair.",
    ),
    **_SM,
)


@cuda.jit
def softmax_warp_cached(out, x, rows, cols):
    # the row is read from global memory once: each lane keeps its PER_LANE elements in registers
    v = cuda.local.array(PER_LANE, numba.float32)
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    m = NEG_INF
    for k in range(PER_LANE):  # a constant trip count: unrolled, v[k] lives in a register
        j = lane + k * WARP
        v[k] = x[r, j] if j < cols else NEG_INF
        m = max(m, v[k])
    offset = 16
    while offset > 0:
        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, offset))
        offset //= 2
    s = np.float32(0.0)
    if m != NEG_INF:
        for k in range(PER_LANE):
            v[k] = math.exp(v[k] - m)
            s += v[k]
    offset = 16
    while offset > 0:
        s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        offset //= 2
    # one division per row, then multiplications (a division per element costs more than the load)
    inv = np.float32(1.0) / s if m != NEG_INF else np.float32(0.0)
    for k in range(PER_LANE):
        j = lane + k * WARP
        if j < cols:
            out[r, j] = v[k] * inv if m != NEG_INF else np.float32(0.0)


SOFTMAX_WARP_CACHED = Puzzle(
    name="llm1_softmax_warp_cached",
    title="Softmax with the row in registers",
    statement=f"""One warp per row, each lane holding its `PER_LANE = {PER_LANE}` elements in a local
array (registers, since every index is a constant after unrolling): one read and one write of each element,
which is all a softmax must move. Rows of up to `32 * PER_LANE` columns.""",
    cases=softmax_cases_for(warp_per_row, 32 * PER_LANE),
    reference=softmax_warp_cached,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(global_reads=PER_LANE, shared_bytes=0),
    **_SM,
)


PUZZLES = [SOFTMAX_THREE_PASS, SOFTMAX_BLOCK, SOFTMAX_WARP, SOFTMAX_ONLINE, SOFTMAX_WARP_CACHED]
