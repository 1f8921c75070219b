"""CSV outputs safe to open in a spreadsheet: one writer, formula prefixes neutralised.

Environment labels and column names used to be written verbatim, so a label
``=HYPERLINK(...)`` or ``=cmd|...`` was evaluated by the spreadsheet that
opened ``latents.csv``. Every CSV the package writes now goes through
:func:`creator_plugin._csv.write_csv`, and a test fails if another writer
appears in the package.
"""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creator_plugin import simulate
from creator_plugin._csv import (
    FORMULA_PREFIXES,
    neutralise,
    read_csv,
    restore,
    write_csv,
    written_by_creator,
)
from creator_plugin.cli import main
from creator_plugin.output_dir import OutputDir

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

ROOT = Path(__file__).resolve().parents[1]
QUICK = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))

HOSTILE_LABELS = ['=HYPERLINK("http://example.invalid","x")', "=cmd|' /C calc'!A0", "+1+1",
                  "-2", "@SUM(A1)", "\tlab", "'=quoted"]
HOSTILE_NAMES = ["=1+2", "+x", "-y", "@z", "plain"]


def _cells(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [c for row in csv.reader(fh) for c in row]


def _is_formula(cell: str) -> bool:
    return cell[:1] in FORMULA_PREFIXES and not _is_number(cell)


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module")
def fitted_output(tmp_path_factory):
    root = tmp_path_factory.mktemp("csv")
    sim = simulate(2, 3, 150, n_features=len(HOSTILE_NAMES), random_state=0)
    X, env = sim.stacked()
    df = pd.DataFrame(X, columns=HOSTILE_NAMES)
    labels = np.array(HOSTILE_LABELS[:3], dtype=object)
    df.insert(0, "=site", labels[env])
    df.to_csv(root / "data.csv", index=False)
    code = main(["fit", str(root / "data.csv"), "--env-column", "=site", "--n-latent", "2",
                 "--out", str(root / "out")])
    assert code == 0
    return root, list(labels)


def test_fit_outputs_have_no_formula_cell(fitted_output):
    root, labels = fitted_output
    tables = sorted((root / "out").glob("*.csv"))
    assert {p.name for p in tables} >= {"latents.csv", "weights.csv", "loadings.csv",
                                         "intercepts.csv", "noise_scales.csv"}
    for path in tables:
        bad = [c for c in _cells(path) if _is_formula(c)]
        assert not bad, (path.name, bad)
    latents = _cells(root / "out" / "latents.csv")
    assert "'=site" in latents and "'" + labels[0] in latents
    diag = json.loads((root / "out" / "diagnostics.json").read_text())
    assert sorted(diag["environment_labels"]) == sorted(labels)  # verbatim in JSON


def test_creator_reads_its_own_outputs_back(fitted_output, capsys):
    root, labels = fitted_output
    capsys.readouterr()
    code = main(["dims", str(root / "out" / "latents.csv"), "--env-column", "=site"])
    assert code == 0, capsys.readouterr().err
    lat = read_csv(root / "out" / "latents.csv")
    assert list(lat.columns)[0] == "=site"
    assert sorted(set(lat["=site"])) == sorted(labels)
    loadings = read_csv(root / "out" / "loadings.csv", index_col=0)
    assert list(loadings.index) == HOSTILE_NAMES


def _written(directory: Path, frame, name="t.csv", **kw) -> Path:
    """``frame`` written as creator writes an output (a directory with its marker)."""
    with OutputDir(directory).write({}) as tmp:
        write_csv(frame, tmp / name, **kw)
    return directory / name


def test_numbers_are_never_changed(tmp_path):
    df = pd.DataFrame({"x": [-1.5, 2.0, -0.0], "label": ["-1.5", "=A1", "ok"], "n": [-3, 4, 5]})
    path = _written(tmp_path / "out", df, index=False)
    rows = list(csv.reader(open(path, newline="")))
    assert rows[1] == ["-1.5", "'-1.5", "-3"]
    assert rows[2] == ["2.0", "'=A1", "4"]
    pd.testing.assert_frame_equal(read_csv(path), df)


def test_only_files_creator_wrote_lose_the_prefix(tmp_path, capsys):
    df = pd.DataFrame({"label": ["'-1", "-1", "'=x"]})
    path = _written(tmp_path / "out", df, index=False)
    assert written_by_creator(path)
    assert list(read_csv(path)["label"]) == ["'-1", "-1", "'=x"]
    copy = tmp_path / "copy.csv"
    copy.write_bytes(path.read_bytes())  # elsewhere, or edited: read as it is
    assert not written_by_creator(copy)
    assert list(read_csv(copy)["label"]) == ["''-1", "'-1", "''=x"]
    with open(path, "a") as fh:
        fh.write("'-2\n")
    assert not written_by_creator(path)


def test_labels_of_a_users_file_are_never_merged(tmp_path, capsys):
    sim = simulate(2, 2, 150, n_features=3, random_state=0)
    X, env = sim.stacked()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["lab"] = np.array(["-1", "'-1"], dtype=object)[env]
    df.to_csv(tmp_path / "d.csv", index=False)
    assert main(["fit", str(tmp_path / "d.csv"), "--env-column", "lab", "--n-latent", "2",
                 "--out", str(tmp_path / "o")]) == 0
    diag = json.loads((tmp_path / "o" / "diagnostics.json").read_text())
    assert sorted(diag["environment_labels"]) == ["'-1", "-1"]


@QUICK
@given(text=st.text(max_size=12),
       prefix=st.sampled_from(["", *FORMULA_PREFIXES, "'", "''", "'=", "''-"]))
def test_neutralise_is_safe_and_reversible(text, prefix):
    cell = prefix + text
    safe = neutralise(cell)
    assert restore(safe) == cell
    assert safe[:1] not in FORMULA_PREFIXES


@settings(max_examples=20, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(labels=st.lists(st.text(alphabet="=+-@\t\r\n'ab1 ", min_size=1, max_size=6),
                       min_size=1, max_size=5),
       values=st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32),
                       min_size=5, max_size=5))
