"""Controls of puzzles/pmpp/ch13_sorting/radix_scan.py (worked kernels: only the seeds)."""

from puzzles.pmpp.ch13_sorting.radix_scan import PUZZLES

MUTANTS: dict = {}
VARIANTS: dict = {}
SEEDS = {p.name: (0, 1) for p in PUZZLES}
