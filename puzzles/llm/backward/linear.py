"""The linear layer's backward pass, `out = inp @ w + b` with w stored (in, out), five rungs:

    llm5_matmul_nt             dinp = dout @ w^T: the forward's tiled product with the second
                               operand read transposed (also the tied output layer, x @ wte^T)
    llm5_matmul_tn             dw = inp^T @ dout: tiled like the forward, the sum runs over rows
    llm5_matmul_tn_split       the same with the rows split across blocks (grid z): each block adds
                               its partial tile with atomics into a zeroed dw
    llm5_bias_grad_atomic      db = dout summed over rows: each thread sums a strip of rows of one
                               column, then one atomic add
    llm5_bias_grad_two_stage   the same without atomics: one block per column, each thread a strided
                               partial sum (stage 1), a tree in shared memory (stage 2); deterministic

Tolerance: each output is a float32 sum of K products bounded by 1 (common.dot_tol).
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from puzzles.llm.backward.common import CHAPTER, SPLIT_ROWS, TILE, TPB, blocks, dot_tol, uniform

MAX_K = 48
_TOL = dot_tol(MAX_K, 1.0)


def nt_spec(a, b):
    return (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)


def tn_spec(a, b):
    return (a.astype(np.float64).T @ b.astype(np.float64)).astype(np.float32)


def bias_spec(dout):
    return dout.astype(np.float64).sum(0).astype(np.float32)


def shapes(rng):
    """(rows, k, cols) per case, drawn per seed: not multiples of the tile, one row, one column, a
    long sum, several tiles each way."""
    r = rng.integers
    return [
        (int(r(5, 12)), int(r(5, 14)), int(r(9, 19))),
        (1, int(r(2, 7)), int(r(2, 6))),
        (int(r(2, 9)), 1, int(r(3, 8))),
        (int(r(3, 7)), int(r(TILE + 1, MAX_K)), 1),
        (2 * TILE + 1, int(r(2 * TILE, 3 * TILE)), 2 * TILE + int(r(1, TILE))),
    ]


def nt_cases(rng):
    # out (n, c) = a (n, k) @ b (c, k)^T
    return [
        Case(
            (blocks(c, TILE), blocks(n, TILE)),
            (TILE, TILE),
            dict(out=np.zeros((n, c), np.float32), a=uniform(rng, (n, k)), b=uniform(rng, (c, k))),
        )
        for n, k, c in shapes(rng)
    ]


def tn_cases(rng):
    # out (c, o) = a (k, c)^T @ b (k, o): the sum runs over the k rows
    return [
        Case(
            (blocks(o, TILE), blocks(c, TILE)),
            (TILE, TILE),
            dict(out=np.zeros((c, o), np.float32), a=uniform(rng, (k, c)), b=uniform(rng, (k, o))),
        )
        for c, k, o in shapes(rng)
    ]


def split_cases(rng):
    cases = []
    for c, k, o in shapes(rng):
        k = max(k, SPLIT_ROWS + 1)  # at least two row blocks: they must add, not overwrite
        cases.append(
            Case(
                (blocks(o, TILE), blocks(c, TILE), blocks(k, SPLIT_ROWS)),
                (TILE, TILE),
                dict(out=np.zeros((c, o), np.float32), a=uniform(rng, (k, c)), b=uniform(rng, (k, o))),
            )
        )
    return cases


def bias_cases(rng, two_stage=False):
    cases = []
    for n, _, c in shapes(rng):
        n = n + SPLIT_ROWS  # several strips of rows
        dout = uniform(rng, (n, c))
        grid = c if two_stage else (blocks(c, TPB), blocks(n, SPLIT_ROWS))
        cases.append(Case(grid, TPB, dict(db=np.zeros(c, np.float32), dout=dout)))
    return cases


@cuda.jit
def matmul_nt(out, a, b):
    # out[n, c] = a[n, :] . b[c, :]; both tiles are loaded along their rows (coalesced)
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    b_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE + tx
    n = cuda.blockIdx.y * TILE + ty
    rows, K = a.shape
    cols = b.shape[0]
    bc = cuda.blockIdx.x * TILE + ty  # the row of b this thread loads
    acc = np.float32(0.0)
    for k0 in range(0, K, TILE):
        a_t[ty, tx] = a[n, k0 + tx] if n < rows and k0 + tx < K else np.float32(0.0)
        ### BEGIN SOLUTION
        b_t[ty, tx] = b[bc, k0 + tx] if bc < cols and k0 + tx < K else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[ty, kk] * b_t[tx, kk]
        cuda.syncthreads()
        ### END SOLUTION
    if n < rows and c < cols:
        out[n, c] = acc


MATMUL_NT = Puzzle(
    name="llm5_matmul_nt",
    title="Backward of a linear layer 1: dinp = dout @ w^T",
    statement=f"""`out[n, c] = a[n, :] . b[c, :]`, i.e. `a @ b.T`: with `a = dout` (N x C_out) and
