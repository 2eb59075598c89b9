"""Sampling through a KV cache (puzzles/llm/training/kv_cache.py) and schedule-free AdamW in the
training loop (schedule_free.py): the cached sampler gives the recomputing sampler's tokens and logits
(NumPy, and the course's kernels on the simulator), a wrong cache is caught by the same comparison,
bad prompts and positions get their messages; schedule-free AdamW's loop step is the exercise's float64
formula, the kernels' step equals NumPy's, evaluation uses x; tools.train's new options parse."""

import numpy as np
import pytest

from puzzles.llm.small_ops import sf_adamw as sf_op
from puzzles.llm.training import data, kv_cache, loop, reference
from puzzles.llm.training.schedule_free import ScheduleFree
from tools import train

CHECK = reference.CONFIGS["check"]
LOGIT_TOL = 1e-4  # float32 logits through two attention paths (tools/train_sample.py says why)


def _trained(cfg, steps=8, **kw):
    be = loop.NumpyBackend(cfg, reference.init_params(cfg, 0), **kw)
    toks = data.load_tokens()
    for i in range(steps):
        be.step(*data.batch(toks, 2, cfg.T, np.random.default_rng(i)), 3e-3)
    return be


@pytest.fixture(scope="module")
def tiny():
    return _trained(reference.Config(L=2, C=16, NH=2, T=12))


def _prefix_logits(be, seq, start):
    """The full forward pass's logits after each token from `start` on (the recomputing sampler's)."""
    full = be.logits(np.asarray(seq, np.int32)[None])[0]
    return full[start:]


def test_cached_logits_equal_the_full_forward(tiny):
    cfg = tiny.cfg
    prompt = data.encode("To be")
    got = []
    toks = kv_cache.generate(kv_cache.decoder_for(tiny), prompt, cfg.T - len(prompt), cfg.T, 1, 1.0, got)
    want = _prefix_logits(tiny, np.concatenate([prompt, toks]), len(prompt) - 1)
    assert len(got) == cfg.T - len(prompt)
    assert np.abs(np.array(got) - want[: len(got)]).max() <= LOGIT_TOL


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_cached_tokens_equal_the_recomputing_samplers(tiny, temperature):
    cfg = tiny.cfg
    prompt = data.encode("ROMEO:")
    n = cfg.T + 5  # past the context: the window slides, as reference.sample's does
    want = reference.sample(tiny.logits, prompt, n, cfg.T, seed=2, temperature=temperature)
    got = kv_cache.generate(kv_cache.decoder_for(tiny), prompt, n, cfg.T, 2, temperature)
    assert np.array_equal(got, want), (data.decode(got), data.decode(want))


def test_a_cache_that_reads_stale_rows_is_caught(tiny, monkeypatch):
    good = kv_cache.attend_one

    def stale(qkv, k_cache, v_cache, pos, NH):  # attends one row past pos (a stale row)
        return good(qkv, k_cache, v_cache, min(pos + 1, k_cache.shape[2] - 1), NH)

    monkeypatch.setattr(kv_cache, "attend_one", stale)
    cfg = tiny.cfg
    prompt = data.encode("To be")
    dec = kv_cache.decoder_for(tiny)
    dec.k[:] = 5.0  # what an earlier, longer text left in the cache
    got = []
    toks = kv_cache.generate(dec, prompt, 4, cfg.T, 1, 1.0, got)
    want = _prefix_logits(tiny, np.concatenate([prompt, toks]), len(prompt) - 1)
    assert np.abs(np.array(got) - want[: len(got)]).max() > 10 * LOGIT_TOL


def test_the_kernel_decoder_matches_on_the_simulator(sim_engine):
    from puzzles.llm.training.kernels import KernelBackend

    params = reference.init_params(CHECK, 0)
    kb = KernelBackend(CHECK, params)
    prompt = data.encode("A")
    got = []
    toks = kv_cache.generate(kv_cache.decoder_for(kb), prompt, CHECK.T - 1, CHECK.T, 0, 1.0, got)
    assert np.array_equal(toks, reference.sample(kb.logits, prompt, CHECK.T - 1, CHECK.T, seed=0))
    ref = loop.NumpyBackend(CHECK, params)
    want = _prefix_logits(ref, np.concatenate([prompt, toks]), 0)
    assert np.abs(np.array(got) - want[: len(got)]).max() <= LOGIT_TOL


def test_bad_prompts_and_positions_get_their_messages(tiny):
    dec = kv_cache.decoder_for(tiny)
    T = tiny.cfg.T
    with pytest.raises(kv_cache.CacheError, match=rf"the prompt has {T + 1} tokens, more than .* T={T}"):
        kv_cache.generate(dec, np.zeros(T + 1, np.int32), 3, T)
    with pytest.raises(kv_cache.CacheError, match="the prompt is empty"):
        kv_cache.generate(dec, np.zeros(0, np.int32), 3, T)
    with pytest.raises(
        kv_cache.CacheError, match=rf"cache position {T} is outside the model's context 0..{T - 1}"
    ):
        dec.step(0, T)


