"""Mutants and variants of puzzles/pmpp/ch18_electrostatics/, one file per op file."""
