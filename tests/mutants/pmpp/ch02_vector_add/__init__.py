"""Mutants of the chapter 2 package, one file per op file."""
