"""Figures and Markdown tables of the benchmark (matplotlib, Agg backend).

Everything here reads the tidy results (one row per method, cell and seed, as
returned by :func:`creator_plugin.benchmark.grid.run_grid`) as a pandas
DataFrame; failed rows are counted, never plotted.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

__all__ = ["make_figures", "mean_metrics", "summary_markdown"]

_SHORT = {
    "LiNGCReL": "LiNGCReL (reconstr.)",
}


def _ok(df):
    return df[df["status"] == "ok"]


def _methods(df) -> list[str]:
    return list(dict.fromkeys(df["method"]))


def _k_label(row_k: int, d: int) -> str:
    return "d" if row_k == d else ("2d" if row_k == 2 * d else str(row_k))


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _main_table(main) -> str:
    """Mean SHD / mean LocR^2 per (d, K, setting); best of a column in bold."""
    methods = _methods(main)
    rows = []
    for (d, K, s), g in main.groupby(["n_latent", "n_environments", "setting"]):
        m = g.groupby("method").agg(shd=("shd", "mean"), locr2=("locr2", "mean"))
        m = m.reindex(methods)
        best_shd, best_loc = m["shd"].min(), m["locr2"].max()
        cells = []
        for meth in methods:
            shd, loc = m.loc[meth, "shd"], m.loc[meth, "locr2"]
            if np.isnan(shd):
                cells.append("–")
                continue
            a = f"**{shd:.2f}**" if np.isclose(shd, best_shd) else f"{shd:.2f}"
            b = f"**{loc:.3f}**" if np.isclose(loc, best_loc) else f"{loc:.3f}"
            cells.append(f"{a} / {b}")
        rows.append([str(d), str(K), str(s), *cells])
    return _table(["d", "K", "setting", *[_SHORT.get(m, m) for m in methods]], rows)


def _share_table(main) -> str:
    """Share of exact DAGs and correct orders, and mean seconds per fit."""
    methods = _methods(main)
    rows = []
    for (d, K, s), g in main.groupby(["n_latent", "n_environments", "setting"]):
        m = g.groupby("method").agg(exact=("exact_dag", "mean"),
                                    order=("correct_order", "mean"),
                                    sec=("seconds", "mean")).reindex(methods)
        rows.append([str(d), str(K), str(s)] + [
            f"{m.loc[x, 'exact']:.2f} / {m.loc[x, 'order']:.2f} / {m.loc[x, 'sec']:.3f}"
            for x in methods])
    return _table(["d", "K", "setting", *[_SHORT.get(m, m) for m in methods]], rows)


def _ablation_table(sub, col: str, label: str) -> str:
    """Rows: method x metric; columns: values of the ablated parameter."""
    methods = _methods(sub)
    values = sorted(sub[col].unique())
    rows = []
    for meth in methods:
        g = sub[sub["method"] == meth].groupby(col)
        for metric, name, fmt in (("shd", "SHD", "{:.2f}"), ("locr2", "LocR²", "{:.3f}"),
                                  ("topological_divergence", "D_top", "{:.2f}")):
            mean = g[metric].mean().reindex(values)
            rows.append([f"{_SHORT.get(meth, meth)} {name}", *[fmt.format(v) for v in mean]])
    return _table([label, *[f"{v:g}" for v in values]], rows)


#: Cell keys shown by the generic per-cell table (when present in the rows).
_CELL_KEYS = ("data", "family", "n_latent", "n_environments", "n_samples", "n_features", "setting",
              "edge_prob", "measurement_noise", "mixing", "indicators_per_latent",
              "weight_scale", "noise_shape", "pruning", "prune_threshold", "tau")
_HEADERS = {"n_latent": "d", "n_environments": "K", "n_samples": "n", "n_features": "p",
            "edge_prob": "edge prob.", "measurement_noise": "meas. noise",
            "indicators_per_latent": "indicators", "weight_scale": "σ", "noise_shape": "β",
            "prune_threshold": "level", "tau": "τ"}


def _fmt(v, fmt: str) -> str:
    return "–" if v is None or (isinstance(v, float) and np.isnan(v)) else fmt.format(v)


def _key_str(v) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "–"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _cell_table(sub) -> str:
    """One row per (cell, method): fit counts by status and the mean metrics of the ok fits."""
    keys = [k for k in _CELL_KEYS if k in sub and sub[k].notna().any()]
    keys = [k for k in keys
            if sub[k].astype(str).nunique(dropna=False) > 1 or k in ("data", "family", "n_latent")]
    methods = _methods(sub)
    rows = []
    groups = sub.groupby([*keys, "method"], sort=False, dropna=False) if keys else \
        sub.groupby("method", sort=False)
    for key, g in sorted(groups, key=lambda kg: methods.index(kg[0][-1] if keys else kg[0])):
        key = key if isinstance(key, tuple) else (key,)
        ok = _ok(g)
        counts = "/".join(str(int((g["status"] == st).sum())) for st in ("ok", "failed", "timeout"))

        def mean(col, ok=ok):
            return ok[col].astype(float).mean() if col in ok and len(ok) else float("nan")

        rows.append([
            _SHORT.get(key[-1], key[-1]), *[_key_str(v) for v in key[:-1]], counts,
            _fmt(mean("shd"), "{:.2f}"), _fmt(mean("locr2"), "{:.3f}"),
            _fmt(mean("topological_divergence"), "{:.2f}"), _fmt(mean("exact_dag"), "{:.2f}"),
            _fmt(mean("correct_order"), "{:.2f}"), _fmt(mean("shd_min_relabel"), "{:.2f}"),
            _fmt(mean("n_est_latents"), "{:.1f}"), _fmt(mean("undecided_edges"), "{:.2f}"),
            _fmt(mean("seconds"), "{:.3g}"),
        ])
    header = ["method", *[_HEADERS.get(k, k) for k in keys], "fits ok/failed/timeout",
              "mean SHD", "mean LocR²", "mean D_top", "exact DAG", "correct order",
              "SHD up to relabelling", "latents found", "undecided edges", "s/fit"]
    return _table(header, rows)


def _threshold_table(sub) -> str:
    rows = []
    for (rule, t), g in sub.groupby(["pruning", "prune_threshold"]):
        rows.append([str(rule), f"{t:g}", f"{g['shd'].mean():.2f}", f"{g['locr2'].mean():.3f}",
                     f"{g['exact_dag'].mean():.2f}", str(len(g))])
    return _table(["rule", "threshold", "mean SHD", "mean LocR²", "exact DAG", "seeds"], rows)


def mean_metrics(df, by: list[str]):
    """Mean accuracy and time of the successful fits, per group.

    Parameters
    ----------
    df : pandas.DataFrame
        Tidy results (see :func:`creator_plugin.benchmark.grid.run_one`).
    by : list of str
        Grouping columns (e.g. ``["method"]`` or ``["grid"]``).

    Returns
    -------
    pandas.DataFrame
        One row per group (in order of first appearance): ``fits``,
        ``failed``, ``mean_shd``, ``mean_locr2``, ``exact_dag_share``,
        ``correct_order_share``, ``seconds_per_fit``.
    """
    failed = (df["status"] != "ok").groupby([df[c] for c in by], sort=False).sum()
    out = _ok(df).groupby(by, sort=False).agg(
        fits=("seed", "count"), mean_shd=("shd", "mean"), mean_locr2=("locr2", "mean"),
        exact_dag_share=("exact_dag", "mean"), correct_order_share=("correct_order", "mean"),
        seconds_per_fit=("seconds", "mean"),
    )
    # A group whose every fit failed keeps its row (fits 0, means NaN).
    out = out.reindex(failed.index)
    out["fits"] = out["fits"].fillna(0).astype(int)
    out.insert(1, "failed", failed.astype(int))
    return out.reset_index()


def summary_markdown(df) -> str:
    """The benchmark's summary tables in Markdown.

    Parameters
    ----------
    df : pandas.DataFrame
        Tidy results (see :func:`creator_plugin.benchmark.grid.run_one`).

    Returns
    -------
    str
        Sections present in the results, in this order: main grid (mean SHD
        / mean LocR², best per row in bold), exact-DAG share / correct-order
        share / seconds per fit, the sigma and beta ablations (per K), the
        pruning threshold sensitivity, the paper's tau table, one per-cell
        table for every other grid (simulated cells of your choice, your
        data; with the mean number of undecided edges per fit, pairs whose
        edge confidence lies strictly between 0.1 and 0.9), and the count
        of failed and timed-out fits with their errors.
        All metrics are aligned to the truth through the LocR² matching
        (:mod:`creator_plugin.benchmark.scoring`).
    """
    ok = _ok(df)
    parts = []
    # Every key that tells cells apart (a tau-table cell differs only by tau).
    by = ["grid", "method"] + [c for c in ("n_latent", "n_environments", "setting", "tau",
                                           "weight_scale", "noise_shape", "pruning",
                                           "prune_threshold") if c in ok]
    if len(ok):
        counts = ok.groupby(by, dropna=False)["seed"].count()
        parts.append(f"Seeds per cell and method: {counts.min()}–{counts.max()} "
                     f"(successful fits).")
    main = ok[ok["grid"] == "main"]
    if len(main):
        parts += ["### Main grid: mean SHD / mean LocR²", _main_table(main),
                  "### Main grid: exact-DAG share / correct-order share / seconds per fit",
                  _share_table(main)]
    for grid, col, label in (("sigma", "weight_scale", "weight scale σ"),
                             ("beta", "noise_shape", "noise shape β (2 = Gaussian)")):
        sub = ok[ok["grid"] == grid]
        for (d, K), g in (sub.groupby(["n_latent", "n_environments"]) if len(sub) else ()):
            parts += [f"### Ablation: {label} (d = {d}, K = {K}, setting 1)",
                      _ablation_table(g, col, label)]
    sub = ok[ok["grid"] == "threshold"]
    if len(sub):
        parts += ["### CREATOR pruning-threshold sensitivity (d = K = 5, setting 1)",
                  _threshold_table(sub)]
    sub = df[df["grid"] == "tau"]
    if len(sub):
        parts += ["### The paper's τ table: the paper preset at every τ, the default beside "
                  "it (same data)", _cell_table(sub)]
    for grid in dict.fromkeys(df["grid"]):
        if grid not in ("main", "sigma", "beta", "threshold", "tau"):
            parts += [f"### Grid {grid!r}: per cell and method (metrics: mean over the ok fits)",
                      _cell_table(df[df["grid"] == grid])]
    failed = df[df["status"] != "ok"]
    n_timeout = int((df["status"] == "timeout").sum())
    tail = f"Failed fits: {len(failed) - n_timeout}; timed out: {n_timeout}"
    if len(failed):
        errs = failed.groupby(["method", "status", "error"]).size().reset_index(name="n")
        tail += "\n\n" + _table(["method", "status", "error", "count"],
                                [[r.method, r.status, str(r.error)[:120], str(r.n)]
                                 for r in errs.itertuples()])
    parts.append(tail)
    return "\n\n".join(parts) + "\n"


def _boxes(ax, groups, methods, metric) -> None:
    """One box per method in every group, with every seed's value as a dot of its colour.

    The dots keep a method visible where its box has no height (every seed
    scored the same); the white triangle is the mean.
    """
    width = 0.8 / len(methods)
    rng = np.random.default_rng(0)  # horizontal jitter of the dots only
    for m_i, method in enumerate(methods):
        data = [g[g["method"] == method][metric].astype(float).dropna().to_numpy()
                for _, g in groups]
        pos = [x + (m_i - (len(methods) - 1) / 2) * width for x in range(len(groups))]
        bp = ax.boxplot(data, positions=pos, widths=width * 0.9, patch_artist=True,
                        showfliers=False, medianprops={"color": "black"})
        for patch in bp["boxes"]:
            patch.set_facecolor(f"C{m_i}")
            patch.set_alpha(0.55)
        for p, x in zip(pos, data):
            jitter = rng.uniform(-0.3, 0.3, len(x)) * width
            ax.plot(p + jitter, x, "o", color=f"C{m_i}", markeredgecolor="black",
                    markeredgewidth=0.5, markersize=4, zorder=3)
        means = [np.mean(x) if len(x) else np.nan for x in data]
        ax.plot(pos, means, "w^", markeredgecolor="black", markersize=5, zorder=4)
        ax.plot([], [], "s", color=f"C{m_i}", markeredgecolor="black", markersize=8,
                label=_SHORT.get(method, method))
    tilt = len(groups) > 6
    ax.set_xticks(range(len(groups)), [label for label, _ in groups],
                  rotation=30 if tilt else 0, ha="right" if tilt else "center")
    ax.set_xlim(-0.5, len(groups) - 0.5)


def _cell_groups(sub) -> list[tuple[str, object]]:
    """The cells of a per-cell grid in order of appearance, labelled by the keys that differ."""
    keys = [k for k in _CELL_KEYS if k in sub and sub[k].notna().any()]
    varying = [k for k in keys if sub[k].astype(str).nunique(dropna=False) > 1]
    shown = varying or [k for k in keys if k in ("data", "family", "n_latent", "n_environments")]
    if not shown:
        return [("all", sub)]
    groups = sub.groupby(shown, sort=False, dropna=False)
    out = []
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        parts = [_key_str(v) if k in ("data", "family") else f"{_HEADERS.get(k, k)}={_key_str(v)}"
                 for k, v in zip(shown, key)]
        out.append((", ".join(parts), g))
    return out


#: Metrics of the per-cell box plots: (column, axis label).
_CELL_METRICS = (("locr2", "LocR²"), ("shd", "SHD"), ("shd_min_relabel", "SHD up to relabelling"))


def make_figures(df, out: str | Path, dpi: int = 80) -> list[Path]:
    """Write the PNG figures next to the results.

    * ``main_<locr2|shd>_setting<s>_K<d|2d>.png``: box plots of LocR² and SHD
      per d, one box per method (whiskers 1.5 IQR, no fliers, a dot per seed,
      triangle = mean);
    * ``<grid>_<locr2|shd|shd_min_relabel>.png`` for every other grid (your
      data with ``bench --data``: grid ``data``; simulated cells of your
      choice: ``custom``): the same box plots, one group per cell, for each
      metric the rows have (without true latents only the SHD up to
      relabelling);
    * ``ablation_<sigma|beta>_K<d|2d>.png``: mean LocR², SHD and
      topological divergence against the weight scale / noise shape;
    * ``tau_table.png``: the paper preset's mean SHD and LocR² against tau,
      the default as a horizontal line;
    * ``threshold_sensitivity.png``: CREATOR's mean SHD and LocR² against
      the pruning level, one curve per rule.

    Parameters
    ----------
    df : pandas.DataFrame
        Tidy results.
    out : str or Path
        Directory (created if needed).
    dpi : int, default=80

    Returns
    -------
    list of Path
        The files written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ok = _ok(df)
    methods = _methods(ok)
    return [*_main_figures(plt, ok, methods, out, dpi),
            *_ablation_figures(plt, ok, methods, out, dpi),
            *_cell_figures(plt, ok, methods, out, dpi),
            *_tau_figure(plt, ok, out, dpi),
            *_threshold_figure(plt, ok, out, dpi)]


