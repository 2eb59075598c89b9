"""Transformer kernels 2 on the GPU: the fused cross-entropy over GPT-2's vocabulary, GELU, the
residual add, AdamW over GPT-2 small's parameters and the embeddings, validated then timed against a
device copy and PyTorch's kernels. GOAL is judged by `python -m tools.bench`; GOALS, the notebook's
further goals, by `goals(rows)`.
"""

import numpy as np
from numba import cuda

from helpers import timing
from puzzles.llm.small_ops.adamw import ADAM_ATOL, ADAM_RTOL, adam_state, adamw, adamw_spec, adamw_unrolled
from puzzles.llm.small_ops.common import WARP, U
from puzzles.llm.small_ops.crossentropy import (
    CE_RTOL,
    LOGIT_MAX,
    ce_logits,
    crossentropy_backward_spec,
    crossentropy_softmax_backward,
)
from puzzles.llm.small_ops.embedding import (
    bucket_tokens,
    embedding_backward_atomic,
    embedding_backward_buckets,
    embedding_forward,
    embedding_grads_ref,
    embedding_spec,
)
from puzzles.llm.small_ops.gelu import (
    GELU_ATOL,
    GELU_RTOL,
    gelu_backward,
    gelu_backward_spec,
    gelu_forward,
    gelu_forward_unrolled,
    gelu_ref,
    gelu_x,
)
from puzzles.llm.small_ops.residual import residual_add, residual_spec
from puzzles.llm.softmax_layernorm.softmax import softmax_rtol

GOAL = timing.check_goal({"ceiling": "copy", "fraction": 0.8, "best": "llm2_adamw (unrolled)"})


GOALS = [
    ("llm2_adamw (unrolled)", "copy", 0.8),
    ("llm2_adamw (unrolled)", "torch AdamW (fused)", 1.0),
    ("llm2_crossentropy_softmax_backward", "torch cross_entropy fwd+bwd", 1.0),
    ("llm2_gelu_forward (unrolled)", "torch gelu (tanh)", 1.0),
]


def goals(rows) -> list:
    """[(variant, against, ratio, goal, met)] for GOALS, from the rows of one run (the notebook's table)."""
    return timing.goal_rows(rows, GOALS)


