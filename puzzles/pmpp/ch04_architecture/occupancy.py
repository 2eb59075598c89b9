"""Occupancy arithmetic (how many blocks and warps an SM holds, and which resource runs out first)
and what the current GPU reports about itself (GPU only).
"""

import math

from numba import cuda

from helpers import timing

from .common import WARP

# ---------------------------------------------------------------------------- occupancy arithmetic


# Per-SM limits (CUDA programming guide, compute capability tables).
GPUS = {
    "T4 (sm_75)": {"threads": 1024, "blocks": 16, "warps": 32, "regs": 65536, "smem": 64 * 1024},
    "A100 (sm_80)": {"threads": 2048, "blocks": 32, "warps": 64, "regs": 65536, "smem": 164 * 1024},
    "H100 (sm_90)": {"threads": 2048, "blocks": 32, "warps": 64, "regs": 65536, "smem": 228 * 1024},
}


def occupancy(threads_per_block, regs_per_thread=32, smem_per_block=0, gpu="H100 (sm_90)") -> dict:
    """Resident blocks per SM and the fraction of the SM's warp slots they fill.

    Simplified: registers are allocated per warp in units of 256, shared memory is taken as is
    (real GPUs round it up and reserve 1 KiB per block), and `limit` names the resource that ran out.
    """
    lim = GPUS[gpu]
    warps = math.ceil(threads_per_block / WARP)
    regs_per_warp = math.ceil(regs_per_thread * WARP / 256) * 256
    by = {
        "blocks": lim["blocks"],
        "threads": lim["threads"] // (warps * WARP),
        "registers": lim["regs"] // (regs_per_warp * warps) if regs_per_thread else lim["blocks"],
        "shared memory": lim["smem"] // smem_per_block if smem_per_block else lim["blocks"],
    }
    blocks = min(by.values())
    limit = min(by, key=lambda k: (by[k], k != "threads"))
    return {
        "gpu": gpu,
        "threads/block": threads_per_block,
        "regs/thread": regs_per_thread,
        "smem/block": smem_per_block,
        "blocks/SM": blocks,
        "warps/SM": blocks * warps,
        "occupancy": blocks * warps / lim["warps"],
        "limit": limit,
    }


def occupancy_table(configs, gpu="H100 (sm_90)") -> str:
    lines = [
        f"{gpu}: {'threads/blk':>11} {'regs/thr':>8} {'smem/blk':>9} {'blocks/SM':>9} "
        f"{'warps/SM':>8} {'occupancy':>9}  limited by"
    ]
    for cfg in configs:
        o = occupancy(*cfg, gpu=gpu)
        lines.append(
            f"{'':{len(gpu) + 1}} {o['threads/block']:>11} {o['regs/thread']:>8} "
            f"{o['smem/block']:>9} {o['blocks/SM']:>9} {o['warps/SM']:>8} "
            f"{o['occupancy']:>9.0%}  {o['limit']}"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- GPU only


DEVICE_ATTRIBUTES = (
    "MULTIPROCESSOR_COUNT",
    "WARP_SIZE",
    "MAX_THREADS_PER_BLOCK",
    "MAX_BLOCK_DIM_X",
    "MAX_GRID_DIM_X",
    "MAX_THREADS_PER_MULTIPROCESSOR",
    "MAX_REGISTERS_PER_BLOCK",
    "MAX_REGISTERS_PER_MULTIPROCESSOR",
    "MAX_SHARED_MEMORY_PER_BLOCK",
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "L2_CACHE_SIZE",
    "CLOCK_RATE",
    "MEMORY_CLOCK_RATE",
    "GLOBAL_MEMORY_BUS_WIDTH",
)


def device_query() -> dict:
    """The current GPU's name, compute capability and the attributes above (GPU only)."""
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
    info = {"name": name, "compute capability": "%d.%d" % dev.compute_capability}
    for attr in DEVICE_ATTRIBUTES:
        try:
            info[attr] = getattr(dev, attr)
        except AttributeError:  # older drivers lack some attributes
            continue
    return info
