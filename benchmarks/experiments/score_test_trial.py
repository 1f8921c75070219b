"""Trial: choose each ordering step's direction by a per-environment score test.

A direction that extracts a source of environment k is a stationary point of
every one-unit ICA contrast *in environment k alone*: with s the
standardised projection and z the whitened residual components orthogonal
to it, ``E[z tanh(s)] = 0`` and ``E[z (s^2 - 1)] = 0`` when s is independent
of z. The statistic

    T_k = n |P E[z f(s)]|^2 / E[f(s)^2],  f in {tanh(s), s^2 - 1}

is about chi-square with 2 (m - 1) degrees of freedom there, whatever the
other sources' laws, while a compromise between environments (a direction
that extracts node a's noise in most environments and node b's in a loud one)
is stationary only for the sum, so its T_k is large in the environments it
does not fit. The consistency score instead measures the distance to every
environment's estimated ICA directions, whose own estimation error is as
large as the compromise's misfit at d = 10.

Variant ``T``: at the steps where the directions are re-estimated jointly
(``ordering._keep_sources`` runs), the step's choice among the re-estimated
(or kept) directions is the smallest ``sum_k T_k`` instead of the smallest
consistency score. Nothing else changes.

Tuning sets only::

    python score_test_trial.py zoo 0 30 OUT.jsonl
    python score_test_trial.py d10 91000 80 OUT.jsonl
"""
import os
import sys

import numpy as np

import creator_plugin.ordering as ordmod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keep_variant_trial import _use, cli  # noqa: E402

_keep = ordmod._keep_sources


def score_test(R_list, directions):
    """(s,): sum over environments of T_k for every column of ``directions`` (d, s)."""
    total = np.zeros(directions.shape[1])
    for R in R_list:
        n = R.shape[0]
        U, sv, Vt = np.linalg.svd(R - R.mean(axis=0), full_matrices=False)
        m = int((sv > sv[0] * 1e-8).sum())
        z = U[:, :m] * np.sqrt(n)  # whitened: unit variance, uncorrelated
        w = (Vt[:m] * sv[:m, None]) @ directions / np.sqrt(n)
        w /= np.linalg.norm(w, axis=0)
        s = z @ w  # (n, s) standardised projections
        for f in (np.tanh(s), s**2 - 1.0):
            g = z.T @ f / n  # (m, s)
            g -= w * np.sum(g * w, axis=0)
            total += n * np.sum(g**2, axis=0) / np.mean(f**2, axis=0)
    return total


def _by_score_test(R_list, ica_dirs, starts, refined):
    directions, kept, _ = _keep(R_list, ica_dirs, starts, refined)
    return directions, kept, score_test(R_list, directions)


def main() -> None:
    cli({"default": _use(_keep), "T": _use(_by_score_test)}, _use(_keep))


if __name__ == "__main__":
    main()
