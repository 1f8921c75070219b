"""select_n_latent and the factor-number estimators it reports."""

import json
import warnings

import numpy as np
import pytest

from creator_plugin import CREATOR, simulate
from creator_plugin.dimension import (
    eigenvalue_ratio,
    factor_lr_test,
    growth_ratio,
    ledermann_bound,
    n_latent_evidence,
    onatski_ed,
    pooled_spectrum,
    select_n_latent,
)


def test_chooses_d_with_noise_and_p_greater_than_d():
    sim = simulate(3, 3, 500, n_features=9, measurement_noise=0.1, random_state=1)
    sel = select_n_latent(sim.X)
    assert sel.n_latent == 3
    assert sel.decided_by == "factor_lr_test"
    assert [t["k"] for t in sel.tests] == [1, 2, 3]
    assert sel.tests[0]["p_value"] < 1e-6 and sel.tests[1]["p_value"] < 1e-6
    assert sel.tests[2]["p_value"] >= sel.alpha
    assert sel.test_scope == "per_environment"
    assert sel.spectrum.shape == (9,) and np.all(np.diff(sel.spectrum) <= 1e-12)
    assert "n_latent = 3" in sel.summary()


@pytest.mark.slow
def test_p_equal_d_keeps_every_direction():
    sim = simulate(5, 5, 500, measurement_noise=0.1, random_state=2)
    sel = select_n_latent(sim.X)
    assert sel.n_latent == 5
    assert sel.decided_by == "all_directions"
    assert sel.max_testable == 2
    assert all(t["p_value"] < sel.alpha for t in sel.tests)


def test_noise_free_data_with_p_greater_than_d_is_decided_by_rank():
    sim = simulate(2, 2, 300, n_features=6, random_state=0)
    sel = select_n_latent(sim.X)
    assert (sel.n_latent, sel.decided_by, sel.rank) == (2, "rank", 2)
    assert sel.criteria["rank"] == 2
    assert sel.criteria["ahn_horenstein_er"] == 2  # the ratio at the rank is infinite


def test_stacked_input_with_environments_equals_list_input():
    sim = simulate(2, 3, 300, n_features=6, measurement_noise=0.05, random_state=3)
    X, labels = sim.stacked()
    before = X.copy()
    a = select_n_latent(sim.X)
    b = select_n_latent(X, environments=labels)
    assert a.n_latent == b.n_latent == 2
    assert [t["p_value"] for t in a.tests] == pytest.approx([t["p_value"] for t in b.tests])
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"alpha": True}, "alpha"),
        ({"max_columns": 3}, "max_columns"),
        ({"max_columns": 10.0}, "max_columns"),
    ],
)
def test_bad_alpha(kwargs, match):
    sim = simulate(2, 2, 100, random_state=0)
    with pytest.raises(ValueError, match=match):
        select_n_latent(sim.X, **kwargs)


def test_bad_data():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="at least 2 environments"):
        select_n_latent([rng.standard_normal((50, 3))])
    with pytest.raises(ValueError, match="same number of columns"):
        select_n_latent([rng.standard_normal((50, 3)), rng.standard_normal((50, 4))])
    bad = rng.standard_normal((50, 3))
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        select_n_latent([bad, rng.standard_normal((50, 3))])
    with pytest.raises(TypeError, match="list of K arrays"):
        select_n_latent(rng.standard_normal((50, 3)))
    with pytest.raises(ValueError, match="constant"):
        select_n_latent([np.ones((20, 3)), np.zeros((20, 3))])


def test_spectral_estimators_on_a_clean_spectrum():
    # Three factors well above a flat-ish noise bulk.
    bulk = 1.0 + 0.3 * (1 - np.linspace(0, 1, 30)) ** 1.5
    spectrum = np.concatenate([[40.0, 20.0, 9.0], bulk])
    assert eigenvalue_ratio(spectrum) == 3
    assert growth_ratio(spectrum) == 3
    assert onatski_ed(spectrum) == 3
    assert eigenvalue_ratio([2.0, 1.0]) is None
    assert onatski_ed(np.ones(7)) is None


def test_ledermann_bound():
    assert [ledermann_bound(p) for p in (2, 3, 4, 5, 6, 7, 12, 50)] == [0, 0, 1, 2, 2, 3, 7, 40]


