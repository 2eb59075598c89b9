"""Mutants and variants of puzzles/pmpp/ch17_mri/, one file per op file."""
