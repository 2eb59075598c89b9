"""Triton beside Numba (notebook 27): the course's kernels written again in Triton, one op per file,
each checked against the NumPy spec of its Numba twin on that twin's cases (awkward sizes).

    lang.py             Triton and PyTorch imported on first use; the interpreter on a CPU; `launch`
    vector_add.py       program = block, tl.arange = the block's threads, a mask = the `if i < n` guard
    softmax.py          one program per row: the whole row in one block of values, tl.max / tl.sum
    matmul.py           tiles as values: tl.load of a BM x BK tile, tl.dot, a loop over K
    layernorm.py        the residual add fused with LayerNorm, one program per row (mean, rstd saved)
    flash_attention.py  FlashAttention forward: Q tile held, K/V tiles streamed, online softmax
    check.py            check(name, kernel): the twin's cases, the spec, the course's verdicts
    show.py             beside(numba_kernel, triton_kernel): two sources side by side
    sanitize.py         triton-viz's sanitizer where it imports, its sys.exit turned into a message
    bench.py            GPU only: Numba, Triton and torch timed in one table (CUDA C++ where present)
    torch_profile.py    GPU only: torch.profiler over the GPT-2 block with Numba kernels inside;
                        torch.compile's generated Triton kernels beside the course's fused ones

Nothing here imports Triton or PyTorch when the package is imported (`lang` does it on first use),
so the puzzle registry, which imports every module of `puzzles/`, stays fast where they are absent.
"""