def _save(plt, fig, path: Path, dpi: int) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _main_figures(plt, ok, methods: list[str], out: Path, dpi: int) -> list[Path]:
    """The main grid's box plots of LocR² and SHD per d, by setting and K."""
    paths = []
    # Rows of a user's data set (bench --data) have no simulation setting to plot by.
    main = ok[ok["grid"] == "main"] if "setting" in ok else ok.iloc[:0]
    for setting in sorted(main["setting"].unique()) if len(main) else ():
        for kname, factor in (("d", 1), ("2d", 2)):
            sub = main[(main["setting"] == setting)
                       & (main["n_environments"] == factor * main["n_latent"])]
            if sub.empty:
                continue
            ds = sorted(sub["n_latent"].unique())
            for metric, label in (("locr2", "LocR²"), ("shd", "SHD")):
                fig, ax = plt.subplots(figsize=(8, 3.4))
                _boxes(ax, [(f"d={d}", sub[sub["n_latent"] == d]) for d in ds], methods, metric)
                ax.set_ylabel(label)
                ax.set_title(f"{label}, setting ({setting}), K={kname}")
                ax.legend(fontsize=7, loc="best")
                ax.grid(axis="y", alpha=0.3)
                paths.append(_save(plt, fig, out / f"main_{metric}_setting{setting}_K{kname}.png",
                                   dpi))
    return paths


