"""What the tensor-core exercises share: launch constants and the unit roundoffs their tolerances
are derived from."""

import numpy as np

CHAPTER = "tensor-cores"
WARP = 32
FULL_MASK = 0xFFFFFFFF
ROWS_PER_BLOCK = 4  # warps per block in the matrix-vector kernels: one row each
U16 = 2.0**-11  # unit roundoff of fp16 (11 significant bits): half an ulp of 1
U32 = 2.0**-24  # of fp32


def half(x: np.ndarray, name: str = "x") -> np.ndarray:
    """`x` as float16, refusing values fp16 cannot hold (past 65504 they would become inf)."""
    x = np.asarray(x)
    big = np.abs(x) > 65504
    if big.any():
        i = int(np.flatnonzero(big.ravel())[0])
        raise ValueError(
            f"{name} holds {x.ravel()[i]:.6g} (flat index {i}), beyond fp16's largest finite value 65504: "
            "as float16 it would be inf. Scale it down first (and the result back up), or keep it in float32."
        )
    return x.astype(np.float16)
