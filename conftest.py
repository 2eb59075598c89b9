"""Spread the test suite over all cores (pyproject: `-n auto`), one notebook per worker.

nbval makes every cell of a solution notebook its own test item; the cells share one
kernel, so a notebook's items must run in order on one worker. Every other test is its
own unit, so large parametrized files spread too (`--dist loadfile` would pin each file
to one worker; `--dist loadgroup` cannot be used: pytest 9.2 ignores the node-id rewrite
that xdist 3.8 groups by).
"""

import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerPerNotebook(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            file = nodeid.split("::", 1)[0]
            return file if file.endswith(".ipynb") else nodeid

    return OneWorkerPerNotebook(config, log)
