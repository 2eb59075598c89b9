"""What a T4 (the course's reference GPU: 40 SMs, Turing) holds at once: at most 16 blocks, 1024
threads and 64 KiB of shared memory per SM (registers not counted). A cooperative launch (a grid
barrier) needs every block resident; the metrics use the same numbers for occupancy."""

from __future__ import annotations

from .trace import WARP_SIZE

T4_SMS = 40
T4_BLOCKS_PER_SM = 16
T4_THREADS_PER_SM = 1024
T4_SHARED_PER_SM = 64 * 1024


def max_resident_blocks(threads_per_block: int, shared_bytes: int) -> int:
    """Blocks of this shape a T4 can hold at once (see the module docstring)."""
    warps = -(-threads_per_block // WARP_SIZE)
    per_sm = min(T4_BLOCKS_PER_SM, T4_THREADS_PER_SM // (warps * WARP_SIZE))
    if shared_bytes:
        per_sm = min(per_sm, T4_SHARED_PER_SM // shared_bytes)
    return T4_SMS * per_sm
