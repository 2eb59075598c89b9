"""Mutants and variants of puzzles/pmpp/ch16_deep_learning/, one file per op file."""