def test_schedule_free_loop_step_is_the_exercises_formula():
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(0, 1, (3, 4)), "b": rng.normal(0, 1, 5)}
    sf = ScheduleFree(weight_decay=0.1, warmup=3, beta2=0.99)
    y = {k: v.copy() for k, v in params.items()}
    flat = {k: (v.ravel().copy(), v.ravel().copy(), np.zeros(v.size)) for k, v in params.items()}
    for t in range(1, 6):
        g = {k: rng.normal(0, 0.3, v.shape) for k, v in params.items()}
        sf.step(y, g, t, 1e-2)
        ws = sf_op.weight_sum(1e-2, 0.99, 3, t)
        for k, (z, x, v) in flat.items():
            nd = z.size if params[k].ndim == 2 else 0
            yy, z2, x2, v2 = sf_op.sf_adamw_ref(
                z, x, v, g[k].ravel(), 1e-2, 0.9, 0.99, 1e-8, 0.1, t, 3, ws, nd
            )
            flat[k] = (z2, x2, v2)
            assert np.allclose(y[k].ravel(), yy, rtol=1e-12, atol=1e-12)
    # evaluation uses x, not the y the gradients were taken at
    x_of = sf.eval_params(y)
    assert all(np.allclose(x_of[k].ravel(), flat[k][1]) for k in params)
    assert not np.allclose(x_of["w"], y["w"])


def test_schedule_free_on_the_kernels_equals_numpy(sim_engine):
    from puzzles.llm.training.kernels import KernelBackend

    params = reference.init_params(CHECK, 0)
    kw = dict(steps=3, B=2, lr=1e-2, eval_every=3, sample_chars=0, log=lambda s: None)
    opt = dict(optimizer="sf-adamw", warmup=2, weight_decay=0.1)
    kb = KernelBackend(CHECK, params, **opt)
    nb = loop.NumpyBackend(CHECK, params, **opt)
    got, want = loop.train(kb, CHECK, **kw), loop.train(nb, CHECK, **kw)
    assert np.allclose(got.losses, want.losses, rtol=0, atol=1e-5), (got.losses, want.losses)
    assert abs(got.val[-1][1] - want.val[-1][1]) < 1e-4  # both validate at x
    a, b = kb.host_params(), nb.host_params()
    assert max(float(np.abs(a[k] - b[k]).max()) for k in a) < 1e-5


def test_train_options_parse_and_bad_ones_are_refused(capsys):
    args = train.parse(["--optimizer", "sf-adamw", "--warmup", "10", "--kv-cache"])
    assert (args.optimizer, args.warmup, args.kv_cache) == ("sf-adamw", 10, True)
    with pytest.raises(SystemExit) as e:
        train.parse(["--optimizer", "sgd"])
    assert e.value.code == 2 and "invalid choice: 'sgd'" in capsys.readouterr().err
    assert train.main(["--warmup", "5", "--steps", "1"]) == 2  # warmup without sf-adamw
    assert "with --optimizer sf-adamw only" in capsys.readouterr().err
    assert train.main(["--optimizer", "sf-adamw", "--torch-compare", "--steps", "1"]) == 2
    assert "runs PyTorch's AdamW" in capsys.readouterr().err
    with pytest.raises(loop.TrainingError, match="unknown optimizer 'sgd'"):
        loop.NumpyBackend(CHECK, reference.init_params(CHECK, 0), optimizer="sgd")


def test_the_cli_samples_through_the_cache_and_trains_schedule_free(capsys):
    argv = ["--size", "check", "--steps", "4", "--batch", "2", "--eval-every", "2", "--sample-chars", "12"]
    assert train.main(argv + ["--kv-cache", "--optimizer", "sf-adamw", "--warmup", "2"]) == 0
    out = capsys.readouterr().out
    assert "final validation loss (sf-adamw)" in out and "--- sample at the end ---" in out
    assert train.main(["--size", "check", "--sample-speed"]) == 0
    out = capsys.readouterr().out
    assert "tokens the same (greedy and sampled)" in out and "kv cache" in out


def test_the_decode_kernel_at_gpu_sizes_on_the_simulator(sim_engine):
    """KernelDecoder's GPU copy (a warp a block, head size 32 as the medium model's) on the simulator."""
    from numba import cuda

    from helpers import timing
    from puzzles.llm.attention import decode as op

    kern = timing.specialize(op.attn_decode, DB=32, MAX_D=32)
    k, v, qkv = op.decode_inputs(np.random.default_rng(0), 2, 2, 32, 50, 37, 0)
    want = op.decode_spec(k, v, qkv, 37)
    y, dk, dv = cuda.to_device(np.zeros((2, 64), np.float32)), cuda.to_device(k), cuda.to_device(v)
    kern[(2, 2), 32](y, dk, dv, cuda.to_device(qkv), 37)
    assert np.allclose(y.copy_to_host(), want["y"], rtol=1e-4, atol=3e-4)
    assert np.array_equal(dk.copy_to_host(), want["k_cache"]) and np.array_equal(
        dv.copy_to_host(), want["v_cache"]
    )
