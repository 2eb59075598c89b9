"""The PMPP chapters: one module per chapter, named as its notebook (notebook
`04_pmpp_ch05_memory_tiling` -> `ch05_memory_tiling.py`). Notebook 02 covers chapters 2 and 3 and
uses two modules, `ch02_vector_add` and `ch03_grids`: chapter 5 builds on chapter 3's matmul."""
