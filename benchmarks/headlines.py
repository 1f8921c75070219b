"""The headline numbers of the README and the results pages, recomputed from their rows.

Every number a claim quotes is written in the claim's text in braces, exactly
as the page writes it (``"flagged {10} of the {11} wrong fits"``); the claim's
computation reads the committed rows and returns the values in the order of
the braces. A claim holds when its text, braces removed, is on its page
(whitespace aside) and every braced number is its value rounded as written
(``0.64`` holds for 0.6437, ``{seven}`` for 7). A table check regenerates the
numbers of one table of a page, row by row. Numbers of the covered pages that
no claim, table check or :class:`Given` (a setting or definition, with the
reason) covers are reported too, so a new sentence with a number needs its
claim.

``python benchmarks/headlines.py`` prints every claim with its values and the
failures; ``benchmarks/tests/test_headlines.py`` fails on any. Later
work that changes a headline changes its rows, its sentence and, where the
computation changes, its claim here together.

To add a claim: pick or write a small computation below (it receives a
:class:`Rows` and reads files only through it), then add
``Claim(page, text, compute)`` to :data:`CLAIMS` (or a :class:`Table` to
:data:`TABLES`).
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import json
import math
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

#: Pages whose every number must be covered (prose by claims or givens, tables by checks).
COVERED_PAGES = ("README.md", "docs/results/index.md")

#: Tables of the results pages that state settings, not measurements (page, header, why):
#: a results page's first table that is not one of these must have a table check.
SETTING_TABLES = (
    ("docs/results/peers.md", "| method (`creator bench` name) | module |",
     "the methods, their modules and assumptions"),
    ("docs/results/peers.md", "| family | generator | noise |",
     "the data models and their generators"),
    ("docs/results/zoo.md", "| family | what changes relative to the paper's workload |",
     "the workload families' definitions"),
)

# ---------------------------------------------------------------------------------------
# Reading rows


class Rows:
    """The row files under one checkout, read once each; every file read is recorded.

    ``root`` is the checkout (a temporary copy in the test of the test). Paths are
    relative to it; a ``.jsonl`` path is read as its ``.jsonl.gz`` when only that
    exists; ``at(commit, path)`` reads a file as it was at a commit, from the git
    history of ``git`` (default ``root``). ``touched`` collects every file read
    (cached or not) since it was last emptied: the files one check depends on.
    """

    def __init__(self, root: Path | str = ROOT, git: Path | str | None = None):
        self.root = Path(root)
        self.git = Path(git) if git is not None else self.root
        self.read: list[str] = []
        self.touched: set[str] = set()
        self._cache: dict = {}

    def _path(self, path: str) -> Path:
        full = self.root / path
        if not full.exists() and (full.parent / (full.name + ".gz")).exists():
            full = full.parent / (full.name + ".gz")
        return full

    def text(self, path: str) -> str:
        key = ("text", path)
        self.touched.add(path)
        if key not in self._cache:
            full = self._path(path)
            self.read.append(str(full.relative_to(self.root)))
            data = full.read_bytes()
            if full.suffix == ".gz":
                data = gzip.decompress(data)
            self._cache[key] = data.decode("utf-8")
        return self._cache[key]

    def files(self, pattern: str) -> list[str]:
        """The files matching ``pattern`` (plain or compressed, each once), sorted."""
        found = {}
        for p in sorted(self.root.glob(pattern)) + sorted(self.root.glob(pattern + ".gz")):
            rel = p.relative_to(self.root).as_posix()
            found.setdefault(rel.removesuffix(".gz"), rel.removesuffix(".gz"))
        if not found:
            raise FileNotFoundError(f"no row file matches {pattern}")
        return sorted(found)

    def jsonl(self, *patterns: str) -> list[dict]:
        out = []
        for pattern in patterns:
            names = self.files(pattern) if any(c in pattern for c in "*?[") else [pattern]
            for name in names:
                text = self.text(name)
                key = ("jsonl", name)
                if key not in self._cache:  # parsed once; callers do not change the records
                    self._cache[key] = [json.loads(line) for line in text.splitlines()
                                        if line.strip()]
                out += self._cache[key]
        return out

    def csv(self, path: str) -> list[dict]:
        return list(csv.DictReader(io.StringIO(self.text(path))))

    def at(self, commit: str, path: str) -> str:
        """The text of ``path`` at ``commit`` (``git show``)."""
        key = ("at", commit, path)
        self.touched.add(f"{commit}:{path}")
        if key not in self._cache:
            done = subprocess.run(["git", "-C", str(self.git), "show", f"{commit}:{path}"],
                                  capture_output=True)
            if done.returncode != 0:
                raise LookupError(f"{path} at {commit}: {done.stderr.decode()[:200]}")
            self.read.append(f"{commit}:{path}")
            self._cache[key] = done.stdout.decode("utf-8")
        return self._cache[key]

    def jsonl_at(self, commit: str, *paths: str) -> list[dict]:
        return [json.loads(line) for p in paths for line in self.at(commit, p).splitlines()
                if line.strip()]


# ---------------------------------------------------------------------------------------
# Numbers as written

WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())} | {"once": 1, "twice": 2}
NUMBER = re.compile(r"(?<![\w.])[−-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[−-]?\d+)?(?![\w])")


def parse(written: str) -> tuple[float, float]:
    """``(value, half of the last written digit)`` of a number as a page writes it."""
    w = written.strip().replace("−", "-")
    if w.lower() in WORDS:
        return float(WORDS[w.lower()]), 0.0
    w = w.replace(",", "") if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", w) else w
    mantissa, _, exponent = w.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    scale = 10.0 ** (int(exponent) if exponent else 0)
    return float(w), 0.5 * 10.0 ** -decimals * scale


def agrees(written: str, value: float) -> bool:
    """Whether ``value`` rounds to ``written`` (a tie either way)."""
    target, half = parse(written)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    return abs(float(value) - target) <= half * (1 + 1e-9) + 1e-12


def numbers(text: str) -> list[str]:
    """The numbers of a table cell or a text, as written."""
    return NUMBER.findall(text.replace("**", ""))


# ---------------------------------------------------------------------------------------
# Claims and tables


@dataclass(frozen=True)
class Claim:
    """A quoted passage of a page; its braced numbers are the values of ``compute``."""

    page: str
    text: str
    compute: Callable[[Rows], Sequence[float]]

    @property
    def quote(self) -> str:
        return " ".join(re.sub(r"\{([^{}]+)\}", r"\1", self.text).split())

    @property
    def written(self) -> list[str]:
        return re.findall(r"\{([^{}]+)\}", self.text)


@dataclass(frozen=True)
class Given:
    """A quoted passage whose numbers are settings or definitions, not measurements."""

    page: str
    text: str
    why: str

    @property
    def quote(self) -> str:
        return " ".join(self.text.split())


@dataclass(frozen=True)
class Table:
    """One table of a page (found by its header line) recomputed row by row.

    ``compute`` returns ``{key: [values]}``: the key is the row's first
    ``key_columns`` cells joined by " | " (bold and code marks removed), the
    values every number of the other cells in order. Every row of the page's
    table must be computed; with ``all_rows`` every computed row must be on the page.
    """

    page: str
    header: str
    compute: Callable[[Rows], dict]
    key_columns: int = 1
    all_rows: bool = True
    rename: dict = field(default_factory=dict)


def _clean_cell(cell: str) -> str:
    return " ".join(cell.replace("**", "").replace("`", "").split())


def table_rows(text: str, header: str) -> list[list[str]]:
    """The body rows (lists of cells) of the table of ``text`` whose header starts so."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and _clean_cell(line).startswith(_clean_cell(header)):
            body = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                body.append([c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]])
            return body
    raise LookupError(f"no table with the header {header!r}")


def markdown_rows(markdown: str, header: str, key_columns: int = 1) -> dict:
    """``{key: [values]}`` of a generated markdown table, as :class:`Table` compares."""
    return {" | ".join(_clean_cell(c) for c in row[:key_columns]):
            [parse(n)[0] for c in row[key_columns:] for n in numbers(c)]
            for row in table_rows(markdown, header)}


# ---------------------------------------------------------------------------------------
# Computations: small, reusable, each reading rows only through ``rows``


