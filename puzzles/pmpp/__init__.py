"""The PMPP chapters: one package per chapter, named as its notebook (notebook
`04_pmpp_ch05_memory_tiling` -> `ch05_memory_tiling/`), one file per op ladder inside it and its
benchmark in `bench.py`. Notebook 02 covers chapters 2 and 3 and uses two packages, `ch02_vector_add`
and `ch03_grids`: chapter 5 builds on chapter 3's matmul."""
