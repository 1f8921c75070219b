"""Command-line interface: ``creator demo``, ``fit``, ``dims``, ``bench`` and
``casestudy``."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import sys
import threading
import time
import warnings
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from ._csv import UserError, read_table, write_csv

__all__ = ["main"]


def _format_matrix(A: np.ndarray, names: list[str]) -> str:
    width = max(len(n) for n in names) + 1
    lines = [" " * width + "".join(f"{n:>{width}}" for n in names)]
    for n, row in zip(names, A):
        lines.append(f"{n:<{width}}" + "".join(f"{int(v):>{width}}" for v in row))
    return "\n".join(lines)


def _demo(args: argparse.Namespace) -> int:
    from . import CREATOR, metrics, simulate

    try:
        sim = simulate(
            n_latent=args.n_latent, n_environments=args.n_environments,
            n_samples=args.n_samples, setting=args.setting, random_state=args.seed,
        )
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = CREATOR(args.n_latent, random_state=args.seed).fit(sim.X)
    except (ValueError, TypeError) as exc:
        raise UserError(str(exc)) from None
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

def _fit(args: argparse.Namespace) -> int:
    import pandas as pd

    from . import CREATOR, RefineOptions
    from .output_dir import OutputDir
    from .report import write_fit_report

    if args.plots and find_spec("matplotlib") is None:
        raise UserError('--plots needs matplotlib: pip install "creator-plugin[plots]".')
    feats, env, index = read_table(args)
    # Checked before the fit, so a mistake does not cost the fit's time.
    reference = _reference_label(args.reference, env)
    out = OutputDir(args.out, force=args.force, inputs=[args.data])
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            refine = RefineOptions(
                revise_graph="auto" if args.revise_graph is None else args.revise_graph,
                order_branches=args.order_branches,
                search_graph="auto" if args.search_graph is None else args.search_graph)
            model = CREATOR(args.n_latent, quality_resamples=args.quality_resamples,
                            refine="auto" if refine == RefineOptions() else refine,
                            random_state=args.seed).fit(
                feats, environments=env.to_numpy(), reference=reference
            )
    except (ValueError, TypeError) as exc:
        raise UserError(str(exc)) from None
    names = list(model.get_feature_names_out())
    parameters = {
        "command": "fit", "data": str(Path(args.data).resolve()), "env_column": args.env_column,
        "index_col": None if index is None else str(index.name),
        "feature_columns": [str(c) for c in feats.columns], "n_latent": args.n_latent,
        "seed": args.seed, "reference": args.reference, "estimator": model.get_params(),
    }
    with out.write(parameters) as tmp:
        latents = pd.DataFrame(model.transform(feats), columns=names)
        latents.insert(0, args.env_column, env.to_numpy())
        if index is not None:
            latents.index = pd.Index(index.to_numpy(), name=index.name)
        write_csv(latents, tmp / "latents.csv", index=index is not None)
        write_csv(pd.DataFrame(model.adjacency_matrix_, index=names, columns=names),
                  tmp / "adjacency.csv")
        weights = [
            {"environment": str(lab), "parent": names[i], "child": names[j],
             "weight": float(W[i, j])}
            for lab, W in zip(model.environment_labels_, model.weights_)
            for i, j in zip(*np.nonzero(model.adjacency_matrix_))
        ]
        write_csv(pd.DataFrame(weights, columns=["environment", "parent", "child", "weight"]),
                  tmp / "weights.csv", index=False)
        written = ["latents.csv", "adjacency.csv", "weights.csv"]
        if hasattr(model, "edge_confidence_"):
            write_csv(pd.DataFrame(model.edge_confidence_, index=names, columns=names),
                      tmp / "edge_confidence.csv")
            written.append("edge_confidence.csv")
        write_csv(pd.DataFrame(model.changed_mechanisms_,
                               index=pd.Index([str(x) for x in model.environment_labels_],
                                              name="environment"), columns=names),
                  tmp / "changed_mechanisms.csv")
        written.append("changed_mechanisms.csv")
        diag = dict(model.diagnostics_)
        diag["latent_names"] = names
        diag["feature_names"] = [str(c) for c in feats.columns]
        diag["environment_labels"] = [str(x) for x in model.environment_labels_]
        (tmp / "diagnostics.json").write_text(json.dumps(diag, indent=2, default=str))
        model.save(tmp / "model.npz")
        report = write_fit_report(model, [str(c) for c in feats.columns], tmp, plots=args.plots)
    # The fit's warnings are about results that now exist; a run that wrote
    # nothing says only why (one line).
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    print(f"Wrote {', '.join(written)}, diagnostics.json, model.npz, "
          f"{', '.join(p.name for p in report)} to {out.path}")
    print(_format_matrix(model.adjacency_matrix_, names))
    if hasattr(model, "edge_confidence_"):
        print(_undecided_report(model.edge_confidence_, model.adjacency_matrix_, names))
    return 0


def _undecided_report(confidence: np.ndarray, adjacency: np.ndarray, names: list[str]) -> str:
    """The lines of ``creator fit``'s output on the undecided edges (0.1 < confidence < 0.9)."""
    from .confidence import UNDECIDED, undecided_pairs

    pairs = undecided_pairs(confidence)
    low, high = UNDECIDED
    if not pairs:
        return (f"Undecided edges: none (every edge confidence is at most {low:g} or at least "
                f"{high:g}; edge_confidence.csv).")
    lines = [f"Undecided edges ({len(pairs)}; confidence between {low:g} and {high:g}, "
             "edge_confidence.csv): check these before you report them."]
    for i, j in pairs:
        kept = "in the graph" if adjacency[i, j] else "not in the graph"
        lines.append(f"  {names[i]} -> {names[j]}: {confidence[i, j]:.2f} ({kept})")
    return "\n".join(lines)


