"""Known-wrong and known-right kernels for puzzles/llm/small_ops/residual.py.

Mutants are the reference with one learner's mistake edited in (`mutate`: exact replacements, each
required to match once); variants are correct kernels written differently.
"""

from mutants.common import OOB, WRONG, M
from puzzles.llm.small_ops import residual as m

RESIDUAL = [
    M(m.residual_add, "residual_if_not_while", WRONG, ("    while i < n:\n", "    if i < n:\n")),
    M(m.residual_add, "residual_no_guard", OOB, ("    while i < n:\n", "    while i < n + 1:\n")),
]


MUTANTS = {"llm2_residual_add": RESIDUAL}

VARIANTS = {}
SEEDS = {p.name: (0, 1, 2) for p in m.PUZZLES}  # references and worked kernels too