def _mean(xs) -> float:
    return float(np.mean([float(x) for x in xs]))


@functools.cache
def _zoo_current_key(d: int, params: str) -> str:
    import zoo
    return zoo._settings(d, zoo.params_key(json.loads(params)))


def zoo_rows(rows: Rows, path: str, *, family: str | None = None, params: dict | None = None,
             d: int | None = None, seeds: range | None = None) -> list[dict]:
    """Rows of a zoo-style file fitted with the current settings (one per seed, the last)."""
    import zoo
    key = zoo.params_key(params or {})
    out = {}
    for r in rows.jsonl(path):
        if ((family and r["family"] != family) or (d and r["d"] != d)
                or zoo.params_key(json.loads(r["params"])) != key
                or (seeds is not None and r["seed"] not in seeds)):
            continue
        if r.get("settings") != _zoo_current_key(r["d"], r["params"]):
            continue
        out[(r["simulator"], r["family"], r["d"], r["K"], r["n"], r["seed"])] = r
    return list(out.values())


def paired(records: list[dict], a: str, b: str) -> dict:
    """Two settings fitted to the same data sets (rows holding ``{a: {...}, b: {...}}``).

    Returns the count, both mean SHDs, the mean paired difference b - a and its
    standard error, how many data sets b made better and worse, and b's CPU time
    over a's.
    """
    records = [r for r in records if "failed" not in r]
    x = np.array([r[a]["shd"] for r in records], float)
    y = np.array([r[b]["shd"] for r in records], float)
    diff = y - x
    cpu = (sum(r[b]["cpu"] for r in records) / sum(r[a]["cpu"] for r in records)
           if "cpu" in records[0][a] else float("nan"))
    return {"n": len(records), "a": x.mean(), "b": y.mean(), "diff": diff.mean(),
            "se": diff.std(ddof=1) / np.sqrt(len(diff)), "better": int((diff < 0).sum()),
            "worse": int((diff > 0).sum()), "cpu": cpu}


def grid(rows: Rows, path: str = "benchmarks/results/results.csv") -> dict:
    """``{(method, d, K, setting): (mean SHD, mean LocR², mean seconds, fits)}`` of a grid."""
    return grid_text(rows.text(path))


def grid_text(text: str) -> dict:
    """:func:`grid` of a grid file's text."""
    cells: dict = {}
    for r in csv.DictReader(io.StringIO(text)):
        if r["status"] != "ok":
            continue
        key = (r["method"], int(r["n_latent"]), int(r["n_environments"]), int(r["setting"]))
        cells.setdefault(key, []).append(r)
    return {k: (_mean(r["shd"] for r in v), _mean(r["locr2"] for r in v),
                _mean(r["seconds"] for r in v), len(v)) for k, v in cells.items()}


GRID_METHODS = ("CREATOR", "LiNGCReL", "PCA+MultiGroupDirectLiNGAM", "PCA+ICA-LiNGAM (pooled)")


def grid_table(rows: Rows, seconds: bool, label: str) -> dict:
    """The README's method-grid table (``label``: "d = 3, K = 3, setting 1" keys) or the
    accuracy page's ("3 | 3 | 1" keys, no seconds)."""
    g = grid(rows)
    out = {}
    for (_, d, K, s) in sorted(k for k in g if k[0] == "CREATOR"):
        key = (f"d = {d}, K = {K}, setting {s}" if label == "words" else f"{d} | {K} | {s}")
        vals = []
        for m in GRID_METHODS:
            shd, locr2, sec, _ = g[(m, d, K, s)]
            vals += [shd, locr2] + ([sec] if seconds else [])
        out[key] = vals
    return out


def grid_fits(rows: Rows) -> tuple[float, ...]:
    """Fits per (method, cell) of the method grid: one number when every cell has as many."""
    counts = {v[3] for v in grid(rows).values()}
    n = {int(r["n_samples"]) for r in rows.csv("benchmarks/results/results.csv")}
    if len(counts) != 1 or len(n) != 1:
        return (float("nan"), float("nan"))
    return (counts.pop(), n.pop())


def quality_files(rows: Rows, workload: str, resamples: bool = False) -> list[dict]:
    tag = "_resamples8" if resamples else ""
    return [r for s in ("1000-1399", "1400-1799")
            for r in rows.csv(f"benchmarks/results/quality_{workload}{tag}_seeds{s}.csv")]


def verdict_hard(rows: Rows, resamples: bool) -> dict:
    """Wrong (SHD ≥ 3) and good (SHD ≤ 1) fits of the hard workload's 800, and how many flagged."""
    fits = quality_files(rows, "hard", resamples)
    wrong = [r for r in fits if int(r["shd"]) >= 3]
    good = [r for r in fits if int(r["shd"]) <= 1]
    return {"fits": len(fits), "wrong": len(wrong), "caught": sum(bool(r["issues"]) for r in wrong),
            "good": len(good), "false": sum(bool(r["issues"]) for r in good)}


def verdict_cost(rows: Rows, resamples: bool, together: bool) -> list[float]:
    """Per block of the hard workload: the verdict's seconds over the fit's (+1 if ``together``)."""
    tag = "_resamples8" if resamples else ""
    out = []
    for s in ("1000-1399", "1400-1799"):
        fits = rows.csv(f"benchmarks/results/quality_hard{tag}_seeds{s}.csv")
        ratio = (sum(float(r["verdict_seconds"]) for r in fits)
                 / sum(float(r["fit_seconds"]) for r in fits))
        out.append(ratio + (1 if together else 0))
    return out


def verdict_rates(rows: Rows, workload: str) -> dict:
    """Per (d, K) of the first block of a workload: the share of fits with any issue and
    with a warning (an issue or the ordering's WeakEvidenceWarning), and the fits."""
    fits = rows.csv(f"benchmarks/results/quality_{workload}_seeds1000-1049.csv")
    cells: dict = {}
    for r in fits:
        cells.setdefault((int(r["d"]), int(r["K"])), []).append(r)
    return {k: {"issue": np.mean([bool(r["issues"]) for r in v]),
                "warning": np.mean([bool(r["issues"]) or r["weak_evidence_warning"] == "True"
                                    for r in v]),
                "not_identifiable": sum("not_identifiable" in r["issues"] for r in v),
                "n": len(v)} for k, v in cells.items()}


def verdict_table(rows: Rows) -> dict:
    """The verdict page's first table."""
    gauss = verdict_rates(rows, "gaussian")
    homog = verdict_rates(rows, "homogeneous")
    default = verdict_rates(rows, "default")
    hard, thorough = verdict_hard(rows, False), verdict_hard(rows, True)
    d_range = sorted({d for d, _ in gauss})

    def span(ds):
        shares = [100 * default[k]["issue"] for k in default if k[0] in ds]
        return [min(shares), max(shares)]

    # "rarely warns at d ≥ rarely": the smallest d from which no cell warns in 10 % or more
    rarely = min(d for d in d_range
                 if all(v["issue"] < 0.1 for k, v in default.items() if k[0] >= d))

    return {
        "Gaussian noise (not identifiable)": [
            100 * min(v["warning"] for v in gauss.values()), sum(v["n"] for v in gauss.values()),
            d_range[0], d_range[-1]],
        "homogeneous environments": [
            100 * np.mean([v["warning"] for v in homog.values()]),
            sum(round(v["warning"] * v["n"]) for v in homog.values()),
            sum(v["n"] for v in homog.values())],
        "the default workload (model holds)": [
            sum(v["not_identifiable"] for v in default.values()),
            sum(v["n"] for v in default.values()), *span((4, 5)), 4, 5, *span((2,)), 2,
            *span((3,)), 3, rarely],
        "wrong fits at d = K = 5 (SHD ≥ 3)": [
            100 * thorough["caught"] / thorough["wrong"], thorough["caught"], thorough["wrong"],
            8, 100 * hard["caught"] / hard["wrong"], hard["caught"], hard["wrong"]],
        "good fits at d = K = 5 (SHD ≤ 1)": [
            100 * thorough["false"] / thorough["good"], thorough["false"], thorough["good"],
            8, 100 * hard["false"] / hard["good"], hard["false"], hard["good"]],
    }


