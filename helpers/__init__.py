"""massively-parallel: the harness, simulator and pictures behind the course notebooks.

    import helpers
    helpers.setup()            # pick the engine (GPU if present, else the simulator) and say which
    helpers.use("sim")         # force the simulator (or "gpu", "auto"); env var MP_ENGINE does the same
"""
from .engine import current, gpu_present, use

__version__ = "0.1.0"


def setup(engine: str | None = None) -> str:
    """Select the engine (default: MP_ENGINE or auto) and print which one runs kernels."""
    import os
    import warnings

    from .engine import LOW_OCCUPANCY_WARNING, banner
    warnings.filterwarnings("ignore", message=LOW_OCCUPANCY_WARNING)
    use(engine or os.environ.get("MP_ENGINE", "auto"))
    print(banner())
    return current()


__all__ = ["setup", "use", "current", "gpu_present", "__version__"]