def test_frames_round_trip_and_no_cell_is_a_formula(tmp_path_factory, labels, values):
    df = pd.DataFrame({"label": (labels * 5)[:5], "value": values})
    df.index = pd.Index([f"r{i}" for i in range(5)], name="=row")
    path = _written(tmp_path_factory.mktemp("rt") / "out", df)
    assert not [c for c in _cells(path) if _is_formula(c)]
    back = read_csv(path, index_col=0, keep_default_na=False, dtype={"label": str})
    assert list(back["label"]) == list(df["label"]) and back.index.name == "=row"
    np.testing.assert_array_equal(back["value"].to_numpy(), np.asarray(values, dtype=float))


def _csv_writers(path: Path) -> list[str]:
    """Calls in ``path`` that write CSV without :func:`write_csv`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
        base = getattr(getattr(fn, "value", None), "id", "")
        if name in ("to_csv", "savetxt", "DictWriter") or (name == "writer" and base == "csv") \
                or (name == "write_csv" and isinstance(fn, ast.Attribute)):
            found.append(f"{path.name}:{node.lineno} {name}")
        elif name in ("write_text", "open") and any(
                isinstance(c, ast.Constant) and isinstance(c.value, str)
                and c.value.endswith(".csv") for c in ast.walk(node)):
            found.append(f"{path.name}:{node.lineno} {name} of a .csv")
    return found


def test_no_other_csv_writer_in_the_package():
    files = [*(ROOT / "creator_plugin").rglob("*.py"), *(ROOT / "adapters").rglob("*.py")]
    assert len(files) > 20
    others = [w for f in files if f.name != "_csv.py" for w in _csv_writers(f)]
    assert others == [], "write CSV files with creator_plugin._csv.write_csv: " + str(others)


def test_the_writer_check_sees_a_writer(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import csv\nimport numpy as np\ndef f(df, p):\n    df.to_csv(p)\n"
                     "    csv.writer(p)\n    np.savetxt('x.csv', df)\n"
                     "    open('rows.csv', 'w')\n")
    assert len(_csv_writers(probe)) == 4
