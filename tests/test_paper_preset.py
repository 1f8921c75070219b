"""The paper's algorithm as a preset: its settings, its HSIC score and its raw pruning rule."""

import numpy as np
import pytest

from creator_plugin import CREATOR, OrderingOptions, simulate
from creator_plugin.independence import hsic_scores
from creator_plugin.pruning import paper_coefficients


def test_preset_settings():
    est = CREATOR.paper(4, tau=0.7, random_state=3)
    assert est.get_params() == {
        **CREATOR(4, ordering=OrderingOptions(n_reestimate=0, polish=False),
                  refine=None).get_params(),
        "scorer": "hsic", "disentangle": "subspace",
        "pruning": "rank_raw", "prune_threshold": 0.7, "standardize": False, "random_state": 3,
    }
    with pytest.raises(ValueError, match="'prune_threshold' parameter"):
        CREATOR.paper(3, tau=-1.0).fit([np.zeros((20, 3))] * 3)


def test_hsic_score_invariant_to_rescaling_and_permuting_measurements():
    rng = np.random.default_rng(0)
    R_list = [rng.laplace(size=(200, 3)) @ rng.normal(size=(3, 3)) for _ in range(2)]
    R_list = [R - R.mean(axis=0) for R in R_list]
    candidates = rng.normal(size=(3, 4))
    basis = rng.normal(size=(3, 5))  # reduced coordinates -> 5 measurements
    base = hsic_scores(R_list, candidates, basis=basis)
    moved = basis[:, [4, 2, 0, 1, 3]] * [3, 1e-3, 7, 1, 1e4]
    rescaled = hsic_scores(R_list, candidates, basis=moved)
    np.testing.assert_allclose(rescaled, base, rtol=1e-8)
    # Mixing the measurements is a different set of residual columns: not invariant
    # (the paper's score depends on the measurement coordinates).
    mixed = hsic_scores(R_list, candidates, basis=basis @ rng.normal(size=(5, 5)))
    assert not np.allclose(mixed, base, rtol=1e-3)


@pytest.mark.slow
def test_fit_invariant_to_rescaling_and_permuting_measurements():
    """Same choices, same graph; the latents agree up to FastICA's tolerance
    (its fixed start meets the rotated data from another side)."""
    sim = simulate(3, 3, 300, random_state=2)
    base = CREATOR.paper(3, random_state=0).fit(sim.X)
    scales = np.array([0.01, 5.0, 300.0])
    perm = [2, 0, 1]
    other = CREATOR.paper(3, random_state=0).fit([(x * scales)[:, perm] for x in sim.X])
    np.testing.assert_array_equal(other.adjacency_matrix_, base.adjacency_matrix_)
    chosen = [[s["chosen"] for s in m.diagnostics_["ordering"]] for m in (base, other)]
    assert chosen[0] == chosen[1]
    for a, b in zip(other.latents_, base.latents_):
        corr = np.corrcoef(a, b, rowvar=False).diagonal(3)
        assert np.all(corr > 0.9999), corr


def test_paper_coefficients_fix_each_direction_by_its_reference_environment():
    rng = np.random.default_rng(1)
    noises = [rng.laplace(size=(300, 3)) for _ in range(3)]
    entangled = [z @ np.triu(rng.normal(size=(3, 3))) for z in noises]
    ref = [0, 2, 1]
    B = paper_coefficients(noises, entangled, ref)
    g = np.array([10.0, 0.1, 3.0])  # rescaling a direction rescales its noise and feature
    np.testing.assert_allclose(
        paper_coefficients([z * g for z in noises], [y * g for y in entangled], ref), B,
        atol=1e-12,
    )
    # Another reference environment rescales the raw coefficients: not scale-free.
    assert not np.allclose(paper_coefficients(noises, entangled, [1, 1, 1]), B)


@pytest.mark.slow
def test_preset_runs_algorithm_1_literally():
    """Best raw HSIC candidate at every step, no polish; the disentanglement intersects
    the row spaces of the same raw B-hat the pruning tested (the paper's Algorithm 3)."""
    import warnings

    from creator_plugin._config import FitConfig
    from creator_plugin._fit import fit_arrays
    from creator_plugin.disentangle import disentangling_matrix
    from creator_plugin.pruning import paper_scales

    sim = simulate(3, 3, 300, random_state=1)  # one recovered edge: the two B-hats differ
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CREATOR.paper(3, random_state=0).fit(sim.X)
    assert model.adjacency_matrix_.sum() == 1
    for step in model.diagnostics_["ordering"]:
        assert step["chosen"] == int(np.argmin(step["scores"]))
        assert "refined_from" not in step
    assert model.diagnostics_["polish"] is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fit_arrays([np.asarray(x, float) for x in sim.X],
                         FitConfig.from_estimator(model, 3, keep_features=True),
                         random_state=np.random.default_rng(0))
    ref = [s["candidate_environment"][s["chosen"]] for s in res.ordering.steps]
    c = paper_scales(res.ordering.noises, ref)
    C = disentangling_matrix(res.coefficients, res.adjacency)
    for k, latents in enumerate(model.latents_):
        literal = (res.ordering.entangled[k] * c) @ C
        corr = np.corrcoef(literal, latents, rowvar=False).diagonal(3)
        # (intersecting the spaces of the standardised B instead: 1 - |corr| ~ 1e-3 here)
        assert np.all(np.abs(corr) > 1 - 1e-9), corr
