"""Files that describe a fit for a reader: tables and, optionally, pictures.

:func:`write_fit_report` is what ``creator fit`` writes besides the latents,
graph and model; it is a library function so scripts can write the same
report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ._csv import write_csv
from .interpret import intercepts, loadings, noise_scales

__all__ = ["REPORT_TABLES", "REPORT_FIGURES", "write_fit_report"]

#: Tables written by :func:`write_fit_report`, always.
REPORT_TABLES = ("loadings.csv", "noise_scales.csv", "intercepts.csv")
#: Figures written by :func:`write_fit_report` with ``plots=True``.
REPORT_FIGURES = ("graph.png", "loadings.png")


def write_fit_report(
    model,
    feature_names: Sequence[str] | None,
    directory,
    *,
    plots: bool = False,
    dpi: int = 120,
) -> list[Path]:
    """Write the loadings, noise scales and intercepts (and pictures) of a fit.

    Parameters
    ----------
    model : fitted CREATOR or CreatorGraph
    feature_names : list of str or None
        Measurement names (None: ``feature_names_in_`` or ``x0..``).
    directory : str or Path
        An existing directory.
    plots : bool, default=False
        Also draw ``graph.png`` (:func:`creator_plugin.plotting.plot_graph`)
        and ``loadings.png`` (:func:`creator_plugin.plotting.plot_loadings`);
        needs the ``plots`` extra (matplotlib).
    dpi : int, default=120
        Resolution of the pictures.

    Returns
    -------
    list of Path
        The files written: ``loadings.csv`` (standardised pattern loadings,
        measurements x latents), ``noise_scales.csv`` and ``intercepts.csv``
        (environments x latents, in units of the latents), then the PNGs. A
        name or label that a spreadsheet would read as a formula is written
        with a leading ``'`` (:func:`creator_plugin._csv.write_csv`).
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"directory {directory} does not exist or is not a directory.")
    tables = {
        "loadings.csv": loadings(model, feature_names=feature_names),
        "noise_scales.csv": noise_scales(model),
        "intercepts.csv": intercepts(model),
    }
    written = []
    for name, table in tables.items():
        write_csv(table, directory / name)
        written.append(directory / name)
    if plots:
        from .plotting import plot_graph, plot_loadings, pyplot

        plt = pyplot()
        figures = {
            "graph.png": plot_graph(model),
            "loadings.png": plot_loadings(model, feature_names=feature_names),
        }
        for name, fig in figures.items():
            fig.savefig(directory / name, dpi=dpi)
            plt.close(fig)
            written.append(directory / name)
    return written
