"""The field's own generators, UMNI-CRL and the interventional-regime reading."""

import numpy as np
import pytest
from scipy.stats import kurtosis

from creator_plugin.benchmark.scoring import correlation_scores
from creator_plugin.benchmark.umni_crl import fit_umni_crl, fit_umni_crl_soft
from creator_plugin.benchmark.workloads import simulation_cells
from creator_plugin.quality import _latent_moments
from creator_plugin.regime import interventional_regime
from creator_plugin.simulation import FIELD_FAMILIES, simulate_family

FIELD = ("lincd", "lscale_i", "umni_crl", "multi_node_crl")


@pytest.mark.parametrize("family", FIELD)
@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_families_draw_the_authors_design(family, noise):
    sim = simulate_family(family, 4, None, 400, random_state=1, noise=noise)
    assert sim.params["family"] == family and sim.params["noise"] == noise
    targets = sim.params["targets"]
    if family == "multi_node_crl":
        assert len(sim.X) == 4 and sim.X[0].shape == (400, 4)
        assert all(len(t) == 3 for t in targets)  # every node but one clamped
        assert all(np.linalg.matrix_rank(np.cov(x.T)) == 1 for x in sim.X)
    else:
        assert len(sim.X) == 5 and sim.X[0].shape == (400, 8)
        assert targets[0] == []
        if family == "umni_crl":
            D = np.array(sim.params["D"])
            assert abs(np.linalg.det(D)) > 0.5  # linearly independent target sets
            assert targets[1:] == [np.flatnonzero(D[:, j]).tolist() for j in range(4)]
        else:
            assert targets[1:] == [[0], [1], [2], [3]]
        for k, t in enumerate(targets):  # only the targets' mechanisms change
            same = [i for i in range(4) if i not in t]
            assert np.allclose(sim.W[k][:, same], sim.W[0][:, same])
            assert np.allclose(np.diag(sim.Omega[k])[same], np.diag(sim.Omega[0])[same])
    free = np.concatenate([z[:, np.diag(o) > 0] for z, o in zip(sim.Z, sim.Omega)], axis=None)
    excess = kurtosis(free)
    assert (abs(excess) < 0.5) if noise == "gaussian" else (excess > 2.0)


def test_noise_is_only_for_the_field_families():
    with pytest.raises(ValueError, match="noise is for the families"):
        simulate_family("paper", 3, 3, 50, noise="laplace")
    with pytest.raises(ValueError, match="noise must be one of"):
        simulate_family("lincd", 3, None, 50, noise="uniform")
    assert set(FIELD_FAMILIES) == set(FIELD)
    cells = simulation_cells([3], families=["lincd", "multi_node_crl"],
                             noises=["gaussian", "laplace"])
    assert [(c["family"], c["noise"], c["n_environments"]) for c in cells] == [
        ("lincd", "gaussian", 4), ("lincd", "laplace", 4),
        ("multi_node_crl", "gaussian", 3), ("multi_node_crl", "laplace", 3)]
    with pytest.raises(ValueError, match="fixes its own noise"):
        simulation_cells([3], families=["paper"], noises=["laplace"])


def test_umni_crl_recovers_its_authors_design():
    sim = simulate_family("umni_crl", 3, None, 20_000, random_state=2, noise="gaussian")
    adj, lat, order, info = fit_umni_crl(sim.X, 3)
    s = correlation_scores(sim.adjacency, sim.Y, adj, lat)
    assert s["mcc"] > 0.95 and s["shd_corr"] <= 1
    assert sorted(order) == [0, 1, 2] and len(info["weights"]) == 3
    soft = fit_umni_crl_soft(sim.X, 3)[0]
    assert np.all(soft >= adj)  # the soft graph is the closure the hard step prunes
    with pytest.raises(ValueError, match="n_latent \\+ 1 = 4 environments"):
        fit_umni_crl(sim.X[:3], 3)


def test_regime_names_the_targets_and_stays_quiet_on_heterogeneous_data():
    sim = simulate_family("lincd", 4, None, 5000, random_state=2, noise="laplace")
    order = sim.causal_order
    Y = [y[:, order] for y in sim.Y]  # the latents in causal order, as a fit returns them
    r = interventional_regime(_latent_moments(Y), gaussian=False)
    assert r["reading"] == "mechanisms" and r["reference"] == 0
    named = [sorted(order[i] for i in t) for t in r["targets"]]
    assert named == sim.params["targets"]
    g = interventional_regime(_latent_moments(sim.Y), gaussian=True)
    assert g["reading"] == "precisions" and max(g["changed_directions"]) <= 2
    from creator_plugin import simulate

    het = simulate(4, 6, 2000, random_state=0)
    assert interventional_regime(_latent_moments(het.Y), gaussian=False) is None


def test_umni_crl_is_a_bench_method(capsys):
    from creator_plugin.benchmark.baselines import METHODS
    from creator_plugin.cli import main

    assert METHODS["UMNI-CRL (hard)"] is fit_umni_crl
    assert METHODS["UMNI-CRL (soft)"] is fit_umni_crl_soft
    assert main(["bench", "--list-methods"]) == 0
    out = capsys.readouterr().out
    assert "\nUMNI-CRL (hard):" in out and "\nUMNI-CRL (soft):" in out