def default_candidate(rows: Rows, *sets: str) -> dict:
    """The frozen check of the graph revision as a default (rows at commit 16e88b8)."""
    paths = [f"benchmarks/results/default_candidate/fresh_101000_{s}.jsonl" for s in sets]
    return paired(rows.jsonl_at("16e88b8", *paths), "default", "candidate")


REVISION_SETS = ("bar", "bar-independent", "d10", "d10-independent", "grid", "flag",
                 "flag-independent")


def small_k_rule(rows: Rows) -> dict:
    paths = [f"benchmarks/results/small_k_rule/fresh_102000_{s}.jsonl" for s in "ab"]
    return paired(rows.jsonl_at("16e88b8", *paths), "default", "off")


def method_grid_revision(rows: Rows) -> list[float]:
    """Cells of the method grid at d = 5 and 7 better / equal with the revision (against the rows
    before it, both without the branches), and at d = 2 and 3 with K = 2d worse, with the one
    worse cell's SHD before and after."""
    before = grid(rows, "benchmarks/results/results_before_revision_default.csv")
    nobranch = grid(rows, "benchmarks/results/results_before_branches_default.csv")
    big = [(before[k][0], nobranch[k][0]) for k in before
           if k[0] == "CREATOR" and k[1] in (5, 7)]
    small = [(before[k][0], nobranch[k][0]) for k in before
             if k[0] == "CREATOR" and k[1] in (2, 3) and k[2] == 2 * k[1]]
    worse = [p for p in small if p[1] > p[0] + 1e-9]
    return [5, 7, sum(b < a - 1e-9 for a, b in big), len(big), len(worse), len(small), 2, 3, 2,
            *(worse[0] if len(worse) == 1 else (math.nan, math.nan))]


def branch_rows(rows: Rows, which: str = "d*") -> list[dict]:
    return [r for B in ("104000", "105000")
            for r in rows.jsonl(f"benchmarks/results/branch/fresh_{B}_{which}.jsonl")
            if not r["set"].startswith("d15")]


def grid_branch_changes(rows: Rows) -> list[float]:
    """CREATOR's fits at d = 7 of the method grid changed by the branches, all better."""
    now = {(r["n_environments"], r["setting"], r["seed"]): float(r["shd"])
           for r in rows.csv("benchmarks/results/results.csv")
           if r["method"] == "CREATOR" and r["n_latent"] == "7"}
    before = {(r["n_environments"], r["setting"], r["seed"]): float(r["shd"])
              for r in rows.csv("benchmarks/results/results_before_branches_default.csv")
              if r["method"] == "CREATOR" and r["n_latent"] == "7"}
    changed = [k for k in now if now[k] != before[k]]
    better = all(now[k] < before[k] for k in changed)
    return [len(changed) if better else math.nan, len(now), 7]


def search_rows(rows: Rows) -> list[dict]:
    return rows.jsonl("benchmarks/results/fitted_revision/fresh_107000_*.jsonl")


def refinement_rows(rows: Rows) -> list[dict]:
    return rows.jsonl("benchmarks/results/final_refinement/fresh_109000_*.jsonl")


def measurement_noise_advice(rows: Rows) -> dict:
    """The 100 ``measured`` data sets of seeds 98000-98049, defaults and the correction."""
    out = {}
    for name, params in (("default", {}), ("auto", {"refine__measurement_noise": True})):
        fits = [r for s in ("package", "independent") for r in zoo_rows(
            rows, f"benchmarks/results/zoo/options_98000_{s}_{name}.jsonl", params=params)]
        out[name] = fits
    return {"n": len(out["default"]), "default": _mean(r["shd"] for r in out["default"]),
            "auto": _mean(r["shd"] for r in out["auto"])}


def measured_d10(rows: Rows, params: dict | None = None) -> dict:
    """``measured`` at d = 10, tuning seeds 0-19, current settings (the zoo's tuning rows)."""
    fits = zoo_rows(rows, "benchmarks/results/zoo/tuning.jsonl", family="measured", d=10,
                    params=params, seeds=range(20))
    return {"n": len(fits), "shd": _mean(r["shd"] for r in fits),
            "flagged": sum(bool(r["flagged"]) for r in fits),
            "p": {r["n"] for r in fits}}


def measured_d10_cells(rows: Rows, params: dict) -> list[float]:
    """``measured`` at d = 10 (the zoo's tuning rows, current settings): the data sets, the
    mean SHD, the share of correct orders in percent, the median seconds per fit."""
    fits = zoo_rows(rows, "benchmarks/results/zoo/tuning.jsonl", family="measured", d=10,
                    params=params, seeds=range(20))
    return [len(fits), _mean(r["shd"] for r in fits),
            100 * _mean(bool(r["correct_order"]) for r in fits),
            float(np.median([r["seconds"] for r in fits]))]


def sachs(rows: Rows) -> dict:
    return {r["method"]: r for r in rows.csv("benchmarks/results/real_data/sachs_full.csv")}


def sachs_warnings(rows: Rows) -> int:
    """The verdict's warnings on the Sachs fit, as the example printed them."""
    log = rows.text("benchmarks/results/real_data/sachs_full.log").splitlines()
    start = next(i for i, line in enumerate(log) if "verdict warnings" in line)
    return sum(1 for line in log[start + 1:] if line.startswith("  - "))


def sachs_table(rows: Rows) -> dict:
    names = {
        "CREATOR (n_latent=11, matched)": "CREATOR",
        "PC (causal-learn, pooled, Fisher-z 0.01)": "PC (causal-learn, pooled)",
        "PC (causal-learn, centred per block, Fisher-z 0.01)":
            "PC (causal-learn, centred per block)",
        "GES (causal-learn, pooled, BIC)": "GES (causal-learn, pooled)",
        "GES (causal-learn, centred per block, BIC)": "GES (causal-learn, centred per block)",
        "CD-NOD (causal-learn, block index as context, Fisher-z 0.01)":
            "CD-NOD (causal-learn, block index)",
        "DirectLiNGAM (lingam, pooled, \\|b\\| > 0.05)": "DirectLiNGAM (lingam, pooled)",
        "MultiGroupDirectLiNGAM (lingam, nine blocks, mean rule)":
            "MultiGroupDirectLiNGAM (lingam, mean rule)",
        "MultiGroupDirectLiNGAM (union rule)": "MultiGroupDirectLiNGAM (lingam, union rule)",
        "MultiGroupDirectLiNGAM (majority rule)":
            "MultiGroupDirectLiNGAM (lingam, majority rule)",
        "empty graph": "empty graph",
    }
    table = sachs(rows)
    out = {}
    for label, method in names.items():
        r = table[method]
        pred = int(r["directed_pred"])
        skeleton = float(r["skeleton_recall"]) > 0
        vals = [int(r["shd"]), int(r["directed_tp"]), pred]
        vals += [float(r["directed_precision"])] if pred else []  # "–" when nothing predicted
        vals += [float(r["directed_recall"])]
        vals += [float(r["skeleton_precision"])] if skeleton else []
        vals += [float(r["skeleton_recall"])]
        out[label] = vals
    return out


def llm_runs(rows: Rows) -> list[dict]:
    return rows.csv("benchmarks/results/llm/headline_runs.csv")


def llm_headline(rows: Rows, representation: str, method: str) -> dict:
    """One (representation, method) of the LLM headline: correct edges, cells, exact DAGs,
    runs, mean edges, mean LocR² against the grades, fits flagged."""
    fits = [r for r in llm_runs(rows)
            if r["representation"] == representation and r["method"] == method]
    edges = ("BG->CD", "BG->ED", "CD->ED")
    return {"correct": sum(r[e] == "True" for r in fits for e in edges), "cells": 3 * len(fits),
            "exact": sum(r["exact_dag"] == "True" for r in fits), "runs": len(fits),
            "edges": _mean(r["n_edges"] for r in fits),
            "locr2": _mean(r["locr2_truth"] for r in fits),
            "flagged": sum(bool(r["quality_issues"]) for r in fits)}