`b = w` (C_in x C_out) it is the gradient of the layer's input; with `a = x`, `b = wte` it is GPT-2's
tied output layer. Tiled (`TILE = {TILE}`): the block's tile of `b` is `TILE` of its rows, loaded
along the rows (`b_t[ty, tx] = b[block's row ty, k0 + tx]`); the transpose happens in the read from
shared memory. `a`'s tile and the write are given.""",
    outputs=("out",),
    spec=nt_spec,
    cases=nt_cases,
    reference=matmul_nt,
    budget=Budget(shared_bytes=2 * TILE * TILE * 4),
    hints=(
        "Thread (ty, tx) computes out[n, c] with c = blockIdx.x * TILE + tx: it needs row c of b, which "
        "is row tx of the block's tile.",
        "So the inner loop reads b_t[tx, kk], not b_t[kk, tx].",
        "Two barriers per tile, as in the forward.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


@cuda.jit
def matmul_tn(out, a, b):
    # out[c, o] = a[:, c] . b[:, o]: the sum over the rows of both
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    b_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    c = cuda.blockIdx.y * TILE + ty
    K, cols = a.shape
    outs = b.shape[1]
    ac = cuda.blockIdx.y * TILE + tx  # the column of a this thread loads
    acc = np.float32(0.0)
    for k0 in range(0, K, TILE):
        ### BEGIN SOLUTION
        a_t[ty, tx] = a[k0 + ty, ac] if k0 + ty < K and ac < cols else np.float32(0.0)
        b_t[ty, tx] = b[k0 + ty, o] if k0 + ty < K and o < outs else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[kk, ty] * b_t[kk, tx]
        cuda.syncthreads()
        ### END SOLUTION
    if c < cols and o < outs:
        out[c, o] = acc


MATMUL_TN = Puzzle(
    name="llm5_matmul_tn",
    title="Backward of a linear layer 2: dw = inp^T @ dout",
    statement=f"""`out[c, o] = a[:, c] . b[:, o]`, i.e. `a.T @ b`: with `a = inp` (N x C_in) and
`b = dout` (N x C_out), the weight gradient, shaped like `w`. The sum runs over the N rows (every
position of the batch). Tiled like the forward (`TILE = {TILE}`): per step, TILE rows of `a` (the
block's TILE columns) and of `b`, both loaded along their rows.""",
    outputs=("out",),
    spec=tn_spec,
    cases=tn_cases,
    reference=matmul_tn,
    budget=Budget(shared_bytes=2 * TILE * TILE * 4),
    hints=(
        "a_t[ty, tx] = a[k0 + ty, block's column tx]: row index first, as a is stored.",
        "Thread (ty, tx) owns output row c = blockIdx.y * TILE + ty: its a values are a_t[kk, ty].",
    ),
    chapter=CHAPTER,
    **_TOL,
)


@cuda.jit
def matmul_tn_split(out, a, b):
    # as matmul_tn, but block z sums only rows [z * SPLIT_ROWS, (z + 1) * SPLIT_ROWS)
    a_t = cuda.shared.array((TILE, TILE), numba.float32)
    b_t = cuda.shared.array((TILE, TILE), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    o = cuda.blockIdx.x * TILE + tx
    c = cuda.blockIdx.y * TILE + ty
    K, cols = a.shape
    outs = b.shape[1]
    ac = cuda.blockIdx.y * TILE + tx
    start = cuda.blockIdx.z * SPLIT_ROWS
    stop = min(K, start + SPLIT_ROWS)
    acc = np.float32(0.0)
    for k0 in range(start, stop, TILE):
        a_t[ty, tx] = a[k0 + ty, ac] if k0 + ty < stop and ac < cols else np.float32(0.0)
        b_t[ty, tx] = b[k0 + ty, o] if k0 + ty < stop and o < outs else np.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_t[kk, ty] * b_t[kk, tx]
        cuda.syncthreads()
    ### BEGIN SOLUTION
    if c < cols and o < outs:
        cuda.atomic.add(out, (c, o), acc)
    ### END SOLUTION


MATMUL_TN_SPLIT = Puzzle(
    name="llm5_matmul_tn_split",
    title="Backward of a linear layer 3: dw with the rows split across blocks",
    statement=f"""The same `out = a.T @ b`, but N (batch times positions) is large and the output
(`C_in x C_out`) small: too few blocks to fill a GPU. So the rows are split too: block `z` of the grid's
third dimension sums rows `[z * SPLIT_ROWS, (z + 1) * SPLIT_ROWS)` (`SPLIT_ROWS = {SPLIT_ROWS}`) and
adds its partial tile to `out`, which starts at zero. Several blocks add to the same element: the
loop is given, write the last step.""",
    outputs=("out",),
    zeroed=("out",),
    spec=tn_spec,
    cases=split_cases,
    reference=matmul_tn_split,
    hints=(
        "out[c, o] += acc is a read, an add and a write: two blocks doing it at once lose one sum.",
        "cuda.atomic.add(out, (c, o), acc).",
    ),
    chapter=CHAPTER,
    **_TOL,
)


@cuda.jit
def bias_grad_atomic(db, dout):
    # thread: one column, one strip of SPLIT_ROWS rows (grid y); its sum goes in with one atomic
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    rows, cols = dout.shape
    start = cuda.blockIdx.y * SPLIT_ROWS
    if col < cols:
        ### BEGIN SOLUTION
        acc = np.float32(0.0)
        for r in range(start, min(rows, start + SPLIT_ROWS)):
            acc += dout[r, col]
        cuda.atomic.add(db, col, acc)
        ### END SOLUTION


BIAS_GRAD_ATOMIC = Puzzle(
    name="llm5_bias_grad_atomic",
    title="Backward of a linear layer 4: the bias gradient with atomics",
    statement=f"""`db[o] = sum over rows n of dout[n, o]`: the bias is added to every row, so its
gradient sums every row's. Grid `(column blocks, row strips)`: thread `col` of strip `y` sums rows
`[y * SPLIT_ROWS, (y + 1) * SPLIT_ROWS)` (`SPLIT_ROWS = {SPLIT_ROWS}`) of its column, then adds the sum
to `db` (zeroed) with one atomic.""",
    outputs=("db",),
    zeroed=("db",),
    spec=bias_spec,
    cases=bias_cases,
    reference=bias_grad_atomic,
    budget=Budget(global_atomics_per_block=TPB),  # one per thread
    hints=("Sum in a register, one cuda.atomic.add per thread at the end.",),
    chapter=CHAPTER,
    **_TOL,
)


@cuda.jit
def bias_grad_two_stage(db, dout):
    # block: one column; stage 1 strided partial sums, stage 2 a tree in shared memory
    part = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    col = cuda.blockIdx.x
    rows = dout.shape[0]
    ### BEGIN SOLUTION
    acc = np.float32(0.0)
    for r in range(t, rows, TPB):
        acc += dout[r, col]
    part[t] = acc
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            part[t] += part[t + stride]
        cuda.syncthreads()
        stride //= 2
    ### END SOLUTION
    if t == 0:
        db[col] = part[0]


BIAS_GRAD_TWO_STAGE = Puzzle(
    name="llm5_bias_grad_two_stage",
    title="Backward of a linear layer 5: the bias gradient, deterministic",
    statement=f"""The same `db = dout.sum(0)` without atomics, so that two runs give the same bits:
one block of `TPB = {TPB}` threads per column. Stage 1: thread `t` sums rows `t, t + TPB, ...`;
stage 2: the block's `TPB` partial sums are added by a tree in shared memory (PMPP chapter 10), and
thread 0 writes the total.""",
    outputs=("db",),
    spec=bias_spec,
    cases=lambda rng: bias_cases(rng, two_stage=True),
    reference=bias_grad_two_stage,
    budget=Budget(global_atomics_per_block=0),
    hints=(
        "Stride TPB over the rows in stage 1 (consecutive threads read consecutive rows of one column).",
        "A barrier after writing part[t] and after each level of the tree.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


PUZZLES = [MATMUL_NT, MATMUL_TN, MATMUL_TN_SPLIT, BIAS_GRAD_ATOMIC, BIAS_GRAD_TWO_STAGE]