def benchmark(scale: float = 1.0):
    """Validate, then time: the fused cross-entropy over GPT-2's vocabulary (4096 rows of 50257), GELU
    forward/backward and the residual add over 64 Mi floats, AdamW over GPT-2 small's 124M parameters
    (in place), the embedding forward/backward at B*T = 8192 tokens of 768 channels; PyTorch's kernels
    on the same data where torch is present; a device copy as the ceiling. Bytes counted: what each
    kernel must read and write at least."""

    torch, why = timing.torch_or_reason()
    if torch is None:
        print(why)
    dev = cuda.get_current_device()
    sms = dev.MULTIPROCESSOR_COUNT
    rng = np.random.default_rng(21)
    rpb = 4
    ew = (8 * sms, 256)  # element-wise kernels: a grid that fills the GPU, grid-stride

    # ---- cross-entropy, fused with the softmax backward
    def ce_launch(dl, ls, x, t, g):
        ce = crossentropy_softmax_backward
        ce[(x.shape[0] + rpb - 1) // rpb, rpb * WARP](dl, ls, x, t, g, x.shape[0], x.shape[1])

    for rows, cols, large in [(77, 50257, False), (64, 1000, True)]:
        x = ce_logits(rng, rows, cols, large)
        t = rng.integers(0, cols, rows).astype(np.int32)
        g = np.full(rows, 1.0 / rows, np.float32)
        want = crossentropy_backward_spec(x, t, g, rows, cols)
        dl, ls = cuda.device_array_like(x), cuda.device_array(rows, np.float32)
        ce_launch(dl, ls, cuda.to_device(x), cuda.to_device(t), cuda.to_device(g))
        timing.validate(
            f"llm2_crossentropy_softmax_backward ({rows}x{cols})",
            dl.copy_to_host(),
            want["dlogits"],
            rtol=CE_RTOL,
            atol=softmax_rtol(cols) * float(g[0]),
        )
        timing.validate(
            "llm2_crossentropy loss",
            ls.copy_to_host(),
            want["losses"],
            rtol=CE_RTOL,
            atol=softmax_rtol(cols) + 4 * U * LOGIT_MAX,
        )
    rows, cols = max(64, int(4096 * scale)), 50257
    x = ce_logits(rng, rows, cols, False)
    t = rng.integers(0, cols, rows).astype(np.int32)
    d_x, d_t = cuda.to_device(x), cuda.to_device(t)
    d_g = cuda.to_device(np.full(rows, 1.0 / rows, np.float32))
    dl, ls = cuda.device_array_like(x), cuda.device_array(rows, np.float32)
    results = [timing.copy_ceiling(x.nbytes)]
    seconds = timing.time_gpu(lambda: ce_launch(dl, ls, d_x, d_t, d_g))
    results.append(timing.Measurement("llm2_crossentropy_softmax_backward", seconds, bytes=2 * x.nbytes))
    if torch is not None:
        tx = torch.as_tensor(x, device="cuda").requires_grad_(True)
        tt = torch.as_tensor(t.astype(np.int64), device="cuda")

        def torch_ce():
            tx.grad = None
            torch.nn.functional.cross_entropy(tx, tt).backward()

        torch_ce()
        timing.validate(
            "torch cross_entropy grad",
            tx.grad.cpu().numpy()[:8],
            crossentropy_backward_spec(x[:8], t[:8], np.full(8, 1.0 / rows), 8, cols)["dlogits"],
            rtol=CE_RTOL,
            atol=softmax_rtol(cols) / rows,
        )
        seconds = timing.time_gpu(torch_ce)
        results.append(timing.Measurement("torch cross_entropy fwd+bwd", seconds, bytes=2 * x.nbytes))

    # ---- GELU and the residual add
    n = max(1 << 16, int((64 << 20) * scale))
    xs = gelu_x(rng, n)
    dout = rng.uniform(-2, 2, n).astype(np.float32)
    d_xs, d_dout, d_o = cuda.to_device(xs), cuda.to_device(dout), cuda.device_array(n, np.float32)
    gelu_forward[ew](d_o, d_xs, n)
    timing.validate(
        "llm2_gelu_forward",
        d_o.copy_to_host(),
        gelu_ref(xs).astype(np.float32),
        rtol=GELU_RTOL,
        atol=GELU_ATOL,
    )
    gelu_backward[ew](d_o, d_xs, d_dout, n)
    timing.validate(
        "llm2_gelu_backward",
        d_o.copy_to_host(),
        gelu_backward_spec(xs, dout, n),
        rtol=GELU_RTOL,
        atol=GELU_ATOL * 2,
    )
    residual_add[ew](d_o, d_xs, d_dout, n)
    timing.validate("llm2_residual_add", d_o.copy_to_host(), residual_spec(xs, dout, n), rtol=2 * U, atol=0.0)
    gelu_u = timing.specialize(gelu_forward_unrolled, UNROLL=4)
    for k in (n, 1000003, 77):  # full rounds and leftovers
        gelu_u[ew](d_o, d_xs, k)
        timing.validate(
            f"llm2_gelu_forward (unrolled, n={k})",
            d_o.copy_to_host()[:k],
            gelu_ref(xs[:k]).astype(np.float32),
            rtol=GELU_RTOL,
            atol=GELU_ATOL,
        )
    for name, launch, nbytes in [
        ("llm2_gelu_forward", lambda: gelu_forward[ew](d_o, d_xs, n), 8 * n),
        ("llm2_gelu_forward (unrolled)", lambda: gelu_u[ew](d_o, d_xs, n), 8 * n),
        ("llm2_gelu_backward", lambda: gelu_backward[ew](d_o, d_xs, d_dout, n), 12 * n),
        ("llm2_residual_add", lambda: residual_add[ew](d_o, d_xs, d_dout, n), 12 * n),
    ]:
        results.append(timing.Measurement(name, timing.time_gpu(launch), bytes=nbytes))
    if torch is not None:
        F = torch.nn.functional
        tx, td = torch.as_tensor(xs, device="cuda"), torch.as_tensor(dout, device="cuda")
        timing.validate(
            "torch gelu (tanh)",
            F.gelu(tx, approximate="tanh").cpu().numpy(),
            gelu_ref(xs).astype(np.float32),
            rtol=GELU_RTOL,
            atol=GELU_ATOL,
        )
        results.append(
            timing.Measurement(
                "torch gelu (tanh)", timing.time_gpu(lambda: F.gelu(tx, approximate="tanh")), bytes=8 * n
            )
        )
        results.append(
            timing.Measurement(
                "torch gelu_backward (tanh)",
                timing.time_gpu(lambda: torch.ops.aten.gelu_backward(td, tx, approximate="tanh")),
                bytes=12 * n,
            )
        )
        results.append(timing.Measurement("torch a + b", timing.time_gpu(lambda: tx + td), bytes=12 * n))

    # ---- AdamW over GPT-2 small's parameter count, in place (p_out is params, ...)
    hyper = dict(lr=6e-4, beta1=0.9, beta2=0.95, eps=1e-8, weight_decay=0.1)
    adam_u = timing.specialize(adamw_unrolled, UNROLL=4)
    for n_val, step in [(1_000_003, 1), (77_777, 10)]:
        p0 = rng.normal(0, 1, n_val).astype(np.float32)
        g0 = rng.normal(0, 0.1, n_val).astype(np.float32)
        m0, v0 = adam_state(rng, n_val, step - 1, hyper["beta1"], hyper["beta2"], 0.1)
        n_decay = n_val * 2 // 3
        want = adamw_spec(p0, g0, m0, v0, *hyper.values(), step, n_decay, n_val)
        for label, kern in (("llm2_adamw", adamw), ("llm2_adamw (unrolled)", adam_u)):
            dp, dm, dv = cuda.to_device(p0), cuda.to_device(m0), cuda.to_device(v0)
            kern[ew](dp, dm, dv, dp, cuda.to_device(g0), dm, dv, *hyper.values(), step, n_decay, n_val)
            for name, got in (("p", dp), ("m", dm), ("v", dv)):
                timing.validate(
                    f"{label} {name} (n={n_val}, step {step})",
                    got.copy_to_host(),
                    want[f"{name}_out"],
                    rtol=ADAM_RTOL,
                    atol=ADAM_ATOL,
                )
    n_par = max(1 << 16, int(124_439_808 * scale))
    p0 = rng.normal(0, 0.02, n_par).astype(np.float32)
    g0 = rng.normal(0, 0.01, n_par).astype(np.float32)
    dp, dg = cuda.to_device(p0), cuda.to_device(g0)
    dm, dv = cuda.to_device(np.zeros(n_par, np.float32)), cuda.to_device(np.zeros(n_par, np.float32))
    adam_bytes = 7 * 4 * n_par  # read p, g, m, v; write p, m, v
    hp = tuple(hyper.values())
    seconds = timing.time_gpu(lambda: adamw[ew](dp, dm, dv, dp, dg, dm, dv, *hp, 1, n_par, n_par))
    results.append(timing.Measurement("llm2_adamw", seconds, bytes=adam_bytes))
    seconds = timing.time_gpu(lambda: adam_u[ew](dp, dm, dv, dp, dg, dm, dv, *hp, 1, n_par, n_par))
    results.append(timing.Measurement("llm2_adamw (unrolled)", seconds, bytes=adam_bytes))
    dp = dg = dm = dv = None  # free 2 GB before PyTorch makes its copies
    if torch is not None:
        tp = torch.nn.Parameter(torch.as_tensor(p0, device="cuda"))
        tp.grad = torch.as_tensor(g0, device="cuda")
        opt = torch.optim.AdamW(
            [tp],
            lr=hyper["lr"],
            betas=(hyper["beta1"], hyper["beta2"]),
            eps=hyper["eps"],
            weight_decay=hyper["weight_decay"],
            fused=True,
        )
        results.append(timing.Measurement("torch AdamW (fused)", timing.time_gpu(opt.step), bytes=adam_bytes))
        del tp, opt

    # ---- embeddings, GPT-2 small: vocabulary 50257, 1024 positions, 768 channels, batch 8
    B, T, C, V = 8, 1024, 768, 50257
    nt = max(T, int(B * scale) * T)
    tokens = rng.integers(0, V, nt).astype(np.int32)
    tokens[rng.random(nt) < 0.3] = 13  # a frequent token: many collisions, as in real text
    wte = rng.normal(0, 0.02, (V, C)).astype(np.float32)
    wpe = rng.normal(0, 0.01, (T, C)).astype(np.float32)
    d_tok, d_wte, d_wpe = cuda.to_device(tokens), cuda.to_device(wte), cuda.to_device(wpe)
    out = cuda.device_array((nt, C), np.float32)
    embedding_forward[ew](out, d_tok, d_wte, d_wpe, nt, T, C)
    timing.validate(
        "llm2_embedding_forward",
        out.copy_to_host(),
        embedding_spec(tokens, wte, wpe, nt, T, C),
        rtol=2 * U,
        atol=0.0,
    )
    seconds = timing.time_gpu(lambda: embedding_forward[ew](out, d_tok, d_wte, d_wpe, nt, T, C))
    results.append(timing.Measurement("llm2_embedding_forward", seconds, bytes=3 * nt * C * 4))
    dout = rng.uniform(-1, 1, (nt, C)).astype(np.float32)
    d_dout = cuda.to_device(dout)
    dwte, dwpe = embedding_grads_ref(dout, tokens, V, T)
    order, start, tok = bucket_tokens(tokens)
    d_order, d_start, d_btok = cuda.to_device(order), cuda.to_device(start), cuda.to_device(tok)
    g_wte, g_wpe = cuda.to_device(np.zeros((V, C), np.float32)), cuda.to_device(np.zeros((T, C), np.float32))
    buckets_grid = ((C + 255) // 256, len(tok) + T)
    big = dict(rtol=(nt + 4) * U, atol=(nt + 4) * U * nt)
    for label, launch in [
        (
            "llm2_embedding_backward_atomic",
            lambda: embedding_backward_atomic[ew](g_wte, g_wpe, d_dout, d_tok, nt, T, C),
        ),
        (
            "llm2_embedding_backward_buckets",
            lambda: embedding_backward_buckets[buckets_grid, 256](
                g_wte, g_wpe, d_dout, d_order, d_start, d_btok, len(tok), nt // T, T, C
            ),
        ),
    ]:
        g_wte.copy_to_device(np.zeros((V, C), np.float32))
        g_wpe.copy_to_device(np.zeros((T, C), np.float32))
        launch()
        timing.validate(f"{label} dwte", g_wte.copy_to_host(), dwte.astype(np.float32), **big)
        timing.validate(f"{label} dwpe", g_wpe.copy_to_host(), dwpe.astype(np.float32), **big)
        # timed without re-zeroing (the values grow; the work does not change)
        results.append(timing.Measurement(label, timing.time_gpu(launch), bytes=2 * nt * C * 4))
    return results
