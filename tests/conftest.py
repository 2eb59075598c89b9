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


# The simulator's unit tests run on both of its engines: "greenlet" (the reference) and
# "auto" (lockstep, falling back to greenlet on anything unsupported and on any diagnostic). Every
# launch that leaves `engine` unset takes `helpers.sim.config.engine`, which this fixture sets.
ENGINE_MODULES = ("test_sim", "test_sim_features", "test_sim_parity")
SIM_ENGINES = ("greenlet", "auto")


def pytest_generate_tests(metafunc):
    if "sim_engine_under_test" not in metafunc.fixturenames:
        return
    if metafunc.module.__name__.rpartition(".")[2] not in ENGINE_MODULES:
        return
    metafunc.parametrize("sim_engine_under_test", SIM_ENGINES, indirect=True, scope="function")


@pytest.fixture(autouse=True)
def sim_engine_under_test(request):
    """`helpers.sim.config.engine` for one test of ENGINE_MODULES (see pytest_generate_tests); put back
    afterwards. Elsewhere (no parameter) it does nothing."""
    name = getattr(request, "param", None)
    if name is None:
        yield None
        return
    from helpers import sim

    before = sim.config.engine
    sim.config.engine = name
    try:
        yield name
    finally:
        sim.config.engine = before
