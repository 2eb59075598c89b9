"""Where the course lives: one place names it, one command re-points every badge and setup cell.

    python -m tools.release                               # show the repository and ref in use
    python -m tools.release point OWNER/NAME [--ref REF]  # a fork or a release: rewrite + rebuild
    python -m tools.release check                         # every badge and setup cell agrees (exit 1)

The one place is `[tool.massively-parallel]` in pyproject.toml (`repository`, `ref`). Notebooks and
the README are generated from it by tools.nbbuild, so `point` rewrites that table and rebuilds.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ("massively-parallel/massively-parallel", "v0.1.0")  # used only where no pyproject.toml is

_TABLE = "[tool.massively-parallel]"
_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
# Anything in a generated file that names a place on GitHub the course could be fetched from.
_GITHUB_RE = re.compile(
    r"(?:colab\.research\.google\.com/github/|github\.com/)([\w.-]+/[\w.-]+?)"
    r"(?:\.git)?/blob/([^/\s\"')]+)/"
)
_SETUP_RE = re.compile(
    r'REPO_URL = \\?"https://github\.com/([\w.-]+/[\w.-]+)\\?"|'
    r'COURSE_REF = \\?"([^"\\]+)\\?"'
)


def pointer(root: Path = ROOT) -> tuple:
    """(repository "owner/name", ref) from pyproject.toml."""
    path = root / "pyproject.toml"
    if not path.exists():
        return DEFAULT
    table = tomllib.loads(path.read_text()).get("tool", {}).get("massively-parallel", {})
    return table.get("repository", DEFAULT[0]), table.get("ref", DEFAULT[1])


def version(root: Path = ROOT) -> str:
    return tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]


def set_pointer(repo: str, ref: str, root: Path = ROOT) -> None:
    if not _REPO_RE.match(repo):
        raise ValueError(f"repository must be OWNER/NAME as on GitHub, not {repo!r}")
    if not ref or any(c in ref for c in ' "\\~^:?*['):
        raise ValueError(f"not a git ref: {ref!r}")
    path = root / "pyproject.toml"
    text = path.read_text()
    a = text.index(_TABLE)
    b = text.find("\n[", a + len(_TABLE))
    b = len(text) if b < 0 else b + 1
    body = text[a:b]
    body = re.sub(r'(?m)^repository = ".*"$', f'repository = "{repo}"', body)
    body = re.sub(r'(?m)^ref = ".*"$', f'ref = "{ref}"', body)
    path.write_text(text[:a] + body + text[b:])


def generated_files(root: Path = ROOT) -> list:
    nb = root / "notebooks"
    return [root / "README.md", *sorted(nb.glob("*.ipynb")), *sorted((nb / "solutions").glob("*.ipynb"))]


def disagreements(root: Path = ROOT) -> list:
    """Every badge, link or setup cell that does not point at pointer(root), as 'file: what'."""
    repo, ref = pointer(root)
    bad = []
    if ref.startswith("v") and ref != "v" + version(root):
        bad.append(f"pyproject.toml: release ref {ref} is not 'v' + version {version(root)}")
    for path in generated_files(root):
        if not path.exists():
            continue
        text, rel = path.read_text(), path.relative_to(root)
        seen = 0
        for m in _GITHUB_RE.finditer(text):
            seen += 1
            if (m.group(1), m.group(2)) != (repo, ref):
                bad.append(f"{rel}: links {m.group(1)}@{m.group(2)}")
        setup = _SETUP_RE.findall(text)
        for r, f in setup:
            if (r and r != repo) or (f and f != ref):
                bad.append(f"{rel}: setup cell points at {r or f}")
        if path.suffix == ".ipynb" and (len(setup) < 2 or not seen):
            bad.append(f"{rel}: no setup cell or badge naming the course")
    return bad


def point(repo: str, ref: str | None = None, root: Path = ROOT) -> list:
    """Re-point the course at `repo` (and `ref`, default unchanged), rebuild, return changed files."""
    set_pointer(repo, ref or pointer(root)[1], root)
    # The builder reads the pointer when it starts, so it runs in a fresh interpreter.
    built = subprocess.run(
        [sys.executable, "-m", "tools.nbbuild", "--root", str(root)],
        capture_output=True,
        text=True,
        check=True,
    )
    wrote = [line.removeprefix("wrote ") for line in built.stdout.splitlines() if line.startswith("wrote ")]
    return ["pyproject.toml", *wrote]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.release", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd")
    p = sub.add_parser("point", help="point every badge and setup cell at OWNER/NAME (and --ref)")
    p.add_argument("repository")
    p.add_argument("--ref", help="tag or branch (default: keep the current one)")
    sub.add_parser("check", help="exit 1 unless every badge and setup cell agrees with pyproject.toml")
    args = ap.parse_args(argv)
    if args.cmd == "point":
        for f in point(args.repository, args.ref):
            print(f"wrote {f}")
        return 0
    if args.cmd == "check":
        bad = disagreements()
        for b in bad:
            print(b)
        if bad:
            print("fix: python -m tools.release point OWNER/NAME --ref REF", file=sys.stderr)
        return 1 if bad else 0
    print("repository %s, ref %s" % pointer())
    return 0


if __name__ == "__main__":
    sys.exit(main())
