"""The Open LLM Leaderboard as multi-environment data: a loader and a walkthrough.

The data
--------
Jin, Syrgkanis, Kakade & Zhang (2025, "Discovering hierarchical latent
capabilities of language models via causal representation learning",
arXiv:2506.10378) analyse Open LLM Leaderboard scores with a linear causal
representation model, treating the fine-tunes of one base model as one
environment. Their repository ``github.com/hlzhang109/causal-eval`` ships a
copy of the leaderboard as ``data/open_llm_leaderboard.csv`` (commit
:data:`LEADERBOARD_COMMIT`, SHA-256 :data:`LEADERBOARD_SHA256`; 3,827 models).
The repository has no licence: the file is not redistributed here. Download
it yourself and pass its path to :func:`load_open_llm_leaderboard`.

Which columns, and why
----------------------
The six benchmarks of the leaderboard's second version -- IFEval, BBH,
MATH Lvl 5, GPQA, MUSR and MMLU-PRO -- in the leaderboard's **normalised**
form (:data:`SCORE_COLUMNS`: the columns without the `` Raw`` suffix, scores
rescaled so that the random-guess baseline of every benchmark is 0 and a
perfect score 100). These are the columns the authors' analysis reads (the
benchmark list of their notebook ``scripts/main.ipynb``, whose figures go to
a folder named ``Normalized``); the raw accuracies are on benchmark-specific
chance levels, which would put a constant offset into every benchmark.

Environments
------------
The paper's environments are base models with at least 100 fine-tunes
(:data:`MIN_ROWS`). The authors identified every model's base model from its
name and parameter count, in a table their repository does not ship. The
file's own ``Base Model`` column does not give those groups: "Removed"
(models no longer on the Hub) is its only value with 100 rows or more, and
its largest real base model has 93. :func:`load_open_llm_leaderboard`
therefore groups by the base model's **shape** by default: the
``Architecture`` and ``#Params (B)`` columns, which fine-tuning and merging
do not change. The shape cannot tell two base models of the same size and
architecture apart (Llama-3-8B and Llama-3.1-8B are one environment,
Qwen2-7B and Qwen2.5-7B another), which the paper keeps separate.
``group_by="Base Model"`` (or any other column) groups by that column
instead.

The walkthrough
---------------
:func:`leaderboard_walkthrough` runs, on the same rows, CREATOR (with
:func:`creator_plugin.select_n_latent`, the verdict and the bootstrap), the
LiNGCReL reconstruction, PCA + MultiGroupDirectLiNGAM and causal-learn's
RLCD (the benchmark's methods, :mod:`creator_plugin.benchmark.baselines`),
and names every recovered latent by the benchmark it correlates with most,
as the authors name theirs. docs/results/leaderboard.md sets the results
beside the published analysis.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._csv import read_csv, write_csv

__all__ = ["LEADERBOARD_COMMIT", "LEADERBOARD_SHA256", "LeaderboardData", "MIN_ROWS",
           "PUBLISHED_CHAIN", "SCORE_COLUMNS", "leaderboard_walkthrough",
           "load_open_llm_leaderboard", "published_pairs", "write_example_leaderboard"]

#: The commit of ``github.com/hlzhang109/causal-eval`` whose
#: ``data/open_llm_leaderboard.csv`` the walkthrough's rows were computed on.
LEADERBOARD_COMMIT = "ca2a96bbc28dfe796a9a4d5a5442f2c4b2c2ca2b"
#: SHA-256 of that file.
LEADERBOARD_SHA256 = "e65a031f535336a2350192027c37c32170850bd6d8a6b7b0e679e9f1417dc878"
#: The six normalised benchmark scores (see the module docstring).
SCORE_COLUMNS = ("IFEval", "BBH", "MATH Lvl 5", "GPQA", "MUSR", "MMLU-PRO")
#: Rows an environment needs, as in the paper.
MIN_ROWS = 100
#: The published chain of latent capabilities, each named by the benchmarks
#: the authors align it with: general problem solving (MMLU-PRO, BBH) ->
#: instruction following (IFEval) -> mathematical reasoning (MATH Lvl 5).
PUBLISHED_CHAIN = (("MMLU-PRO", "BBH"), ("IFEval",), ("MATH Lvl 5",))

_SHAPE = "shape"
_REMOVED = "Removed"  # the file's Base Model value for models removed from the Hub


@dataclass
class LeaderboardData:
    """Leaderboard rows grouped into environments.

    Attributes
    ----------
    X_list : list of ndarray (n_k, 6)
        The scores (:data:`SCORE_COLUMNS`) of every environment.
    environments : list of str
        Label of every environment, in the order of ``X_list`` (sorted).
    feature_names : list of str
        :data:`SCORE_COLUMNS`.
    models : list of list of str
        The ``fullname`` of every row of every environment.
    group_by : str
        ``"shape"`` or the column the rows were grouped by.
    sha256 : str
        SHA-256 of the file read (compare with :data:`LEADERBOARD_SHA256`).
    n_rows_read : int
        Rows in the file.
    n_rows_dropped : dict
        Rows left out, by reason: ``"missing_score"``, ``"no_group"``
        (missing group key, unknown parameter count, or "Removed" when
        grouping by ``Base Model``) and ``"small_group"`` (groups below
        ``min_rows``).
    """

    X_list: list[np.ndarray]
    environments: list[str]
    feature_names: list[str]
    models: list[list[str]]
    group_by: str
    sha256: str
    n_rows_read: int
    n_rows_dropped: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{e}: {len(x)}" for e, x in zip(self.environments, self.X_list))
        return f"LeaderboardData(K={len(self.X_list)}, group_by={self.group_by!r}, {sizes})"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_open_llm_leaderboard(
    path, *, group_by: str = _SHAPE, min_rows: int = MIN_ROWS
) -> LeaderboardData:
    """Read ``data/open_llm_leaderboard.csv`` and group its rows into environments.

    Parameters
    ----------
    path : str or path-like
        The CSV file (see the module docstring for where it comes from).
    group_by : str, default="shape"
        ``"shape"``: one environment per base-model shape, the
        ``Architecture`` and the ``#Params (B)`` rounded to 0.01 (labels such
        as ``"LlamaForCausalLM 8.03B"``; rows without a positive parameter
        count are left out). Any other value names a column of the file;
        rows with equal values form one environment (with ``"Base Model"``,
        rows marked "Removed" are left out).
    min_rows : int, default=100
        Environments with fewer rows are left out (the paper's rule).

    Returns
    -------
    LeaderboardData

    Raises
    ------
    ValueError
        If the file cannot be read, lacks a needed column, or fewer than two
        environments have ``min_rows`` rows (the message lists the largest
        groups).
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path: {path} is not a file (the leaderboard CSV of "
                         "github.com/hlzhang109/causal-eval, data/open_llm_leaderboard.csv).")
    if not isinstance(min_rows, (int, np.integer)) or isinstance(min_rows, bool) or min_rows < 2:
        raise ValueError(f"min_rows must be an integer >= 2, got {min_rows!r}.")
    if not isinstance(group_by, str) or not group_by:
        raise ValueError(f"group_by must be 'shape' or a column name, got {group_by!r}.")
    try:
        frame = read_csv(path)  # the package's reader: its own files read back as written
    except Exception as exc:  # pandas' parser errors have many types
        raise ValueError(f"path: cannot read {path} as CSV ({exc}).") from None
    key_columns = ["Architecture", "#Params (B)"] if group_by == _SHAPE else [group_by]
    missing = [c for c in [*SCORE_COLUMNS, "fullname", *key_columns] if c not in frame.columns]
    if missing:
        raise ValueError(f"path: {path} has no column {missing[0]!r} (needed: the scores "
                         f"{list(SCORE_COLUMNS)}, 'fullname' and {key_columns}).")
    n_read = len(frame)
    scores = frame[list(SCORE_COLUMNS)].apply(pd.to_numeric, errors="coerce")
    ok_scores = np.isfinite(scores.to_numpy(float)).all(axis=1)
    if group_by == _SHAPE:
        size = pd.to_numeric(frame["#Params (B)"], errors="coerce")
        arch = frame["Architecture"].astype("string")
        good = (size > 0) & arch.notna()
        key = (arch + " " + size.round(2).map(lambda v: f"{v:.2f}B")).where(good)
    else:
        key = frame[group_by].astype("string")
        if group_by == "Base Model":
            key = key.where(key != _REMOVED)
    ok_key = key.notna().to_numpy(dtype=bool)
    counts = key[ok_scores & ok_key].value_counts()
    kept = sorted(str(k) for k, n in counts.items() if n >= min_rows)
    if len(kept) < 2:
        largest = ", ".join(f"{k!r}: {n}" for k, n in counts.head(5).items())
        raise ValueError(
            f"grouping by {group_by!r} leaves {len(kept)} environment(s) with at least "
            f"{min_rows} rows; the largest groups: {largest or 'none'}.")
    X_list, models = [], []
    for label in kept:
        rows = ok_scores & (key == label).to_numpy(dtype=bool, na_value=False)
        X_list.append(scores.to_numpy(float)[rows])
        models.append([str(m) for m in frame["fullname"].to_numpy()[rows]])
    dropped = {"missing_score": int((~ok_scores).sum()),
               "no_group": int((ok_scores & ~ok_key).sum()),
               "small_group": int(ok_scores.sum() - (~ok_key & ok_scores).sum()
                                  - sum(len(x) for x in X_list))}
    return LeaderboardData(X_list, kept, list(SCORE_COLUMNS), models, group_by,
                           _sha256(path), n_read, dropped)


def write_example_leaderboard(path, *, n_rows: int = 120, random_state: int = 0) -> Path:
    """Write a small synthetic file with the leaderboard's columns, to try the walkthrough.

    Three latents drive the six scores in three environments (shapes) of
    ``n_rows`` models each, plus a few models of a fourth shape below
    :data:`MIN_ROWS`; other columns hold placeholders. Its numbers mean
    nothing about language models.

    Parameters
    ----------
    path : str or path-like
        Where to write the CSV (an existing file is replaced).
    n_rows : int, default=120
        Models per environment (at least :data:`MIN_ROWS` for the default
        grouping to keep them).
    random_state : int, default=0

    Returns
    -------
    pathlib.Path
    """
    import pandas as pd

    from ..simulation import simulate

    sim = simulate(3, 3, int(n_rows), n_features=len(SCORE_COLUMNS), random_state=random_state)
    shapes = [("LlamaForCausalLM", 8.03), ("Qwen2ForCausalLM", 14.77), ("Gemma2ForCausalLM", 9.24)]
    rng = np.random.default_rng(random_state)
    pooled = np.vstack(sim.X)
    centre, scale = pooled.mean(axis=0), pooled.std(axis=0)
    frames = []
    for k, (x, (arch, size)) in enumerate(zip(sim.X, shapes)):
        scores = 40 + 8 * (x - centre) / scale + rng.normal(0, 0.5, x.shape)
        frame = pd.DataFrame(np.clip(scores, 0, 100), columns=list(SCORE_COLUMNS))
        frame.insert(0, "fullname", [f"example-org/{arch[:5].lower()}-ft-{k}-{i}"
                                     for i in range(len(frame))])
        frame["Architecture"], frame["#Params (B)"] = arch, size
        frame["Base Model"] = f"example-org/{arch[:5].lower()}-base"
        frames.append(frame)
    few = frames[0].head(5).assign(Architecture="PhiForCausalLM", **{"#Params (B)": 2.78})
    frame = pd.concat([*frames, few], ignore_index=True)
    for col in SCORE_COLUMNS:
        frame[f"{col} Raw"] = frame[col] / 100
    frame["Average ⬆️"] = frame[list(SCORE_COLUMNS)].mean(axis=1)
    frame["Type"] = "fine-tuned"
    path = Path(path)
    write_csv(frame, path)
    return path


def _names(corr: np.ndarray, features: list[str]) -> list[str]:
    """Every latent named by the benchmark it correlates with most (``#2`` on a repeat)."""
    names, seen = [], {}
    for row in np.abs(corr):
        base = features[int(np.argmax(row))]
        seen[base] = seen.get(base, 0) + 1
        names.append(base if seen[base] == 1 else f"{base} #{seen[base]}")
    return names


def _correlations(X_list: list[np.ndarray], latents: list[np.ndarray]) -> np.ndarray:
    """``[i, j]``: correlation of latent i with score j, rows pooled after centring each
    environment."""
    Z = np.vstack([z - z.mean(axis=0) for z in latents])
    X = np.vstack([x - x.mean(axis=0) for x in X_list])
    if Z.shape[1] == 0:
        return np.zeros((0, X.shape[1]))
    Zs = Z / np.maximum(Z.std(axis=0), 1e-300)
    Xs = X / np.maximum(X.std(axis=0), 1e-300)
    return Zs.T @ Xs / Z.shape[0]


def published_pairs(order_names: list[str]) -> int | None:
    """How many of the published chain's 3 pairs an order has in the published order.

    Parameters
    ----------
    order_names : list of str
        A causal order, every latent named by a score (as in the walkthrough).

    Returns
    -------
    int or None
        0 to 3 (the chain's first capability before its second, second
        before third, first before third; a capability's position is that of
        its first latent in the order); None when no latent is named after
        one of the chain's capabilities (:data:`PUBLISHED_CHAIN`).
    """
    pos = []
    for group in PUBLISHED_CHAIN:
        hits = [t for t, name in enumerate(order_names) if name in group]
        if not hits:
            return None
        pos.append(min(hits))
    return int((pos[0] < pos[1]) + (pos[1] < pos[2]) + (pos[0] < pos[2]))


def _method_rows(method: str, adjacency, latents, order, data, seconds, extra=None):
    corr = _correlations(data.X_list, latents)
    names = _names(corr, data.feature_names)
    A = np.asarray(adjacency)
    edges = [f"{names[i]} -> {names[j]}" for i, j in zip(*np.nonzero(A))]
    order_names = [names[i] for i in order]
    row = {"method": method, "n_latent": len(names), "edges": "; ".join(edges),
           "n_edges": len(edges), "order": " < ".join(order_names),
           "published_pairs": published_pairs(order_names), "seconds": round(seconds, 3)}
    row.update(extra or {})
    latent_rows = [{"method": method, "latent": i, "name": names[i],
                    **{f"corr {f}": round(float(c), 4) for f, c in zip(data.feature_names, r)}}
                   for i, r in enumerate(corr)]
    return row, latent_rows, names


def leaderboard_walkthrough(
    data: LeaderboardData,
    *,
    n_latent: int = 3,
    n_resamples: int = 50,
    random_state: int = 0,
    methods: tuple[str, ...] = ("LiNGCReL", "PCA+MultiGroupDirectLiNGAM", "RLCD"),
) -> dict:
    """CREATOR and the benchmark's methods on the same leaderboard rows.

    Parameters
    ----------
    data : LeaderboardData
        From :func:`load_open_llm_leaderboard`.
    n_latent : int, default=3
        The number of latents every method fits (the paper's 3); CREATOR is
        also fitted with :func:`creator_plugin.select_n_latent`'s choice.
    n_resamples : int, default=50
        Bootstrap resamples of the CREATOR fit with ``n_latent`` latents.
    random_state : int, default=0
        Seeds every fit and the resamples.
    methods : tuple of str
        Methods of :data:`creator_plugin.benchmark.baselines.METHODS` beside
        CREATOR.

    Returns
    -------
    dict of pandas.DataFrame
        ``"environments"`` (label, rows), ``"selection"`` (the choice of
        ``select_n_latent`` and its tests), ``"methods"`` (one row per fit:
        its latents' names, edges and order, ``published_pairs`` -- how many
        of the 3 pairs of :data:`PUBLISHED_CHAIN` its order has in the
        published order, empty when a capability has no latent named after
        it -- CREATOR's verdict (``trusted``, the issue kinds and the summary),
        the method's ``info`` (RLCD's clusters) and the seconds per fit), ``"latents"``
        (correlation of every latent with every score, rows pooled after
        centring each environment) and ``"bootstrap"`` (for every ordered
        pair of CREATOR's latents, the share of resamples with that edge and
        with that order).

    Raises
    ------
    ValueError
        If ``n_latent`` is not between 1 and the number of scores, or
        ``n_resamples`` is negative.
    """
    import pandas as pd

    from .. import CREATOR, bootstrap, select_n_latent
    from ..benchmark.baselines import METHODS

    p = len(data.feature_names)
    if not isinstance(n_latent, (int, np.integer)) or not 1 <= n_latent <= p:
        raise ValueError(f"n_latent must be an integer in 1..{p}, got {n_latent!r}.")
    if not isinstance(n_resamples, (int, np.integer)) or n_resamples < 0:
        raise ValueError(f"n_resamples must be an integer >= 0, got {n_resamples!r}.")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"methods: unknown {unknown[0]!r}; choose from {list(METHODS)}.")
    X_list = data.X_list
    environments = pd.DataFrame({"environment": data.environments,
                                 "rows": [len(x) for x in X_list]})
    selection = select_n_latent(X_list, random_state=random_state)
    sel_rows = [{"n_latent": selection.n_latent, "decided_by": selection.decided_by,
                 "k": t["k"], "model": t.get("model", "factor"), "statistic": t["statistic"],
                 "df": t["df"], "p_value": t["p_value"]} for t in selection.tests]
    rows, latent_rows, models = [], [], {}
    for d in dict.fromkeys([int(n_latent), int(selection.n_latent)]):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = CREATOR(d, random_state=random_state).fit(X_list)
        seconds = time.perf_counter() - start
        verdict = model.diagnostics_.get("quality", {})
        issues = list(dict.fromkeys(i["kind"] for i in verdict.get("issues", [])))
        name = f"CREATOR (n_latent={d})"
        row, lrows, _ = _method_rows(
            name, model.adjacency_matrix_, model.latents_, model.causal_order_, data, seconds,
            {"trusted": not issues, "issues": "; ".join(issues),
             "verdict": verdict.get("summary", "")})
        rows.append(row)
        latent_rows += lrows
        models[d] = model
    for method in methods:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = METHODS[method](X_list, int(n_latent), random_state)
        seconds = time.perf_counter() - start
        adjacency, latents, order = out[0], out[1], out[2]
        if order is None:
            order = list(range(np.asarray(adjacency).shape[0]))
        extra = {"info": json.dumps(out[3])} if len(out) > 3 else {}
        row, lrows, _ = _method_rows(method, adjacency, latents, order, data, seconds, extra)
        rows.append(row)
        latent_rows += lrows
    boot_rows = []
    if n_resamples:
        model = models[int(n_latent)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = bootstrap(X_list, n_resamples, estimator=model, random_state=random_state)
        names = _names(_correlations(X_list, model.latents_), data.feature_names)
        P, Q = result.get_probabilities(), result.get_order_probabilities()
        A = model.adjacency_matrix_
        for i in range(len(names)):
            for j in range(len(names)):
                if i != j:
                    boot_rows.append({"from": names[i], "to": names[j],
                                      "in_fit": bool(A[i, j]), "edge_share": float(P[i, j]),
                                      "order_share": float(Q[i, j]),
                                      "resamples": int(result.adjacency_matrices.shape[0])})
    return {"environments": environments, "selection": pd.DataFrame(sel_rows),
            "methods": pd.DataFrame(rows), "latents": pd.DataFrame(latent_rows),
            "bootstrap": pd.DataFrame(boot_rows)}
