"""Cross-entropy over the rows of a logits matrix, one warp per row, two rungs:

    llm2_crossentropy_forward            losses[r] = logsumexp(logits[r]) - logits[r, target]
    llm2_crossentropy_softmax_backward   the loss and d(loss)/d(logits) = (softmax - onehot) * dloss in
                                         one kernel (the fused kernel llm.c uses)

Tolerances (u = 2**-24, one ulp <= 2u relative; the specs are float64): loss = m + log(d) - x_t with
d the sum of exp(x - m) over the row (relative error (n + 109)u, as for the softmax), log's 1 ulp,
and the sums of numbers as large as the logits (|x| <= LOGIT_MAX): CE_ATOL = (n + 109)u + 4u *
LOGIT_MAX, CE_RTOL = 4u. The gradient (p - [j = t]) * dloss is the softmax's bound times dloss
(<= DLOSS_MAX) in absolute terms (p - 1 cancels near p = 1).

The simulator's math functions compute in float64 and round to float32 at the next float32 operation
(0.5 ulp, where the GPU's expf, logf and tanhf may be 2 ulp); the bounds above take the GPU's.
"""

import math

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.small_ops.common import _ELT, FULL_MASK, NEG_INF, WARP, U, warp_per_row

CE_MAX_COLS = 256


LOGIT_MAX = 112.0


DLOSS_MAX = 2.0


CE_RTOL = 4 * U


CE_ATOL = (CE_MAX_COLS + 109) * U + 4 * U * LOGIT_MAX


CE_GRAD_ATOL = (CE_MAX_COLS + 109) * U * DLOSS_MAX


def _logsumexp(x):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]


def crossentropy_spec(logits, targets, rows, cols):
    lse = _logsumexp(logits)
    return (lse - logits.astype(np.float64)[np.arange(rows), targets]).astype(np.float32)


def crossentropy_backward_spec(logits, targets, dloss, rows, cols):
    x = logits.astype(np.float64)
    lse = _logsumexp(logits)
    p = np.exp(x - lse[:, None])
    p[np.arange(rows), targets] -= 1.0
    return dict(
        dlogits=(p * dloss.astype(np.float64)[:, None]).astype(np.float32),
        losses=(lse - x[np.arange(rows), targets]).astype(np.float32),
    )


def ce_logits(rng, rows, cols, large):
    x = rng.normal(0, rng.uniform(1, 4), (rows, cols))
    if large is True:  # logits around +-100: exp overflows (or the sum underflows) without the max subtracted
        # both signs on every draw: rows alternate between +100 (overflow) and -100 (underflow)
        sign = rng.permutation(np.resize([1.0, -1.0], rows))[:, None]
        x = rng.uniform(-12, 12, (rows, cols)) + sign * rng.uniform(95, 100, (rows, 1))
    return x.astype(np.float32)


def far_targets(rng, x, targets):
    """Every row's target logit 106 or more below the row's maximum (one column near +7, the target
    near -102; |x| stays under LOGIT_MAX): exp(x_t - m) underflows float32 (to 0 past a gap of
    103.3), so a kernel that forms the probability p_t and then takes its log returns inf."""
    rows, cols = x.shape
    r = np.arange(rows)
    top = (targets + 1 + rng.integers(0, cols - 1, rows)) % cols  # any column but the target
    x[r, top] = rng.uniform(6, 8, rows)
    x[r, targets] = -rng.uniform(100, 104, rows)
    return x


def ce_inputs(rng, rows, cols, kind):
    """(logits, targets) of one case; kind: False (normal), True (large logits), "far" (far_targets)."""
    x = ce_logits(rng, rows, cols, kind)
    targets = rng.integers(0, cols, rows).astype(np.int32)
    if kind == "far":
        x = far_targets(rng, x, targets)
    return x, targets


def ce_shapes(rng):
    # the last case is the regime of the lesson: a kernel taking log(p_t) fails it on every seed
    return [
        (1, int(rng.integers(40, 100)), False),
        (int(rng.integers(3, 6)), 1, False),
        (int(rng.integers(3, 6)), int(rng.choice([31, 33, rng.integers(34, 70)])), False),
        (int(rng.integers(2, 5)), int(rng.integers(20, 60)), True),
        (2, int(rng.integers(CE_MAX_COLS - 60, CE_MAX_COLS + 1)), False),
        (int(rng.integers(2, 5)), int(rng.integers(20, 60)), "far"),
    ]


def ce_cases(rng):
    out = []
    for rows, cols, kind in ce_shapes(rng):
        logits, targets = ce_inputs(rng, rows, cols, kind)
        grid, block = warp_per_row(rows)
        out.append(
            Case(
                grid,
                block,
                dict(
                    losses=np.zeros(rows, np.float32),
                    logits=logits,
                    targets=targets,
                    rows=rows,
                    cols=cols,
                ),
            )
        )
    return out


def ce_backward_cases(rng):
    out = []
    for rows, cols, kind in ce_shapes(rng):
        logits, targets = ce_inputs(rng, rows, cols, kind)
        grid, block = warp_per_row(rows)
        out.append(
            Case(
                grid,
                block,
                dict(
                    dlogits=np.zeros((rows, cols), np.float32),
                    losses=np.zeros(rows, np.float32),
                    logits=logits,
                    targets=targets,
                    dloss=(rng.uniform(0.5, DLOSS_MAX, rows) / rows).astype(np.float32),
                    rows=rows,
                    cols=cols,
                ),
            )
        )
    return out


