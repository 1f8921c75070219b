"""Every ``benchmarks/...`` path that the README and the docs name exists, or names its commit.

A path is found as written, as its gzip-compressed file (``name.jsonl`` is
stored as ``name.jsonl.gz``; the study scripts read either), as the stem of
a script's outputs (``--out benchmarks/results/scaling`` writes
``scaling.csv``, ``.md`` and ``.png``), or as a pattern (``*``, shell
variables, ``{a,b}``) that matches at least one file. A path of
a study that has left the tree is written with the commit where it existed:
right after the backtick span that holds it (`` `path` at commit abc1234 ``),
as a ``blob/<commit>/path`` or ``tree/<commit>/path`` link, or in a code block
whose first line says ``at commit abc1234``; the test checks with git that the
path existed at that commit.
"""

from __future__ import annotations

import fnmatch
import itertools
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

PATH = re.compile(r"benchmarks/[A-Za-z0-9_./*?{},$%:\[\]-]*")
COMMIT = r"at commit ([0-9a-f]{7,40})\b"
SPAN_AT_COMMIT = re.compile(r"`([^`]+)`\s+" + COMMIT)
LINK_AT_COMMIT = re.compile(r"/(?:blob|tree)/([0-9a-f]{7,40})/(benchmarks/[^\s)\]>\"']+)")
FENCE = re.compile(r"^([ \t]*)```[^\n]*\n(.*?)^\1```", re.S | re.M)
ASSIGN = re.compile(r"^\s*(\w+)=(benchmarks/\S+)\s*$", re.M)


def _clean(path: str) -> str:
    path = path.rstrip(".,;:)]'\"")
    return path[:-1] if path.endswith("}") and path.count("{") < path.count("}") else path


def _braces(path: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return list(itertools.chain.from_iterable(
        _braces(path[:m.start()] + alt + path[m.end():]) for alt in m.group(1).split(",")))


def _patterns(path: str) -> list[str]:
    """Glob patterns of a path as written: variables are wildcards, braces alternatives,
    and a comma outside braces separates two paths (``paired_zoo.py A.jsonl,B.jsonl``)."""
    path = re.sub(r"\$\{[^}]*\}|\$\w+", "*", path)
    parts = re.split(r",(?![^{]*\})", path)
    return [re.sub(r"\*+", "*", p) for part in parts for p in _braces(part) if p]


def references(text: str) -> tuple[set[str], set[tuple[str, str]]]:
    """``(paths, (commit, path) pairs)`` named by one page."""
    text = re.sub(r"\\\n\s*", " ", text)  # continuation lines
    at_commit: set[tuple[str, str]] = set()
    plain: set[str] = set()
    chunks = []
    for m in FENCE.finditer(text):
        block = m.group(2)
        first = block.split("\n", 1)[0]
        sha = re.search(COMMIT, first)
        assigned = dict(ASSIGN.findall(block))
        for var, value in assigned.items():
            block = re.sub(r"\$\{" + var + r"\}|\$" + var + r"\b", value, block)
        for p in PATH.findall(block):
            p = _clean(p)
            prefix = p in assigned.values()  # R=benchmarks/results/x/fresh: a name prefix
            target = p + "*" if prefix else p
            if sha:
                at_commit.add((sha.group(1), target))
            else:
                plain.add(target)
    prose = FENCE.sub(" ", text)
    for m in LINK_AT_COMMIT.finditer(prose):
        at_commit.add((m.group(1), _clean(m.group(2))))
    prose = LINK_AT_COMMIT.sub(" ", prose)
    for m in SPAN_AT_COMMIT.finditer(prose):
        at_commit |= {(m.group(2), _clean(p)) for p in PATH.findall(m.group(1))}
        chunks.append((m.start(), m.end()))
    for start, end in reversed(chunks):
        prose = prose[:start] + " " + prose[end:]
    plain |= {_clean(p) for p in PATH.findall(prose)}
    return {p for p in plain if p != "benchmarks/"}, at_commit


def _exists(path: str) -> bool:
    for pattern in _patterns(path):
        if any(c in pattern for c in "*?["):
            if list(ROOT.glob(pattern)) or list(ROOT.glob(pattern + ".gz")):
                return True
        elif (ROOT / pattern).exists() or (ROOT / (pattern + ".gz")).exists():
            return True
        elif list(ROOT.glob(pattern + ".*")):  # an output stem: --out DIR/NAME writes NAME.csv
            return True
    return False


def _all_references():
    plain, old = {}, {}
    for page in PAGES:
        name = page.relative_to(ROOT).as_posix()
        paths, pairs = references(page.read_text(encoding="utf-8"))
        for p in paths:
            plain.setdefault(p, name)
        for pair in pairs:
            old.setdefault(pair, name)
    return plain, old


def test_every_named_benchmarks_path_exists():
    plain, _ = _all_references()
    assert len(plain) > 50  # the walk sees the pages' paths
    missing = sorted(f"{page}: {path}" for path, page in plain.items() if not _exists(path))
    assert missing == []


def _tree(commit: str) -> list[str] | None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    out = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", commit,
                          "--", "benchmarks"], capture_output=True, text=True)
    return out.stdout.split() if out.returncode == 0 else []


def test_paths_of_studies_that_left_the_tree_existed_at_their_commit():
    _, old = _all_references()
    if not old:
        pytest.skip("no page names a path at a commit")
    trees: dict[str, list[str] | None] = {}
    wrong = []
    for (commit, path), page in sorted(old.items()):
        tree = trees.setdefault(commit, _tree(commit))
        if tree is None:
            pytest.skip("no git history to check commits against")
        found = any(f == p or f == p + ".gz" or fnmatch.fnmatch(f, p)
                    or f.startswith(p.rstrip("/") + "/") for p in _patterns(path) for f in tree)
        if not found:
            wrong.append(f"{page}: {path} at {commit}")
    assert wrong == []


def test_references_are_read_as_the_pages_write_them():
    text = """Rows `benchmarks/results/x/a_{p,q}.jsonl` at commit 1234abc; see
[it](https://github.com/o/r/blob/abcdef0/benchmarks/experiments/s.py) and `benchmarks/zoo.py`.

```bash
R=benchmarks/results/zoo/options
python benchmarks/zoo.py run --out ${R}_$S.jsonl
```

```text
# at commit 1234abc
python benchmarks/experiments/gone.py benchmarks/results/gone/*.jsonl
```
"""
    plain, old = references(text)
    assert plain == {"benchmarks/zoo.py", "benchmarks/results/zoo/options*",
                     "benchmarks/results/zoo/options_$S.jsonl"}
    assert old == {("1234abc", "benchmarks/results/x/a_{p,q}.jsonl"),
                   ("abcdef0", "benchmarks/experiments/s.py"),
                   ("1234abc", "benchmarks/experiments/gone.py"),
                   ("1234abc", "benchmarks/results/gone/*.jsonl")}
    assert _patterns("benchmarks/results/x/a_{p,q}_${B}.jsonl") == [
        "benchmarks/results/x/a_p_*.jsonl", "benchmarks/results/x/a_q_*.jsonl"]
    assert _patterns("benchmarks/a_$V.jsonl,benchmarks/b.jsonl") == [
        "benchmarks/a_*.jsonl", "benchmarks/b.jsonl"]
