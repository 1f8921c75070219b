"""Edge-level confidence from one fit: how far to believe every edge of the returned graph.

The residual rule (:func:`creator_plugin.pruning.prune`) keeps ``j -> i``
when the RMS over the K environments of the part of the coefficient vector
``b_ij`` outside the span of the child's other vectors exceeds the level.
This module measures, for every decision, that statistic against its
sampling error and maps the evidence to a probability.

* **The sampling error.** ``b_ij[k]`` is, up to the standardisation, minus
  the coefficient of feature j in the least-squares regression of feature i
  on the earlier features in environment k; its variance is the classical
  ``s^2 [C^-1]_jj / n_k`` (with a measurement-noise correction, the
  sandwich of the corrected regression; :func:`coefficient_se`). The
  statistic's standard error follows by the delta method, and ``W``, the
  squared residual in units of its sampling variance, is the Wald statistic
  of "no edge" (chi-square with ``K`` minus the projected dimension degrees
  of freedom under no edge) (:func:`pruning_evidence`).
* **The ordering's margins.** A pair whose order is wrong carries a wrong
  decision both ways. The ordering step records, at every step, the scores
  of its re-estimated directions; the ratio of the best different
  direction's score to the winner's (:func:`creator_plugin.refine.order_branches.close_calls`)
  says how close the call was.
* **The map** from this evidence to probabilities (:data:`MAP`) was fitted
  on simulated tuning data only and then frozen.
* **The doubt of the unmixing.** The pruning's evidence takes the latents as
  right. Where a latent's recovered noise is not an independent source of
  its environments (:func:`latent_doubt`, from the verdict's ICA agreement),
  the latents are unmixed imperfectly and a decision about an edge between
  two such latents, its direction most of all, is less certain than its
  statistics say: the log-odds of every pair with a returned edge either way
  between two doubted latents are shrunk toward 0 (:func:`doubt_factor`),
  and the map reads the fit's median doubt (:func:`_fit_doubt`), how well the
  latents were unmixed as a whole.

The confidence describes the returned graph: decisions flipped by the graph
revision or search (``"revised"``, ``"searched"`` in the decisions) are
read with that flip.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DOUBT_LEVEL", "DOUBT_MAX_SAMPLES", "MAP", "UNDECIDED", "coefficient_se",
           "confidence_record", "doubt_factor", "edge_confidence", "latent_doubt",
           "pair_features", "pruning_evidence", "step_margins", "undecided_pairs"]

#: Confidences strictly between these are *undecided* (:func:`undecided_pairs`).
UNDECIDED = (0.1, 0.9)


def coefficient_se(covariances: np.ndarray, n_rows, tested: np.ndarray,
                   measured: np.ndarray | None = None) -> np.ndarray:
    """Sampling SD of every tested coefficient ``[k, i, j]`` (``j < i``; 0 elsewhere).

    Parameters
    ----------
    covariances : ndarray (K, d, d)
        Per environment, the (uncentred) covariance of the unit-variance
        entangled features (with a measurement-noise correction, of their
        signal).
    n_rows : sequence of int (K,)
    tested : ndarray (K, d, d)
        The standardised coefficients the residual rule tests.
    measured : ndarray (K, d, d), optional
        The features' covariances as measured, when ``covariances`` are
        corrected ones (default: ``covariances``).

    Returns
    -------
    ndarray (K, d, d)
        Entry ``(i, j)`` is ``-c_kij tested[k, i, i] u_j / u_i`` with
        ``c_ki`` the regression of feature i on the earlier ones in
        environment k and ``u`` the pooled innovation SDs; its SD is
        ``sqrt(s^2 [C^-1 R C^-1]_jj / n_k)`` times the same factor, with
        ``C`` the regressors' covariance, ``R`` the same as measured and
        ``s^2`` the residual's variance as measured (``R = C`` without a
        correction: the classical least-squares variance).
    """
    covariances = np.asarray(covariances, dtype=float)
    measured = covariances if measured is None else np.asarray(measured, dtype=float)
    K, d, _ = tested.shape
    n_rows = np.asarray(n_rows, dtype=float)
    innov = _innovation_sd(covariances, n_rows)
    se = np.zeros_like(tested, dtype=float)
    for k, (c, r, n) in enumerate(zip(covariances, measured, n_rows)):
        for i in range(1, d):
            inv = np.linalg.inv(c[:i, :i])
            coef = inv @ c[:i, i]
            s2 = r[i, i] - 2.0 * coef @ r[:i, i] + coef @ r[:i, :i] @ coef
            v = np.einsum("ab,bc,ca->a", inv, r[:i, :i], inv)
            se[k, i, :i] = (np.sqrt(np.maximum(s2, 0.0) * np.maximum(v, 0.0) / n)
                            * abs(tested[k, i, i]) * innov[:i] / max(innov[i], 1e-300))
    return se


def pruning_evidence(tested: np.ndarray, se: np.ndarray, threshold: float) -> list[dict]:
    """The residual rule's every decision with its sampling error, in the rule's order.

    Replays :func:`creator_plugin.pruning.prune` (``rule="residual"``) and
    records, per pair ``j -> i`` (``j < i``): ``statistic``, ``se`` (its
    standard error by the delta method: the sampling SD of the residual's
    component along itself, over ``sqrt(K)``), ``wald`` (the residual's
    squared norm in units of its sampling covariance), ``dof`` (K minus the
    dimension projected out) and ``pruned`` (the rule's decision before any
    revision).

    Parameters
    ----------
    tested : ndarray (K, d, d)
    se : ndarray (K, d, d)
        :func:`coefficient_se`.
    threshold : float
        The rule's level.

    Returns
    -------
    list of dict
    """
    K, d, _ = tested.shape
    out = []
    for i in range(1, d):
        kept = [tested[:, i, i]]
        for j in range(i - 1, -1, -1):
            b = tested[:, i, j]
            Q, _ = np.linalg.qr(np.column_stack(kept))
            P = np.eye(K) - Q @ Q.T
            r = P @ b
            norm = float(np.linalg.norm(r))
            stat = norm / np.sqrt(K)
            cov = P @ (se[:, i, j, None] ** 2 * P)
            if norm > 0:
                u = r / norm
                s = float(np.sqrt(max(u @ cov @ u, 0.0) / K))
            else:
                s = float(np.sqrt(max(np.trace(cov), 0.0) / K / max(K - len(kept), 1)))
            dof = K - len(kept)
            wald = float(r @ np.linalg.pinv(cov, rcond=1e-10, hermitian=True) @ r) if dof else 0.0
            edge = stat > threshold and len(kept) < K
            if edge:
                kept.append(b)
            out.append({"parent": j, "child": i, "statistic": float(stat), "se": s,
                        "wald": wald, "dof": dof, "threshold": float(threshold),
                        "pruned": bool(edge)})
    return out


def step_margins(steps: list[dict], d: int) -> np.ndarray:
    """Per ordering step, the ratio of the best different direction's score to the winner's.

    ``inf`` where the step had no different re-estimated direction (the
    last step, steps without re-estimation); a ratio near 1 is a close call
    (:func:`creator_plugin.refine.order_branches.close_calls`).
    """
    from .refine.order_branches import close_calls

    margins = np.full(d, np.inf)
    for ratio, step, _ in close_calls(steps):
        margins[step] = ratio
    return margins


#: Where the ordering step recorded no close call (the last step, steps
#: without re-estimation), its margin counts as this ratio.
MARGIN_CAP = 10.0

#: The map from the evidence to probabilities: logistic coefficients
#: (intercept first) of :func:`pair_features`' two kinds of pairs, fitted by
#: penalised maximum likelihood (L2, weight 1/2 on the slopes; the slopes on
#: the evidence of an edge held non-negative, so the confidence never falls as
#: that evidence grows), with :func:`doubt_factor` inside the likelihood, on
#: the default fits of simulated data sets that no evaluation uses: the six
#: workload families the accuracy targets cover at five latents, five
#: environments, 1,000 rows each (2,400 fits, the package's simulator and an
#: independent one) and the five of them fitted in seconds at ten latents,
#: ten environments, 2,000 rows each (120 fits, both simulators). The number
#: of latents enters only through what the fit measures (the degrees of
#: freedom of the Wald statistic, the latents' doubt).
MAP: dict = {
    "upper": (-3.0278, 1.5201, 1.1544, 0.0, 0.0, 5.8863, 0.0, 0.5418, 0.0158, -0.6673, 0.1499,
              0.092, -0.3582, -1.2792),
    "lower": (-5.1606, -2.0224, -0.8852, 0.4092, -0.8269, 1.6633),
}


def _margin_feature(margin) -> float:
    """``log(ratio - 1)`` of an ordering step's margin (capped at :data:`MARGIN_CAP`)."""
    m = MARGIN_CAP if margin is None else min(float(margin), MARGIN_CAP)
    return float(np.log(max(m - 1.0, 0.0) + 1e-3))


