"""The workload zoo: named families of simulated data, and their use in ``creator bench``."""

import numpy as np
import pytest
from scipy import stats

from creator_plugin import simulate
from creator_plugin.benchmark.grid import run_one
from creator_plugin.benchmark.workloads import simulation_cells
from creator_plugin.simulation import FAMILIES, FLAG_FAMILIES, simulate_family


def test_simulate_unchanged_for_existing_arguments():
    # numbers recorded before the zoo was added: the zoo must not touch simulate's stream
    s = simulate(random_state=0)
    assert s.X[0][0, 0] == pytest.approx(-0.5511518780724483, abs=1e-12)
    s = simulate(4, 3, 200, setting=2, measurement_noise=0.1, n_features=6, random_state=7)
    assert s.X[2].sum() == pytest.approx(-21.294539944306194, abs=1e-9)
    assert s.X[0][3, 5] == pytest.approx(1.0605738256529198, abs=1e-12)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_is_a_consistent_linear_sem(family):
    sim = simulate_family(family, 4, 3, 400, random_state=1)
    assert sim.params["family"] == family
    d = 4
    A = sim.adjacency
    assert A.shape == (d, d) and np.all(np.diag(A) == 0)
    pos = {v: i for i, v in enumerate(sim.causal_order)}
    for i, j in zip(*np.nonzero(A)):
        assert pos[i] < pos[j]
    for k in range(3):
        # the structural equations hold exactly and x = H y (up to measurement noise)
        Yk, Wk, Om, Zk = sim.Y[k], sim.W[k], sim.Omega[k], sim.Z[k]
        np.testing.assert_allclose(Yk, Yk @ Wk + Zk @ Om, atol=1e-8)
        assert np.all(Wk[A == 0] == 0)
        if sim.params["measurement_noise"] == 0:
            np.testing.assert_allclose(sim.X[k], Yk @ sim.H.T, atol=1e-8)
    # reproducible from the seed, different for another seed
    again = simulate_family(family, 4, 3, 400, random_state=1)
    np.testing.assert_array_equal(again.X[0], sim.X[0])
    assert not np.array_equal(simulate_family(family, 4, 3, 400, random_state=2).X[0], sim.X[0])


def test_family_specific_laws():
    m = simulate_family("measured", 3, 2, 300, random_state=0)
    assert m.X[0].shape == (300, 12)
    assert not np.allclose(m.X[0], m.Y[0] @ m.H.T)
    u = simulate_family("unequal_n", 3, 6, 1000, random_state=0)
    sizes = [x.shape[0] for x in u.X]
    assert all(300 <= s <= 3000 for s in sizes) and len(set(sizes)) > 1
    s = simulate_family("signed_weights", 5, 4, 50, random_state=0)
    w = np.concatenate([Wk[s.adjacency == 1] for Wk in s.W])
    assert np.all((np.abs(w) >= 0.5) & (np.abs(w) <= 1.5)) and (w < 0).any() and (w > 0).any()
    p = simulate_family("paper", 5, 4, 50, random_state=0)
    weak = simulate_family("weak_weights", 5, 4, 50, random_state=0)
    for Wp, Ww in zip(p.W, weak.W):
        np.testing.assert_allclose(Ww, 0.1 * Wp)  # same stream, weights scaled
    wide = simulate_family("wide_scales", 5, 20, 50, random_state=0)
    scales = np.array([np.diag(o) for o in wide.Omega])
    assert scales.min() >= 0.25 and scales.max() <= 2.0
    assert (scales.max(axis=0) / scales.min(axis=0)).max() > 4
    disc = simulate_family("discrete_noise", 4, 3, 500, random_state=0)
    assert max(len(np.unique(z)) for z in disc.Z[0].T) <= 30
    heavy = simulate_family("heavy_tails", 6, 30, 2000, random_state=0)
    assert any(law.startswith("student_t") for laws in heavy.noise_laws for law in laws)
    near = simulate_family("near_gaussian", 4, 3, 20000, random_state=0)
    assert max(abs(stats.kurtosis(z)) for z in near.Z[0].T) < 1.5


