"""The transformer-kernels track: one module per notebook (notebook `20_llm_softmax_layernorm` ->
`softmax_layernorm.py`), from softmax and LayerNorm to FlashAttention and a GPT-2 block built from
the track's own kernels (`gpt2_block` imports the other three)."""
