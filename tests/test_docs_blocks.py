"""Every code block of the README and the documentation runs.

Per page, in order, in one fresh temporary folder: ``python`` blocks as one
Python program (later blocks build on earlier ones), ``console`` / ``bash``
blocks as shell commands (a leading ``$ `` is the prompt). A block preceded by
``<!-- not-run: <reason> -->`` is skipped: install commands and runs longer than
a minute. The marker is checked to stand right before a block and nowhere else.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.S | re.M)
MARKER = re.compile(r"^<!-- not-run: (.+?) -->\s*$", re.M)
MARKER_ANY = re.compile(r"<!--\s*not-run")
SHELL = {"console", "bash", "sh", "shell"}
RUN = {"python"} | SHELL


def _blocks(text: str) -> list[tuple[str, str, bool]]:
    """(language, code, marked not-run) for every fenced block of a page."""
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        out.append((m.group(1).strip(), m.group(2), MARKER.match(before) is not None))
    return out


def _shell(code: str) -> str:
    lines = [line[2:] if line.startswith("$ ") else line for line in code.splitlines()]
    return "set -e\n" + "\n".join(lines) + "\n"


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_not_run_marker_stands_only_before_a_block_that_must_not_run():
    problems = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        marked_at = {m.end() for m in MARKER.finditer(text)}
        if len(MARKER_ANY.findall(text)) != len(marked_at):
            problems.append(f"{_name(page)}: a not-run marker without a reason")
        block_starts = set()
        for m in FENCE.finditer(text):
            block_starts.add(len(text[: m.start()].rstrip("\n")))
        for end in marked_at:
            if end not in block_starts:
                problems.append(f"{_name(page)}: a not-run marker not followed by a block")
        for lang, code, skipped in _blocks(text):
            if skipped and lang not in RUN:
                problems.append(f"{_name(page)}: not-run marker on a {lang!r} block")
            if not skipped and re.search(r"\bpip install\b", code):
                problems.append(f"{_name(page)}: an install command that would run")
    assert problems == []


def test_pages_have_runnable_blocks():
    """The walk sees the real pages: the README and the user guide have code that runs."""
    runnable = {_name(p): sum(lang in RUN and not s for lang, _, s in
                              _blocks(p.read_text(encoding="utf-8"))) for p in PAGES}
    assert runnable["README.md"] >= 2 and runnable["docs/getting_started.md"] >= 1
    assert sum(runnable.values()) >= 20


def _runnable_pages():
    return [p for p in PAGES
            if any(lang in RUN and not s for lang, _, s in _blocks(p.read_text(encoding="utf-8")))]


# One process per page runs its blocks in order: python blocks in one namespace (later
# blocks build on earlier ones), shell blocks in between, all in the page's folder.
DRIVER = """
import json, subprocess, sys, traceback
namespace = {"__name__": "__main__"}
for i, (lang, code) in enumerate(json.loads(sys.stdin.read())):
    try:
        if lang == "python":
            exec(compile(code, f"block {i}", "exec"), namespace)
        else:
            subprocess.run(["bash", "-c", code], check=True)
    except BaseException:
        sys.stdout.flush()
        print(f"BLOCK {i} ({lang}) FAILED:\\n{code}", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
"""


@pytest.mark.slow
@pytest.mark.parametrize("page", _runnable_pages(), ids=_name)
def test_page_blocks_run(page, tmp_path):
    import json

    env = {**os.environ, "MPLBACKEND": "Agg",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    blocks = [(lang, code if lang == "python" else _shell(code))
              for lang, code, skipped in _blocks(page.read_text(encoding="utf-8"))
              if lang in RUN and not skipped]
    proc = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(blocks), cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{_name(page)}:\n{proc.stderr[-4000:]}"