#: The median :func:`latent_doubt` a record without the doubt is read with: the
#: median over the fits the map was fitted on.
DOUBT_ABSENT = 2.98


def _fit_doubt(record: dict) -> float:
    """``log(1 + median latent doubt)`` of a fit (:data:`DOUBT_ABSENT` without a doubt):
    how well the fit unmixed its latents as a whole."""
    doubt = record.get("doubt")
    u = DOUBT_ABSENT if doubt is None else float(np.median(np.maximum(doubt, 0.0)))
    return float(np.log1p(u))


def pair_features(record: dict) -> list[tuple[str, tuple[int, int, np.ndarray]]]:
    """The evidence of every ordered pair of a fit, as the map reads it.

    Parameters
    ----------
    record : dict
        :func:`confidence_record` of the fit.

    Returns
    -------
    list of (kind, (a, b, x))
        For every tested pair ``j -> i`` (``j`` earlier in the causal
        order), with ``r`` the log ratio of the statistic to the level,
        ``w = log(1 + W / dof)``, ``v = log(1 + W)``, ``z`` the statistic's
        distance to the level in standard errors (clipped to [-10, 10]),
        ``e`` the returned decision (1: edge), ``f`` whether a refinement
        flipped the rule's decision and ``m`` the ordering margin of step
        ``j`` (:func:`_margin_feature`): an ``"upper"`` entry ``(j, i, x)``,
        ``x = [r, w, z, max(w - 2, 0)] * (1 - e) + [e, r e, v e, z e, f, m e,
        m (1 - e)]`` (the evidence read apart for the two decisions: a
        missing edge's Wald statistic per degree of freedom, the chi-square
        scale of "no edge"; a kept edge's whole, its residual lies along one
        direction, so that dividing by the degrees of freedom, ``K`` minus
        the child's kept parents, would read the same edge as weaker the more
        environments there are; ``g`` the log of 1 + the fit's median
        :func:`latent_doubt` (:func:`_fit_doubt`), read for both decisions as
        ``[g (1 - e), g e]`` after them); and a
        ``"lower"`` entry ``(i, j, x)`` for the reversed edge, ``x = [e,
        e min(m, 0), e r, e max(-2 - m, 0), (1 - e) r]`` (a reversal needs an
        edge between the two and a close call of the order).
    """
    out = []
    margins = record["margins"]
    g = _fit_doubt(record)
    for q in record["pairs"]:
        j, i = q["parent"], q["child"]
        r = float(np.log(max(q["statistic"] / q["threshold"], 1e-3)))
        w = float(np.log1p(q["wald"] / max(q["dof"], 1)))
        v = float(np.log1p(q["wald"]))
        z = float(np.clip((q["statistic"] - q["threshold"]) / max(q["se"], 1e-12), -10, 10))
        e = float(q["edge"])
        m = _margin_feature(margins[j])
        no = 1.0 - e
        upper = [r * no, w * no, z * no, max(w - 2.0, 0.0) * no, e, r * e, v * e, z * e,
                 float(q["edge"] != q["pruned"]), m * e, m * no, g * no, g * e]
        lower = [e, e * min(m, 0.0), e * r, e * max(-2.0 - m, 0.0), no * r]
        out.append(("upper", (j, i, np.array(upper))))
        out.append(("lower", (i, j, np.array(lower))))
    return out


