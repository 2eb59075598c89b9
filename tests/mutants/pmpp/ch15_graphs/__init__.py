"""Mutants of puzzles/pmpp/ch15_graphs/ (BFS), one file per op file."""