def _reference_label(reference: str | None, env):
    """The environment label ``--reference`` names (labels compared as text), or None."""
    if reference is None:
        return None
    labels = list(dict.fromkeys(env.to_numpy().tolist()))
    found = [lab for lab in labels if str(lab) == reference]
    if not found:
        shown = ", ".join(map(str, labels[:10])) + (", ..." if len(labels) > 10 else "")
        raise UserError(f"--reference {reference!r} is not a label of the environment column "
                        f"(its labels: {shown}).")
    return found[0]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (exit status 2)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _write_new_file(path: str, data: bytes) -> None:
    """Create ``path`` with ``data``; an existing file is never replaced."""
    try:
        with open(path, "xb") as fh:  # "x": fails if anything is at path, atomically
            try:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            except OSError:
                fh.close()
                os.unlink(path)  # the partial file is ours
                raise
    except FileExistsError:
        raise UserError(f"--out {path} exists; it is not replaced (choose a new name).") from None


def _dims(args: argparse.Namespace) -> int:
    from .dimension import select_n_latent

    if args.out and find_spec("matplotlib") is None:
        raise UserError('--out needs matplotlib: pip install "creator-plugin[plots]".')
    feats, env, _ = read_table(args)
    try:
        sel = select_n_latent(feats.to_numpy(dtype=float), environments=env.to_numpy(),
                              alpha=args.alpha, random_state=args.seed)
    except (ValueError, TypeError) as exc:
        raise UserError(str(exc)) from None
    print(sel.summary())
    shown = sel.spectrum[:20]
    print("\nPooled within-environment spectrum (correlation scale), largest first:")
    print("  " + "  ".join(f"{i + 1}: {v:.4g}" for i, v in enumerate(shown))
          + (" ..." if sel.spectrum.size > shown.size else ""))
    if sel.tests:
        print(f"\nLikelihood-ratio tests of the k-factor model (alpha = {sel.alpha:g}, "
              f"{sel.test_scope.replace('_', ' ')}):")
        print(f"  {'k':>3} {'statistic':>12} {'df':>6} {'p-value':>10}  model")
        own = "per environment" if sel.test_scope == "per_environment" else "pooled"
        for t in sel.tests:
            model = "shared subspace" if t.get("model") == "shared_subspace" else own
            print(f"  {t['k']:>3} {t['statistic']:>12.1f} {t['df']:>6} {t['p_value']:>10.3g}  "
                  f"{model}")
    if args.out:
        from .plotting import plot_scree, pyplot

        fig = plot_scree(sel)
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=120)
        pyplot().close(fig)
        _write_new_file(args.out, png.getvalue())
        print(f"\nWrote the scree plot to {args.out}")
    return 0


