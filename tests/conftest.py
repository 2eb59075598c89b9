"""Fixtures every test file shares (loaders: tests/support.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def sim_engine():
    """Launches and cuda.to_device / device_array go to the simulator (as in a notebook without a
    GPU); untraced launches for speed. The engine and trace setting come back afterwards."""
    from helpers import engine, sim

    before, trace = engine.STATE.name, sim.config.trace
    engine.use("sim")
    sim.config.trace = False
    yield
    sim.config.trace = trace
    engine.STATE._unpatch()
    if before is not None:
        engine.use(before)
    else:
        engine.STATE.name = None
