"""Command-line interface: ``creator demo``, ``fit``, ``dims`` and ``bench``."""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

__all__ = ["main"]


def _format_matrix(A: np.ndarray, names: list[str]) -> str:
    width = max(len(n) for n in names) + 1
    lines = [" " * width + "".join(f"{n:>{width}}" for n in names)]
    for n, row in zip(names, A):
        lines.append(f"{n:<{width}}" + "".join(f"{int(v):>{width}}" for v in row))
    return "\n".join(lines)


def _demo(args: argparse.Namespace) -> int:
    from . import CREATOR, metrics, simulate

    sim = simulate(
        n_latent=args.n_latent, n_environments=args.n_environments, n_samples=args.n_samples,
        setting=args.setting, random_state=args.seed,
    )
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = CREATOR(args.n_latent, random_state=args.seed).fit(sim.X)
    elapsed = time.perf_counter() - start
    ev = metrics.evaluate_model(model, sim)
    d = args.n_latent
    true_names = [f"Y{i + 1}" for i in range(d)]
    print(
        f"CREATOR demo: d={d} latents, K={args.n_environments} environments, "
        f"n={args.n_samples} per environment, setting {args.setting}, seed {args.seed}\n"
    )
    print("True latent DAG ([row, col] = 1 means row -> col):")
    print(_format_matrix(sim.adjacency, true_names))
    print("\nRecovered DAG, relabelled to the matched true nodes:")
    print(_format_matrix(ev["est_adjacency_matched"], true_names))
    matching = ", ".join(f"L{i + 1}->Y{t + 1}" for i, t in enumerate(ev["matching"]))
    print(f"\nMatching of recovered latents to true nodes: {matching}")
    print(f"SHD                    : {ev['shd']}")
    print(f"LocR^2                 : {ev['locr2']:.3f}")
    print(f"Topological divergence : {ev['topological_divergence']}")
    print(f"Exact DAG / order      : {ev['exact_dag']} / {ev['correct_order']}")
    print(f"Fit time               : {elapsed:.2f} s")
    for w in caught:
        print(f"warning: {w.message}")
    return 0


def _read_csv(data: str, env_column: str):
    """``(features DataFrame, environment labels)`` of a CSV, or None after an error message."""
    import pandas as pd

    path = Path(data)
    if not path.is_file():
        print(f"error: DATA file {path} does not exist.", file=sys.stderr)
        return None
    df = pd.read_csv(path)
    if env_column not in df.columns:
        print(
            f"error: --env-column {env_column!r} is not a column of {path} "
            f"(columns: {list(df.columns)}).",
            file=sys.stderr,
        )
        return None
    feats = df.drop(columns=[env_column])
    non_numeric = [c for c in feats.columns if not pd.api.types.is_numeric_dtype(feats[c])]
    if non_numeric:
        print(f"error: non-numeric feature columns {non_numeric} in {path}.", file=sys.stderr)
        return None
    return feats, df[env_column].to_numpy()


def _fit(args: argparse.Namespace) -> int:
    import pandas as pd

    from . import CREATOR
    from .persistence import atomic_output_dir, save

    data = _read_csv(args.data, args.env_column)
    if data is None:
        return 2
    feats, env = data
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = CREATOR(args.n_latent, random_state=args.seed).fit(
                feats.to_numpy(dtype=float), environments=env
            )
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    names = [f"L{i + 1}" for i in range(model.n_latent_)]
    try:
        with atomic_output_dir(args.out, force=args.force) as tmp:
            latents = pd.DataFrame(model.transform(feats.to_numpy(dtype=float)), columns=names)
            latents.insert(0, args.env_column, env)
            latents.to_csv(tmp / "latents.csv", index=False)
            pd.DataFrame(model.adjacency_matrix_, index=names, columns=names).to_csv(
                tmp / "adjacency.csv"
            )
            weights = [
                {"environment": str(lab), "parent": names[i], "child": names[j],
                 "weight": float(W[i, j])}
                for lab, W in zip(model.environment_labels_, model.weights_)
                for i, j in zip(*np.nonzero(model.adjacency_matrix_))
            ]
            pd.DataFrame(weights, columns=["environment", "parent", "child", "weight"]).to_csv(
                tmp / "weights.csv", index=False
            )
            diag = dict(model.diagnostics_)
            diag["latent_names"] = names
            diag["feature_names"] = [str(c) for c in feats.columns]
            diag["environment_labels"] = [str(x) for x in model.environment_labels_]
            (tmp / "diagnostics.json").write_text(json.dumps(diag, indent=2, default=str))
            save(model, tmp / "model.joblib")
    except FileExistsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Wrote latents.csv, adjacency.csv, weights.csv, diagnostics.json, model.joblib "
          f"to {args.out}")
    print(_format_matrix(model.adjacency_matrix_, names))
    return 0