def llm_table(rows: Rows) -> dict:
    """The LLM page's first table, from the headline's per-run rows (its labels shortened:
    the page gives the flagged count without the issue kinds)."""
    import llm_headline_table
    import pandas as pd
    runs = pd.read_csv(io.StringIO(rows.text("benchmarks/results/llm/headline_runs.csv")))
    design = json.loads(rows.text("benchmarks/results/llm/design.json"))
    generated = markdown_rows(llm_headline_table.markdown(runs, design),
                              "| representation | method", 2)
    representations = {"paper sketch": "paper sketch", "pooled+sketch": "pooled + sketch to 30",
                       "pooled": "pooled, unsketched"}
    methods = {"CREATOR (paper)": "CREATOR (paper preset)",
               "complete DAG in CREATOR (paper)'s matched order":
                   "complete DAG in the preset's matched order"}
    out = {}
    for key, vals in generated.items():
        rep, method = key.split(" | ")
        rep, method = representations.get(rep, rep), methods.get(method, method)
        out[f"{rep} | {method}"] = vals[:8] if method.startswith("CREATOR") else vals
    return out


def signal_first_step(rows: Rows) -> dict:
    """Rows "first step" of the LLM signal table: the range of the cells' mean CV R² of the
    grades and the largest mean top-3 share in the grades, over the encoder's layers."""
    fits = [r for r in rows.csv("benchmarks/results/llm/signal_rows.csv")
            if r["stage"] == "first step"]
    layers = sorted({r["layer"] for r in fits})
    cv = [_mean(r[f"cv_r2_{g}"] for r in fits if r["layer"] == layer)
          for layer in layers for g in ("BG", "CD", "ED")]
    share = [_mean(r["top3_share"] for r in fits if r["layer"] == layer) for layer in layers]
    p = {int(r["p"]) for r in fits}
    return {"cv": (min(cv), max(cv)), "share": max(share), "p": p.pop() if len(p) == 1 else 0}


def timing(rows: Rows, step: str, kind: str = "warm") -> dict:
    """The last session's runs of one step of ``benchmarks/timings.py``: wall and CPU seconds
    (median, smallest, largest), the load average, the packages counted."""
    runs = [r for r in rows.csv("benchmarks/results/timings/timings.csv")
            if r["step"] == step and r["kind"] == kind]
    last = max(r["session"] for r in runs)
    runs = [r for r in runs if r["session"] == last]
    wall = [float(r["seconds"]) for r in runs]
    cpu = [float(r["cpu_seconds"]) for r in runs]
    return {"wall": float(np.median(wall)), "wall_min": min(wall), "wall_max": max(wall),
            "cpu": float(np.median(cpu)), "load": max(float(r["load1"]) for r in runs),
            "packages": runs[0]["packages"], "runs": len(runs),
            "ok": all(r["exit_code"] == "0" for r in runs)}


def constant(name: str):
    """A constant of the package, ``"module.NAME"``."""
    import importlib
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def refine_rule_table(rows: Rows) -> dict:
    k_min = constant("creator_plugin.refine.revision.REVISION_MIN_ENVIRONMENTS")
    branches = constant("creator_plugin.refine.order_branches.AUTO_ORDER_BRANCHES")
    b_low, b_high = constant("creator_plugin.refine.order_branches.AUTO_BRANCH_LATENTS")
    s_low, s_high = constant("creator_plugin.refine.graph_search.AUTO_SEARCH_LATENTS")
    l_low, l_high = constant("creator_plugin.refine.likelihood.AUTO_LIKELIHOOD_LATENTS")
    return {"graph revision (revise_graph)": [k_min],
            "order branches (order_branches)": [branches, b_low, b_high],
            "graph search (search_graph)": [s_low, s_high],
            "likelihood disentanglement (disentangle)": [l_low, l_high],
            "measurement-noise correction (measurement_noise)": []}


def refine_compare_table(rows: Rows) -> dict:
    """The refine page's table of the core alone beside ``"auto"``, as
    ``benchmarks/refine_compare.py table`` builds it from its rows."""
    import refine_compare
    return markdown_rows(refine_compare.table(
        rows.jsonl("benchmarks/results/refine/refine_compare.jsonl")), "| d | family", 2)


def scale_table(rows: Rows) -> dict:
    """The scale page's first table: median CPU seconds per fit as d grows."""
    files = {10: ("curve_d10_new_defaults.csv", 0.2),
             20: ("d20_K20_n5000_p02_50000_candidate_20261128.csv", 0.2),
             30: ("d30_K30_n5000_p01_50000_new_defaults.csv", 0.1),
             40: ("curve_d40_new_defaults.csv", 0.075), 50: ("curve_d50_new_defaults.csv", 0.06)}
    out, previous = {}, None
    for d, (name, prob) in files.items():
        fits = [r for r in rows.csv(f"benchmarks/results/speed/{name}")
                if r["checkout"] == "this"]
        cpu = float(np.median([float(r["cpu"]) for r in fits]))
        growth = ([math.log(cpu / previous[1]) / math.log(d / previous[0])] if previous else [])
        out[str(d)] = [prob, len(fits), cpu, *growth, _mean(r["shd"] for r in fits),
                       100 * np.mean([r["correct_order"] == "True" for r in fits]),
                       _mean(r["locr2"] for r in fits)]
        previous = (d, cpu)
    return out


def scale_versions_table(rows: Rows) -> dict:
    """The scale page's first table: this version against f741e1b seed by seed, as
    ``benchmarks/scale_lab.py compare`` builds it from its rows."""
    import scale_lab
    files = ["d5_n1000.csv", "d10_n2000.csv", "d40.csv", "d50.csv"]
    return markdown_rows(scale_lab.compare(
        [io.StringIO(rows.text(f"benchmarks/results/scale/{name}")) for name in files],
        "f741e1b", "4aada38"), "| d | K | n | seeds |")


def scale_bound_table(rows: Rows) -> dict:
    """The scale page's table of a14cc31 against f741e1b, as
    ``benchmarks/scale_lab.py compare`` builds it from its rows."""
    import scale_lab
    files = ["d5_n1000_a14cc31.csv", "d10_n2000_a14cc31.csv", "d40_a14cc31.csv",
             "d50_a14cc31.csv"]
    return markdown_rows(scale_lab.compare(
        [io.StringIO(rows.text(f"benchmarks/results/scale/{name}")) for name in files],
        "f741e1b", "a14cc31"), "| d | K | n | seeds |")


def scale_small_table(rows: Rows) -> dict:
    """The scale page's table of 6971ca0 against f741e1b at d = 5 and d = 10, as
    ``benchmarks/scale_lab.py compare`` builds it from its rows."""
    import scale_lab
    files = ["d5_n1000_6971ca0.csv", "d10_n2000_6971ca0.csv"]
    return markdown_rows(scale_lab.compare(
        [io.StringIO(rows.text(f"benchmarks/results/scale/{name}")) for name in files],
        "f741e1b", "6971ca0"), "| d | K | n | seeds |")


def scale_current_table(rows: Rows) -> dict:
    """The scale page's table of aa8ac19 against f741e1b at d = 5, 10 and 40, as
    ``benchmarks/scale_lab.py compare`` builds it from its rows."""
    import scale_lab
    files = ["d5_n1000_aa8ac19.csv", "d10_n2000_aa8ac19.csv", "d40_aa8ac19.csv"]
    return markdown_rows(scale_lab.compare(
        [io.StringIO(rows.text(f"benchmarks/results/scale/{name}")) for name in files],
        "f741e1b", "aa8ac19"), "| d | K | n | seeds |")


def zoo_table(rows: Rows) -> dict:
    import zoo
    fits = [r for r in rows.jsonl("benchmarks/results/zoo/package_d5.jsonl")
            if r["seed"] <= 10049 and zoo.current(r, "{}")]
    return markdown_rows(zoo.summarize(fits), "| family |")


SPARSE_ROWS = "benchmarks/results/sparse_changes/peers_320000.csv"


def _sparse_frame(rows: Rows):
    import pandas as pd
    return pd.read_csv(io.StringIO(rows.text(SPARSE_ROWS)))


def sparse_peers_table(rows: Rows) -> dict:
    """The sparse-changes page's SHD / MCC table, as ``peers_field.py --table`` prints it."""
    import peers_field
    return markdown_rows(peers_field.markdown(_sparse_frame(rows)), "| generator |")


def sparse_bar_table(rows: Rows) -> dict:
    import sparse_changes_report
    return markdown_rows(sparse_changes_report.bar_table(_sparse_frame(rows)), "| generator |")


