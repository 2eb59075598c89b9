"""Version drift: what the course declares and tests, against Colab's newest freeze and PyPI's newest.

    python -m tools.drift [--offline] [--freeze PATH]

Reads the declared ranges (pyproject.toml), the tested sets (requirements-runtime.txt: the newest;
.ci/colab-constraints.txt: Colab's; .ci/cu13-constraints.txt: the CUDA 13 stack), the hand-kept copy
of Colab's freeze (.ci/colab-freeze.txt, its date and source in its header) and PyPI's releases of
each dependency (JSON API, 10 s timeout; offline it says so in one line and compares with Colab only).
Prints one line per finding; exits 1 when a combination learners can get is untested or broken.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[1]
TESTED = {  # name of a tested set -> the file CI installs it from
    "newest": "requirements-runtime.txt",
    "colab": ".ci/colab-constraints.txt",
    "cu13": ".ci/cu13-constraints.txt",
}
FREEZE = ".ci/colab-freeze.txt"
WATCH = ("numba-cuda-mlir",)  # not a dependency: numba-cuda's successor, compiled by tools.compilers
# Combinations known to break: (what the set holds, why). Checked on Colab's freeze and on the newest
# releases, so a new release that keeps the breakage (or fixes it) shows up.
BROKEN = (
    (
        {"numpy": ">=2.5", "numba-cuda": "<=0.30.4"},
        "numba-cuda 0.30.4 calls np.row_stack, which NumPy 2.5 removed: no kernel compiles",
    ),
    ({"numba": "<0.62", "numpy": ">=2.3"}, "numba 0.61 supports NumPy up to 2.2"),
)
PYPI = "https://pypi.org/pypi/{}/json"


@dataclass
class Finding:
    level: str  # "untested", "broken", "excluded" (kept out by the range: fine) or "ok"
    text: str


@dataclass
class Course:
    declared: dict[str, Requirement]  # pyproject's dependencies by name
    python: SpecifierSet  # requires-python
    tested: dict[str, dict[str, Version]] = field(default_factory=dict)  # set -> name -> pin
    cuda: dict[str, int] = field(default_factory=dict)  # set -> CUDA major of its compiler wheels


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(text: str) -> dict[str, Version]:
    """`name[extra]==version` lines of a requirements or freeze file (others skipped)."""
    out = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if "==" not in line or line.startswith("-"):
            continue
        req = Requirement(line)
        out[norm(req.name)] = Version(str(next(iter(req.specifier)).version))
    return out


def cuda_major(text: str, found: dict[str, Version]) -> int | None:
    """The CUDA major a set compiles with: a numba-cuda[cuNN] extra, nvidia-*-cuNN wheels, cuda-bindings."""
    m = re.search(r"numba-cuda\[cu(\d+)\]", text) or re.search(r"^nvidia-[\w-]+-cu(\d+)==", text, re.M)
    if m:
        return int(m.group(1))
    return found["cuda-bindings"].major if "cuda-bindings" in found else None


def header(text: str, key: str) -> str:
    m = re.search(rf"^#\s*{key}:\s*(.+)$", text, re.M)
    return m.group(1).strip() if m else "?"


def read_course(root: Path = ROOT) -> Course:
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    declared = {norm(r.name): r for r in map(Requirement, project["dependencies"])}
    course = Course(declared, SpecifierSet(project["requires-python"]))
    for name, path in TESTED.items():
        if (root / path).exists():
            text = (root / path).read_text()
            course.tested[name] = pins(text)
            course.cuda[name] = cuda_major(text, course.tested[name])
    return course


def pypi(names, get=None, timeout: float = 10.0) -> dict[str, dict] | str:
    """PyPI's JSON answer for each name; or a one-line reason when PyPI cannot be read."""
    get = get or (lambda url: json.load(urllib.request.urlopen(url, timeout=timeout)))
    out = {}
    for name in names:
        try:
            out[name] = get(PYPI.format(name))
        except Exception as e:  # noqa: BLE001 - offline, a proxy, a timeout: all mean "no PyPI today"
            why = f"{type(e).__name__}: {str(e)[:80]}"
            return f"PyPI not reachable ({why}): compared with Colab's freeze only."
    return out


def cuda_extras(answers: dict[str, dict]) -> dict[str, set[int]]:
    """The CUDA majors each package's newest release offers as extras ([cu12], [cu13]...)."""
    out = {}
    for name, data in answers.items():
        extras = (data.get("info") or {}).get("provides_extra") or []
        out[name] = {int(m.group(1)) for m in map(re.compile(r"cu(\d+)$").match, extras) if m}
    return out


def pypi_releases(names, get=None, timeout: float = 10.0) -> dict[str, list[Version]] | str:
    """Each name's final, unyanked releases, newest last; or a one-line reason when PyPI cannot be read."""
    answers = pypi(names, get, timeout)
    return answers if isinstance(answers, str) else releases_of(answers)


