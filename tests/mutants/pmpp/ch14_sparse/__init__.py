"""Mutants of puzzles/pmpp/ch14_sparse/ (SpMV), one file per op file."""
