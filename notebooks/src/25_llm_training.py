# %% [markdown]
# # Transformer kernels 6: train a GPT-2 with your kernels
#
# Every kernel of a GPT-2 training step now exists in this course: the forward pass (notebooks 20 to
# 23), the backward pass (notebook 24), the cross-entropy loss and AdamW (notebook 21). This notebook
# closes the loop: it trains a small GPT-2 on four plays of Shakespeare, byte by byte, with those
# kernels, checks its first steps against PyTorch from the same initial weights on the same batches,
# and samples text from it before and after.
#
# What runs where:
#
# - **on a CPU** (no GPU): the same model in NumPy (`puzzles/llm/training/reference.py`, written for
#   this course: the truth the kernels are checked against) trains a very small model for a few
#   seconds; one step of the kernel model runs on the simulator, with a kernel of yours swapped in,
#   and is compared with NumPy;
# - **on a GPU**: the kernels train the course's model size (two layers, `C = 64`, four heads, a
#   context of 64 bytes, batch 8) for 300 steps, PyTorch trains its twin alongside, and a training
#   step is timed against PyTorch eager and `torch.compile`.
#
# The command line does the same without the notebook: `python -m tools.train --help`.

# %% setup

# %%
import math
import time

import numpy as np
from numba import cuda

import puzzles
from helpers import timing
from puzzles.llm import backward as bw
from puzzles.llm.small_ops import GELU_C, GELU_K
from puzzles.llm.training import data, kernels, kv_cache, loop, reference

on_gpu = timing.skip_reason() is None

# %% [markdown]
# ## The data
#
# Four plays (*Macbeth*, *Julius Caesar*, *The Tempest*, *Twelfth Night*; the Open Shakespeare
# edition, CC BY 2.5, attribution in `puzzles/llm/training/data/SHAKESPEARE.md`), 433 KB of plain
# text shipped with the course: nothing is downloaded. The tokenizer is the simplest there is: a
# token is a byte, the vocabulary has 256 entries. (GPT-2's own tokenizer has 50257 and fetches its
# tables over the network.) The last tenth of the text is the validation set, never trained on.

# %%
tokens = data.load_tokens()
train_tokens, val_tokens = data.split(tokens)
print(f"{len(tokens)} bytes: {len(train_tokens)} to train on, {len(val_tokens)} to validate")
x, y = data.batch(train_tokens, 2, 48, np.random.default_rng(0))
print(repr(data.decode(x[0])))
print(repr(data.decode(y[0])), "<- the targets: the same window, one byte on")

# %% [markdown]
# ## The model and its first loss
#
# GPT-2: token plus position embeddings; per layer a causal attention and an MLP, each behind a
# LayerNorm and around a residual connection; a final LayerNorm; the logits are the output times the
# token embedding again (the weights are **tied**). GPT-2's initialisation: weights drawn from
# `N(0, 0.02)`, the two output projections of each layer scaled down by `sqrt(2 L)`. At the start the
# model knows nothing: every byte about equally likely, a loss near `log(256) = 5.55`.

# %%
for name, cfg in reference.CONFIGS.items():
    print(f"{name:7s} L={cfg.L} C={cfg.C:3d} NH={cfg.NH} T={cfg.T:3d}: {cfg.n_params():8d} parameters")
cfg = reference.CONFIGS["check"]
params = reference.init_params(cfg, 0)
_, loss, _ = reference.forward(params, *data.batch(train_tokens, 4, cfg.T, np.random.default_rng(1)), cfg)
print(f"first loss {loss:.3f}, log(256) = {np.log(256):.3f}")

# %% [markdown]
# ## Your kernel in the model
#
# The model built from kernels (`kernels.KernelBackend`) takes any of its kernels by name from you.
# Below, a GELU backward written here (the one of notebook 21, written your way) replaces the
# course's; one training step (forward, loss, backward, AdamW) runs with it, and the loss and the
# updated weights are compared with the NumPy model's step. On a CPU it runs on the simulator at the
# smallest size (a second or two per step).


