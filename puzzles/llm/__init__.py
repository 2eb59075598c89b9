"""The transformer-kernels track: one package per notebook (notebook `20_llm_softmax_layernorm` ->
`softmax_layernorm/`), one op ladder per file inside it, from softmax and LayerNorm to FlashAttention
and a GPT-2 block built from the track's own kernels (`gpt2_block` imports the other three's op
files, never their benchmarks)."""