def sparse_change_table(rows: Rows) -> dict:
    import sparse_changes_report
    return markdown_rows(sparse_changes_report.change_table(_sparse_frame(rows)),
                         "| generator |")


def sparse_zoo_table(rows: Rows, d: int, name: str | None = None) -> dict:
    import sparse_changes_zoo
    path = f"benchmarks/results/sparse_changes/{name or f'zoo_d{d}.csv'}"
    label = "this version" if name else "route"
    return markdown_rows(sparse_changes_zoo.table(io.StringIO(rows.text(path)), label),
                         f"| family, d = {d} |")


def sparse_false_table(rows: Rows, seeds: int = 720000, first: str = "family") -> dict:
    """The sparse-changes page's tables of the families where the route should not be taken."""
    import sparse_route_false
    path = f"benchmarks/results/sparse_changes/false_route_{seeds}.csv"
    text = sparse_route_false.table(io.StringIO(rows.text(path)), first=first)
    return markdown_rows(text, f"| {first} |", key_columns=2)


def peers_table(rows: Rows, path: str) -> dict:
    """The peers page's SHD / MCC table of a run, as ``benchmarks/peers.py`` builds it: per
    workload and method (in the rows' order) the mean corrected SHD and mean MCC of the fits
    that finished, and "(finished/all fits)" when some did not."""
    fits = rows.csv(path)
    methods = list(dict.fromkeys(r["method"] for r in fits))
    out = {}
    for w in dict.fromkeys(r["workload"] for r in fits):
        vals = []
        for m in methods:
            cell = [r for r in fits if r["workload"] == w and r["method"] == m]
            done = [r for r in cell if r["status"] == "ok"]
            if not done:
                vals += [0, len(cell)]  # "— (0/n fits)"
                continue
            vals += [_mean(r["shd_corr"] for r in done), _mean(r["mcc"] for r in done)]
            vals += [len(done), len(cell)] if len(done) != len(cell) else []
        out[w] = vals
    return out


def peers_validation(rows: Rows) -> dict:
    """The peers page's validation table: each re-implementation against its authors' code."""
    inputs = {("LinCD", "exact"): "exact precisions",
              ("LinCD", "sampled"): "Wishart precisions, n = 2000"}
    out = {}
    for path, tol in (("benchmarks/results/peers/validation.csv", "0.001"),
                      ("benchmarks/results/peers/validation_atol0.01.csv", "0.01")):
        groups: dict = {}
        for r in rows.csv(path):
            if r["method"] == "LinCD" and tol != "0.001":
                continue  # LinCD has no edge tolerance; its rows are those of the first file
            groups.setdefault((r["method"], r["input"]), []).append(r)
        for (method, kind), fits in groups.items():
            label = inputs.get((method, kind), f"2000 samples, ATOL_EDGE {tol}")
            same = [len(fits), sum(r["same_graph"] == "True" for r in fits), len(fits)]
            if method == "LinCD":
                same += [sum(r["same_targets"] == "True" for r in fits), len(fits)]
            vals = same + [max(abs(float(r["mcc_diff"])) for r in fits),
                           _mean(r["mcc_authors"] for r in fits),
                           _mean(r["mcc_ours"] for r in fits),
                           _mean(r["shd_authors"] for r in fits),
                           _mean(r["shd_ours"] for r in fits)]
            if method == "LinCD":
                vals += [max(float(r["max_abs_diff_H"]) for r in fits),
                         max(float(r["max_abs_diff_B0"]) for r in fits)]
            out[f"{method} | {label}"] = vals
    return out


def leaderboard_table(rows: Rows) -> dict:
    import tempfile

    import leaderboard
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("environments", "selection", "methods", "latents", "bootstrap"):
            Path(tmp, f"{name}.csv").write_text(
                rows.text(f"benchmarks/results/leaderboard/{name}.csv"), encoding="utf-8")
        return markdown_rows(leaderboard.markdown(tmp), "| environment (architecture")


# ---------------------------------------------------------------------------------------
# The claims

R = "README.md"
IDX = "docs/results/index.md"
GS = "docs/getting_started.md"
CLI = "docs/cli.md"
MODEL = "docs/model.md"
ACC = "docs/results/accuracy.md"
VERDICT = "docs/results/verdict.md"
ZOO = "docs/results/zoo.md"
REFINE = "docs/results/refine.md"
PEERS = "docs/results/peers.md"


def _same(values: Sequence[float], within: float) -> list[float]:
    """One value for several that a page states once ("0.33 times on both blocks")."""
    return [values[0]] if max(values) - min(values) <= within else [math.nan]


def _timing(rows: Rows, step: str, kind: str = "warm") -> dict:
    """:func:`timing`, every value NaN when a run of its session failed."""
    t = timing(rows, step, kind)
    return t if t["ok"] else dict.fromkeys(t, math.nan)


def before_branches_d7(rows: Rows) -> list[float]:
    """CREATOR's mean SHD in the method grid's four d = 7 cells without the branches and now,
    the fits changed (all better), and the seconds without them over the seconds now."""
    now = grid(rows)
    before = grid(rows, "benchmarks/results/results_before_branches_default.csv")
    cells = sorted(k for k in now if k[0] == "CREATOR" and k[1] == 7)
    seconds = (sum(before[k][2] * before[k][3] for k in cells)
               / sum(now[k][2] * now[k][3] for k in cells))
    return [*(before[k][0] for k in cells), *(now[k][0] for k in cells),
            grid_branch_changes(rows)[0], seconds]


def revision_small_cells(rows: Rows) -> list[float]:
    """The method grid's d = 2 and 3 cells worse with the revision when it ran with any number
    of environments (rows at ed4a5cc against the rows before it), and the cells with K = 2d
    (where it runs now) worse against the rows without the branches."""
    before = grid(rows, "benchmarks/results/results_before_revision_default.csv")
    then = grid_text(rows.at("ed4a5cc", "benchmarks/results/results.csv"))
    small = [k for k in before if k[0] == "CREATOR" and k[1] in (2, 3)]
    worse_then = sum(then[k][0] > before[k][0] + 1e-9 for k in small)
    now = method_grid_revision(rows)
    return [worse_then, len(small), 2, 3, 2, 4, 2, *now[-2:]]


def best_in_peers_table(rows: Rows, workload: str) -> list[float]:
    """CREATOR's SHD and MCC on one workload of the 20-seed peers table (NaN unless both are
    the best of the table's methods)."""
    vals = peers_table(rows, "benchmarks/results/peers/table_20seeds.csv")[workload]
    shd, mcc = vals[0::2], vals[1::2]
    if len(shd) != 7 or shd[0] != min(shd) or mcc[0] != max(mcc):
        return [math.nan, math.nan]
    return [shd[0], mcc[0]]


def _v(*keys):
    """A computation returning ``[result[k] for k in keys]`` of another computation."""
    def pick(fn):
        def compute(rows):
            result = fn(rows)
            return [result[k] for k in keys]
        return compute
    return pick


def _branches(rows: Rows, which: str = "d*") -> dict:
    return paired(branch_rows(rows, which), "default", "branches")


def _grid_words(rows: Rows) -> dict:
    return grid_table(rows, True, "words")


def _llm_claim(rows: Rows) -> list[float]:
    """CREATOR's and LiNGCReL's correct edges on the paper sketch, the cells, a random complete
    order's expectation (half the cells); every CREATOR fit must be flagged."""
    c = llm_headline(rows, "paper sketch", "CREATOR")
    if c["flagged"] != c["runs"]:
        return [math.nan] * 4
    return [c["correct"], c["cells"], llm_headline(rows, "paper sketch", "LiNGCReL")["correct"],
            c["cells"] / 2]


def _revision_claim(rows: Rows) -> list[float]:
    everything = default_candidate(rows, *REVISION_SETS)
    bar = default_candidate(rows, "bar", "bar-independent")
    package = default_candidate(rows, "d10")
    independent = default_candidate(rows, "d10-independent")
    if package["n"] != independent["n"]:
        return [math.nan] * 12
    return [everything["cpu"], everything["n"], 5, bar["n"], bar["a"], bar["b"], 10,
            package["a"], package["b"], independent["a"], independent["b"], package["n"]]


