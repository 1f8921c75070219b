"""The peers' data models as zoo families, and their use in ``creator bench``."""

import numpy as np
import pytest
from scipy import stats

from creator_plugin.interventional import INTERVENTIONAL_FAMILIES, simulate_single_node
from creator_plugin.simulation import FAMILIES, FLAG_FAMILIES, simulate_family

SINGLE = ("single_node_hard", "single_node_hard_laplace", "single_node_soft")


def test_interventional_families_are_registered_flag_families():
    assert set(INTERVENTIONAL_FAMILIES) == {*SINGLE, "multi_node"}
    for name, fn in INTERVENTIONAL_FAMILIES.items():
        assert FAMILIES[name] is fn
        assert name in FLAG_FAMILIES  # outside CREATOR's heterogeneity condition
    assert set(FLAG_FAMILIES) <= set(FAMILIES)


@pytest.mark.parametrize("family", sorted(INTERVENTIONAL_FAMILIES))
def test_only_the_intervened_nodes_change(family):
    d, K = 5, 6
    sim = simulate_family(family, d, K, 300, n_features=8, random_state=4)
    targets = sim.params["targets"]
    assert sim.params["family"] == family and len(targets) == K
    assert [x.shape for x in sim.X] == [(300, 8)] * K and sim.H.shape == (8, d)
    assert targets[0] == []  # environment 0 is observational
    if family in SINGLE:
        assert all(len(t) == 1 for t in targets[1:])
        assert sorted(t[0] for t in targets[1:]) == list(range(d))  # every node once
    hard = family != "single_node_soft"
    W0, om0 = sim.W[0], np.diag(sim.Omega[0])
    for k in range(1, K):
        t = targets[k]
        assert t, "an interventional environment has a target"
        others = [j for j in range(d) if j not in t]
        # mechanisms of the nodes not intervened on are those of environment 0
        np.testing.assert_array_equal(sim.W[k][:, others], W0[:, others])
        np.testing.assert_array_equal(np.diag(sim.Omega[k])[others], om0[others])
        for i in t:
            assert 1.5 <= sim.Omega[k][i, i] <= 2.5 and sim.Omega[k][i, i] != om0[i]
            if hard:
                assert np.all(sim.W[k][:, i] == 0)
            elif sim.adjacency[:, i].any():
                parents = sim.adjacency[:, i] == 1
                assert np.all(sim.W[k][parents, i] != W0[parents, i])
        np.testing.assert_allclose(sim.Y[k], sim.Y[k] @ sim.W[k] + sim.Z[k] @ sim.Omega[k],
                                   atol=1e-8)
        np.testing.assert_allclose(sim.X[k], sim.Y[k] @ sim.H.T, atol=1e-8)


def test_noise_laws_and_reproducibility():
    gauss = simulate_family("single_node_hard", 3, 4, 20000, random_state=0)
    lap = simulate_family("single_node_hard_laplace", 3, 4, 20000, random_state=0)
    assert max(abs(stats.kurtosis(z)) for z in gauss.Z[0].T) < 0.2
    assert min(stats.kurtosis(z) for z in lap.Z[0].T) > 2.0  # Laplace: excess kurtosis 3
    assert gauss.noise_laws[0] == ["gaussian"] * 3 and lap.noise_laws[2] == ["laplace"] * 3
    for family in INTERVENTIONAL_FAMILIES:
        a = simulate_family(family, 4, 5, 50, random_state=7)
        b = simulate_family(family, 4, 5, 50, random_state=7)
        c = simulate_family(family, 4, 5, 50, random_state=8)
        np.testing.assert_array_equal(a.X[3], b.X[3])
        assert a.params["targets"] == b.params["targets"]
        assert not np.array_equal(a.X[3], c.X[3])
    # the family is the generator with the documented settings, same stream
    direct = simulate_single_node(4, 5, 50, random_state=7, intervention="soft", noise="laplace")
    np.testing.assert_array_equal(simulate_family("single_node_soft", 4, 5, 50,
                                                  random_state=7).X[1], direct.X[1])


def test_interventional_family_needs_an_interventional_environment():
    with pytest.raises(ValueError, match="n_environments"):
        simulate_family("single_node_hard", 3, 1, 50)
    with pytest.raises(ValueError, match="family must be one of"):
        simulate_family("single_node")


@pytest.mark.slow
def test_bench_cli_runs_an_interventional_family(tmp_path):
    from creator_plugin.benchmark.cli import main

    out = tmp_path / "bench"
    methods = ["CREATOR", "LiNGCReL", "LinCD", "LSCALE-I (hard)", "LSCALE-I (soft)"]
    rc = main(["--family", "single_node_hard", "--d", "3", "--n", "300", "--seeds", "1",
               "--methods", *methods, "--out", str(out), "--no-figures", "--no-progress"])
    assert rc == 0
    import pandas as pd

    rows = pd.read_csv(out / "results.csv")
    assert set(rows["family"]) == {"single_node_hard"}
    assert set(rows["n_environments"]) == {4}  # observational + one per latent
    assert set(rows["method"]) == set(methods)
    assert (rows["status"] == "ok").all()


def test_bench_cells_give_interventional_families_one_environment_per_latent_more():
    from creator_plugin.benchmark.workloads import simulation_cells

    cells = simulation_cells([3, 4], families=["single_node_soft", "paper"])
    K = {(c["family"], c["n_latent"]): c["n_environments"] for c in cells}
    assert K == {("single_node_soft", 3): 4, ("single_node_soft", 4): 5,
                 ("paper", 3): 3, ("paper", 4): 4}
    given = simulation_cells([3], Ks=[6], families=["multi_node"])
    assert [c["n_environments"] for c in given] == [6]


@pytest.mark.parametrize("d", [2, 4])
def test_default_environment_count_is_one_intervention_per_latent(d):
    # the interventional families default to the observational environment
    # plus one environment per latent; the zoo's other families keep 5
    for family in INTERVENTIONAL_FAMILIES:
        sim = simulate_family(family, d, n_samples=30, random_state=0)
        assert len(sim.X) == d + 1 == len(sim.params["targets"])
        if family != "multi_node":
            assert sorted(t for ts in sim.params["targets"] for t in ts) == list(range(d))
    assert len(simulate_family("paper", d, n_samples=30, random_state=0).X) == 5
