"""The import graph of helpers/ and puzzles/, read with ast: no cycle, no import from a higher layer,
and the pictures (helpers.viz) import nothing from the harness. Function-level imports count.
The tools (tools/: notebook builder, release, benchmarks, profiler launcher, simulator speed) sit above
everything: they may import any of it, and nothing in helpers/ or puzzles/ imports them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# (module or package prefix, layer): a module may import only from its own layer or lower ones.
# The longest matching prefix decides; "=name" matches that module exactly (a package's __init__).
LAYERS = [
    ("helpers.sim.trace", 0),  # the trace format
    ("helpers.sim.errors", 0),
    # the simulator: shared pieces (semantics, binding, options, kernel, messages, host arrays...),
    # then its two engines as peers (tests/test_sim_semantics.py: neither imports the other), then
    # the dispatcher above both, then the package's facade (`helpers.sim.launch`)
    ("helpers.sim", 0.7),
    ("helpers.sim.greenlet", 0.8),
    ("helpers.sim.lockstep", 0.8),
    ("helpers.sim.dispatch", 0.9),
    ("=helpers.sim", 1),  # engines: simulator, engine choice, PTX compile check
    ("helpers.device", 1),
    ("helpers.engine", 1),  # the deprecated name of helpers.device (an alias module)
    ("helpers.ptx", 1),
    ("helpers.tensor_cores", 1),  # mma.sync, dp4a, ldmatrix, cp.async intrinsics (simulator side: sim.mma)
    ("helpers.mlir", 1),  # the compile check through numba-cuda-mlir (MP_COMPILER=mlir)
    ("helpers.environment", 1),  # what this machine has and lacks, in plain words
    ("helpers.metrics", 2),  # numbers from traces
    ("helpers.rules", 3),  # named checks and budgets from metrics
    ("helpers.advice", 3),  # what the standard count rules advise
    ("helpers.puzzle", 4),  # plain data: Puzzle, Case, RunRecord
    ("helpers.check", 5),  # the harness: orchestration of the stages
    ("helpers.runs", 5),  # one run of one case: arguments, launch, spec, RunRecord
    ("helpers.verdicts", 5),  # Result, the PuzzleFailure classes, a message's parts
    ("helpers.compare", 5),  # outputs against the spec, and how to say what differs
    ("helpers.source", 5),  # a kernel's source read with ast: stub, not a kernel, float literals
    ("helpers.orders", 5),  # the check under other block orders
    ("helpers.float64", 5),  # float64 arithmetic read from the PTX
    ("helpers.viz", 5),  # pictures (and never the harness: see below)
    ("helpers.timing", 5),  # GPU timing library
    ("helpers.tuning", 5),  # knobs searched on the GPU at hand, winners cached per device
    ("helpers.dist", 5),  # many ranks: the Comm API, in-process checker, MPI and NCCL engines, launcher
    ("helpers.cpp", 5),  # CUDA C++: NVRTC compile, the driver in a child process, a puzzle's verdict
    ("puzzles", 6),  # exercise modules
    ("=puzzles", 7),  # the facade: check, show, hint, get, names
    ("=puzzles.cpp", 7),  # the C++ twins' facade: cpp.check(name, source), by puzzle name
    ("=helpers", 7),  # helpers.setup / use / banner
]
COURSE = ("helpers", "puzzles")  # what the wheel ships; tools/ is not in it


def layer(module: str, table=LAYERS) -> float:
    best, found = -1, None
    for prefix, lvl in table:
        if prefix.startswith("="):
            if module == prefix[1:]:
                return lvl
            continue
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
            best, found = len(prefix), lvl
    if found is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/test_architecture.py")
    return found


def modules(tops=COURSE) -> dict[str, Path]:
    out = {}
    for top in tops:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _resolve(name: str, known: set) -> str | None:
    """The longest known module that `name` is or lies in."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports(module: str, path: Path, known: set) -> set[str]:
    """Known modules that `module` imports anywhere in its file."""
    is_pkg = path.name == "__init__.py"
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = base[: len(base) - node.level + 1]
                stem = ".".join(pkg + ([node.module] if node.module else []))
            else:
                stem = node.module
            # `from helpers import metrics` imports the module helpers.metrics, not the package
            targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in known else stem for a in node.names]
        else:
            continue
        for t in targets:
            r = _resolve(t, known)
            if r and r != module:
                found.add(r)
    return found


