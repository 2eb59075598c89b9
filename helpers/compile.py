"""Old name of helpers.ptx, kept only until tests/test_sim_parity.py (the simulator's tests) imports
helpers.ptx; then delete this file. Shadowing the builtin `compile` is why it was renamed."""

from helpers.ptx import NumbaRejected, arg_types, available, ptx_check  # noqa: F401