#: The level of :func:`doubt_factor`: a pair whose two latents both have a
#: :func:`latent_doubt` of this size has its log-odds halved. Chosen on
#: simulated tuning data only (the six workload families of the accuracy
#: targets, five latents, five environments, 1,000 rows each, both
#: simulators, 2,400 fits), among shrinkages ``1 / (1 + (u / level)^p)``,
#: ``p`` = 1-3, and levels 10-80: the smallest level (the strongest doubt) of
#: this form that kept the undecided pairs of every family within the
#: sharpness target (2 x the wrong decisions + 2 % of the pairs) there.
DOUBT_LEVEL = 80.0

#: Rows per environment :func:`latent_doubt` reads (a seeded subsample beyond):
#: the statistic's scale does not depend on n, its cost stops growing with it.
DOUBT_MAX_SAMPLES = 2000


def latent_doubt(latents, agreement: dict | None = None) -> list[float]:
    """Per latent, how far its recovered noise is from an independent source of its
    environments.

    The verdict's ICA agreement (:func:`creator_plugin.quality.ica_agreement`):
    in every environment FastICA is started at the Gram-Schmidt noises of the
    latents in their order; ``1 - max_c corr^2`` of noise i with the
    environment's ICA sources is O(1/n) when the noise is a source. The doubt of
    latent i is the largest over the environments of ``n_k (1 - max_c
    corr^2) / (d - 1)`` (``n_k`` the rows read, at most
    :data:`DOUBT_MAX_SAMPLES`): a few units for right noises, tens to hundreds
    where the ordering extracted a mixture of sources.

    Parameters
    ----------
    latents : list of ndarray (n_k, d)
        The fit's latents per environment, in causal order.
    agreement : dict, optional
        Their :func:`~creator_plugin.quality.ica_agreement`, when already
        computed on all rows of environments of at most :data:`DOUBT_MAX_SAMPLES`
        rows each (then it has no random part).

    Returns
    -------
    list of float (d,)
    """
    from .quality import ica_agreement

    latents = [np.asarray(L, dtype=float) for L in latents]
    d = latents[0].shape[1]
    if d < 2:
        return [0.0] * d
    agree = agreement if agreement is not None else ica_agreement(
        latents, max_samples=DOUBT_MAX_SAMPLES, random_state=0)
    rows = np.array([min(L.shape[0], DOUBT_MAX_SAMPLES) for L in latents], dtype=float)
    scaled = rows[:, None] * np.asarray(agree["disagreement"], dtype=float) / (d - 1)
    return [float(u) for u in scaled.max(axis=0)]


