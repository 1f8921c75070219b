"""The interventional-regime reading when some latent takes more than two forms, and the
refusal of environments that clamp latents."""

import pytest

from creator_plugin import CREATOR, simulate, simulate_family
from creator_plugin.quality import _latent_moments, assess_fit
from creator_plugin.regime import interventional_regime, regime_message


def _split_form_latents(seed=1):
    """LinCD's design with Laplace noise, latents in causal order, and one mechanism
    (the last latent's, in an environment that does not intervene on it) changed:
    that latent then takes three forms, as estimation error makes in a fit."""
    sim = simulate_family("lincd", 5, None, 2000, random_state=seed, noise="laplace")
    order = list(sim.causal_order)
    Y = [y[:, order].copy() for y in sim.Y]
    k = 1 if order[4] != 0 else 2
    Y[k][:, 4] += 0.5 * Y[k][:, 3] * Y[k][:, 4].std() / Y[k][:, 3].std()
    targets = [sorted(order.index(t) for t in ts) for ts in sim.params["targets"]]
    return Y, k, targets


def test_a_split_form_is_still_read_as_interventional():
    Y, k, targets = _split_form_latents()
    moments = _latent_moments(Y)
    r = interventional_regime(moments, gaussian=False, doubted=False)
    assert r is not None and r["reading"] == "mechanisms" and r["reference"] == 0
    assert r["changed_cells"] <= 0.64 * 5 * 5 and len(r["changed_directions"]) == 6
    assert all(set(t) <= set(found) for t, found in zip(targets, r["targets"]))
    assert 4 in r["targets"][k]
    # without the reading (no share allowed) and not doubted, nothing is found
    assert interventional_regime(moments, gaussian=False, doubted=False,
                                 changed_cells=0.0) is None
    # the named methods need the reference plus d interventional environments
    assert interventional_regime(moments[:5], gaussian=False, doubted=False) is None
    text, methods = regime_message(r, 5)
    assert "environment 0" in text and "UMNI-CRL (hard)" in methods


def test_the_verdict_names_the_regime_of_an_otherwise_trusted_fit():
    Y, _, _ = _split_form_latents()
    v = assess_fit(Y, random_state=0)
    kinds = [i.kind for i in v.issues]
    assert "interventional_regime" in kinds
    assert v.checks["regime"]["methods"] and "changed_cells" in v.checks["regime"]


def test_creators_own_data_are_not_read_as_interventional():
    for seed in (0, 1):
        het = simulate(5, 6, 2000, random_state=seed)
        Y = [y[:, list(het.causal_order)] for y in het.Y]
        assert interventional_regime(_latent_moments(Y), gaussian=False, doubted=False) is None
        assert "interventional_regime" not in [i.kind for i in assess_fit(Y, random_state=0).issues]


def test_the_reduction_refuses_environments_that_clamp_latents_with_the_regime_named():
    """The shared reduction still refuses them (CREATOR.fit reads them: tests/test_clamped.py)."""
    from creator_plugin.preprocessing import reduce_environments

    sim = simulate_family("multi_node_crl", 4, None, 300, random_state=0, noise="laplace")
    with pytest.raises(ValueError,
                       match=r"4 of the 4 environments vary in fewer than 4 "
                             r"directions.*rank 1.*clamp latents.*Multi-Node-CRL") as info:
        reduce_environments(sim.X, 4)
    assert info.value.environment_ranks == [1, 1, 1, 1]


@pytest.mark.slow
@pytest.mark.parametrize("generator, seed", [("lincd", 50004), ("lincd", 50005),
                                             ("umni_crl", 50005), ("umni_crl", 50019)])
def test_fits_the_verdict_trusted_or_missed_before_now_name_the_regime(generator, seed):
    """CREATOR fits (d = 5, 2000 rows) that carried no regime issue at d6b3ff1."""
    sim = simulate_family(generator, 5, None, 2000, n_features=10, random_state=seed,
                          noise="laplace")
    model = CREATOR(5, random_state=seed % 10000).fit(sim.X)
    quality = model.diagnostics_["quality"]
    assert "interventional_regime" in [i["kind"] for i in quality["issues"]]
    assert "UMNI-CRL (hard)" in quality["checks"]["regime"]["methods"]


@pytest.mark.slow
def test_creators_own_fits_stay_unflagged():
    for seed in (50000, 50016):  # 50016: the lowest changed share of the tuning seeds
        sim = simulate(5, 6, 2000, n_features=10, random_state=seed)
        model = CREATOR(5, random_state=seed % 10000).fit(sim.X)
        assert "interventional_regime" not in [
            i["kind"] for i in model.diagnostics_["quality"]["issues"]]
