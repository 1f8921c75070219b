"""The documentation is true to the code.

* Every example page shows its script, equal to ``examples/<name>.py``.
* One extras table (getting started), equal to pyproject.toml's extras; the
  README links to it and to ``examples/``.
* One test command and one quick-lane command everywhere.
* The built site (one full build with warnings as errors, the command CI
  runs) uses the theme, has a real footer, holds every subcommand's
  ``--help`` text as the parser prints it, and leaves the checkout clean.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
GETTING_STARTED = DOCS / "getting_started.md"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.S | re.M)
FULL_SUITE = "python -m pytest -q -n 2"
QUICK_LANE = 'python -m pytest -q -m "not slow" -n 2'


def _pages() -> list[Path]:
    return [README, *sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)]


# -- examples ------------------------------------------------------------------------------


@pytest.mark.parametrize("script", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_example_page_shows_the_script(script: Path):
    page = DOCS / "examples" / f"{script.stem}.md"
    sync = "python docs/_ext/example_pages.py writes it"
    assert page.exists(), f"no page docs/examples/{page.name} for examples/{script.name}: {sync}"
    blocks = [code for lang, code in FENCE.findall(page.read_text(encoding="utf-8"))
              if lang.strip() == "python"]
    assert len(blocks) == 1, f"{page.name}: expected the script as one python block"
    assert blocks[0] == script.read_text(encoding="utf-8"), (
        f"docs/examples/{page.name} does not show the current examples/{script.name}: {sync}")
    index = (DOCS / "examples" / "index.md").read_text(encoding="utf-8")
    assert re.search(rf"^{re.escape(script.stem)}$", index, re.M), "not in the examples index"


# -- extras --------------------------------------------------------------------------------


def _pyproject_extras() -> dict[str, list[str]]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data["project"]["optional-dependencies"]


def _extras_table(text: str) -> dict[str, tuple[str, str]]:
    """extra -> (adds, for) of the markdown table headed ``| extra | adds | for |``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if re.fullmatch(r"\|\s*extra\s*\|\s*adds\s*\|\s*for\s*\|", line.strip()))
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        name = re.fullmatch(r"`([^`]+)`", cells[0])
        assert name, f"extras table: first cell {cells[0]!r} is not an extra in backticks"
        rows[name.group(1)] = (cells[1], cells[2])
    return rows


def test_extras_table_lists_every_extra_with_what_it_installs():
    table = _extras_table(GETTING_STARTED.read_text(encoding="utf-8"))
    extras = _pyproject_extras()
    assert set(table) == set(extras)
    for extra, requirements in extras.items():
        adds, used_for = table[extra]
        for req in requirements:
            own = re.fullmatch(r"creator-plugin\[([^\]]+)\]", req.strip())
            if own:  # another extra of this package: named in backticks
                for other in own.group(1).split(","):
                    assert f"`{other.strip()}`" in adds, f"{extra}: {adds!r} omits `{other}`"
                continue
            name = re.match(r"[A-Za-z0-9._-]+", req).group(0)
            assert name.lower() in adds.lower(), f"{extra}: {adds!r} omits {name}"
        for path in re.findall(r"examples/\w+\.py", used_for):
            assert (ROOT / path).exists(), f"{extra}: {path} does not exist"


def test_one_extras_table_and_the_readme_links_it_and_the_examples():
    header = re.compile(r"^\|\s*extra\s*\|", re.M)
    holders = [p.relative_to(ROOT).as_posix() for p in _pages()
               if header.search(p.read_text(encoding="utf-8"))]
    assert holders == ["docs/getting_started.md"]
    readme = README.read_text(encoding="utf-8")
    assert "(docs/getting_started.md#set-up)" in readme
    assert "## Set up" in GETTING_STARTED.read_text(encoding="utf-8")
    assert "](examples/)" in readme


# -- the test command ----------------------------------------------------------------------


def test_one_test_command_everywhere():
    found = {}
    for page in [*_pages(), ROOT / ".ci" / "run"]:
        for command in re.findall(r"python -m pytest[^`\n]*", page.read_text(encoding="utf-8")):
            found.setdefault(command.strip(), []).append(page.relative_to(ROOT).as_posix())
    assert set(found) == {FULL_SUITE, QUICK_LANE}, found
    for page in ("README.md", "docs/getting_started.md"):
        assert page in found[FULL_SUITE] and page in found[QUICK_LANE]
    assert ".ci/run" in found[FULL_SUITE]


# -- the built site ------------------------------------------------------------------------


def _untracked_under_docs() -> set[str] | None:
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--",
                              "docs"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None  # not a git checkout
    return {line[3:] for line in out.stdout.splitlines() if line.startswith("??")}


def _build_site(out: Path) -> Path:
    """The documentation built as CI builds it (warnings are errors), into ``out``."""
    before = _untracked_under_docs()
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "-d", str(out / "doctrees"),
         str(DOCS), str(out / "html")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    after = _untracked_under_docs()
    if before is not None:
        assert after - before == set(), "building the docs left files in docs/"
    return out / "html"


def _text(page: Path) -> str:
    """The page's text, tags removed, entities resolved, whitespace collapsed."""
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))
    return re.sub(r"\s+", " ", text)


@pytest.mark.slow
def test_built_site(tmp_path):
    """One build (about 15 s of CPU), every check of the built pages."""
    pytest.importorskip("sphinx")
    site = _build_site(tmp_path)

    # the theme and a real footer
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "pydata-sphinx-theme" in index
    footer = re.search(r'<footer class="bd-footer">.*?</footer>', index, re.S).group(0)
    footer = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", footer)))
    assert "© Copyright 2026, the creator-plugin developers. Released under the MIT" in footer
    from creator_plugin import __version__

    assert f"creator-plugin {__version__}" in footer
    assert not re.search(r"©\s*\.", footer), footer

    # the API reference: field labels keep one line (the stylesheet linked on the page)
    assert "creator.css" in (site / "api.html").read_text(encoding="utf-8")
    css = (site / "_static" / "creator.css").read_text(encoding="utf-8")
    assert re.search(r"dl\.field-list > dt \{[^}]*white-space: nowrap", css)

    # the CLI page: every subcommand's --help, as the parser prints it
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from cli_reference import help_text, subcommands
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    page = _text(site / "cli.html")
    commands = list(subcommands())
    assert {"demo", "fit", "dims", "bench", "casestudy llm"} <= {" ".join(c) for c in commands}
    for words in commands:
        assert f"usage: creator {' '.join(words)}" in page, words
        assert re.sub(r"\s+", " ", help_text(words)).strip() in page, words

    # every example page shows its code on the site
    for script in sorted((ROOT / "examples").glob("*.py")):
        text = _text(site / "examples" / f"{script.stem}.html")
        for line in script.read_text(encoding="utf-8").splitlines()[-3:]:
            assert re.sub(r"\s+", " ", line).strip() in text, script.name


def test_docs_build_directory_is_ignored():
    if shutil.which("git") is None or _untracked_under_docs() is None:
        pytest.skip("not a git checkout")
    probe = subprocess.run(["git", "check-ignore", "-q", "docs/_build/html/index.html"],
                           cwd=ROOT)
    assert probe.returncode == 0, "docs/_build/ is not ignored"
