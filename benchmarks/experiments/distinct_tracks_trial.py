"""Trial: the refinement's starts told apart by their sources, not by pooled correlation.

``ordering._distinct_best`` picks the ``n_refine`` best-scored starts that
extract different sources, counting two candidates as the same source when
their projections' squared pooled correlation is at least 0.9. At d = 10 a
step's right direction and a direction that extracts another noise in one
loud environment can be that close in the pooled metric, so the right
minimum, ranked second, is dropped (``step_criteria_diag.py``: 5 of the 42
wrong steps over 130 tuning fits). Variant ``tracks``: two candidates are the
same source only when they extract the same ICA source in every environment
(the closest sources of ``ica_consistency_sources``).

Tuning sets only::

    python distinct_tracks_trial.py d10 91000 80 OUT.jsonl
"""
import os
import sys

import numpy as np

import creator_plugin.ordering as ordmod
from creator_plugin.independence import ica_consistency_sources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keep_variant_trial import cli, patch  # noqa: E402

_distinct = ordmod._distinct_best
_descent = ordmod.consistency_descent
ICA: dict = {}


def _capture(R_list, ica_dirs, starts, **kw):
    ICA["dirs"] = ica_dirs
    return _descent(R_list, ica_dirs, starts, **kw)


def _by_tracks(R_list, candidates, scores, n, max_corr2=0.9):
    _, tracks = ica_consistency_sources(R_list, candidates, ICA["dirs"])
    picked: list[int] = []
    for c in np.argsort(scores, kind="stable"):
        if not any((tracks[c] == tracks[p]).all() for p in picked):
            picked.append(int(c))
        if len(picked) == n:
            break
    return picked


def _use(fn):
    setups = (patch("_distinct_best", fn), patch("consistency_descent", _capture))

    def setup():
        for step in setups:
            step()
    return setup


def main() -> None:
    cli({"default": _use(_distinct), "tracks": _use(_by_tracks)}, _use(_distinct))


if __name__ == "__main__":
    main()