def _ablation_figures(plt, ok, methods: list[str], out: Path, dpi: int) -> list[Path]:
    """Mean LocR², SHD and topological divergence against the weight scale / noise shape."""
    paths = []
    for grid, col, xlabel in (("sigma", "weight_scale", "weight scale σ"),
                              ("beta", "noise_shape", "noise shape β (2 = Gaussian)")):
        cells = ok[ok["grid"] == grid]
        for (d, K), sub in (cells.groupby(["n_latent", "n_environments"]) if len(cells) else ()):
            fig, axes = plt.subplots(1, 3, figsize=(11, 3.3))
            for m_i, method in enumerate(methods):
                g = sub[sub["method"] == method].groupby(col)
                for ax, metric in zip(axes, ("locr2", "shd", "topological_divergence")):
                    mean = g[metric].mean()
                    ax.plot(mean.index, mean.values, marker="o", color=f"C{m_i}",
                            label=_SHORT.get(method, method))
                    ax.set_xlabel(xlabel)
                    ax.set_ylabel(metric)
                    if grid == "sigma":
                        ax.set_xscale("log")
            axes[0].legend(fontsize=7)
            fig.suptitle(f"Ablation: {xlabel}, d={d}, K={K}, setting (1), mean over seeds")
            paths.append(_save(plt, fig, out / f"ablation_{grid}_K{_k_label(K, d)}.png", dpi))
    return paths


