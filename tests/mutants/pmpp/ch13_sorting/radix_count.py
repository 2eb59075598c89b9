"""Controls of puzzles/pmpp/ch13_sorting/radix_count.py (worked kernels: only the seeds)."""

from puzzles.pmpp.ch13_sorting.radix_count import PUZZLES

MUTANTS: dict = {}
VARIANTS: dict = {}
SEEDS = {p.name: (0, 1) for p in PUZZLES}