def doubt_factor(doubt, adjacency: np.ndarray) -> np.ndarray:
    """The (d, d) factor on the log-odds of every pair from the latents' doubt.

    ``1 / (1 + min(u_a, u_b) / DOUBT_LEVEL)`` for a pair ``(a, b)`` with a
    returned edge ``a -> b`` or ``b -> a`` (``u`` the :func:`latent_doubt`),
    1 elsewhere: a reversed or a spurious edge between two poorly unmixed
    latents looks like a strong edge to the pruning; a missing edge gets no
    doubt.

    Parameters
    ----------
    doubt : sequence of float (d,)
    adjacency : ndarray (d, d)
        The returned graph.

    Returns
    -------
    ndarray (d, d) of float in (0, 1]
    """
    u = np.maximum(np.asarray(doubt, dtype=float), 0.0)
    A = np.asarray(adjacency) != 0
    factor = 1.0 / (1.0 + np.minimum.outer(u, u) / DOUBT_LEVEL)
    return np.where(A | A.T, factor, 1.0)


def edge_confidence(record: dict, n_environments: int) -> np.ndarray:
    """The (d, d) confidence of a fit: ``[i, j]`` the probability that latent i -> latent j.

    The map's log-odds (:data:`MAP`), times :func:`doubt_factor` when the
    record holds the latents' doubt (``"doubt"``, :func:`latent_doubt`).

    Parameters
    ----------
    record : dict
        :func:`confidence_record` of the fit.
    n_environments : int

    Returns
    -------
    ndarray (d, d) of float in [0, 1], 0 on the diagonal
    """
    d = len(record["margins"])
    logit = np.zeros((d, d))
    for kind, (a, b, x) in pair_features(record):
        coef = np.asarray(MAP[kind], dtype=float)
        logit[a, b] = coef[0] + coef[1:] @ x
    if record.get("doubt") is not None:
        adjacency = np.zeros((d, d), dtype=int)
        for q in record["pairs"]:
            adjacency[q["parent"], q["child"]] = int(q["edge"])
        logit = logit * doubt_factor(record["doubt"], adjacency)
    out = 1.0 / (1.0 + np.exp(-logit))
    np.fill_diagonal(out, 0.0)
    return out


