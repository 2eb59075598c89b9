"""Spread the test suite over all cores (pyproject: `-n auto`), keeping together what shares work.

nbval makes every cell of a solution notebook its own test item; the cells share one kernel, so a
notebook's items run in order on one worker. The per-puzzle tests of tests/test_exercises.py and
tests/test_engines_agree.py run on one worker per puzzle, so that the checks one test made are there
for the next (tests/support.py: `checked`): each kernel of a puzzle is simulated once per engine and
seed. The tests of a file in ONE_WORKER share an expensive module-scoped fixture (a wheel built and
installed, Numba's simulator run in a subprocess) and run on one worker, so it is made once. Every
other test is its own unit, so large parametrized files spread too (`--dist loadgroup` cannot be
used: pytest 9.2 ignores the node-id rewrite that xdist 3.8 groups by).

The run's compile checks are shared too: MP_PTX_CACHE (helpers/ptx.py) names a folder of this run,
so a kernel that compiled in one process (a worker, a notebook's kernel) is not compiled again in
another; a fresh folder each run, so every run compiles every kernel at least once.

The suite never writes the tuning cache (helpers/tuning.py): MP_TUNING_READONLY=1 is set here, before
the workers and the notebooks' kernels start, so they inherit it. Notebooks run in parallel on one
GPU time each other's kernels; a winner picked that way would be reused by every later benchmark.
Their searches still run (a noisy one falls back to the default and says so); only the cache stays
as `python -m tools.bench` or a notebook run on its own left it. (An environment variable rather than
helpers/tuning.py looking for PYTEST_XDIST_WORKER: the library need not know about pytest, a serial
run shares the GPU with whatever else runs just the same, and `MP_TUNING_READONLY=0 pytest ...` can
still opt out.) MP_SMALL_STUDIES=1 likewise: without a GPU, 13_the_machine's CPU timings run at CI's
sizes (the suite checks that the study runs; a learner's CPU-only run measures larger sizes).
"""

import os
import shutil
import tempfile

import pytest

PER_PUZZLE = ("tests/test_exercises.py", "tests/test_engines_agree.py")
ONE_WORKER = ("tests/test_wheel.py", "tests/test_sim_parity.py")


def puzzle_of(nodeid: str) -> str | None:
    """The puzzle a per-puzzle test is about ("dot" for test_exercises.py::test_x[dot-mutant]), else None."""
    path, _, rest = nodeid.partition("::")
    if not path.endswith(PER_PUZZLE) or "[" not in rest:
        return None
    return rest.split("[", 1)[1].rstrip("]").split("-", 1)[0]


def scope_of(nodeid: str) -> str:
    """The unit of work that runs on one xdist worker: a notebook, a file of ONE_WORKER, a puzzle's
    per-puzzle tests, else the test itself."""
    file = nodeid.split("::", 1)[0]
    if file.endswith((".ipynb", *ONE_WORKER)):
        return file
    puzzle = puzzle_of(nodeid)
    return f"puzzle {puzzle}" if puzzle else nodeid


PTX_CACHE = "MP_PTX_CACHE"  # helpers.ptx.CACHE_ENV (not imported here: the controller needs no numba)
TUNING_READONLY = "MP_TUNING_READONLY"  # helpers.tuning.READONLY_ENV
SMALL_STUDIES = "MP_SMALL_STUDIES"  # puzzles.machine.measure.sizes.SMALL_ENV


def pytest_configure(config):
    os.environ.setdefault(TUNING_READONLY, "1")  # inherited by xdist workers and notebook kernels
    os.environ.setdefault(SMALL_STUDIES, "1")  # without a GPU, 13_the_machine's CPU timings at CI's sizes
    if PTX_CACHE not in os.environ and not hasattr(config, "workerinput"):  # the first process
        folder = tempfile.mkdtemp(prefix="mp-ptx-")
        os.environ[PTX_CACHE] = folder  # inherited by xdist workers and notebook kernels
        config._mp_ptx_cache = folder


def pytest_unconfigure(config):
    folder = getattr(config, "_mp_ptx_cache", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(PTX_CACHE, None)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class TogetherWhatSharesWork(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return scope_of(nodeid)

    return TogetherWhatSharesWork(config, log)


def pytest_collection_modifyitems(config, items):
    """Without xdist too, a puzzle's per-puzzle tests run one after another (the checks they share
    are kept for the puzzle at hand only): each moves up behind its puzzle's first item; every other
    item keeps its place."""
    first: dict[str, int] = {}
    keys = []
    for i, item in enumerate(items):
        puzzle = puzzle_of(item.nodeid)
        keys.append(i if puzzle is None else first.setdefault(puzzle, i))
    order = sorted(range(len(items)), key=lambda i: (keys[i], i))
    items[:] = [items[i] for i in order]
