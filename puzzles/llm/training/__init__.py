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
    gradcheck.py    every parameter's gradient, kernels against float64, with the derived tolerance
    loop.py         the training loop, validation loss, samples, the loss curve, the clear errors
    torch_model.py  the same model in PyTorch from the same weights (imported only when asked for)

The command is `python -m tools.train` (tools/train.py; `--profile`: tools/train_profile.py); the speed
rows are puzzles/llm/backward/bench.py.
No exercises live here (no PUZZLES): the exercises of the backward pass are puzzles/llm/backward.
"""
