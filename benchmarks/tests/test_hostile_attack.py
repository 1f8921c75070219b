"""The hostile-input attack: its committed rows, and a sample of it run again."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import hostile_attack as attack
import pytest

RESULTS = Path(__file__).resolve().parents[1] / "results" / "hostile"


@pytest.fixture(scope="module")
def rows():
    with open(RESULTS / "rows.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_committed_rows_cover_every_class_and_show_no_failure(rows):
    per_class = Counter(r["class"] for r in rows)
    assert len(rows) >= 300
    assert set(per_class) == set(attack.CLASSES)
    assert min(per_class.values()) >= 40, per_class
    bad = [f"{r['class']}/{r['case']}: {r['outcome']} {r['detail']}" for r in rows
           if r["outcome"] not in attack.GOOD]
    assert bad == []
    summary = json.loads((RESULTS / "summary.json").read_text())
    assert summary["inputs"] == summary["ok"] == len(rows) and summary["failures"] == []
    for cls, s in summary["classes"].items():
        assert s["inputs"] == per_class[cls]


@pytest.fixture(scope="module")
def cases():
    world = attack.World(54)
    yield attack.all_cases(world)
    shutil.rmtree(world.root, ignore_errors=True)


def test_committed_rows_are_those_of_the_script(rows, cases):
    assert [(r["class"], r["case"]) for r in rows] == [(c.cls, c.name) for c in cases]


def test_a_sample_of_the_attack_holds(cases):
    """One of the cheapest inputs of every class, run again on the code under test."""
    rows = attack.run_cases(attack.sample(cases, 1))
    assert len(rows) == len(attack.CLASSES)
    assert [r for r in rows if not r["ok"]] == []
