"""The transformer track's cases reach the regime each lesson is about on every seed (seeds 0-9),
so that no verdict depends on the seed (issue 23, classes 3, 10 and 19).

Numerics: a lesson about overflow, underflow, cancellation or masked rows is only taught if the cases
contain the input where the naive formula breaks. Each test evaluates the naive formula in float32
(NumPy, sums accumulated one term at a time as a kernel's loop does) on the puzzle's own cases and
shows that at least one case per seed fails the puzzle's tolerance; then the mutant writing that
formula in a kernel is rejected, for its stated reason, on every seed.

Sizes and collisions: a kernel assuming that one block (or one warp, or one tile) covers a row, and
an embedding backward adding without an atomic where tokens repeat, are rejected on every seed.
"""

import numpy as np
import pytest
from support import controls

import puzzles
from helpers.check import check

SEEDS = range(10)


def _cases(name, seed):
    return puzzles.get(name).cases(np.random.default_rng(seed))


def _wrong(name, got, want) -> bool:
    p = puzzles.get(name)
    with np.errstate(all="ignore"):
        return not np.allclose(got, want, rtol=p.rtol, atol=p.atol)  # a NaN or inf is wrong


def _seq_sum(a, axis=-1):
    """float32 sum one term at a time (a kernel's loop), not NumPy's pairwise sum."""
    return np.cumsum(a, axis=axis, dtype=np.float32).take(-1, axis=axis)


def _naive_softmax(x):
    e = np.exp(x.astype(np.float32))  # no max subtracted
    return e / _seq_sum(e)[..., None]


def _masked_softmax_no_guard(x):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)  # exp(-inf - (-inf)) = NaN on a fully masked row
    return e / _seq_sum(e)[..., None]


def _ce_from_probability(logits, targets):
    x = logits.astype(np.float32)
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    p = e[np.arange(len(targets)), targets] / _seq_sum(e)
    return -np.log(p)  # p underflows to 0 where the target is far below the maximum: inf


def _one_pass_layernorm(x, w, b):
    n = np.float32(x.shape[1])
    mu = _seq_sum(x) / n
    var = _seq_sum(x * x) / n - mu * mu  # E[x^2] - E[x]^2: cancels when the mean is large
    rs = np.float32(1) / np.sqrt(np.maximum(var, 0) + np.float32(1e-5))
    return (x - mu[:, None]) * rs[:, None] * w + b


def _expected(name, case, output):
    p = puzzles.get(name)
    want = p.spec(**{n: case.args[n] for n in p.signature if n not in p.outputs})
    return want[output] if isinstance(want, dict) else want


def _naive(name, case):
    """(what the naive formula gives, what the puzzle expects) on one case, for one compared output."""
    a = case.args
    if name == "llm1_softmax_three_pass":
        return _naive_softmax(a["x"]), _expected(name, case, "out")
    if name == "llm1_softmax_block":
        return _masked_softmax_no_guard(a["x"]), _expected(name, case, "out")
    if name.startswith("llm2_crossentropy"):
        return _ce_from_probability(a["logits"], a["targets"]), _expected(name, case, "losses")
    if name == "llm1_layernorm_forward":
        return _one_pass_layernorm(a["x"], a["weight"], a["bias"]), _expected(name, case, "out")
    if name == "llm4_residual_layernorm":
        return _one_pass_layernorm(a["x"] + a["y"], a["weight"], a["bias"]), _expected(name, case, "out")
    if name == "llm3_attn_softmax":
        return _naive_softmax(a["s"]), _expected(name, case, "p")
    raise KeyError(name)


# (puzzle, the mutant writing the naive formula in a kernel): one per lesson and formula
LESSONS = [
    ("llm1_softmax_three_pass", "three_pass_no_max"),  # overflow: exp(x) without the max
    ("llm1_softmax_block", "block_masked_row_nan"),  # masked rows: exp(-inf - -inf)
    ("llm2_crossentropy_forward", "ce_log_of_probability"),  # underflow: log(exp(x_t - m) / d)
    ("llm2_crossentropy_softmax_backward", "cesb_log_of_probability"),
    ("llm1_layernorm_forward", "ln_one_pass_variance"),  # cancellation: E[x^2] - E[x]^2
    ("llm4_residual_layernorm", "one-pass variance E[h^2] - E[h]^2"),
    ("llm3_attn_softmax", None),  # overflow; its kernel-level mutant is the fused row's below
    ("llm3_attn_row", "no max subtraction: exp overflows on large scores"),
]


@pytest.mark.parametrize("name", sorted({n for n, _ in LESSONS} - {"llm3_attn_row"}))
def test_naive_formula_fails_in_float32_on_every_seed(name):
    for seed in SEEDS:
        with np.errstate(all="ignore"):  # the overflow, the underflow and the NaN are the point
            assert any(_wrong(name, *_naive(name, c)) for c in _cases(name, seed)), (name, seed)


def test_attention_cases_overflow_exp_on_every_seed():
    """The fused kernels' cases (shared by llm3_attn_row, _flash, _flash_tiled): a score above 88.7."""
    from puzzles.llm.attention import scores_spec

    for seed in SEEDS:
        assert any(
            np.abs(scores_spec(c.args["q"], c.args["k"], 0)).max() > 88.8
            for c in _cases("llm3_attn_row", seed)
        )


def test_masked_cases_hold_a_fully_masked_row_on_every_seed():
    for seed in SEEDS:
        assert any(np.isneginf(c.args["x"]).all(axis=1).any() for c in _cases("llm1_softmax_block", seed)), (
            seed
        )


def _mutant(name, mutant):
    """(kernel, exception, detail) of the mutant named `mutant` in the puzzle's mutants file."""
    table = controls(puzzles.module_of(name)).MUTANTS[name]
    _, kernel, exc, detail = next(e for e in table if e[0] == mutant)
    return kernel, exc, detail


# (puzzle, mutant): a size assumption broken by a case of every seed, or a lost update (the fix: an atomic)
ASSUMPTIONS = [
    ("llm1_softmax_block", "block_row_fits_block"),  # rows of 196+ columns, blocks of 64
    ("llm1_softmax_online", "online_row_fits_warp"),  # rows longer than a warp
    ("llm1_layernorm_forward", "ln_row_fits_warp"),
    ("llm2_crossentropy_forward", "ce_row_fits_warp"),
    ("llm2_embedding_backward_atomic", "emb_token_rows_plain_add"),  # dwte[tok, c] += g: tokens repeat
    ("llm3_attn_pv", "pv_d_fits_block"),  # head dimension past the block
    ("llm4_split_heads", "split_row_fits_block"),
    ("llm4_merge_heads", "merge_row_fits_block"),
]


@pytest.mark.parametrize(
    "name, mutant", [(n, m) for n, m in LESSONS if m] + ASSUMPTIONS, ids=lambda v: str(v)
)
def test_mutant_rejected_on_every_seed(name, mutant):
    """Seeds 3-9 here: test_exercises rejects every mutant of the tables on seeds 0-2 (their SEEDS)."""
    kernel, exc, detail = _mutant(name, mutant)
    assert tuple(controls(puzzles.module_of(name)).SEEDS[name]) == (0, 1, 2)
    for seed in SEEDS[3:]:
        with pytest.raises(exc) as info:
            check(puzzles.get(name), kernel, seed=seed, gpu=False)
        assert type(info.value) is exc, f"{mutant} (seed {seed}): {info.value}"
        if detail is not None:
            allowed = detail if isinstance(detail, tuple) else (detail,)
            assert type(info.value.diagnostic) in allowed, f"{mutant} (seed {seed}): {info.value}"