def graph(tops=COURSE) -> dict[str, set[str]]:
    mods = modules(tops)
    known = set(mods)
    return {m: imports(m, p, known) for m, p in mods.items()}


def into_tools(g: dict) -> list[str]:
    """Edges from the course (helpers/, puzzles/) into tools/."""
    return sorted(
        f"{m} imports {t}"
        for m, ts in g.items()
        if not m.startswith("tools")
        for t in ts
        if t == "tools" or t.startswith("tools.")
    )


def upward(g: dict, table=LAYERS) -> list[str]:
    return sorted(
        f"{m} (layer {layer(m, table)}) imports {t} (layer {layer(t, table)})"
        for m, ts in g.items()
        for t in ts
        if layer(t, table) > layer(m, table)
    )


def cycles(g: dict) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


@pytest.fixture(scope="module")
def g():
    return graph()


def test_every_module_has_a_layer(g):
    for m in g:
        layer(m)


def test_no_import_from_a_higher_layer(g):
    assert upward(g) == []


def test_no_import_cycle(g):
    assert cycles(g) == []


def viz_to_harness(g: dict) -> list[str]:
    viz = [m for m in g if m.startswith("helpers.viz")]
    return sorted(f"{m} -> helpers.check" for m in viz if "helpers.check" in g[m])


def test_nothing_imports_the_tools():
    g = graph((*COURSE, "tools"))
    assert any(t.startswith("helpers") for t in g["tools.nbbuild"]), "the graph reads tools/"
    assert into_tools(g) == []
    fake = {m: set(ts) for m, ts in g.items()}
    fake["puzzles"].add("tools.bench")  # the registry asking a tool: caught
    assert into_tools(fake) == ["puzzles imports tools.bench"]


def test_viz_imports_nothing_from_the_harness(g):
    assert viz_to_harness(g) == []


def test_puzzle_is_plain_data(g):
    assert g["helpers.puzzle"] <= {"helpers.rules"}


def test_the_graph_is_real(g):
    # a few edges that exist today: the test is reading imports, not an empty graph
    assert "helpers.metrics" in g["helpers.rules.core"]
    assert "helpers.puzzle" in g["helpers.check"]
    assert "helpers.check" in g["puzzles"]


def test_negative_control_an_upward_edge_and_a_cycle_are_caught(g):
    fake = {m: set(ts) for m, ts in g.items()}
    fake["helpers.metrics"].add("helpers.check")  # metrics asking the harness: upward
    assert upward(fake) == ["helpers.metrics (layer 2) imports helpers.check (layer 5)"]
    assert any({"helpers.metrics", "helpers.check"} <= set(c) for c in cycles(fake))
    fake = {m: set(ts) for m, ts in g.items()}
    fake["helpers.viz.counts"].add("helpers.check")  # same layer, but viz must not ask the harness
    assert upward(fake) == []
    assert viz_to_harness(fake) == ["helpers.viz.counts -> helpers.check"]


def test_negative_control_a_file_with_an_upward_import(tmp_path):
    path = tmp_path / "metrics.py"
    path.write_text("def f():\n    from helpers.check import check\n")
    known = set(modules())
    assert imports("helpers.metrics", path, known) == {"helpers.check"}


LONG = 400  # lines; a longer file says why in its first lines ("Over 400 lines: ...")
_WHY = re.compile(r"(over|longer than) \d+ lines", re.IGNORECASE)


def unexplained_long_files(texts: dict[str, str]) -> list[str]:
    return sorted(
        name
        for name, text in texts.items()
        if len(text.splitlines()) > LONG and not _WHY.search("\n".join(text.splitlines()[:20]))
    )


def test_no_long_file_without_a_reason():
    texts = {
        str(p.relative_to(ROOT)): p.read_text()
        for top in ("helpers", "puzzles", "tools")
        for p in sorted((ROOT / top).rglob("*.py"))
    }
    assert unexplained_long_files(texts) == []
    body = "x = 1\n" * (LONG + 1)
    assert unexplained_long_files({"long.py": body}) == ["long.py"]
    assert unexplained_long_files({"long.py": "# Over 400 lines: one figure's geometry.\n" + body}) == []