def _likelihood_claim(rows: Rows) -> list[float]:
    fits = refinement_rows(rows)
    f = paired(fits, "default", "likelihood")
    if round(f["cpu"], 1) != 1.0:  # "at the same time per fit"
        return [math.nan] * 11
    return [f["n"], 8, 10, 12, f["a"], f["b"], f["better"], f["worse"],
            _mean(x["default"]["locr2"] for x in fits),
            _mean(x["likelihood"]["locr2"] for x in fits), 5]


CLAIMS: list[Claim] = [
    # README: the verdict
    Claim(R, "at d = K = {5} it flagged {10} of the {11} wrong fits (SHD ≥ {3}) of {800}, the "
             "default verdict {6}",
          lambda r: [5, (t := verdict_hard(r, True))["caught"], t["wrong"], 3, t["fits"],
                     verdict_hard(r, False)["caught"]]),
    # README and index: the method grid's caption
    Claim(R, "Mean SHD / mean LocR² / seconds per fit on simulated data, {50} seeds per row, "
             "n = {1000} rows per environment", lambda r: grid_fits(r)),
    Claim(IDX, "Mean SHD / mean LocR² / seconds per fit, {50} seeds per row, n = {1000} rows "
               "per environment", lambda r: grid_fits(r)),
    # README: the refine steps
    Claim(R, "and with {7} to {15} latents it branches at the ordering's closest calls, with "
             "{8} to {12} it searches the finished graph",
          lambda r: [*constant("creator_plugin.refine.order_branches.AUTO_BRANCH_LATENTS"),
                     *constant("creator_plugin.refine.graph_search.AUTO_SEARCH_LATENTS")]),
    Claim(R, "(not on each: at d = {10} the branches left the independent simulator's at "
             "{0.64} → {0.63})",
          lambda r: [10, *_v("a", "b")(lambda rr: _branches(rr, "d10-independent"))(r)]),
    Claim(R, "with ten latents and {5} % measurement noise the fits fail and the verdict flags "
             "most of them ({16} of {20})",
          lambda r: [5, (m := measured_d10(r))["flagged"], m["n"]]),
    # README: Sachs
    Claim(R, "it scores SHD {17} against a published {18}-edge graph (the empty graph: {18}; "
             "causal-learn PC: {25} on the pooled rows, {20} on the rows centred per block as "
             "CREATOR centres them; MultiGroupDirectLiNGAM: {17} when an edge's mean |b| over "
             "the blocks exceeds {0.05}, {20} when |b| > {0.05} in any block) and the verdict "
             "raises {five} warnings",
          lambda r: [int((s := sachs(r))["CREATOR"]["shd"]), int(s["empty graph"]["shd"]),
                     int(s["empty graph"]["shd"]), int(s["PC (causal-learn, pooled)"]["shd"]),
                     int(s["PC (causal-learn, centred per block)"]["shd"]),
                     int(s["MultiGroupDirectLiNGAM (lingam, mean rule)"]["shd"]), 0.05,
                     int(s["MultiGroupDirectLiNGAM (lingam, union rule)"]["shd"]), 0.05,
                     sachs_warnings(r)]),
    # README: the language-model study
    Claim(R, "two-step sketch to p = {30}",
          lambda r: [json.loads(r.text("benchmarks/results/llm/design.json"))["headline"]["p"]]),
    Claim(R, "CREATOR finds {2} of {27} edges, LiNGCReL {9} and a random complete order {13.5} "
             "in expectation; the verdict flags every CREATOR fit",
          lambda r: _llm_claim(r)),
    Claim(R, "(mean LocR² {0.03}, same rows)",
          lambda r: [llm_headline(r, "paper sketch", "CREATOR")["locr2"]]),
    Claim(R, "a ridge regression on its {768} numbers still reads them (CV R² {0.10}–{0.74}), "
             "but at most {0.04} of the variance of its top three principal components is "
             "linear in them",
          lambda r: [(s := signal_first_step(r))["p"], *s["cv"], s["share"]]),
    # index: the revision
    Claim(IDX, "makes a fit about {1.2} times faster). On {1,260} data sets drawn after that "
               "default was frozen it lowered the mean SHD of six workload families at d = {5} "
               "({600} data sets, two simulators) from {0.41} to {0.36} and at d = {10} from "
               "{1.04} to {0.35} and from {1.14} to {0.69} ({80} data sets on each simulator;",
          lambda r: _revision_claim(r)),
    Claim(IDX, "these d = {10} and {7} fits were made before the branches below were a default), "
               "and on `simulate` at d = {5} and {7} from {0.38} to {0.31} ({200} data sets)",
          lambda r: [10, 7, 5, 7, (g := default_candidate(r, "grid"))["a"], g["b"], g["n"]]),
    Claim(IDX, "on {900} data sets with d = {2} to {4} and K = {2} or {3} (two simulators), drawn "
               "after that rule was fixed, the mean SHD without it was lower by {0.014} "
               "(standard error {0.009};",
          lambda r: [(k := small_k_rule(r))["n"], 2, 4, 2, 3, -k["diff"], k["se"]]),
    Claim(IDX, "it was better at d = {5} and {7} in {seven} of {eight} cells, the eighth equal, "
               "and worse in {one} of the {four} cells at d = {2} and {3} where it runs "
               "(K = {2}d; {0.02} to {0.06})", method_grid_revision),
    # index: the branches
    Claim(IDX, "With {7} to {15} latents and at least as many environments, the fit also branches",
          lambda r: constant("creator_plugin.refine.order_branches.AUTO_BRANCH_LATENTS")),
    Claim(IDX, "at {three} times the time",
          lambda r: [round(_branches(r)["cpu"])]),
    Claim(IDX, "On {520} data sets at d = {7} and {10} drawn after it was designed (two blocks of "
               "fresh seeds, two simulators) it lowered the mean SHD from {0.64} to {0.47} "
               "({41} better, {10} worse); on the package's simulator at d = {10} from {1.05} to "
               "{0.63}, on the independent one at d = {10} not at all ({0.64} to {0.63}). At "
               "d = {5} it did not help",
          lambda r: [(b := _branches(r))["n"], 7, 10, b["a"], b["b"], b["better"], b["worse"],
                     10, (p := _branches(r, "d10"))["a"], p["b"], 10,
                     (i := _branches(r, "d10-independent"))["a"], i["b"], 5]),
    Claim(IDX, "it changed {nine} of the {200} fits at d = {7}, all for the better",
          grid_branch_changes),
    # index: the search
    Claim(IDX, "With {8} to {12} latents and at least as many environments, the fit then searches",
          lambda r: constant("creator_plugin.refine.graph_search.AUTO_SEARCH_LATENTS")),
    Claim(IDX, "at about {twice} the time",
          lambda r: [round(paired([x for x in search_rows(r) if "d10" in x["set"]],
                                  "off", "search")["cpu"])]),
    Claim(IDX, "On {220} data sets at d = {8}, {10} and {12} drawn after its design was frozen (at "
               "d = {10} from two simulators) it lowered the mean SHD from {0.55} to {0.30} "
               "({40} better, {3} worse); an earlier design that also searched at d = {15} did "
               "not pass its check",
          lambda r: [(s := paired(search_rows(r), "off", "search"))["n"], 8, 10, 12, 10, s["a"],
                     s["b"], s["better"], s["worse"], 15]),
    Claim(IDX, "d = {5} it made fits worse and at d = {7} it changed nothing on tuning data",
          lambda r: [5, 7]),
    # index: the likelihood disentanglement
    Claim(IDX, "With {8} to {12} latents the default",
          lambda r: constant("creator_plugin.refine.likelihood.AUTO_LIKELIHOOD_LATENTS")),
    Claim(IDX, "{220} data sets at d = {8}, {10} and {12} drawn after its design was frozen it "
               "lowered the mean SHD from {0.35} to {0.28} ({2} better, {1} worse) and raised "
               "the mean LocR² from {0.981} to {0.992}, at the same time per fit; at d = {5} it "
               "made features slightly worse",
          lambda r: _likelihood_claim(r)),
    # index: measurement noise
    Claim(IDX, "on {100} data sets with {5} % measurement noise it lowered the mean SHD from "
               "{0.79} to {0.58}",
          lambda r: [(m := measurement_noise_advice(r))["n"], 5, m["default"], m["auto"]]),
    Claim(IDX, "With ten latents, {40} measurements and {5} % measurement noise the fits fail "
               "(mean SHD {16.20} on {20} simulated data sets, far too many edges kept, and "
               "{11.30} with",
          lambda r: [4 * 10, 5, (m := measured_d10(r))["shd"], m["n"], measured_d10(
              r, {"refine__order_branches": 0, "refine__search_graph": False})["shd"]]),
    Claim(IDX, "and the verdict flags {16} of the {20}",
          lambda r: [(m := measured_d10(r))["flagged"], m["n"]]),
    # index: scale
    Claim(IDX, "the time per fit against an earlier version of the package, up to d = {50}",
          lambda r: [max(int(k) for k in scale_table(r))]),
    # the other results pages: the sentences corrected against their rows
    Claim(MODEL, "with ten latents, {40} measurements and {5} % measurement noise the fits fail "
                 "(mean SHD {16.20} on {20} simulated data sets with the defaults, {16} of them "
                 "flagged, and {11.30} without the ordering's branches and the search of the "
                 "finished graph",
          lambda r: [40, 5, (m := measured_d10(r))["shd"], m["n"], m["flagged"], measured_d10(
              r, {"refine__order_branches": 0, "refine__search_graph": False})["shd"]]),
    Claim(ACC, "CREATOR's mean SHD at d = {7} was {0.28}, {0.64}, {0.00} and {0.02} (rows in the "
               "order of the table; now {0.24}, {0.42}, {0.00}, {0.02}: {nine} fits changed, all "
               "for the better), in {0.42} times the seconds (the four cells' total)",
          lambda r: [7, *before_branches_d7(r)]),
    Claim(VERDICT, "the verdict's seconds over the fit's: {9.6} and {9.5} times on the two "
                   "blocks; fit and verdict together {10.6} and {10.5} times the fit alone), the "
                   "default verdict a third of the fit's time ({0.33} times on both blocks; "
                   "together {1.3} times)",
          lambda r: [*verdict_cost(r, True, False), *verdict_cost(r, True, True),
                     *_same(verdict_cost(r, False, False), 0.01),
                     *_same(verdict_cost(r, False, True), 0.1)]),
    Claim(ZOO, "the revision made {four} of the {eight} d = {2} and {3} cells worse; with the "
               "rule below it runs in the four with K = 2d and is worse in one of them (d = {2}, "
               "K = {4}, setting {2}: {0.02} → {0.06})",
          lambda r: revision_small_cells(r)),
    Claim(ZOO, "the same {20} data sets have mean SHD {11.30} ({60} % correct order) at a median "
               "{22} s per fit, and without the graph revision as well {11.50} ({60} %, {6.6} s)",
          lambda r: [*measured_d10_cells(r, {"refine__order_branches": 0,
                                             "refine__search_graph": False}),
                     *measured_d10_cells(r, {"refine__order_branches": 0,
                                             "refine__search_graph": False,
                                             "refine__revise_graph": False})[1:]]),
    Claim(REFINE, "it lowered the mean SHD from {0.35} to {0.28} (two better, one worse) and "
                  "raised the mean LocR² from {0.981} to {0.992}",
          lambda r: [(x := _likelihood_claim(r))[4], x[5], x[8], x[9]]),
    Claim(PEERS, "of the seven methods of the 20-seed table, CREATOR had the best SHD and MCC on "
                 "`multi-hard-laplace` ({2.05} / {0.82})",
          lambda r: best_in_peers_table(r, "multi-hard-laplace")),
    # timings (benchmarks/timings.py; rows benchmarks/results/timings/timings.csv)
    Claim(R, "prints the recovered DAG next to the truth with the metrics (about {two} seconds)",
          lambda r: [round(_timing(r, "demo")["wall"])]),
    Claim(CLI, "with the metrics (about {two} seconds)",
          lambda r: [round(_timing(r, "demo")["wall"])]),
    Claim(GS, "prints the recovered DAG next to the truth and the metrics, in about {two} "
              "seconds)",
          lambda r: [round(_timing(r, "demo")["wall"])]),
    Claim(GS, "{12} packages with their dependencies, about {50} s into a fresh virtual "
              "environment on the 2-core development machine",
          lambda r: [int((t := _timing(r, "install_core", "cold"))["packages"]), t["wall"]]),
    Claim(GS, "With `all` a fresh virtual environment holds {62} packages, installed in about "
              "{two} minutes on the same machine",
          lambda r: [int((t := _timing(r, "install_all", "cold"))["packages"]),
                     round(t["wall"] / 60)]),
]