_CE_TOL = dict(rtol=CE_RTOL, atol=CE_GRAD_ATOL)


@cuda.jit
def crossentropy_forward(losses, logits, targets, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    # -log softmax(x)_t = log(sum exp(x - m)) + m - x_t, with the online (m, d) of the softmax
    m = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = logits[r, j]
        if v > m:
            d = d * math.exp(m - v) + np.float32(1.0)
            m = v
        else:
            d += math.exp(v - m)
    offset = 16
    while offset > 0:
        m2 = cuda.shfl_xor_sync(FULL_MASK, m, offset)
        d2 = cuda.shfl_xor_sync(FULL_MASK, d, offset)
        mn = max(m, m2)
        if mn != NEG_INF:  # two lanes that saw no column (rows narrower than the warp)
            d = d * math.exp(m - mn) + d2 * math.exp(m2 - mn)
        m = mn
        offset //= 2
    if lane == 0:
        losses[r] = math.log(d) + m - logits[r, targets[r]]
    ### END SOLUTION


CROSSENTROPY_FORWARD = Puzzle(
    name="llm2_crossentropy_forward",
    title="Cross-entropy loss, one warp per row",
    statement="""`losses[r] = -log(softmax(logits[r])[targets[r]])`, computed stably as
`log(sum_j exp(x_j - m)) + m - x_t` with `m` the row's maximum: never form the probabilities. One warp
per row (two rows per block); the online `(m, d)` pair of the softmax gives `m` and the sum in one
pass. Lane 0 writes the row's loss.""",
    outputs=("losses",),
    spec=crossentropy_spec,
    cases=ce_cases,
    reference=crossentropy_forward,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(shared_bytes=0),
    hints=(
        "The online softmax gives (m, d) with d = sum exp(x - m); combine lanes with shfl_xor_sync.",
        "log(softmax_t) = x_t - m - log(d): no exp of a large number, no log of a tiny one.",
        "Only one lane writes losses[r].",
    ),
    rtol=CE_RTOL,
    atol=CE_ATOL,
    **_ELT,
)


@cuda.jit
def crossentropy_softmax_backward(dlogits, losses, logits, targets, dloss, rows, cols):
    lane = cuda.threadIdx.x % WARP
    r = cuda.blockIdx.x * (cuda.blockDim.x // WARP) + cuda.threadIdx.x // WARP
    if r >= rows:
        return
    ### BEGIN SOLUTION
    m = NEG_INF
    d = np.float32(0.0)
    for j in range(lane, cols, WARP):
        v = logits[r, j]
        if v > m:
            d = d * math.exp(m - v) + np.float32(1.0)
            m = v
        else:
            d += math.exp(v - m)
    offset = 16
    while offset > 0:
        m2 = cuda.shfl_xor_sync(FULL_MASK, m, offset)
        d2 = cuda.shfl_xor_sync(FULL_MASK, d, offset)
        mn = max(m, m2)
        if mn != NEG_INF:  # two lanes that saw no column (rows narrower than the warp)
            d = d * math.exp(m - mn) + d2 * math.exp(m2 - mn)
        m = mn
        offset //= 2
    t = targets[r]
    g = dloss[r]
    inv = np.float32(1.0) / d
    # d loss / d logit_j = softmax_j - [j == t]: the probabilities are never stored
    for j in range(lane, cols, WARP):
        p = math.exp(logits[r, j] - m) * inv
        dlogits[r, j] = (p - np.float32(1.0) if j == t else p) * g
    if lane == 0:
        losses[r] = math.log(d) + m - logits[r, t]
    ### END SOLUTION


CROSSENTROPY_SOFTMAX_BACKWARD = Puzzle(
    name="llm2_crossentropy_softmax_backward",
    title="Cross-entropy backward fused with the softmax",
    statement="""The loss and its gradient in one kernel: `dlogits[r, j] = (softmax(logits[r])_j - [j ==
targets[r]]) * dloss[r]` (for a mean over rows, `dloss[r] = 1 / rows`), and `losses[r]` as before. The
probabilities are recomputed from `(m, d)` as they are written, never stored: two reads of each
logit and one write (budget).""",
    outputs=("dlogits", "losses"),
    spec=crossentropy_backward_spec,
    cases=ce_backward_cases,
    reference=crossentropy_softmax_backward,
    float64="reject",  # float32 numerics and speed are the lesson: no float64 arithmetic
    budget=Budget(global_reads=lambda case: 2 * ((case.args["cols"] + WARP - 1) // WARP) + 3, shared_bytes=0),
    hints=(
        "First pass: the online (m, d). Second pass: p = exp(x - m) / d, minus 1 at the target column.",
        "Multiply by dloss[r]: the upstream gradient of this row's loss.",
    ),
    rtol=CE_RTOL,
    atol=max(CE_ATOL, CE_GRAD_ATOL),
    **_ELT,
)


PUZZLES = [CROSSENTROPY_FORWARD, CROSSENTROPY_SOFTMAX_BACKWARD]
