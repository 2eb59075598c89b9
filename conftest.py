"""Keep each notebook's cells on one xdist worker (pyproject runs `--dist loadgroup`).

nbval turns every cell of a notebook into its own test item; they share one kernel
and must run in order on one worker. Other tests carry no group and spread freely.
"""
import pytest


@pytest.hookimpl(tryfirst=True)      # before xdist folds the group into the node id
def pytest_collection_modifyitems(config, items):
    for item in items:
        file = item.nodeid.split("::", 1)[0]
        if file.endswith(".ipynb"):
            item.add_marker(pytest.mark.xdist_group(file))