GIVEN: list[Given] = [
    Given(R, "1. **Choose", "a list's numbering"),
    Given(R, "2. **Read the verdict.**", "a list's numbering"),
    Given(R, "3. **Run the bootstrap**", "a list's numbering"),
    Given(R, "which tests the k-factor model for k = 1, 2, ...", "the definition of the test"),
    Given(R, "(SHD 0 and LocR² 1 are exact; seconds on a shared 2-core machine",
          "definitions of the scores and the machine"),
    Given(R, "On the Sachs flow-cytometry data (11 proteins, 9 assumed condition blocks)",
          "the data set (tests/test_real_data_example.py checks its shape and blocks)"),
    Given(R, "This does not reproduce the paper's 15 of 18, the paper's number on its own data",
          "the paper's printed number, not a measurement here"),
    Given(IDX, "recovered latent DAG (0 is exact)", "a definition"),
    Given(IDX, "(1 is exact)", "a definition"),
    Given(IDX, "2-core machine", "the machine"),
    Given(IDX, "More cells (d = 2 to 7, K = d and 2d, both settings)",
          "the accuracy page's grid, checked there as a table"),
]

SPARSE = "docs/results/sparse_changes.md"

TABLES: list[Table] = [
    Table(SPARSE, "| generator | CREATOR | LiNGCReL |", sparse_peers_table),
    Table(SPARSE, "| generator | seeds | CREATOR SHD / MCC | best peer |", sparse_bar_table),
    Table(SPARSE, "| generator | fits | cells right | targets found |", sparse_change_table),
    Table(SPARSE, "| family | version | fits | route taken |", sparse_false_table,
          key_columns=2),
    Table(SPARSE, "| family, seeds 730000 on | version |",
          lambda r: sparse_false_table(r, 730000, "family, seeds 730000 on"), key_columns=2),
    Table(SPARSE, "| family, d = 5 | seeds | route taken | mean SHD (this version)",
          lambda r: sparse_zoo_table(r, 5, "zoo_d5_420000.csv")),
    Table(SPARSE, "| family, d = 5 | seeds | route taken | mean SHD (route)",
          lambda r: sparse_zoo_table(r, 5)),
    Table(SPARSE, "| family, d = 10 | seeds | route taken | mean SHD (this version)",
          lambda r: sparse_zoo_table(r, 10, "zoo_d10_440000.csv")),
    Table(SPARSE, "| family, d = 10 | seeds | route taken | mean SHD (route)",
          lambda r: sparse_zoo_table(r, 10)),
    Table(R, "| workload (d, K, setting) | CREATOR |", _grid_words, all_rows=False),
    Table(IDX, "| workload (d, K, setting) | CREATOR SHD", _grid_words, all_rows=False),
    Table("docs/results/accuracy.md", "| d | K | setting | CREATOR |",
          lambda r: grid_table(r, False, "numbers"), key_columns=3),
    Table("docs/results/verdict.md", "| situation | what was measured |", verdict_table),
    Table("docs/results/scale.md", "| d | edge probability | seeds | median CPU s", scale_table),
    Table("docs/results/scale.md", "| d | K | n | seeds | f741e1b median CPU s | 4aada38",
          scale_versions_table),
    Table("docs/results/scale.md", "| d | K | n | seeds | f741e1b median CPU s | a14cc31",
          scale_bound_table),
    Table("docs/results/scale.md", "| d | K | n | seeds | f741e1b median CPU s | 6971ca0",
          scale_small_table),
    Table("docs/results/scale.md", "| d | K | n | seeds | f741e1b median CPU s | aa8ac19",
          scale_current_table),
    Table("docs/results/zoo.md", "| family | fits | mean SHD (SE)", zoo_table),
    Table("docs/results/refine.md", "| step (`RefineOptions` field) | module |",
          refine_rule_table),
    Table("docs/results/refine.md", "| d | family | data sets | mean SHD, `refine=None`",
          refine_compare_table, key_columns=2),
    Table("docs/results/real_data.md", "| method | SHD | directed TP", sachs_table),
    Table("docs/results/real_data_leaderboard.md", "| environment (architecture, parameters)",
          leaderboard_table),
    Table("docs/results/llm.md", "| representation | method | correct edges", llm_table,
          key_columns=2, all_rows=False),
    Table("docs/results/peers.md", "| method | input | seeds | same graph", peers_validation,
          key_columns=2),
    Table("docs/results/peers.md", "| workload | CREATOR | LiNGCReL | PCA+MultiGroupDirectLiNGAM "
                                   "| PCA+ICA-LiNGAM (pooled) | LinCD | LSCALE-I (hard) | "
                                   "LSCALE-I (soft) |",
          lambda r: peers_table(r, "benchmarks/results/peers/table_20seeds.csv")),
]