def undecided_pairs(confidence: np.ndarray) -> list[tuple[int, int]]:
    """``(i, j)`` of the pairs whose confidence lies strictly within :data:`UNDECIDED`."""
    low, high = UNDECIDED
    c = np.asarray(confidence)
    return [(int(i), int(j)) for i, j in zip(*np.nonzero((c > low) & (c < high)))]


def confidence_record(X_red, noise, graph, steps: list[dict], threshold: float,
                      spectrum=None) -> dict:
    """The evidence of one fit's returned graph: the record ``diagnostics_["edge_confidence"]``.

    Parameters
    ----------
    X_red : sequence of ndarray (n_k, d)
        The reduced (whitened) data.
    noise : MeasurementNoise or None
        The fit's measurement-noise estimate.
    graph : creator_plugin.pruning.PrunedGraph
        The returned graph (decisions after any revision).
    steps : list of dict
        The ordering's record.
    threshold : float
    spectrum : array-like, optional
        The reduction's eigenvalue spectrum (largest first); the mean of the
        eigenvalues beyond the d kept estimates the measurement noise's
        variance per direction (none when there are no more).

    Returns
    -------
    dict
        ``"pairs"``: per tested pair the :func:`pruning_evidence` entries and
        ``"edge"`` (the returned decision); ``"margins"``: per step
        :func:`step_margins` (None for ``inf``); ``"innovation"``: per
        feature the pooled SD of its part not explained by the earlier
        features (the features have unit pooled SD); ``"noise_ratio"``: per
        feature the estimated measurement-noise variance in it over its
        innovation variance. The fit adds ``"doubt"``, :func:`latent_doubt`
        of its latents, once they are encoded.
    """
    n_rows = np.array([x.shape[0] for x in X_red])
    raw = [x.T @ x for x in X_red]
    a = graph.alphas
    d = a.shape[1]
    measured = np.stack([a.T @ g @ a for g in raw]) / n_rows[:, None, None]
    covariances = measured if noise is None else (
        np.stack([a.T @ g @ a for g in noise.signal_grams(raw)]) / n_rows[:, None, None])
    se = coefficient_se(covariances, n_rows, graph.tested, measured)
    evidence = pruning_evidence(graph.tested, se, threshold)
    for q in evidence:
        q["edge"] = bool(graph.adjacency[q["parent"], q["child"]])
    innovation = _innovation_sd(measured, n_rows)
    ratio = np.zeros(d)
    spectrum = np.zeros(0) if spectrum is None else np.asarray(spectrum, dtype=float)
    if spectrum.size > d:
        # whitened coordinates: the noise's variance along reduced axis m is sigma^2 / lambda_m
        sigma2 = float(np.mean(spectrum[d:]))
        ratio = sigma2 * (a**2 / spectrum[:d, None]).sum(axis=0) / np.maximum(innovation**2,
                                                                              1e-300)
    margins = step_margins(steps, d)
    return {"pairs": evidence,
            "margins": [None if not np.isfinite(m) else float(m) for m in margins],
            "innovation": innovation.tolist(), "noise_ratio": ratio.tolist()}


def _innovation_sd(covariances: np.ndarray, n_rows) -> np.ndarray:
    """Pooled SD of every feature's residual on the earlier ones, from per-environment
    covariances."""
    n_rows = np.asarray(n_rows, dtype=float)
    d = covariances.shape[1]
    ss = np.zeros(d)
    for c, n in zip(covariances, n_rows):
        ss[0] += n * c[0, 0]
        for j in range(1, d):
            ss[j] += n * (c[j, j] - c[j, :j] @ np.linalg.solve(c[:j, :j], c[:j, j]))
    return np.sqrt(np.maximum(ss, 0.0) / n_rows.sum())