# %%
@cuda.jit
def gelu_backward(dx, x, dout, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = x[i]
        th = math.tanh(GELU_K * (v + GELU_C * v * v * v))
        dth = (np.float32(1.0) - th * th) * GELU_K * (np.float32(1.0) + np.float32(3.0) * GELU_C * v * v)
        dx[i] = dout[i] * np.float32(0.5) * (np.float32(1.0) + th + v * dth)


size = "small" if on_gpu else "check"
cfg = reference.CONFIGS[size]
params = reference.init_params(cfg, 0)
batch = data.batch(train_tokens, 2, cfg.T, np.random.default_rng(2))
mine = kernels.KernelBackend(cfg, params, kernels={"gelu_backward": gelu_backward}, tile=16 if on_gpu else 4)
print({k: v for k, v in mine.sources().items() if v == "yours"})
ref = loop.NumpyBackend(cfg, params)
l_mine, l_ref = mine.step(*batch, 1e-3), ref.step(*batch, 1e-3)
after = mine.host_params()
diffs = np.concatenate([np.abs(after[k] - ref.params[k]).ravel() for k in after])
print(f"loss: kernels {l_mine:.6f}, NumPy {l_ref:.6f}")
print(
    f"weights after the step: largest difference {diffs.max():.1e}; above 1e-5: {int((diffs > 1e-5).sum())}"
)
assert abs(l_mine - l_ref) < 1e-4 and diffs.max() <= 2.5e-3

# %% [markdown]
# Why the weights may differ by `2.5e-3`: AdamW's first step moves every weight by almost exactly the
# learning rate `1e-3` (`m / sqrt(v)` is the gradient's sign), so the weights agree to rounding,
# except where a gradient is so near zero that float32 rounding flips its sign: there the two steps
# differ by up to twice the learning rate. Over many steps such differences are why two
# implementations' losses drift apart slowly, and why the comparison with PyTorch below is judged on
# the first ten steps.
#
# ## Training
#
# The loop: a batch of `B` random windows of `T + 1` bytes, a step, and every so often the loss on
# the same few validation batches. On a CPU the NumPy model trains a tiny model for a few seconds
# (`python -m tools.train` trains the `tiny` size for 200 steps in under a minute); on a GPU the
# kernels train the `small` size for 300 steps.

# %%
if on_gpu:
    cfg, steps, B, every = reference.CONFIGS["small"], 300, 8, 50
    model = kernels.KernelBackend(
        cfg, reference.init_params(cfg, 0), kernels=kernels.learner_kernels(globals(), puzzles), tile=16
    )
else:
    cfg, steps, B, every = reference.Config(L=1, C=16, NH=2, T=16), 60, 4, 20
    model = loop.NumpyBackend(cfg, reference.init_params(cfg, 0))
lr = 3e-3 if on_gpu else 1e-2
run = loop.train(model, cfg, steps=steps, B=B, lr=lr, eval_every=every, sample_chars=120)
print(f"{run.backend}: {steps} steps in {run.seconds:.1f} s")
print("--- before training ---\n" + run.samples["start"])
print("--- after ---\n" + run.samples["end"])

# %% [markdown]
# ## PyTorch from the same start
#
# The same model in PyTorch (`torch_model.py`: FP32, TF32 off, PyTorch's AdamW), the same initial
# weights, the same batches. The first ten losses must agree within `2e-3` nats: both compute the
# same formulas in float32, and the only differences are rounding (summation orders) amplified by
# AdamW's near-zero gradients; a wrong kernel is off by far more from the first step. After the
# run, the validation losses must agree within `0.05` nats (the two runs have drifted apart by then,
# but they are training the same model on the same data). Without PyTorch this says so in one line.

# %%
torch, why = timing.torch_or_reason() if on_gpu else (None, None)
if not on_gpu:
    try:
        import torch
    except ImportError:
        why = "PyTorch is not installed: the comparison is skipped."
if torch is None:
    print(why)
else:
    from puzzles.llm.training.torch_model import TorchBackend

    twin = TorchBackend(cfg, reference.init_params(cfg, 0), device="cuda" if on_gpu else "cpu")
    truns = loop.train(twin, cfg, steps=steps, B=B, lr=lr, eval_every=every, sample_chars=0)
    diff = np.abs(np.array(run.losses[:10]) - truns.losses[:10]).max()
    vdiff = abs(run.val[-1][1] - truns.val[-1][1])
    print(f"first 10 losses: largest difference {diff:.1e}; final validation losses differ by {vdiff:.3f}")
    assert diff <= 2e-3 and vdiff <= 0.05

# %% [markdown]
# ## The loss curve

# %%
runs = [run] + ([truns] if torch is not None else [])
loop.loss_curve(runs)

# %% [markdown]
# ## Sampling through a KV cache
#
# The samples above come from `reference.sample`, which for every new byte runs the model over the
# whole text so far: the `s`-th byte costs a forward pass over `s` positions, and the keys and values
# of the earlier bytes are recomputed every time, though they never change (a byte sees only the
# bytes before it). `kv_cache.generate` keeps them: per layer a cache of keys and values, and each
# step runs **one** byte through the model (its query, key and value, one row of attention over the
# cache with notebook 22's decode kernel `llm3_attn_decode` on a GPU, its MLP). The draws are the same
# random numbers on the same probabilities, so the text must be the same. Checked below: the same
# bytes (greedy and sampled), and each step's logits equal to the full forward pass's within `1e-4`.
#
# GPT-2's positions are learned for `T` places, so the cache holds at most `T` bytes; past that,
# `reference.sample` slides its window and every byte changes position, so nothing cached stays
# valid: `generate` then recomputes the window as `reference.sample` does, and the cache pays for the
# first `T` bytes. (`python -m tools.train --kv-cache` samples this way; `--sample-speed` times both.)

# %%
prompt = data.encode("\n")
n_new = cfg.T - len(prompt)  # inside the context: every byte is one decode step
t0 = time.perf_counter()
slow = reference.sample(model.logits, prompt, n_new, cfg.T, seed=1)
t1 = time.perf_counter()
steps = []
fast = kv_cache.generate(kv_cache.decoder_for(model), prompt, n_new, cfg.T, seed=1, logits_out=steps)
t2 = time.perf_counter()
full = model.logits(np.concatenate([prompt, fast])[None, : cfg.T].astype(np.int32))[0]
gap = max(np.abs(full[i] - z).max() for i, z in enumerate(steps))
greedy_same = np.array_equal(
    reference.sample(model.logits, prompt, n_new, cfg.T, temperature=0),
    kv_cache.generate(kv_cache.decoder_for(model), prompt, n_new, cfg.T, temperature=0),
)
print(f"{n_new} bytes: recomputing {n_new / (t1 - t0):.0f} bytes/s, KV cache {n_new / (t2 - t1):.0f} bytes/s")
print(f"same bytes: sampled {np.array_equal(slow, fast)}, greedy {greedy_same}; largest logit gap {gap:.1e}")
print(repr(data.decode(fast)))
assert np.array_equal(slow, fast) and greedy_same and gap <= 1e-4

# %% [markdown]
# At this size the model is a few small matrix products per byte and the saving is small; it grows
# with the context (the recomputing sampler's work per byte grows with it, the cache's barely) and
# with the model. On a GPU each decode step is about ten launches a layer for one token, so the step
# is bound by the host's launches as training was (`--sample-speed` measures both on the GPU).
#
# ## Schedule-free AdamW
#
# Notebook 21's last optimizer rung, `llm2_sf_adamw`, in the loop (`optimizer="sf-adamw"`): no
# learning-rate schedule, a short linear warmup, and the loss judged at the **average `x`**, not at
# the point `y` where the gradients are taken. `loop.NumpyBackend` and `kernels.KernelBackend`
# validate and sample at `x`; with AdamW there is one set of weights, with schedule-free AdamW the
# model you keep is `x`. Below: the same small model, data and batches, 150 steps each of AdamW at
# the learning rate used above and of schedule-free AdamW at the same rate and at twice it (the paper
# finds it wants a larger rate than AdamW). The validation loss is measured every 15 steps on the
# same batches. Each schedule-free training curve is the loss at `y` (where the step's gradient was
# taken), its validation points the loss at `x`. About a second on a CPU; `python -m tools.train
# --optimizer sf-adamw --warmup 10` runs the same on the command line, on any device. A run this
# short and this small says little about which optimizer is better at scale; what it shows is the
# mechanics: the same start, and a schedule-free run that keeps improving at a constant rate.

# %%
small = reference.Config(L=1, C=16, NH=2, T=16)
curves = []
for label, opt, rate in (
    ("AdamW, lr 1e-2", {}, 1e-2),
    ("schedule-free AdamW, lr 1e-2", dict(optimizer="sf-adamw", warmup=10), 1e-2),
    ("schedule-free AdamW, lr 2e-2", dict(optimizer="sf-adamw", warmup=10), 2e-2),
):
    be = loop.NumpyBackend(small, reference.init_params(small, 0), **opt)
    r = loop.train(be, small, steps=150, B=4, lr=rate, eval_every=15, sample_chars=0, log=lambda s: None)
    r.backend = label
    curves.append(r)
    print(f"{label:30s} validation loss after 150 steps {r.val[-1][1]:.3f}")
loop.loss_curve(curves)

# %% [markdown]
# ## What a GPU adds
#
# On a CPU the NumPy model trains a 1-layer, 16-wide model for seconds: it learns which bytes are
# common and that words are separated by spaces. The simulator runs the kernel model at a few
# seconds a step at the smallest size, enough to check it, far too slow to train. On a GPU the
# kernels train a model with 4 times the width and 4 times the context (this cell's `small` size):
# 300 steps take about 4 s on an H100 and bring the validation loss from 5.5 to about 2.8 nats per
# byte, where the samples are still mostly letters and spaces. The `medium` size (4 layers, 128 wide,
# context 128) trained 3,000 steps in 35 s on an H100 (`python -m tools.train --device gpu --size
# medium --steps 3000 --batch 16 --eval-every 500`) and reached 1.78, PyTorch's own run 1.78: there
# the samples have the shape of the play, speakers' names in capitals, stage directions in
# brackets, short lines, many real words.
#
# ## Where a step's time goes: fewer launches, then one
#
# A step of the `small` model (2 layers, 64 wide, context 64, batch 8: 512 tokens) is 82 launches
# of the course's kernels, one per op. Each has little to do: microseconds of GPU time. Each Numba
# launch costs the host far more, the Python that checks the arguments and calls the driver: 50 to
# 76 µs a launch on the H100 that `python -m tools.train --device gpu --profile` measured. So the
# GPU spends most of the step waiting for the next launch. The step is bound by the host: a faster
# kernel would not shorten it, fewer launches would.
#
# **Fusing** (`puzzles/llm/training/fused.py`, `KernelBackend(..., fused=True)`) does two ops in
# one kernel where the first one's output feeds only the second: the residual add with the
# LayerNorm that reads the sum, the LayerNorm backward with the residual gradient it adds to, the
# linear layer with its GELU (both results kept for the backward), the product dout Wᵀ with the
# GELU backward, the weight-gradient product with the bias gradient (the column sums of the rows the
# same block already holds). Each fusion saves a launch and a trip of the intermediate tensor
# through global memory: 26 launches a layer instead of 36, 62 a step instead of 82.
#
# **A CUDA graph** (`graph.py`, `graph=True`) takes the host out of the step. The first step's
# launches are recorded once by stream capture; every later step replays them with one driver
# call, and the GPU runs the kernels back to back. The host's cost no longer grows with the number
# of launches. A graph fixes every pointer it recorded, so the model keeps its activations and its
# batch at fixed addresses; AdamW, whose step number changes, is launched after the replay.
#
# Measured on an H100 (PyTorch 2.11, CUDA 13.0) with `python -m tools.train --device gpu --speed`:
# tokens per second of a whole step (forward, loss, backward, AdamW), every row's first losses
# checked against PyTorch's.
#
# | step | tokens/s (H100) |
# |---|---|
# | course kernels, one launch per op | 57,132 |
# | course kernels, fused | 111,476 |
# | course kernels, fused + CUDA graph | 561,116 |
# | PyTorch eager FP32 | 84,154 |
# | `torch.compile` FP32 | 96,045 |
#
# Replaying the graph gave the losses of launching op by op to 1.1e-8. PyTorch's eager step is bound
# by its host too: its profiler counts about 170 kernels and copies, 0.52 ms of GPU time, in a step
# that takes 6 ms. So the third row is a graph against PyTorch launching op by op, not a like-for-like
# comparison. The same command also times PyTorch's own graphs, `torch.compile(mode="reduce-overhead")`
# and the eager step captured whole with `torch.cuda.graph`: graph against graph (run it for your
# GPU's figures; they are not in this table yet). The profile prints, for each kernel, its launch
# call's host time and its GPU time, and a check line: the kernels' sum against the whole step's GPU
# time, or the word UNRELIABLE with the reason.
#
# ## Measure it
#
# A training step in tokens per second, the course's kernels against PyTorch eager FP32,
# `torch.compile`, and PyTorch's two graph paths (the same benchmark as notebook 24's;
# `python -m tools.train --device gpu --speed` prints it too). On a CPU machine this cell says so and
# does nothing.

# %%
if timing.skip_reason():
    print(timing.skip_reason())
else:
    print(timing.table(bw.benchmark()))

# %% [markdown]
# ## What you proved
#
# The transformer track's puzzles passed in this session, and the known-wrong kernels (from the
# course's tests) the checker rejects for them.

# %%
puzzles.summary(("llm-1", "llm-2", "llm-3", "llm-4", "llm-5"))