def _cell_figures(plt, ok, methods: list[str], out: Path, dpi: int) -> list[Path]:
    """Every other grid's box plots, one group per cell, for each metric its rows have."""
    paths = []
    for grid in dict.fromkeys(ok["grid"]):
        if grid in ("main", "sigma", "beta", "threshold", "tau"):
            continue
        groups = _cell_groups(ok[ok["grid"] == grid])
        long = max(len(label) for label, _ in groups)
        for metric, label in _CELL_METRICS:
            if metric not in ok or not ok.loc[ok["grid"] == grid, metric].notna().any():
                continue
            width = max(6.0, 1.0 + 0.4 * len(groups) * len(methods))
            fig, ax = plt.subplots(figsize=(width, 3.4 + (0.06 * long if len(groups) > 6 else 0)))
            _boxes(ax, groups, methods, metric)
            ax.set_ylabel(label)
            ax.set_title(f"{label} per cell, grid {grid!r}, {len(methods)} method"
                         f"{'s' if len(methods) > 1 else ''}")
            ax.legend(fontsize=7, loc="best")
            ax.grid(axis="y", alpha=0.3)
            path = out / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', str(grid))}_{metric}.png"
            paths.append(_save(plt, fig, path, dpi))
    return paths


def _tau_figure(plt, ok, out: Path, dpi: int) -> list[Path]:
    """The paper preset's mean SHD and LocR² against tau, the default as a line."""
    sub = ok[ok["grid"] == "tau"]
    if sub.empty:
        return []
    paper = sub[sub["method"] == "CREATOR (paper)"].groupby("tau")[["shd", "locr2"]].mean()
    default = sub[sub["method"] == "CREATOR"][["shd", "locr2"]].mean()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.3))
    for ax, metric, label in zip(axes, ("shd", "locr2"), ("mean SHD", "mean LocR²")):
        ax.plot(paper.index, paper[metric], marker="o", color="C1",
                label="CREATOR (paper), raw-coefficient rank rule at τ")
        if not np.isnan(default[metric]):
            ax.axhline(default[metric], color="C0", label="CREATOR default")
        ax.set_xlabel("τ")
        ax.set_ylabel(label)
    axes[0].legend(fontsize=7)
    fig.suptitle("The paper's τ table, same data for all (d=K=5, n=1000, setting 1)")
    return [_save(plt, fig, out / "tau_table.png", dpi)]


def _threshold_figure(plt, ok, out: Path, dpi: int) -> list[Path]:
    """CREATOR's mean SHD and LocR² against the pruning level, one curve per rule."""
    sub = ok[ok["grid"] == "threshold"]
    if sub.empty:
        return []
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.3))
    for r_i, (rule, g) in enumerate(sub.groupby("pruning")):
        mean = g.groupby("prune_threshold")[["shd", "locr2"]].mean()
        for ax, metric in zip(axes, ("shd", "locr2")):
            ax.plot(mean.index, mean[metric], marker="o", color=f"C{r_i}",
                    label=f"pruning={rule!r}")
            ax.set_xlabel("prune_threshold")
            ax.set_ylabel(metric)
            ax.set_xscale("log")
    axes[0].legend(fontsize=7)
    fig.suptitle("CREATOR pruning-threshold sensitivity, d=K=5, setting (1)")
    return [_save(plt, fig, out / "threshold_sensitivity.png", dpi)]
