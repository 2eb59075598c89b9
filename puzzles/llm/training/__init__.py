"""Training the course's GPT-2 (notebook 25): the model from the kernels of the transformer track,
checked against a float64 NumPy reference, trained on four plays of Shakespeare.

    data.py         the shipped text (data/shakespeare.txt, attribution in data/SHAKESPEARE.md), the
                    byte-level tokenizer (vocabulary 256), the train/validation split, batches
    reference.py    GPT-2 forward and backward in NumPy (float64: the truth; float32: the CPU trainer),
                    the model sizes (CONFIGS), GPT-2's initialisation, AdamW, sampling
    kernels.py      the same model as launches of the course's kernels (GPU or simulator); any kernel
                    can be swapped for the learner's by name
    launches.py     how kernels.py launches each op (grids, stream, fused or not, per-launch timing)
    fused.py        the step's fused kernels (fused=True: 26 launches a layer instead of 36)
    graph.py        forward + backward captured once as a CUDA graph and replayed (graph=True, GPU)
    gpu_timer.py    each launch's GPU time in a step (the profile), and the checks that it is real
    gradcheck.py    every parameter's gradient, kernels against float64, with the derived tolerance
    loop.py         the training loop, validation loss, samples, the loss curve, the clear errors
    kv_cache.py     sampling through a KV cache (one token a step; NumPy or the kernels with the decode
                    kernel llm3_attn_decode), the same tokens as reference.sample
    schedule_free.py  schedule-free AdamW in the loop (optimizer="sf-adamw"; validation and samples at x)
    torch_model.py  the same model in PyTorch from the same weights (imported only when asked for),
                    eager, compiled, and its two CUDA-graph forms

Speed. At the course's sizes a step is many small kernels, each a few microseconds of GPU time,
and each Numba launch costs the host 50-76 us: the step is bound by the host's launches, not by
the kernels. Fusing (fused.py) does an op and the one that alone reads its output in one kernel
(residual + LayerNorm, LayerNorm backward + residual gradient, linear + GELU, product + GELU
backward, weight gradient + bias gradient): a launch and a round trip of the intermediate tensor
through global memory saved each, 62 launches a step instead of 82 at L=2. A CUDA graph (graph.py)
records forward and backward once and replays them with one driver call, so the host's cost stops
growing with the launches and the GPU runs them back to back. Measured on an H100 (PyTorch 2.11,
CUDA 13.0), `python -m tools.train --device gpu --speed`, size small, batch 8, tokens/s:
one launch per op 57,132; fused 111,476; fused + CUDA graph 561,116; PyTorch eager FP32 84,154;
torch.compile FP32 96,045 (graph replay equal to launching op by op within 1.1e-8). PyTorch's rows
there launch op by op; the command also times PyTorch's own graphs (torch.compile reduce-overhead,
the eager step in torch.cuda.graph) for graph against graph. `--profile` shows where the time goes.

The command is `python -m tools.train` (tools/train.py; `--profile`: tools/train_profile.py); the speed
rows are puzzles/llm/backward/bench.py.
No exercises live here (no PUZZLES): the exercises of the backward pass are puzzles/llm/backward.
"""
