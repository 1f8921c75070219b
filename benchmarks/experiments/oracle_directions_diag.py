"""Diagnosis: the fit with the true directions given to the ordering (``measured``).

``measured_snr_diag.py`` located the family's loss in data sets where some
node's noise is buried by the measurement noise in some environment. This
asks how much of that loss survives when the ordering is perfect: the
ordering's directions are replaced by the inverse of the reduced mixing
(``true_unmixing``), in a causal order of the true graph, in canonical form;
the pruning, the disentanglement and the scoring then run as in the default
fit. The default fit is scored beside it,
and both again with ``measurement_noise="auto"`` (see ``VARIANTS``).

    python oracle_directions_diag.py {package,independent} FIRST COUNT OUT.jsonl
"""
import os
import sys
from dataclasses import replace

import numpy as np

import creator_plugin._fit as fitmod
import creator_plugin.ordering as ordmod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keep_variant_trial import patch  # noqa: E402
from measured_snr_diag import run_variants  # noqa: E402

_order = fitmod.topological_ordering
TRUTH: dict = {}


def _causal_order(A):
    left, order = set(range(A.shape[0])), []
    while left:
        j = next(j for j in sorted(left) if not any(A[i, j] for i in left))
        order.append(j)
        left.remove(j)
    return order


def true_unmixing(X_red: list, Y: list) -> np.ndarray:
    """The directions with ``X_red[k] @ a`` the latents ``Y[k]`` plus measurement noise only.

    The inverse of the reduced mixing, the regression of the reduced data on
    the latents (the exact regressors). The regression of the latents on the
    reduced data instead, used before 2026-11-29, is biased by measurement
    noise (errors in variables: its features mix in up to a fifth of their
    ancestors on `measured`); without measurement noise both are exact.
    """
    Yc = np.vstack([y - y.mean(axis=0) for y in Y])
    return np.linalg.inv(np.linalg.lstsq(Yc, np.vstack(X_red), rcond=None)[0])


def oracle_ordering(X_red, **kw):
    result = _order(X_red, **kw)  # the same random draws as the default fit
    order = _causal_order(TRUTH["A"])
    alphas = true_unmixing(X_red, [y[:, order] for y in TRUTH["Y"]])
    grams = [x.T @ x for x in X_red]
    n_rows = [x.shape[0] for x in X_red]
    maps = ordmod._ordered_noise_maps(grams, n_rows, alphas)
    noise_var = [np.einsum("ij,ik,kj->j", T, S, T) / n for T, S, n in zip(maps, grams, n_rows)]
    return replace(result, alphas=ordmod._canonical(grams, alphas, noise_var), noise_maps=maps)


#: name, ordering, other settings. With the measurement-noise correction the
#: ordering's directions are kept as they are (``polish=False``: the
#: correction's own polish would re-estimate them) and only the second-moment
#: bookkeeping after them is corrected.
VARIANTS = [
    ("default", _order, {}),
    ("oracle", oracle_ordering, {}),
    ("default_auto", _order, {"measurement_noise": "auto"}),
    ("oracle_auto", oracle_ordering, {"measurement_noise": "auto", "polish": False}),
    # the correction's polish started from the true directions
    ("oracle_auto_polish", oracle_ordering, {"measurement_noise": "auto"}),
]


def _use(fn):
    return patch("topological_ordering", fn, fitmod)


if __name__ == "__main__":
    run_variants([(name, _use(fn), kw) for name, fn, kw in VARIANTS], _use(_order),
                 lambda A, Y: TRUTH.update(A=np.asarray(A), Y=Y))
