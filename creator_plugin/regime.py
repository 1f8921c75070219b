"""Does the data look interventional, and which environments intervene on which latents?

The interventional methods of the field (LinCD, LSCALE-I, UMNI-CRL; the
``creator bench`` methods ``LinCD``, ``LSCALE-I (hard)``, ``LSCALE-I (soft)``,
``UMNI-CRL (hard)`` and ``UMNI-CRL (soft)``) assume a reference
(observational) environment and environments that change the mechanisms of
a few latents only. CREATOR assumes that every mechanism changes. When a
fit's latents show the first pattern, the verdict says so, names the
environments' apparent targets and the methods whose assumptions fit.

Three readings:

* **Non-Gaussian data** (CREATOR's latents are identified): for every
  latent, in causal order, and every environment the mechanism row
  ``(e_i - w_k) / omega_k`` of :func:`creator_plugin.quality.mechanism_heterogeneity`
  (the first latent: its scale alone); environments whose rows differ by less
  than ``same_level`` of their size share a form. When every latent takes at
  most two forms over K >= 3 environments, the reference is the environment
  in the most common form of the most latents, and environment k "intervenes
  on" the latents whose form differs from the reference's.
* **Gaussian data** (the latents are identified only up to a rotation, so
  no latent can be named): the environments' precision matrices are compared
  in the latents' coordinates, where a change of the mechanisms of m latents
  changes the precision in at most 2 m directions. For a pair of
  environments the changed directions are the eigenvalues of
  ``S_a^(1/2) P_b S_a^(1/2) - I`` (S covariance, P precision) larger in
  modulus than ``4 sqrt(d / min(n_a, n_b))`` (a few times their sampling
  error). The reference is the environment with the fewest changed
  directions to all others; when the others change at most
  ``changed_share`` of the d directions on average, the environments share
  most mechanisms: interventional data rather than heterogeneous in every
  weight. (On CREATOR's own kind of data, every weight changing, the share
  is 0.83 in the median of 630 simulated data sets and below 0.55 in about
  3.9 % of 540 (d 2-10, K d or 2d, 250-2000 rows), below 0.4 in 0.56 %;
  on the authors' generators at d = 5 it is at most 0.52, 0.4 for LinCD's
  and LSCALE-I's.)
* **Non-Gaussian data, some latent with more than two forms** (estimation
  error splits a form, or multi-node targets give a latent several): with
  K >= d + 1 environments (the reference plus d interventional ones, as the
  named methods need), for every candidate reference r the changed cells
  (latent i, environment k) whose form differs from r's and the changed
  precision directions against r (as in the Gaussian reading), both out of
  (K - 1) d. The reference is the environment whose larger count is
  smallest; when that count is at most ``changed_cells`` (0.64) of
  (K - 1) d, both readings agree that the environments share most
  mechanisms, and environment k "intervenes on" the latents whose form
  differs from the reference's. (CREATOR fits at d = 5, 20 data sets each,
  tuning seeds: the larger share is at least 0.80 on ``simulate(5, 6, 2000)``,
  0.70 on the zoo's bar families, 0.69 on ``simulate`` at d = 5 with K 5, 6 or
  10 and 250-2000 rows, 0.70 at d 6 and 8; at most 0.40 on LinCD's and
  LSCALE-I's generators with Laplace noise, 0.60 on UMNI-CRL's. At d 3 and 4
  with K = 2 d it reaches down to 0.5, so a few of CREATOR's own data sets
  are read as interventional there: 4 of 40.) Otherwise, for a fit the
  verdict already doubts, the precision reading alone (share at most 0.4)
  is the fallback.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SECOND_MOMENT_METHODS", "interventional_regime", "regime_message"]

#: The ``creator bench`` methods built for interventional data (all use second moments).
SECOND_MOMENT_METHODS = ("LinCD", "LSCALE-I (hard)", "LSCALE-I (soft)", "UMNI-CRL (hard)",
                         "UMNI-CRL (soft)")


def _forms(rows: np.ndarray, same_level: float) -> list[int]:
    K = rows.shape[0]
    labels = list(range(K))
    for a in range(K):
        for b in range(a + 1, K):
            size = max(np.linalg.norm(rows[a]), np.linalg.norm(rows[b]))
            if np.linalg.norm(rows[a] - rows[b]) < same_level * size:
                old, new = labels[b], labels[a]
                labels = [new if x == old else x for x in labels]
    return labels


def _mechanism_forms(covs: list[np.ndarray], same_level: float) -> list[list[int]]:
    """Form label of every environment, per latent (rows of the module docstring)."""
    d = covs[0].shape[0]
    out = []
    for i in range(d):
        rows = []
        for S in covs:
            w = np.linalg.lstsq(S[:i, :i], S[:i, i], rcond=None)[0] if i else np.zeros(0)
            resid = float(S[i, i] - S[:i, i] @ w) if i else float(S[0, 0])
            omega = max(np.sqrt(max(resid, 0.0)), 1e-300)
            rows.append(np.concatenate([-w, [1.0]]) / omega)
        out.append(_forms(np.array(rows), same_level))
    return out


def _changed_directions(covs, sizes) -> np.ndarray:
    K, d = len(covs), covs[0].shape[0]
    counts = np.zeros((K, K), dtype=int)
    for a in range(K):
        vals, vecs = np.linalg.eigh(covs[a])
        root = vecs @ np.diag(np.sqrt(np.maximum(vals, 0.0))) @ vecs.T
        for b in range(K):
            if a == b:
                continue
            M = root @ np.linalg.pinv(covs[b]) @ root - np.eye(d)
            level = 4.0 * np.sqrt(d / min(sizes[a], sizes[b]))
            counts[a, b] = int(np.sum(np.abs(np.linalg.eigvalsh((M + M.T) / 2)) > level))
    return counts


def interventional_regime(
    moments: list, *, gaussian: bool, doubted: bool = True, same_level: float = 0.15,
    changed_share: float = 0.55, changed_share_non_gaussian: float = 0.4,
    changed_cells: float = 0.64,
) -> dict | None:
    """The interventional pattern of a fit's latents, or None (module docstring).

    Parameters
    ----------
    moments : list of (n_k, mean_k, scatter_k)
        The latents' per-environment moments, latents in causal order.
    gaussian : bool
        The latents are indistinguishable from Gaussian (their directions
        are then not identified, and only the Gaussian reading is used).
    doubted : bool, default=True
        The verdict already doubts the fit: on non-Gaussian data the
        precision reading alone is then the fallback when the mechanism
        readings find no pattern.
    same_level : float, default=0.15
        Relative distance under which two mechanism rows are one form.
    changed_share : float, default=0.55
        Gaussian reading: the largest share of the d directions that the
        other environments change, on average, against the reference.
    changed_share_non_gaussian : float, default=0.4
        The same share on non-Gaussian data, where the precision reading is
        the fallback (``doubted`` fits) when the mechanism readings find no
        pattern.
    changed_cells : float, default=0.64
        Non-Gaussian data with a latent of more than two forms: the largest
        share of the (K - 1) d changed cells and of the (K - 1) d changed
        precision directions against the reference (the larger of the two).

    Returns
    -------
    dict or None
        ``reading`` ("mechanisms" or "precisions"), ``reference`` (an
        environment index), and ``targets`` (per environment, the latents
        whose form differs from the reference's; mechanisms reading) or
        ``changed_directions`` (per environment, against the reference;
        precisions reading, and the mechanisms reading when some latent
        takes more than two forms, which also gives ``changed_cells``).
        None when the pattern is not found.
    """
    K = len(moments)
    if K < 3:
        return None
    covs = [scatter / n for n, _, scatter in moments]
    sizes = [n for n, _, _ in moments]
    d = covs[0].shape[0]
    if not gaussian:
        forms = _mechanism_forms(covs, same_level)
        if d < 2 or max(len(set(f)) for f in forms) > 2:
            sparse = _sparse_changes(forms, covs, sizes, changed_cells)
            if sparse is not None:
                return sparse
            return _precision_reading(covs, sizes, changed_share_non_gaussian) if doubted else None
        common = [max(set(f), key=f.count) for f in forms]
        in_common = [sum(f[k] == c for f, c in zip(forms, common)) for k in range(K)]
        ref = int(np.argmax(in_common))
        targets = [[i for i, f in enumerate(forms) if f[k] != f[ref]] for k in range(K)]
        if not any(targets):
            return None
        return {"reading": "mechanisms", "reference": ref, "targets": targets}
    return _precision_reading(covs, sizes, changed_share)


def _sparse_changes(forms, covs, sizes, changed_cells) -> dict | None:
    """The mechanisms reading when some latent takes more than two forms (module docstring)."""
    K, d = len(covs), covs[0].shape[0]
    if d < 2 or K < d + 1:
        return None
    cells = np.array([sum(f[k] != f[r] for f in forms for k in range(K)) for r in range(K)])
    counts = _changed_directions(covs, sizes)
    directions = np.maximum(counts, counts.T)
    both = np.maximum(cells, directions.sum(axis=1))
    ref = int(np.argmin(both))
    if both[ref] > changed_cells * (K - 1) * d:
        return None
    targets = [[i for i, f in enumerate(forms) if f[k] != f[ref]] for k in range(K)]
    return {"reading": "mechanisms", "reference": ref, "targets": targets,
            "changed_cells": int(cells[ref]),
            "changed_directions": [int(c) for c in directions[ref]]}


def _precision_reading(covs, sizes, changed_share) -> dict | None:
    K, d = len(covs), covs[0].shape[0]
    counts = _changed_directions(covs, sizes)
    sym = np.maximum(counts, counts.T)
    ref = int(np.argmin(sym.sum(axis=1)))
    if sym[ref].sum() > changed_share * (K - 1) * d:
        return None
    return {"reading": "precisions", "reference": ref,
            "changed_directions": [int(c) for c in sym[ref]]}


def regime_message(regime: dict, n_latent: int) -> tuple[str, list[str]]:
    """The verdict's sentence about an interventional regime and the methods it names."""
    K, ref = None, regime["reference"]
    if regime["reading"] == "mechanisms":
        targets = regime["targets"]
        K = len(targets)
        parts = [f"environment {k}: latents {t}" for k, t in enumerate(targets)
                 if k != ref and t]
        unchanged = [k for k, t in enumerate(targets) if k != ref and not t]
        single = all(len(t) <= 1 for t in targets)
        methods = (["LinCD", "LSCALE-I (hard)", "LSCALE-I (soft)", "UMNI-CRL (hard)",
                    "UMNI-CRL (soft)"] if single else ["UMNI-CRL (hard)", "UMNI-CRL (soft)"])
        if "changed_cells" in regime:  # some latent takes more than two forms
            share = regime["changed_cells"] / max((K - 1) * n_latent, 1)
            pattern = (f"against environment {ref}, the reference (observational) one, only "
                       f"{100 * share:.0f}% of the other environments' latent mechanisms "
                       f"change (and their precisions change in "
                       f"{sum(regime['changed_directions'])} of {(K - 1) * n_latent} "
                       "directions)")
        else:
            pattern = (f"each latent's mechanism takes at most two forms, environment {ref} "
                       "is the reference (observational) one")
        found = (f"The environments look interventional: {pattern}, and the others appear "
                 f"to intervene on " + "; ".join(parts)
                 + (f" (environments {unchanged}: no change found)" if unchanged else "")
                 + ". ")
        kind = ("single-node interventions" if single else
                "unknown multi-node interventions")
        advice = (f"That is the setting of methods built for {kind}: "
                  + ", ".join(methods) + " (creator bench methods; they need the reference "
                  f"environment plus {n_latent} interventional ones).")
    else:
        counts = regime["changed_directions"]
        K = len(counts)
        parts = [f"environment {k}: {c}" for k, c in enumerate(counts) if k != ref]
        methods = list(SECOND_MOMENT_METHODS)
        found = (f"The environments look interventional: their covariances differ from "
                 f"environment {ref}'s in fewer than all {n_latent} directions (changed "
                 f"directions, " + "; ".join(parts) + "), as when each environment changes "
                 "the mechanisms of a few latents. ")
        advice = ("On Gaussian data only the interventions identify the latents: use a "
                  "second-moment method built for interventional data, "
                  + ", ".join(methods) + " (creator bench methods; they need the reference "
                  f"environment plus {n_latent} interventional ones).")
    del K
    return found + advice, methods