# ---------------------------------------------------------------------------------------
# Checking


def prose(text: str) -> str:
    """A page's text without code blocks, comments and tables, whitespace collapsed."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"^([ \t]*)```.*?^\1```", " ", text, flags=re.S | re.M)
    text = "\n".join(" " if line.lstrip().startswith("|") else line
                     for line in text.splitlines())
    return " ".join(text.split())


def check_claim(claim: Claim, rows: Rows) -> str | None:
    """None when the claim holds, else what disagrees."""
    page = prose((rows.root / claim.page).read_text(encoding="utf-8"))
    if claim.quote not in page:
        return f"{claim.page}: not on the page: {claim.quote!r}"
    try:
        values = list(claim.compute(rows))
    except (LookupError, FileNotFoundError, KeyError, ValueError, ZeroDivisionError) as exc:
        return f"{claim.page}: {claim.quote[:60]!r}: the rows could not be read: {exc!r}"
    if len(values) != len(claim.written):
        return (f"{claim.page}: {claim.quote[:60]!r}: {len(claim.written)} numbers written, "
                f"{len(values)} computed")
    wrong = [f"{w} (rows: {v:.6g})" for w, v in zip(claim.written, values)
             if not agrees(w, float(v))]
    return f"{claim.page}: {claim.quote[:80]!r}: {', '.join(wrong)}" if wrong else None


def check_table(table: Table, rows: Rows) -> list[str]:
    text = (rows.root / table.page).read_text(encoding="utf-8")
    try:
        body = table_rows(text, table.header)
        computed = table.compute(rows)
    except (LookupError, FileNotFoundError, KeyError, ValueError) as exc:
        return [f"{table.page}: table {table.header[:40]!r}: {exc!r}"]
    problems, seen = [], set()
    for row in body:
        key = " | ".join(_clean_cell(c) for c in row[:table.key_columns])
        seen.add(key)
        if key not in computed:
            problems.append(f"{table.page}: row {key!r} is not computed from the rows")
            continue
        written = [n for c in row[table.key_columns:] for n in numbers(c)]
        values = list(computed[key])
        if len(written) != len(values) or not all(
                agrees(w, float(v)) for w, v in zip(written, values)):
            problems.append(f"{table.page}: row {key!r}: page {written}, rows "
                            f"{[round(float(v), 4) for v in values]}")
    if table.all_rows:
        problems += [f"{table.page}: computed row {k!r} is not on the page"
                     for k in computed if k not in seen]
    return problems


def uncovered(page: str, root: Path = ROOT) -> list[str]:
    """Numbers of a covered page's prose that no claim or given quotes."""
    text = prose((root / page).read_text(encoding="utf-8"))
    spans = []
    for quoted in [c.quote for c in CLAIMS if c.page == page] + [
            g.quote for g in GIVEN if g.page == page]:
        start = text.find(quoted)
        while start >= 0:
            spans.append((start, start + len(quoted)))
            start = text.find(quoted, start + 1)
    masks = [m.span() for m in re.finditer(r"`[^`]*`|\]\([^)]*\)", text)]
    out = []
    for m in NUMBER.finditer(text):
        inside = any(a <= m.start() and m.end() <= b for a, b in spans + masks)
        if not inside:
            out.append(f"{page}: {text[max(0, m.start() - 40):m.end() + 20]!r}")
    return out


def uncovered_tables(page: str, root: Path = ROOT) -> list[str]:
    """Tables of a covered page that no table check covers."""
    text = (root / page).read_text(encoding="utf-8")
    text = re.sub(r"^([ \t]*)```.*?^\1```", " ", text, flags=re.S | re.M)
    lines = text.splitlines()
    headers = [line for i, line in enumerate(lines) if line.startswith("|")
               and (i == 0 or not lines[i - 1].startswith("|"))]
    checked = [t.header for t in TABLES if t.page == page]
    return [f"{page}: table {h[:60]!r} has no check" for h in headers
            if not any(_clean_cell(h).startswith(_clean_cell(c)) for c in checked)]


@dataclass
class Outcome:
    """One claim or table check: what disagrees (empty when it holds) and the files it read
    (its page, its rows; ``commit:path`` for rows read from the git history)."""

    check: Claim | Table
    problems: list[str]
    files: set[str]


def run_checks(root: Path | str = ROOT, git: Path | str | None = None,
               select: Callable[[Claim | Table], bool] | None = None) -> list[Outcome]:
    """Every claim and table check (or those ``select`` keeps) on the checkout at ``root``."""
    rows = Rows(root, git)
    out = []
    for check in [*CLAIMS, *TABLES]:
        if select is not None and not select(check):
            continue
        rows.touched = {check.page}
        if isinstance(check, Claim):
            problems = [p] if (p := check_claim(check, rows)) else []
        else:
            problems = check_table(check, rows)
        out.append(Outcome(check, problems, set(rows.touched)))
    return out


def page_tables(page: str, root: Path | str = ROOT) -> list[str]:
    """The header lines of a page's tables (code blocks left out), in order."""
    text = (Path(root) / page).read_text(encoding="utf-8")
    text = re.sub(r"^([ \t]*)```.*?^\1```", " ", text, flags=re.S | re.M)
    lines = text.splitlines()
    return [line for i, line in enumerate(lines) if line.startswith("|")
            and (i == 0 or not lines[i - 1].startswith("|"))]


def first_measured_table(page: str, root: Path | str = ROOT) -> str | None:
    """The header of a page's first table that :data:`SETTING_TABLES` does not list."""
    settings = [_clean_cell(h) for p, h, _ in SETTING_TABLES if p == page]
    for header in page_tables(page, root):
        if not any(_clean_cell(header).startswith(s) for s in settings):
            return header
    return None


def unchecked_first_tables(root: Path | str = ROOT) -> list[str]:
    """Results pages whose first measured table has no table check."""
    out = []
    for path in sorted((Path(root) / "docs" / "results").glob("*.md")):
        page = path.relative_to(root).as_posix()
        header = first_measured_table(page, root)
        if header is None:
            continue
        if not any(t.page == page and _clean_cell(header).startswith(_clean_cell(t.header))
                   for t in TABLES):
            out.append(f"{page}: its first table {header[:60]!r} has no check")
    return out


def coverage_failures(root: Path | str = ROOT) -> list[str]:
    """Numbers and tables of the covered pages that no claim, given or table check covers."""
    root = Path(root)
    return [p for page in COVERED_PAGES
            for p in uncovered(page, root) + uncovered_tables(page, root)
            ] + unchecked_first_tables(root)


def failures(root: Path | str = ROOT, git: Path | str | None = None) -> list[str]:
    """Every claim, table and coverage failure of the checkout at ``root``."""
    return [p for o in run_checks(root, git) for p in o.problems] + coverage_failures(root)


def main() -> int:
    rows = Rows()
    for claim in CLAIMS:
        try:
            values = [f"{float(v):.4g}" for v in claim.compute(rows)]
        except Exception as exc:  # noqa: BLE001 - a report, the test reports it too
            values = [repr(exc)]
        print(f"{claim.page}: {claim.quote[:70]}...\n    written {claim.written}\n"
              f"    rows    {values}")
    problems = failures()
    print("\n".join(["", f"{len(problems)} failures", *problems]))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