def test_bad_family_arguments():
    with pytest.raises(ValueError, match="family must be one of"):
        simulate_family("nope")
    with pytest.raises(ValueError, match="n_features"):
        simulate_family("paper", 5, 3, 100, n_features=3)
    with pytest.raises(ValueError, match="n_latent"):
        simulate_family("paper", 0, 3, 100)
    assert set(FLAG_FAMILIES) <= set(FAMILIES)



def test_family_registries_are_read_only_and_no_import_or_call_changes_them():
    """The zoo's families are fixed: the field's generators, imported or drawn, add nothing."""
    import importlib

    from creator_plugin.interventional import INTERVENTIONAL_FAMILIES
    from creator_plugin.simulation import FIELD_FAMILIES

    before = dict(FAMILIES)
    importlib.import_module("creator_plugin.benchmark.field_generators")
    importlib.import_module("creator_plugin.field_generators")
    sim = simulate_family("lincd", 3, None, 50, random_state=0)
    assert sim.params["family"] == "lincd"
    assert dict(FAMILIES) == before
    assert not set(FIELD_FAMILIES) & set(FAMILIES)
    for registry in (FAMILIES, INTERVENTIONAL_FAMILIES):
        with pytest.raises(TypeError):
            registry["lincd"] = None


def test_family_cells_run_in_the_benchmark_grid():
    cells = simulation_cells([3], Ks=[3], ns=[300], families=["paper", "discrete_noise"])
    assert [c["family"] for c in cells] == ["paper", "discrete_noise"]
    row = run_one("CREATOR", cells[0], 0)
    assert row["status"] == "ok" and row["family"] == "paper"
    with pytest.raises(ValueError, match="unknown family"):
        simulation_cells([3], families=["nope"])


def test_bench_cli_family_option(tmp_path):
    from creator_plugin.benchmark.cli import main

    out = tmp_path / "bench"
    rc = main(["--family", "weak_weights", "--d", "3", "--K", "2", "--n", "200", "--seeds", "1",
               "--methods", "CREATOR", "--out", str(out), "--no-figures", "--no-progress"])
    assert rc == 0
    text = (out / "results.csv").read_text()
    assert "weak_weights" in text
    assert "| family |" in (out / "summary.md").read_text()
    assert main(["--family", "nope", "--d", "3", "--out", str(tmp_path / "x"),
                 "--no-progress"]) != 0


def _independent_simulator():
    import ast
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "independent_simulator.py"
    tree = ast.parse(path.read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    spec = importlib.util.spec_from_file_location("independent_simulator", path)
    module = importlib.util.module_from_spec(spec)
    import sys

    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(sys.modules[spec.name])
    module = sys.modules[spec.name]
    return module, imported


def test_independent_simulator_is_independent_and_consistent():
    module, imported = _independent_simulator()
    # written apart from the package: it must not use the package at all
    assert not any(name.startswith("creator_plugin") for name in imported)
    # the interventional families are checked against their generators'
    # definitions in test_interventional_families.py
    from creator_plugin.interventional import INTERVENTIONAL_FAMILIES

    assert set(module.FAMILIES) == set(FAMILIES) - set(INTERVENTIONAL_FAMILIES)
    for family in module.FAMILIES:
        data = module.simulate(family, 4, 3, 500, seed=3)
        A = data.adjacency
        pos = {v: i for i, v in enumerate(data.order)}
        assert all(pos[i] < pos[j] for i, j in zip(*np.nonzero(A)))
        for Xk, Yk in zip(data.X, data.latents):
            # every latent is a linear function of its parents plus a noise
            # independent of (uncorrelated with) the parents
            for j in range(4):
                pa = np.nonzero(A[:, j])[0]
                if len(pa):
                    coef, *_ = np.linalg.lstsq(Yk[:, pa], Yk[:, j], rcond=None)
                    resid = Yk[:, j] - Yk[:, pa] @ coef
                    assert np.linalg.norm(resid) > 1e-3
            if family != "measured":
                # x = H y exactly: X lies in the column space of the latents
                coef, *_ = np.linalg.lstsq(Yk, Xk, rcond=None)
                np.testing.assert_allclose(Yk @ coef, Xk, atol=1e-8)
        again = module.simulate(family, 4, 3, 500, seed=3)
        np.testing.assert_array_equal(again.X[1], data.X[1])
