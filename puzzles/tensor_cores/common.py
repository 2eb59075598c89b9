"""What the tensor-core exercises share: launch constants and the unit roundoffs their tolerances
are derived from."""

import numpy as np

CHAPTER = "tensor-cores"
WARP = 32
FULL_MASK = 0xFFFFFFFF
ROWS_PER_BLOCK = 4  # warps per block in the matrix-vector kernels: one row each
U16 = 2.0**-11  # unit roundoff of fp16 (11 significant bits): half an ulp of 1
U32 = 2.0**-24  # of fp32


def mma_tolerance(a, b, c=None, k: int = 8) -> np.ndarray:
    """How far a tensor core's fp32 `c + a @ b` (fp16 `a`, `b`) may be from the float64 truth rounded
    once to fp32, per element: the one rule the mma exercises and tests/tc_parity.py judge by.

    The tensor core is not an fp32 adder that rounds each sum. Per instruction it forms the k products
    exactly, aligns them and the accumulator to the exponent of the largest, drops the bits below that
    one's 24-bit significand (truncation, not rounding) and truncates again when it normalises the sum
    (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021: V100,
    T4, A100; Khattak, Mikaitis, "Accurate models of NVIDIA tensor cores", arXiv 2512.07004: H100 and
    B200 alike, some with a few extra alignment bits, which only drop less). A dropped tail is under
    one ulp of the largest addend, 2^-23 * max(|a_ik b_kj|, |c|) <= 2^-23 * (S + |c|), S = sum_k
    |a_ik b_kj|: the error follows S, not the result (a sum that cancels has a tiny result and the same
    error, so ulps of the result mean nothing). Grouped however the hardware likes (all k at once, or
    groups normalised in between), one instruction drops at most 3k tails; ceil(K / k) chained
    instructions, each accumulator at most |c| + S, drop at most 3K' of them (K' = K rounded up to k);
    and the truth rounded to fp32 moves by at most 2^-23 (S + |c|) more. So:

        |got - want| <= (3 K' + 1) * 2^-23 * (S + |c|)

    (an H100 stayed near 0.02 * 2^-23 * S on the course's cases: the bound is safe, not tight)."""
    a64, b64 = np.abs(np.asarray(a, np.float64)), np.abs(np.asarray(b, np.float64))
    mass = a64 @ b64 + (0.0 if c is None else np.abs(np.asarray(c, np.float64)))
    padded = -(-a64.shape[-1] // k) * k
    return (3 * padded + 1) * 2.0**-23 * mass


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