def test_factor_lr_test_rejects_too_few_factors_and_accepts_the_true_number():
    rng = np.random.default_rng(5)
    L = rng.standard_normal((8, 2))
    corr, sizes = [], []
    for _ in range(2):
        F = rng.laplace(size=(800, 2))  # non-Gaussian factors
        X = F @ L.T + 0.5 * rng.standard_normal((800, 8))
        corr.append(np.corrcoef(X, rowvar=False))
        sizes.append(800)
    stat1, df1, p1 = factor_lr_test(corr, sizes, 1)
    stat2, df2, p2 = factor_lr_test(corr, sizes, 2)
    assert (df1, df2) == (2 * 20, 2 * 13)
    assert p1 < 1e-10 and p2 > 1e-3
    with pytest.raises(ValueError, match="k must be"):
        factor_lr_test(corr, sizes, 5)


def test_pooled_spectrum_is_scale_free_when_standardised():
    sim = simulate(2, 2, 200, n_features=4, measurement_noise=0.05, random_state=0)
    scaled = [x * np.array([1.0, 10.0, 0.1, 3.0]) for x in sim.X]
    np.testing.assert_allclose(pooled_spectrum(sim.X), pooled_spectrum(scaled), rtol=1e-10)
    assert pooled_spectrum(sim.X).sum() == pytest.approx(4.0)


@pytest.mark.slow
def test_n_latent_evidence_statuses():
    sim = simulate(3, 3, 500, n_features=9, measurement_noise=0.1, random_state=1)
    assert n_latent_evidence(sim.X, 2)["status"] == "too_few"
    assert n_latent_evidence(sim.X, 3)["status"] == "consistent"
    too_many = n_latent_evidence(sim.X, 5)
    assert too_many["status"] == "too_many" and too_many["fewer"] == 4
    square = simulate(5, 5, 500, measurement_noise=0.1, random_state=2)
    assert n_latent_evidence(square.X, 3)["status"] == "too_few"  # no noise floor
    assert n_latent_evidence(square.X, 5)["status"] == "consistent"
    # p = d = 3: no per-environment model is testable, the shared-subspace one-factor
    # model is, and it is rejected: 2 latents leave out signal.
    assert n_latent_evidence(simulate(3, 3, 300, random_state=0).X, 2)["status"] == "too_few"
    assert n_latent_evidence(simulate(2, 2, 300, random_state=0).X, 1)["status"] == "untestable"


