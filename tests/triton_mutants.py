"""Known-wrong Triton kernels (each a real mistake) and correct ones written differently, for the
Triton notebook's checks (puzzles/triton/check.py): tests/test_triton.py runs them in the interpreter
where Triton is installed, tests/run_triton_gpu.py on a GPU. Not under tests/mutants/: these are not
puzzles of the registry. TRITON_MUTANTS = {op: [(name, kernel, expected verdict)]}."""

from __future__ import annotations

from helpers.check import InputModified, WrongAnswer
from puzzles.triton.lang import jit, tl


@jit
def add_no_block_offset(out_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) + tl.arange(0, BLOCK)  # forgot * BLOCK: programs overlap
    mask = i < n
    tl.store(out_ptr + i, tl.load(a_ptr + i, mask=mask) + tl.load(b_ptr + i, mask=mask), mask=mask)


@jit
def add_unmasked(out_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    # no mask: the last program reads and writes past n (for the sanitizer only: in the interpreter
    # or on a GPU it touches memory that is not the tensors')
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(a_ptr + i) + tl.load(b_ptr + i))


@jit
def softmax_no_max(out_ptr, x_ptr, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    x = tl.load(x_ptr + row * cols + c, mask=mask, other=-float("inf"))
    e = tl.exp(x)  # overflows for logits near 100
    tl.store(out_ptr + row * cols + c, e / tl.sum(e, axis=0), mask=mask)


@jit
def softmax_pad_zero(out_ptr, x_ptr, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    x = tl.load(x_ptr + row * cols + c, mask=mask, other=0.0)  # padding joins the max and the sum
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    tl.store(out_ptr + row * cols + c, tl.where(s > 0, e / s, 0.0), mask=mask)


@jit
def softmax_in_place(out_ptr, x_ptr, rows, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    x = tl.load(x_ptr + row * cols + c, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    y = tl.where(s > 0, e / s, 0.0)
    tl.store(x_ptr + row * cols + c, y, mask=mask)  # the input overwritten too
    tl.store(out_ptr + row * cols + c, y, mask=mask)


@jit
def softmax_reciprocal(out_ptr, x_ptr, rows, cols, BLOCK: tl.constexpr):
    # correct: exp2 with log2(e) folded in, and one reciprocal per row
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    x = tl.load(x_ptr + row * cols + c, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)
    e = tl.exp2((x - m) * 1.4426950408889634)
    s = tl.sum(e, axis=0)
    inv = tl.where(s > 0, 1.0 / s, 0.0)
    tl.store(out_ptr + row * cols + c, e * inv, mask=mask)


@jit
def matmul_last_tile_only(p_ptr, m_ptr, n_ptr, rows, inner, cols, BM: tl.constexpr, BN: tl.constexpr,
                          BK: tl.constexpr):  # fmt: skip
    r = tl.program_id(1) * BM + tl.arange(0, BM)
    c = tl.program_id(0) * BN + tl.arange(0, BN)
    kk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, inner, BK):
        k = k0 + kk
        a = tl.load(m_ptr + r[:, None] * inner + k[None, :], mask=(r[:, None] < rows) & (k[None, :] < inner),
                    other=0.0)  # fmt: skip
        b = tl.load(n_ptr + k[:, None] * cols + c[None, :], mask=(k[:, None] < inner) & (c[None, :] < cols),
                    other=0.0)  # fmt: skip
        acc = tl.dot(a, b, input_precision="ieee")  # = instead of +=
    tl.store(p_ptr + r[:, None] * cols + c[None, :], acc, mask=(r[:, None] < rows) & (c[None, :] < cols))


@jit
def matmul_pointer_blocks(p_ptr, m_ptr, n_ptr, rows, inner, cols, BM: tl.constexpr, BN: tl.constexpr,
                          BK: tl.constexpr):  # fmt: skip
    # correct: pointer tiles advanced by BK each step, a tile count instead of a range over K
    r = tl.program_id(1) * BM + tl.arange(0, BM)
    c = tl.program_id(0) * BN + tl.arange(0, BN)
    kk = tl.arange(0, BK)
    a_ptrs = m_ptr + r[:, None] * inner + kk[None, :]
    b_ptrs = n_ptr + kk[:, None] * cols + c[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for t in range(0, tl.cdiv(inner, BK)):
        left = inner - t * BK
        a = tl.load(a_ptrs, mask=(r[:, None] < rows) & (kk[None, :] < left), other=0.0)
        b = tl.load(b_ptrs, mask=(kk[:, None] < left) & (c[None, :] < cols), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BK
        b_ptrs += BK * cols
    tl.store(p_ptr + r[:, None] * cols + c[None, :], acc, mask=(r[:, None] < rows) & (c[None, :] < cols))


@jit
def layernorm_padding_in_variance(res_ptr, out_ptr, mean_ptr, rstd_ptr, x_ptr, y_ptr, w_ptr, b_ptr, rows,
                                  cols, eps, BLOCK: tl.constexpr):  # fmt: skip
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    h = tl.load(x_ptr + row * cols + c, mask=mask, other=0.0) + tl.load(y_ptr + row * cols + c, mask=mask,
                                                                         other=0.0)  # fmt: skip
    tl.store(res_ptr + row * cols + c, h, mask=mask)
    mean = tl.sum(h, axis=0) / cols
    dev = h - mean  # the padding lanes add (0 - mean)^2 to the variance
    rstd = 1.0 / tl.sqrt(tl.sum(dev * dev, axis=0) / cols + eps)
    w = tl.load(w_ptr + c, mask=mask)
    b = tl.load(b_ptr + c, mask=mask)
    tl.store(out_ptr + row * cols + c, dev * rstd * w + b, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@jit
def flash_no_rescale(out_ptr, q_ptr, k_ptr, v_ptr, T, d, scale, CAUSAL: tl.constexpr, BR: tl.constexpr,
                     BC: tl.constexpr, BD: tl.constexpr):  # fmt: skip
    qb = tl.program_id(0)
    head = tl.program_id(1) * T * d
    i = qb * BR + tl.arange(0, BR)
    col = tl.arange(0, BD)
    qmask = (i[:, None] < T) & (col[None, :] < d)
    q = tl.load(q_ptr + head + i[:, None] * d + col[None, :], mask=qmask, other=0.0) * scale
    m = tl.full((BR,), -float("inf"), tl.float32)
    lsum = tl.zeros((BR,), tl.float32)
    acc = tl.zeros((BR, BD), tl.float32)
    last = tl.minimum(T, (qb + 1) * BR) if CAUSAL else T
    for k0 in range(0, last, BC):
        j = k0 + tl.arange(0, BC)
        kvmask = (j[:, None] < T) & (col[None, :] < d)
        k = tl.load(k_ptr + head + j[:, None] * d + col[None, :], mask=kvmask, other=0.0)
        v = tl.load(v_ptr + head + j[:, None] * d + col[None, :], mask=kvmask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee")
        ok = j[None, :] < T
        if CAUSAL:
            ok = ok & (j[None, :] <= i[:, None])
        s = tl.where(ok, s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        lsum = lsum + tl.sum(p, axis=1)  # the old sum and accumulator kept their old maximum
        acc = acc + tl.dot(p, v, input_precision="ieee")
        m = m_new
    tl.store(out_ptr + head + i[:, None] * d + col[None, :], acc / lsum[:, None], mask=qmask)


TRITON_MUTANTS = {
    "triton_vector_add": [("no block offset", add_no_block_offset, WrongAnswer)],
    "triton_softmax": [
        ("no maximum subtracted", softmax_no_max, WrongAnswer),
        ("padding loaded as 0", softmax_pad_zero, WrongAnswer),
        ("writes its input", softmax_in_place, InputModified),
    ],
    "triton_matmul": [("acc = instead of +=", matmul_last_tile_only, WrongAnswer)],
    "triton_residual_layernorm": [("padding in the variance", layernorm_padding_in_variance, WrongAnswer)],
    "triton_flash_attention": [("no rescale by exp(m_old - m_new)", flash_no_rescale, WrongAnswer)],
}

TRITON_VARIANTS = {
    "triton_softmax": [("exp2 and a reciprocal", softmax_reciprocal)],
    "triton_matmul": [("pointer tiles advanced by BK", matmul_pointer_blocks)],
}
