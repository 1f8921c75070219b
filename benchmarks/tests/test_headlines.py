"""The numbers the README and the results pages state agree with the committed rows.

The claims, the table checks and the coverage rules are in
``benchmarks/headlines.py``; these tests run them (rows and text only, no
fits: a few seconds) and show that a changed row makes its sentence fail.
A test failing here means a page and its rows disagree: change the rows, the
sentence and, where the computation changes, its claim together.

``docs/results/scale.md`` is checked like every other page (its first table
agrees with its rows); it is maintained with the scale measurements, so a
change of its table and rows needs the matching change of ``scale_table``.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from pathlib import Path

import headlines
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _history() -> bool:
    """Whether the checkout has the git history some claims read rows from (not a shallow copy)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return False
    done = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", "16e88b8^{commit}"],
                          capture_output=True)
    return done.returncode == 0


HISTORY = _history()


@pytest.fixture(scope="module")
def outcomes() -> list[headlines.Outcome]:
    return headlines.run_checks()


def test_every_claim_and_table_agrees_with_its_rows(outcomes):
    # without the git history, the claims on rows of earlier commits cannot be checked
    checked = [o for o in outcomes if HISTORY or not any(":" in f for f in o.files)]
    assert len(checked) > len(outcomes) / 2
    problems = [p for o in checked for p in o.problems]
    assert problems == [], "\n".join(problems)


def test_every_number_of_the_covered_pages_and_every_first_table_is_checked():
    problems = headlines.coverage_failures()
    assert problems == [], "\n".join(problems)


def test_the_checks_reach_every_page_the_headlines_are_on(outcomes):
    pages = {o.check.page for o in outcomes}
    results = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "results").glob("*.md")}
    assert {"README.md", "docs/getting_started.md", "docs/cli.md"} | results <= pages
    timings = "benchmarks/results/timings/timings.csv"
    timed = {o.check.page for o in outcomes if timings in o.files}
    assert {"README.md", "docs/getting_started.md", "docs/cli.md"} <= timed


def test_numbers_are_read_as_written():
    assert headlines.agrees("0.64", 0.6438) and not headlines.agrees("0.64", 0.6451)
    assert headlines.agrees("1,260", 1260) and headlines.agrees("seven", 7)
    assert not headlines.agrees("two", 2.4) and headlines.agrees("16.20", 16.2)
    assert not headlines.agrees("0.35", float("nan"))


def _edit_csv(path: Path, edit) -> None:
    """Rewrite a row file with ``edit(row)`` applied to each row."""
    text = path.read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text))
    rows = [edit(dict(r)) for r in reader]
    out = io.StringIO()
    writer = csv.DictWriter(out, reader.fieldnames, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")


def _sachs_creator_shd_18(row: dict) -> dict:
    if row["method"] == "CREATOR":
        row["shd"] = "18"
    return row


def _demo_three_times_slower(row: dict) -> dict:
    if row["step"] == "demo":
        row["seconds"] = str(3 * float(row["seconds"]))
    return row


@pytest.mark.parametrize("cited, edit, pages", [
    ("benchmarks/results/real_data/sachs_full.csv", _sachs_creator_shd_18,
     {"README.md", "docs/results/real_data.md"}),
    ("benchmarks/results/timings/timings.csv", _demo_three_times_slower,
     {"README.md", "docs/getting_started.md", "docs/cli.md"}),
])
def test_a_changed_row_makes_its_sentences_fail(outcomes, tmp_path, cited, edit, pages):
    readers = [o for o in outcomes if cited in o.files]
    assert {o.check.page for o in readers} >= pages
    # a copy of every page and row file those checks read (git history from the checkout)
    for name in set().union(*(o.files for o in readers)):
        if ":" in name:
            continue
        source = ROOT / name
        if not source.exists():
            source = source.with_name(source.name + ".gz")
        (tmp_path / source.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, tmp_path / source.relative_to(ROOT))

    def problems():
        chosen = {id(o.check) for o in readers}
        return [p for o in headlines.run_checks(tmp_path, git=ROOT,
                                                select=lambda c: id(c) in chosen)
                for p in o.problems]

    assert problems() == []  # the copy holds what the checks need
    _edit_csv(tmp_path / cited, edit)
    failed = problems()
    assert {p.split(":", 1)[0] for p in failed} == pages, failed
