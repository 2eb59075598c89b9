"""massively-parallel: the harness, simulator and pictures behind the course notebooks.

import helpers
helpers.setup()            # pick the engine (GPU if present, else the simulator) and say which
helpers.use("sim")         # force the simulator (or "gpu", "auto"); env var MP_ENGINE does the same
"""

from .device import STATE, current, gpu_present, use

__version__ = "0.1.0"


def setup(engine: str | None = None) -> str:
    """Select the engine (default: MP_ENGINE or auto) and print which one runs kernels."""
    import os
    import warnings

    from .device import LOW_OCCUPANCY_WARNING

    warnings.filterwarnings("ignore", message=LOW_OCCUPANCY_WARNING)
    use(engine or os.environ.get("MP_ENGINE", "auto"))
    print(banner())
    return current()


def banner() -> str:
    """Two lines: which engine runs kernels, and the numba / numba-cuda versions and PTX check."""
    from . import ptx
    from .environment import versions

    eng = current()
    if eng == "gpu":
        from numba import cuda

        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
        major, minor = dev.compute_capability
        where = f"the real GPU: {name} (compute capability {major}.{minor})"
    else:
        where = "the CPU simulator (helpers.sim)" + ("" if gpu_present() else ": no CUDA GPU found here")
    check = (
        "each check also compiles your kernel for a T4 (sm_75) with real Numba"
        if ptx.available()
        else "PTX compile check unavailable (NVVM not installed)"
    )
    return f"Kernels launched with kernel[blocks, threads](...) run on {where}.\n{versions()}; {check}."


__all__ = ["STATE", "banner", "setup", "use", "current", "gpu_present", "__version__"]