def _dims(args: argparse.Namespace) -> int:
    from .dimension import select_n_latent

    data = _read_csv(args.data, args.env_column)
    if data is None:
        return 2
    feats, env = data
    try:
        sel = select_n_latent(feats.to_numpy(dtype=float), environments=env, alpha=args.alpha)
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(sel.summary())
    shown = sel.spectrum[:20]
    print("\nPooled within-environment spectrum (correlation scale), largest first:")
    print("  " + "  ".join(f"{i + 1}: {v:.4g}" for i, v in enumerate(shown))
          + (" ..." if sel.spectrum.size > shown.size else ""))
    if sel.tests:
        print(f"\nLikelihood-ratio tests of the k-factor model (alpha = {sel.alpha:g}, "
              f"{sel.test_scope.replace('_', ' ')}):")
        print(f"  {'k':>3} {'statistic':>12} {'df':>6} {'p-value':>10}")
        for t in sel.tests:
            print(f"  {t['k']:>3} {t['statistic']:>12.1f} {t['df']:>6} {t['p_value']:>10.3g}")
    if args.out:
        _write_scree(sel, args.out)
        print(f"\nWrote the scree plot to {args.out}")
    return 0


def _write_scree(sel, path: str) -> None:
    """Scree plot of a DimensionSelection: log eigenvalues, the choice marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lam = sel.spectrum
    k = np.arange(1, lam.size + 1)
    fig, ax = plt.subplots(figsize=(6, 4))
    pos = lam > 0
    ax.semilogy(k[pos], lam[pos], "o-", color="0.3", ms=4)
    ax.axvline(sel.n_latent + 0.5, color="C3", ls="--",
               label=f"n_latent = {sel.n_latent} ({sel.decided_by.replace('_', ' ')})")
    ax.set_xlabel("component")
    ax.set_ylabel("eigenvalue (pooled, correlation scale)")
    ax.set_title("Scree plot")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _n_latent_arg(value: str) -> int | str:
    if value == "auto":
        return value
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer or 'auto', got {value!r}") from None


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="creator", description="CREATOR: latent causal features and their DAG "
        "from multi-environment data."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="simulate a model, fit it, print the DAGs and metrics")
    demo.add_argument("--n-latent", type=int, default=4)
    demo.add_argument("--n-environments", type=int, default=4)
    demo.add_argument("--n-samples", type=int, default=1000)
    demo.add_argument("--setting", type=int, choices=(1, 2), default=1)
    demo.add_argument("--seed", type=int, default=0)

    fit = sub.add_parser("fit", help="fit CREATOR to a CSV file")
    fit.add_argument("data", help="CSV with one column of environment labels, the rest numeric")
    fit.add_argument("--env-column", required=True, help="name of the environment column")
    fit.add_argument("--n-latent", type=_n_latent_arg, required=True,
                     help="number of latent features, or 'auto' (see creator dims)")
    fit.add_argument("--out", required=True, help="output directory (must not exist)")
    fit.add_argument("--force", action="store_true", help="replace an existing output directory")
    fit.add_argument("--seed", type=int, default=0, help="random_state of the fit")

    dims = sub.add_parser("dims", help="choose n_latent for a CSV file, with the evidence")
    dims.add_argument("data", help="CSV with one column of environment labels, the rest numeric")
    dims.add_argument("--env-column", required=True, help="name of the environment column")
    dims.add_argument("--alpha", type=float, default=0.01, help="level of the tests")
    dims.add_argument("--out", help="write a scree plot PNG here")

    from .benchmark import cli as bench_cli

    bench = sub.add_parser(
        "bench", help="compare CREATOR with other methods on simulated data",
        description=bench_cli.DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench_cli.add_arguments(bench)
    return parser


def _bench(args: argparse.Namespace) -> int:
    from .benchmark.cli import run

    return run(args)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``creator`` command."""
    args = _build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    return {"demo": _demo, "fit": _fit, "dims": _dims, "bench": _bench}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