def _n_latent_arg(text: str) -> int | str:
    return text if text == "auto" else _int_at_least(1)(text)


_n_latent_arg.__name__ = "integer >= 1 or 'auto'"


def _branches_arg(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return _int_at_least(0)(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"expected 'auto' or an integer >= 0 ({exc})") from None


_branches_arg.__name__ = "integer >= 0 or 'auto'"


def _int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="creator", description="CREATOR: latent causal features and their DAG "
        "from multi-environment data."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="simulate a model, fit it, print the DAGs and metrics")
    demo.add_argument("--n-latent", type=_int_at_least(1), default=4)
    demo.add_argument("--n-environments", type=_int_at_least(2), default=4)
    demo.add_argument("--n-samples", type=_int_at_least(1), default=1000)
    demo.add_argument("--setting", type=int, choices=(1, 2), default=1)
    demo.add_argument("--seed", type=_int_at_least(0), default=0)

    fit = sub.add_parser("fit", help="fit CREATOR to a CSV file")
    fit.add_argument("data", help="CSV with one column of environment labels, the rest numeric")
    fit.add_argument("--env-column", required=True, help="name of the environment column")
    fit.add_argument("--n-latent", type=_n_latent_arg, required=True,
                     help="number of latent features, or 'auto' (see creator dims)")
    fit.add_argument("--out", required=True,
                     help="output directory (must not exist; not the current directory nor one "
                          "holding DATA)")
    fit.add_argument("--force", action="store_true",
                     help="replace an existing output directory, only if creator wrote it and "
                          "it holds nothing else")
    fit.add_argument("--seed", type=_int_at_least(0), default=0, help="random_state of the fit")
    fit.add_argument("--reference", default=None, metavar="LABEL",
                     help="environment the mechanism changes are read against "
                          "(changed_mechanisms.csv; default: the first label in sorted order)")
    fit.add_argument("--quality-resamples", type=_int_at_least(0), default=0, metavar="B",
                     help="also refit on B bootstrap resamples and warn when the graph does "
                          "not hold (the verdict's resampling check; 4-8 is enough)")
    fit.add_argument("--revise-graph", action=argparse.BooleanOptionalAction, default=None,
                     help="revisit the pruning decisions near the level by how well the "
                          "disentangled features fit the graph (by default with four or more "
                          "environments; "
                          "--no-revise-graph is about 1.2 times faster and less accurate on "
                          "simulated data)")
    fit.add_argument("--order-branches", type=_branches_arg, default="auto", metavar="B",
                     help="also refit with the ordering's B closest calls taken the other way "
                          "and keep the likeliest model (about one more fit each; 'auto', the "
                          "default, takes 2 with 7 to 15 latents and at least as many "
                          "environments, and 0 otherwise)")
    fit.add_argument("--search-graph", action=argparse.BooleanOptionalAction, default=None,
                     help="after the disentanglement, flip the pruning decisions near the level "
                          "while the fitted features follow the graph better (default: the "
                          "estimator's, see RefineOptions(search_graph=...))")
    _add_table_arguments(fit)
    fit.add_argument("--plots", action="store_true",
                     help="also draw graph.png and loadings.png (needs creator-plugin[plots])")

    dims = sub.add_parser("dims", help="choose n_latent for a CSV file, with the evidence")
    dims.add_argument("data", help="CSV with one column of environment labels, the rest numeric")
    dims.add_argument("--env-column", required=True, help="name of the environment column")
    dims.add_argument("--alpha", type=float, default=0.01, help="level of the tests")
    dims.add_argument("--out", help="write a scree plot PNG here (needs matplotlib)")
    dims.add_argument("--seed", type=_int_at_least(0), default=0,
                      help="seeds the column subset tested when there are more than 60 columns")
    _add_table_arguments(dims)

    from .benchmark import cli as bench_cli

    bench = sub.add_parser(
        "bench", help="compare CREATOR with other methods on simulated data",
        description=bench_cli.DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench_cli.add_arguments(bench)

    from .casestudy import llm as llm_cli

    casestudy = sub.add_parser("casestudy", help="case studies on real representations")
    study = casestudy.add_subparsers(dest="study", required=True)
    llm = study.add_parser("llm", help="the paper's language-model case study (needs the "
                           "[llm] extra)", description=llm_cli.DESCRIPTION)
    llm_cli.add_arguments(llm)
    return parser


def _add_table_arguments(parser: argparse.ArgumentParser) -> None:
    """Options choosing the feature columns of DATA (``creator fit`` and ``creator dims``)."""
    cols = parser.add_mutually_exclusive_group()
    cols.add_argument("--columns", nargs="+", metavar="COL",
                      help="the feature columns (default: all but the environment and index "
                           "columns)")
    cols.add_argument("--drop-columns", nargs="+", metavar="COL",
                      help="columns that are not features")
    parser.add_argument("--index-col", default=None, metavar="COL",
                        help="column of row identifiers: not a feature, kept in latents.csv "
                             "(default: a first column without header, as pandas writes its "
                             "index)")
    parser.add_argument("--encoding", default="utf-8", help="text encoding of DATA")


def _bench(args: argparse.Namespace) -> int:
    from .benchmark.cli import run

    return run(args)


def _casestudy(args: argparse.Namespace) -> int:
    from .casestudy.llm import run

    return run(args)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``creator`` command.

    ``SIGTERM`` (the signal of ``kill``, ``timeout`` and service managers) is
    handled like Ctrl-C: the run stops, removes its temporary files and
    exits with status 128 + the signal's number. The handlers are the
    command's only: installed here and restored on return, never by the
    Python API.
    """
    from .output_dir import OutputDirError

    args = _build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    with _interruptible() as received, warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        try:
            return {"demo": _demo, "fit": _fit, "dims": _dims, "bench": _bench,
                    "casestudy": _casestudy}[args.command](args)
        except (UserError, OutputDirError) as exc:
            print(f"error: {exc}", file=sys.stderr)
        except KeyboardInterrupt:
            name = received[-1] if received else "SIGINT"
            print(f"error: interrupted by {name}; no partial results were left behind.",
                  file=sys.stderr)
            return 128 + int(getattr(signal, name, signal.SIGINT))
        except ImportError as exc:
            if "creator-plugin[" not in str(exc):
                raise  # a broken installation, not a missing extra: keep the traceback
            print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
        except OSError as exc:
            # Disk full, permissions, ... while writing: one line, nothing left half-written.
            where = f": {exc.filename}" if exc.filename else ""
            print(f"error: could not write the output ({exc.strerror or exc}{where}).",
                  file=sys.stderr)
    return 2


@contextlib.contextmanager
def _interruptible():
    """``SIGTERM`` and ``SIGINT`` raise ``KeyboardInterrupt`` for the block (main thread).

    While an output directory is being moved into place the signal is held
    until that is done (:func:`creator_plugin.output_dir.hold_signal`).
    Yields the list of the signals' names received, so the exit status can
    say which one stopped the run.
    """
    from .output_dir import hold_signal

    received: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum, frame):
        received.append(signal.Signals(signum).name)
        if not hold_signal(signum):
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield received
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"warning: {message}", file=sys.stderr if file is None else file)


if __name__ == "__main__":
    sys.exit(main())