def releases_of(answers: dict[str, dict]) -> dict[str, list[Version]]:
    out = {}
    for name, data in answers.items():
        versions = []
        for v, files in data.get("releases", {}).items():
            try:
                ver = Version(v)
            except InvalidVersion:
                continue
            if not ver.is_prerelease and files and not all(f.get("yanked") for f in files):
                versions.append(ver)
        out[name] = sorted(versions)
    return out


def broken(held: dict[str, Version]) -> list[str]:
    """The reasons of every known-broken combination `held` (name -> version) contains."""
    return [
        why
        for rule, why in BROKEN
        if all(n in held and held[n] in SpecifierSet(spec) for n, spec in rule.items())
    ]


def compare_colab(course: Course, freeze_text: str) -> list[Finding]:
    """Colab's freeze against the declared ranges and the set CI tests as Colab's."""
    freeze, tested = pins(freeze_text), course.tested.get("colab", {})
    when = f"Colab ({header(freeze_text, 'date')})"
    out = []
    py = header(freeze_text, "python")
    if py != "?" and Version(py) not in course.python:
        out.append(Finding("untested", f"{when} runs Python {py}, outside requires-python {course.python}"))
    for name, have in sorted(freeze.items()):
        req = course.declared.get(name)
        if req and have not in req.specifier:
            out.append(Finding("untested", f"{when} ships {name} {have}, outside the declared {req}"))
        elif name not in tested:
            out.append(Finding("untested", f"{when} ships {name} {have}; CI's Colab set does not pin it"))
        elif tested[name] != have:
            out.append(
                Finding(
                    "untested",
                    f"{when} ships {name} {have}; CI tests {tested[name]} ({TESTED['colab']}: update it)",
                )
            )
    major = cuda_major(freeze_text, freeze)
    if major is not None and major not in course.cuda.values():
        out.append(Finding("untested", f"{when} compiles with CUDA {major}: no tested set has CUDA {major}"))
    out += [Finding("broken", f"{when}: {why}") for why in broken(freeze)]
    if not out:
        out.append(Finding("ok", f"{when}: every package the course touches is the version CI tests"))
    return out


def compare_pypi(course: Course, releases: dict[str, list[Version]], extras=None) -> list[Finding]:
    """PyPI's newest releases against the newest tested pins and the declared ranges; `extras`
    (name -> CUDA majors its extras offer) against the CUDA majors of the tested sets."""
    out, newest_all, newest_allowed = [], {}, {}
    for name, majors in sorted((extras or {}).items()):
        for major in sorted(majors - set(course.cuda.values())):
            why = f"{name} offers [cu{major}]: no tested set compiles with CUDA {major}"
            out.append(Finding("untested", why))
    pinned = course.tested.get("newest", {})
    for name, req in sorted(course.declared.items()):
        if not releases.get(name):
            continue
        newest_all[name] = releases[name][-1]
        allowed = [v for v in releases[name] if v in req.specifier]
        newest_allowed[name] = allowed[-1] if allowed else None
        got, pin = newest_allowed[name], pinned.get(name)
        if got is not None and pin is not None and got > pin:
            out.append(Finding("untested", f"`pip install` gets {name} {got} ({req}); CI tests {pin}"))
        if newest_all[name] not in req.specifier:
            with_others = {**newest_all, name: newest_all[name]}
            why = "; ".join(broken(with_others)) or "no known breakage: try it and widen the range"
            out.append(Finding("excluded", f"{name} {newest_all[name]} is out, kept out by {req} ({why})"))
    for name in WATCH:
        if releases.get(name):
            out.append(Finding("excluded", f"{name} {releases[name][-1]} is out (python -m tools.compilers)"))
    for why in broken({k: v for k, v in newest_allowed.items() if v is not None}):
        out.append(Finding("broken", f"the newest releases the ranges allow: {why}"))
    if not any(f.level != "excluded" for f in out):
        out.append(Finding("ok", "PyPI: the newest releases the ranges allow are the ones CI tests"))
    return out


def report(course: Course, freeze_text: str, releases, extras=None) -> tuple[list[str], int]:
    findings = compare_colab(course, freeze_text)
    lines = [f"drift: Colab freeze of {header(freeze_text, 'date')} ({header(freeze_text, 'source')})"]
    if isinstance(releases, str):
        lines.append(releases)
    else:
        findings += compare_pypi(course, releases, extras)
    lines += [f"{f.level.upper():9} {f.text}" for f in findings]
    bad = any(f.level in ("untested", "broken") for f in findings)
    return lines, int(bad)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--offline", action="store_true", help="compare with Colab's freeze only")
    ap.add_argument("--freeze", default=str(ROOT / FREEZE), help="a Colab pip freeze (default %(default)s)")
    args = ap.parse_args(argv)
    course = read_course()
    names = [*course.declared, *WATCH]
    answers = "offline (--offline): compared with Colab's freeze only." if args.offline else pypi(names)
    releases = answers if isinstance(answers, str) else releases_of(answers)
    extras = None if isinstance(answers, str) else cuda_extras(answers)
    lines, rc = report(course, Path(args.freeze).read_text(), releases, extras)
    print("\n".join(lines))
    return rc


if __name__ == "__main__":
    sys.exit(main())