@pytest.mark.slow
def test_n_latent_evidence_on_a_column_subset_without_a_p_by_p_matrix():
    """Many columns: the tests run on a seeded subset and memory stays far below p x p."""
    import tracemalloc

    sim = simulate(3, 3, 400, n_features=2000, measurement_noise=0.1, random_state=3)
    tracemalloc.start()
    ev = n_latent_evidence(sim.X, 3, random_state=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2000 * 2000 * 8 / 4  # a p x p matrix would be 32 MB
    assert ev["status"] == "consistent"
    assert ev["n_columns_tested"] == 60 and ev["n_columns"] == 2000 and ev["rank"] == 60
    assert ev["test_scope"] == "per_environment"  # 400 rows > 60 columns per environment
    assert n_latent_evidence(sim.X, 2, random_state=0)["status"] == "too_few"
    assert n_latent_evidence(sim.X, 5, random_state=0)["status"] == "too_many"
    # A duplicated column in the subset is found on the row subsample.
    dup = [np.column_stack([x[:, :30], x[:, :1]]) for x in sim.X]
    assert n_latent_evidence(dup, 3, max_columns=None)["rank"] == 30
    # Every random choice from random_state.
    a = n_latent_evidence(sim.X, 3, random_state=5)
    assert a == n_latent_evidence(sim.X, 3, random_state=5)


@pytest.mark.slow
def test_select_n_latent_on_wide_data_tests_a_column_subset():
    """p >> 60: the tests use a seeded subset of 60 columns; all 4000 would be
    wrong (the chi-square approximation fails when the columns approach the
    rows: a d = 5 model with 500 to 1000 columns gave 22 to 37) and slow."""
    import tracemalloc

    sim = simulate(5, 5, 500, n_features=4000, measurement_noise=0.1, random_state=0)
    tracemalloc.start()
    sel = select_n_latent(sim.X, random_state=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # A p x p matrix would be 128 MB, a copy of the data 80 MB; the spectrum
    # of 500 columns needs a few copies of 2500 x 500 (10 MB each).
    assert peak < 40e6
    assert sel.n_latent == 5 and sel.decided_by == "factor_lr_test"
    assert sel.n_columns_tested == 60 and sel.n_columns == 4000 and sel.rank == 60
    assert sel.spectrum.shape == (500,)  # SPECTRUM_COLUMNS of the 4000
    assert "random subset of 60 of the 4000 columns" in sel.summary()
    assert sel.to_dict()["n_columns_tested"] == 60
    again = select_n_latent(sim.X, random_state=0)
    assert again.tests == sel.tests and np.array_equal(again.spectrum, sel.spectrum)
    # Narrow data are tested whole, as before: no subset, no randomness.
    narrow = simulate(3, 3, 500, n_features=40, measurement_noise=0.1, random_state=1)
    a, b = select_n_latent(narrow.X, random_state=0), select_n_latent(narrow.X, random_state=7)
    assert a.n_columns_tested == a.n_columns == 40 and a.tests == b.tests


@pytest.mark.slow
def test_select_n_latent_reads_dask_arrays_through_dask():
    da = pytest.importorskip("dask.array")
    sim = simulate(3, 3, 500, n_features=80, measurement_noise=0.1, random_state=1)
    for cols in (slice(None), slice(0, 9)):  # a column subset, and all columns
        X = [x[:, cols] for x in sim.X]
        lazy = [da.from_array(x, chunks=(100, 40)) for x in X]
        a, b = select_n_latent(lazy, random_state=0), select_n_latent(X, random_state=0)
        assert a.n_latent == b.n_latent == 3 and a.decided_by == b.decided_by
        np.testing.assert_allclose(a.spectrum, b.spectrum, rtol=1e-9, atol=1e-12)
        assert [t["k"] for t in a.tests] == [t["k"] for t in b.tests]


def test_n_latent_evidence_many_rows_matches_the_exact_correlations():
    """Row subsample only for the rank: the test statistics use every row."""
    sim = simulate(3, 3, 3000, n_features=9, measurement_noise=0.1, random_state=1)
    ev = n_latent_evidence(sim.X, 3, random_state=0)
    mats = [np.corrcoef(x, rowvar=False) for x in sim.X]
    assert ev["p_value"] == pytest.approx(
        factor_lr_test(mats, [x.shape[0] for x in sim.X], 3)[2], rel=1e-8)


@pytest.mark.slow
def test_n_latent_evidence_reads_dask_arrays_through_dask():
    da = pytest.importorskip("dask.array")
    sim = simulate(3, 3, 500, n_features=80, measurement_noise=0.1, random_state=1)
    lazy = [da.from_array(x, chunks=(100, 40)) for x in sim.X]
    a, b = n_latent_evidence(lazy, 3, random_state=0), n_latent_evidence(sim.X, 3, random_state=0)
    assert a["p_value"] == pytest.approx(b["p_value"], rel=1e-9)
    assert a["p_value_fewer"] == pytest.approx(b["p_value_fewer"], rel=1e-9, abs=1e-300)
    assert {k: v for k, v in a.items() if not k.startswith("p_value")} == {
        k: v for k, v in b.items() if not k.startswith("p_value")}


def test_creator_auto_uses_select_n_latent(fit):
    sim = simulate(3, 3, 600, n_features=9, measurement_noise=0.05, random_state=4)
    model = fit(sim.X, "auto")
    assert model.n_latent_ == 3 and model.n_latent == "auto"
    assert model.adjacency_matrix_.shape == (3, 3)
    assert model.transform(sim.X[0]).shape == (600, 3)
    sel = model.diagnostics_["n_latent_selection"]
    assert sel["n_latent"] == 3 and sel["decided_by"] == "factor_lr_test"
    assert len(sel["spectrum"]) == 9
    assert "n_latent" not in model.diagnostics_["quality"]["checks"]  # chosen, not checked


def test_creator_rejects_other_strings():
    from creator_plugin import CREATOR

    sim = simulate(2, 2, 100, random_state=0)
    with pytest.raises(ValueError, match="n_latent"):
        CREATOR("three").fit(sim.X)


def test_bootstrap_with_auto_keeps_the_full_fits_choice():
    from creator_plugin import CREATOR, bootstrap

    sim = simulate(2, 3, 400, n_features=6, measurement_noise=0.05, random_state=5)
    res = bootstrap(sim.X, 3, estimator=CREATOR("auto"), random_state=0)
    assert res.full_fit.n_latent_ == 2
    assert res.adjacency_matrices.shape == (3, 2, 2)


@pytest.mark.slow  # imports matplotlib
def test_cli_dims_prints_the_choice_and_writes_a_scree_plot(tmp_path, capsys):
    import pandas as pd

    from creator_plugin.cli import main

    sim = simulate(3, 3, 400, n_features=8, measurement_noise=0.05, random_state=0)
    X, labels = sim.stacked()
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(8)])
    df.insert(0, "E", labels)
    csv = tmp_path / "data.csv"
    df.to_csv(csv, index=False)
    png = tmp_path / "scree.png"
    assert main(["dims", str(csv), "--env-column", "E", "--out", str(png)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("n_latent = 3:")
    assert "Likelihood-ratio tests" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["dims", str(csv), "--env-column", "nope"]) == 2
    assert "not a column" in capsys.readouterr().err
    before = csv.read_bytes()  # an existing file, even the input, is never replaced
    for existing in (csv, png):
        kept = existing.read_bytes()
        assert main(["dims", str(csv), "--env-column", "E", "--out", str(existing)]) == 2
        assert "exists" in capsys.readouterr().err
        assert existing.read_bytes() == kept
    assert csv.read_bytes() == before
    out_dir = tmp_path / "fit"
    assert main(["fit", str(csv), "--env-column", "E", "--n-latent", "auto",
                 "--out", str(out_dir)]) == 0
    diag = json.loads((out_dir / "diagnostics.json").read_text())
    assert diag["n_latent_selection"]["n_latent"] == 3
    assert diag["latent_names"] == ["L1", "L2", "L3"]
    assert "summary" in diag["quality"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_select_with_more_columns_than_per_environment_tests_reach(seed):
    """d = 3, p = 6, 10% measurement noise: the per-environment 3-factor model has no
    degrees of freedom, the shared-subspace one does and decides."""
    sim = simulate(3, 3, 1000, n_features=6, measurement_noise=0.1, random_state=seed)
    sel = select_n_latent(sim.X)
    assert sel.n_latent == 3 and sel.decided_by == "shared_subspace_lr_test"
    assert "shared by all environments" in sel.summary()


@pytest.mark.parametrize("d, noise, off", [(3, 0.1, 1), (3, 0.1, -1), (4, 0.1, 1),
                                           (4, 0.0, -1),
                                           pytest.param(5, 0.1, -1, marks=pytest.mark.slow),
                                           (5, 0.0, 1)])
def test_n_latent_off_by_one_is_found_at_p_d_plus_2(d, noise, off):
    sim = simulate(d, d, 1000, n_features=d + 2, measurement_noise=noise, random_state=1)
    status = n_latent_evidence(sim.X, d + off)["status"]
    assert status == ("too_few" if off < 0 else "too_many")
    assert n_latent_evidence(sim.X, d)["status"] in ("consistent", "untestable")


@pytest.mark.slow
def test_shared_subspace_test_is_calibrated_at_the_truth():
    """Under the model the statistic is about its degrees of freedom, not far above."""
    from creator_plugin.dimension import _common_unit_covariances, shared_subspace_lr_test

    stats = []
    for seed in range(4):
        sim = simulate(3, 3, 1000, n_features=6, measurement_noise=0.1, random_state=seed)
        covs, n = _common_unit_covariances(sim.X, np.arange(6))
        stat, df, _ = shared_subspace_lr_test(covs, n, 3)
        stats.append(stat / df)
        assert shared_subspace_lr_test(covs, n, 2)[2] < 1e-6  # too few factors: rejected
    assert 0.4 < np.mean(stats) < 2.0


def test_exact_low_rank_data_stored_in_float32_read_as_in_float64():
    # x = H y with no measurement noise, stored in float32: the nine columns
    # beyond the three latents are exact combinations up to rounding (1e-7),
    # which the second moments cannot tell from singular. Before, the factor
    # fit started from a meaningless inverse and failed (LinAlgError), or
    # reported 8 latents on a column subset.
    sim = simulate(3, 4, 400, n_features=12, random_state=0)
    single = [x.astype(np.float32) for x in sim.X]
    assert select_n_latent(sim.X).n_latent == 3
    assert select_n_latent(single).n_latent == 3
    assert select_n_latent(single, max_columns=8).n_latent == 3
    ev64, ev32 = n_latent_evidence(sim.X, 3), n_latent_evidence(single, 3)
    assert ev32["rank"] == ev64["rank"] == 3 and ev32["status"] == ev64["status"]
    # With 1% measurement noise every column is kept: nothing the data can
    # tell apart is dropped.
    noisy = simulate(3, 4, 400, n_features=12, measurement_noise=0.01, random_state=0)
    assert n_latent_evidence([x.astype(np.float32) for x in noisy.X], 3)["rank"] == 12


def test_factor_test_names_a_singular_correlation_matrix():
    S = np.eye(4)
    S[3, :3] = S[:3, 3] = 1 / np.sqrt(3)  # column 3 = mean of the others, rescaled
    S[3, 3] = 1.0
    with pytest.raises(ValueError, match=r"correlations\[1\] is not positive definite"):
        factor_lr_test([np.eye(4), S], [100, 100], 1)
    with pytest.raises(ValueError, match="symmetric 4 x 4"):
        factor_lr_test([np.eye(4), np.eye(3)], [100, 100], 1)


def test_few_rows_per_environment_test_a_third_as_many_columns():
    # 40 rows per environment, 100 measurements of 3 latents: with 60 columns
    # the tests' chi-square fails (it chose 17 latents here, and the verdict
    # said n_latent=3 leaves out signal); a third of the rows keeps it valid.
    sim = simulate(3, 4, 40, n_features=100, measurement_noise=0.05, random_state=0)
    ev = n_latent_evidence(sim.X, 3, random_state=0)
    assert ev["n_columns_tested"] == 13 and ev["status"] == "consistent"
    assert n_latent_evidence(sim.X, 2, random_state=0)["status"] == "too_few"
    assert select_n_latent(sim.X, random_state=0).n_latent == 3
    assert n_latent_evidence(sim.X, 3, random_state=0, max_columns=None)["n_columns_tested"] == 13
    # Enough rows: the column cap alone applies, as before.
    many = simulate(3, 4, 300, n_features=100, measurement_noise=0.05, random_state=0)
    assert n_latent_evidence(many.X, 3, random_state=0)["n_columns_tested"] == 60


def test_very_few_rows_test_the_fewest_columns_that_can_show_a_model():
    # 15 rows per environment allow 5 columns by the row rule, on which no
    # 3-factor model is testable: the choice then widens the subset one
    # testable factor at a time (it was 15 with all 50 columns, and would be
    # the subset's width, 5, without widening), and the check tests n_latent
    # on the fewest columns that can (7).
    sim = simulate(3, 4, 15, n_features=50, measurement_noise=0.05, random_state=1)
    sel = select_n_latent(sim.X, random_state=0)
    assert sel.n_latent == 3 and sel.decided_by == "factor_lr_test"
    ev = n_latent_evidence(sim.X, 3, random_state=0)
    assert ev["n_columns_tested"] == 7 and ev["status"] == "consistent"
    # Collinear columns (rank 3 of 14) end the widening at the rank.
    exact = simulate(3, 4, 20, n_features=6, random_state=0)
    X = [np.column_stack([x, x, x[:, :2]]) for x in exact.X]
    assert select_n_latent(X, random_state=0).n_latent == 3


def test_a_column_constant_in_one_environment_is_no_numerical_warning():
    from creator_plugin.dimension import shared_subspace_lr_test

    sim = simulate(2, 3, 300, n_features=4, random_state=0)
    rng = np.random.default_rng(0)
    X = [x + 0.1 * rng.standard_normal(x.shape) for x in sim.X]
    X[1][:, 3] = 1.5  # constant in the second environment only
    covs = [np.cov(x.T) for x in X]
    with pytest.raises(ValueError, match="covariance of group 1 is singular"):
        shared_subspace_lr_test(covs, [300] * 3, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)  # no divide-by-zero or log(0)
        model = CREATOR(2, random_state=0).fit(X)
    assert np.isfinite(model.components_).all()
