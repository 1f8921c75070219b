"""``creator bench`` beyond the paper's grid: the method protocol, time limits, GIN,
simulated cells of one's choice, a user's CSV with a truth file, and the scoring."""

import time
import warnings

import numpy as np
import pandas as pd
import pytest

from creator_plugin import CREATOR, OrderingOptions, metrics, simulate
from creator_plugin.benchmark.baselines import METHODS, fit_creator, fit_creator_paper
from creator_plugin.benchmark.cli import main
from creator_plugin.benchmark.gin import cluster_scores, gin_structure
from creator_plugin.benchmark.grid import (
    ablation_grid,
    data_seed,
    paper_grid,
    run_grid,
    run_one,
    tau_grid,
)
from creator_plugin.benchmark.isolation import FitTimeout, call_with_time_limit
from creator_plugin.benchmark.methods import (
    DEFAULT_TIME_LIMITS,
    EstimatorFit,
    resolve_methods,
    time_limits_for,
)
from creator_plugin.benchmark.scoring import score, shd_min_relabel
from creator_plugin.benchmark.workloads import read_csv_workload

CELL = {"grid": "t", "n_latent": 2, "n_environments": 2, "n_samples": 200, "setting": 1}


def _hang(X_list, n_latent, random_state):
    time.sleep(120)


def _raise(X_list, n_latent, random_state):
    raise ValueError("bad input seen in the child")


def _with_info(X_list, n_latent, random_state):
    d = n_latent
    return np.zeros((d, d)), [x[:, :d] for x in X_list], None, {"note": "hello"}


# ------------------------------------------------------------------ protocol


def test_methods_by_name_import_path_class_and_instance():
    table = resolve_methods(
        ["CREATOR", "creator_plugin.benchmark.baselines:fit_lingcrel", "creator_plugin:CREATOR",
         _with_info],
        METHODS,
    )
    assert list(table) == ["CREATOR", "creator_plugin.benchmark.baselines:fit_lingcrel",
                           "creator_plugin:CREATOR", "_with_info"]
    assert table["CREATOR"] is METHODS["CREATOR"] and table["_with_info"] is _with_info
    assert table["creator_plugin.benchmark.baselines:fit_lingcrel"] is METHODS["LiNGCReL"]
    assert isinstance(table["creator_plugin:CREATOR"], EstimatorFit)
    instance = resolve_methods([CREATOR(3, ordering=OrderingOptions(polish=False))], METHODS)
    assert list(instance) == ["CREATOR"] and isinstance(instance["CREATOR"], EstimatorFit)


@pytest.mark.slow
def test_estimator_class_and_instance_fit_like_the_builtin():
    sim = simulate(3, 3, 400, random_state=1)
    adj, lat, order = fit_creator(sim.X, 3, 7)
    for est in (CREATOR, CREATOR(5, ordering=OrderingOptions(polish=True))):
        a, latents, o = EstimatorFit(est)(sim.X, 3, 7)
        np.testing.assert_array_equal(a, adj)
        np.testing.assert_allclose(latents[1], lat[1])
        assert o == order
    # method keywords reach the estimator
    a, _, _ = EstimatorFit(CREATOR)(sim.X, 3, 7, prune_threshold=50.0)
    assert a.sum() == 0


def test_unknown_and_malformed_methods_are_named():
    with pytest.raises(ValueError, match=r"Unknown methods \['nope'\]; available: .*GIN"):
        resolve_methods(["nope"], METHODS)
    with pytest.raises(ValueError, match="cannot import 'no_such_module_xyz'"):
        resolve_methods(["no_such_module_xyz:f"], METHODS)
    with pytest.raises(ValueError, match="has no attribute 'nothing'"):
        resolve_methods(["creator_plugin:nothing"], METHODS)
    with pytest.raises(ValueError, match="neither a fit function nor an estimator"):
        resolve_methods(["creator_plugin:__version__"], METHODS)
    with pytest.raises(ValueError, match="requested twice"):
        resolve_methods(["CREATOR", "CREATOR"], METHODS)


def test_time_limits():
    assert time_limits_for(["CREATOR", "GIN"], None) == {"CREATOR": None,
                                                         "GIN": DEFAULT_TIME_LIMITS["GIN"]}
    assert time_limits_for(["CREATOR", "GIN"], 5) == {"CREATOR": 5.0, "GIN": 5.0}
    assert time_limits_for(["CREATOR", "GIN"], {"GIN": 9}) == {"CREATOR": None, "GIN": 9.0}
    with pytest.raises(ValueError, match="not a requested method"):
        time_limits_for(["CREATOR"], {"GIN": 9})
    with pytest.raises(ValueError, match="must be > 0"):
        time_limits_for(["CREATOR"], 0)


def test_info_is_recorded_and_bad_returns_are_failed_rows():
    row = run_one("m", CELL, 0, {"m": _with_info})
    assert row["status"] == "ok" and row["info"] == '{"note": "hello"}'
    row = run_one("m", CELL, 0, {"m": lambda X, d, s: (np.zeros((d, d)), X)})
    assert row["status"] == "failed" and "must return (adjacency, latents, order)" in row["error"]


# ------------------------------------------------------------ time limits


@pytest.mark.slow
def test_time_limited_fit_returns_the_same_result():
    sim = simulate(2, 2, 200, random_state=0)
    (adj, lat, order), seconds = call_with_time_limit(fit_creator, (sim.X, 2, 0), {}, 60)
    ref = fit_creator(sim.X, 2, 0)
    np.testing.assert_array_equal(adj, ref[0])
    np.testing.assert_allclose(lat[0], ref[1][0])
    assert 0 < seconds < 60


@pytest.mark.slow
def test_child_exception_is_reraised_with_its_type():
    with pytest.raises(ValueError, match="bad input seen in the child"):
        call_with_time_limit(_raise, (None, 2, 0), {}, 60)


@pytest.mark.slow
def test_time_limit_kills_a_hanging_fit():
    start = time.perf_counter()
    with pytest.raises(FitTimeout, match="time limit of 3 s"):
        call_with_time_limit(_hang, (None, 2, 0), {}, 3)
    assert time.perf_counter() - start < 10
    rows = run_grid([CELL], 1, ["hang", "CREATOR"], method_table={**METHODS, "hang": _hang},
                    time_limit={"hang": 3})
    assert [r["status"] for r in rows] == ["timeout", "ok"]
    assert "killed" in rows[0]["error"] and rows[0]["time_limit"] == 3.0


# ------------------------------------------------------------------- scoring


def test_score_equals_evaluate_when_sizes_agree():
    sim = simulate(3, 3, 300, random_state=4)
    adj, lat, order = fit_creator(sim.X, 3, 0)
    ev = metrics.evaluate(sim.adjacency, sim.Y, adj, lat, order)
    sc = score(sim.adjacency, sim.Y, adj, lat, order)
    assert (sc["shd"], sc["locr2"], sc["topological_divergence"]) == (
        ev["shd"], ev["locr2"], ev["topological_divergence"])
    assert sc["n_est_latents"] == 3


def test_score_with_fewer_and_more_latents_than_the_truth():
    rng = np.random.default_rng(0)
    Y = [rng.laplace(size=(400, 3)) for _ in range(2)]
    A = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]])  # complete DAG 0 -> 1 -> 2, 0 -> 2
    # two latents, exactly true nodes 1 and 0, with the edge 0 -> 1
    two = [y[:, [1, 0]] for y in Y]
    sc = score(A, Y, np.array([[0, 0], [1, 0]]), two, [1, 0])
    assert sc["shd"] == 2  # the edges into node 2, which nothing matches, are missing
    assert sc["locr2"] == pytest.approx(2 / 3, abs=0.02)
    assert not sc["exact_dag"] and sc["n_est_latents"] == 2
    # four latents: the truth plus pure noise, with one edge into the noise latent
    four = [np.column_stack([y, rng.normal(size=400)]) for y in Y]
    B = np.zeros((4, 4), dtype=int)
    B[:3, :3] = A
    B[0, 3] = 1
    sc = score(A, Y, B, four, None)
    assert sc["shd"] == 1 and sc["locr2"] == pytest.approx(1.0)
    assert sc["topological_divergence"] == 0 and not sc["correct_order"]
    sc = score(A, Y, np.zeros((0, 0)), [y[:, :0] for y in Y])
    assert sc["shd"] == 3 and sc["locr2"] == 0.0


def test_order_free_metrics_without_true_latents():
    A = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    perm = [2, 0, 1]
    relabelled = A[np.ix_(perm, perm)]
    sc = score(A, None, relabelled, [np.zeros((5, 3))])
    assert sc["shd_min_relabel"] == 0 and sc["isomorphic"]
    assert np.isnan(sc["shd"]) and np.isnan(sc["locr2"])
    assert shd_min_relabel(A, np.zeros((3, 3))) == 2
    assert shd_min_relabel(A, A.T) == 0  # the reversed chain is a relabelled chain
    assert np.isnan(shd_min_relabel(np.zeros((9, 9)), np.zeros((9, 9))))


# ------------------------------------------------------------------------ GIN


def test_gin_graph_read_through_clusters():
    from causallearn.graph.Edge import Edge
    from causallearn.graph.Endpoint import Endpoint
    from causallearn.graph.GeneralGraph import GeneralGraph
    from causallearn.graph.GraphNode import GraphNode
    from causallearn.graph.NodeType import NodeType

    G = GeneralGraph([])
    xs = [GraphNode(f"X{i + 1}") for i in range(7)]
    for x in xs:
        G.add_node(x)
    lat = []
    for i in range(3):
        node = GraphNode(f"L{i + 1}")
        node.set_node_type(NodeType.LATENT)
        G.add_node(node)
        lat.append(node)
    G.add_directed_edge(lat[0], lat[1])
    G.add_directed_edge(lat[0], lat[2])
    G.add_edge(Edge(lat[1], lat[2], Endpoint.TAIL, Endpoint.TAIL))  # not ordered by GIN
    for j, a in ((0, 2), (1, 2), (2, 0), (3, 0), (4, 1), (5, 1)):  # X7 in no cluster
        G.add_directed_edge(lat[a], xs[j])
    clusters, adj, order = gin_structure(G, 7)
    assert clusters == [[2, 3], [4, 5], [0, 1]]
    np.testing.assert_array_equal(adj, [[0, 1, 1], [0, 0, 1], [0, 0, 0]])
    assert order == [0, 1, 2]


def test_cluster_scores_recover_pure_indicator_latents():
    sim = simulate(3, 2, 2000, mixing="pure", indicators_per_latent=3, measurement_noise=0.1,
                   random_state=0)
    scores = cluster_scores(sim.X, [[3, 4, 5], [0, 1, 2]])
    for S, Y in zip(scores, sim.Y):
        assert abs(np.corrcoef(S[:, 0], Y[:, 1])[0, 1]) > 0.98
        assert abs(np.corrcoef(S[:, 1], Y[:, 0])[0, 1]) > 0.98


@pytest.mark.slow
def test_one_command_benchmarks_creator_paper_lingcrel_and_gin(tmp_path, capsys):
    """CREATOR, the paper preset, LiNGCReL and GIN on a small cell."""
    out = tmp_path / "out"
    assert main(["--methods", "CREATOR", "CREATOR (paper)", "LiNGCReL", "GIN",
                 "--d", "2", "--n", "150", "--mixing", "pure", "--indicators-per-latent", "2",
                 "--measurement-noise", "0.3", "--seeds", "1", "--time-limit", "GIN=60",
                 "--out", str(out), "--no-progress", "--no-figures"]) == 0
    df = pd.read_csv(out / "results.csv")
    assert list(df["method"]) == ["CREATOR", "CREATOR (paper)", "LiNGCReL", "GIN"]
    assert (df["status"][:3] == "ok").all() and df["status"][3] in ("ok", "timeout")
    assert df["mixing"].eq("pure").all() and df["indicators_per_latent"].eq(2).all()
    summary = (out / "summary.md").read_text()
    assert "### Grid 'custom'" in summary and "GIN" in summary
    assert "SHD up to relabelling" in summary
    if df["status"][3] == "ok":
        assert '"clusters"' in df["info"][3]


@pytest.mark.slow
def test_gin_timeout_row(tmp_path):
    out = tmp_path / "out"
    assert main(["--methods", "CREATOR", "GIN", "--d", "2", "--n", "150", "--mixing", "pure",
                 "--indicators-per-latent", "2", "--measurement-noise", "0.3", "--seeds", "1",
                 "--time-limit", "GIN=0.5", "--out", str(out), "--no-progress",
                 "--no-figures"]) == 0
    df = pd.read_csv(out / "results.csv")
    assert list(df["status"]) == ["ok", "timeout"]
    assert "timed out: 1" in (out / "summary.md").read_text()


# ------------------------------------------------------------------ workloads


def test_pure_mixing_simulation_and_its_truth():
    sim = simulate(3, 2, 300, mixing="pure", indicators_per_latent=4, random_state=3)
    assert sim.H.shape == (12, 3)
    assert np.all(np.count_nonzero(sim.H, axis=1) == 1)
    np.testing.assert_array_equal(np.flatnonzero(sim.H[:, 1]), [4, 5, 6, 7])
    assert np.all(np.abs(sim.H[sim.H != 0]) >= 0.5)
    np.testing.assert_allclose(sim.X[1], sim.Y[1] @ sim.H.T)
    assert sim.params["mixing"] == "pure" and sim.params["indicators_per_latent"] == 4
    with pytest.raises(ValueError, match="n_features=5 contradicts mixing='pure'"):
        simulate(3, 2, 100, mixing="pure", n_features=5)
    with pytest.raises(ValueError, match="mixing must be"):
        simulate(3, 2, 100, mixing="sparse")
    with pytest.raises(ValueError, match="indicators_per_latent must be >= 1"):
        simulate(3, 2, 100, mixing="pure", indicators_per_latent=0)
    dense = simulate(3, 2, 100, n_features=6, random_state=3)
    assert np.count_nonzero(dense.H) == 18


def test_grids_paper_tau_table_and_ablations_at_k_2d():
    cells = tau_grid()
    main_cell = [c for c in paper_grid() if (c["n_latent"], c["n_environments"], c["setting"])
                 == (5, 5, 1)][0]
    assert [c.get("tau") for c in cells[:-1]] == [0.1, 0.4, 0.7, 1.0, 1.3, 1.6, 1.9, 2.2, 2.5,
                                                  2.8]
    assert {data_seed(c, 7) for c in cells} == {data_seed(main_cell, 7)}
    assert {c["n_environments"] for c in ablation_grid()} == {5, 10}


@pytest.mark.slow
def test_shared_ordering_gives_the_results_of_independent_fits():
    """The tau table's shortcut: a paper fit whose ordering is re-used equals a fresh fit."""
    sim = simulate(3, 3, 300, random_state=5)
    fresh = [fit_creator_paper(sim.X, 3, 2, tau=t) for t in (0.1, 2.8)]  # fills the cache
    start = time.perf_counter()
    again = fit_creator_paper(sim.X, 3, 2, tau=0.1)
    hit_seconds = time.perf_counter() - start
    # An independent fit, outside the cache, at the same tau.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m = CREATOR.paper(3, tau=0.1, random_state=2).fit(sim.X)
    for adjacency, latents, order in (fresh[0], again):
        np.testing.assert_array_equal(adjacency, m.adjacency_matrix_)
        assert order == list(m.causal_order_)
        for a, b in zip(latents, m.latents_):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(fresh[0][0], fresh[1][0])  # tau acts after the shared step
    assert hit_seconds < 0.5 * _seconds_of_paper_fit(sim.X)
    # Another random_state is another ordering: no hit.
    other = fit_creator_paper(sim.X, 3, 3, tau=0.1)
    m3 = CREATOR.paper(3, tau=0.1, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m3.fit(sim.X)
    for a, b in zip(other[1], m3.latents_):
        np.testing.assert_array_equal(a, b)


def _seconds_of_paper_fit(X_list):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        CREATOR.paper(3, tau=1.0, random_state=11).fit(X_list)
    return time.perf_counter() - start


def test_cli_simulated_cells(tmp_path):
    out = tmp_path / "out"
    assert main(["--methods", "CREATOR", "--d", "2", "--K", "2", "3", "--n", "200",
                 "--edge-prob", "1", "--seeds", "2", "--out", str(out), "--no-progress",
                 "--no-figures"]) == 0
    df = pd.read_csv(out / "results.csv")
    assert list(df["n_environments"]) == [2, 2, 3, 3] and df["edge_prob"].eq(1.0).all()
    assert (df["n_true_edges"] == 1).all() and (df["status"] == "ok").all()


@pytest.mark.parametrize("argv, message", [
    (["--d", "2", "--quick"], "--d defines the cells"),
    (["--d", "2", "--mixing", "pure", "--p", "6"], "--p cannot be combined with --mixing pure"),
    (["--d", "2", "--indicators-per-latent", "2"], "--indicators-per-latent needs --mixing pure"),
    (["--K", "3"], "simulated cells need --d"),
    (["--d", "0"], "--d must be >= 1"),
    (["--truth-adjacency", "a.csv"], "--truth-adjacency needs --data"),
    (["--data", "x.csv"], "--data needs --env-column"),
    (["--d", "2", "--time-limit", "GIN=x"], "NAME=SECONDS"),
    (["--d", "2", "--methods", "CREATOR", "--time-limit", "GIN=5"], "not a requested method"),
])
def test_cli_user_errors(argv, message, capsys, tmp_path):
    assert main([*argv, "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def _write_workload(tmp_path, sim, labels=("b", "a", "c")):
    """The simulation as the CSV files of --data, --truth-adjacency and --truth-latents."""
    d = sim.adjacency.shape[0]
    names = [f"Y{i}" for i in range(d)]
    env = np.concatenate([[lab] * x.shape[0] for lab, x in zip(labels, sim.X)])
    data = pd.DataFrame(np.vstack(sim.X), columns=[f"x{j}" for j in range(sim.X[0].shape[1])])
    data.insert(1, "lab", env)
    data.to_csv(tmp_path / "data.csv", index=False)
    pd.DataFrame(sim.adjacency, index=names, columns=names).to_csv(tmp_path / "adj.csv")
    lat = pd.DataFrame(np.vstack(sim.Y), columns=names)
    lat.insert(0, "lab", env)
    lat.to_csv(tmp_path / "lat.csv", index=False)
    return env


@pytest.mark.slow
def test_user_csv_with_truth_file_is_benchmarked_in_one_command(tmp_path):
    sim = simulate(3, 3, 300, random_state=5)
    _write_workload(tmp_path, sim)
    out = tmp_path / "out"
    assert main(["--data", str(tmp_path / "data.csv"), "--env-column", "lab",
                 "--truth-adjacency", str(tmp_path / "adj.csv"), "--truth-latents",
                 str(tmp_path / "lat.csv"), "--methods", "CREATOR", "LiNGCReL", "--seeds", "2",
                 "--out", str(out), "--no-progress", "--no-figures"]) == 0
    df = pd.read_csv(out / "results.csv")
    assert list(df["method"]) == ["CREATOR", "LiNGCReL"] * 2
    assert df["data"].eq("data.csv").all() and df["data_seed"].isna().all()
    # Environments in sorted label order: a, b, c = simulated environments 1, 0, 2.
    X_list = [sim.X[1], sim.X[0], sim.X[2]]
    Y_list = [sim.Y[1], sim.Y[0], sim.Y[2]]
    for seed in (0, 1):
        adj, lat, order = fit_creator(X_list, 3, seed)
        ev = metrics.evaluate(sim.adjacency, Y_list, adj, lat, order)
        row = df[(df["method"] == "CREATOR") & (df["seed"] == seed)].iloc[0]
        assert row["shd"] == ev["shd"] and row["locr2"] == pytest.approx(ev["locr2"], rel=1e-5)
    summary = (out / "summary.md").read_text()
    assert "### Grid 'data'" in summary and "data.csv" in summary


def test_user_csv_without_true_latents_gives_order_free_metrics(tmp_path):
    sim = simulate(3, 3, 300, random_state=5)
    _write_workload(tmp_path, sim)
    out = tmp_path / "out"
    assert main(["--data", str(tmp_path / "data.csv"), "--env-column", "lab",
                 "--truth-adjacency", str(tmp_path / "adj.csv"), "--methods", "CREATOR",
                 "--seeds", "1", "--out", str(out), "--no-progress", "--no-figures"]) == 0
    row = pd.read_csv(out / "results.csv").iloc[0]
    assert row["status"] == "ok" and np.isnan(row["shd"]) and np.isnan(row["locr2"])
    assert row["shd_min_relabel"] >= 0 and row["n_true_edges"] == sim.adjacency.sum()


def test_csv_workload_errors_name_the_option(tmp_path):
    sim = simulate(2, 2, 50, random_state=0)
    _write_workload(tmp_path, sim, labels=("a", "b"))
    data, adj, lat = (str(tmp_path / f) for f in ("data.csv", "adj.csv", "lat.csv"))
    wl = read_csv_workload(data, "lab", adj, lat)
    assert wl.n_latent == 2 and wl.environment_labels == ["a", "b"]
    np.testing.assert_allclose(wl.truth_latents[1], sim.Y[1])
    with pytest.raises(ValueError, match="--env-column 'env' is not a column"):
        read_csv_workload(data, "env", adj)
    with pytest.raises(ValueError, match="--n-latent 3 contradicts --truth-adjacency"):
        read_csv_workload(data, "lab", adj, n_latent=3)
    pd.DataFrame([[0, 1], [1, 0]], index=["Y0", "Y1"], columns=["Y0", "Y1"]).to_csv(
        tmp_path / "cyc.csv")
    with pytest.raises(ValueError, match="--truth-adjacency: .* is not a DAG"):
        read_csv_workload(data, "lab", str(tmp_path / "cyc.csv"))
    pd.DataFrame([[0, 1]], index=["Y0"], columns=["Y0", "Y1"]).to_csv(tmp_path / "rect.csv")
    with pytest.raises(ValueError, match="must be square"):
        read_csv_workload(data, "lab", str(tmp_path / "rect.csv"))
    pd.read_csv(lat).iloc[:10].to_csv(tmp_path / "short.csv", index=False)
    with pytest.raises(ValueError, match="has 10 rows, --data has 100"):
        read_csv_workload(data, "lab", adj, str(tmp_path / "short.csv"))
    pd.read_csv(lat).drop(columns=["Y1"]).to_csv(tmp_path / "miss.csv", index=False)
    with pytest.raises(ValueError, match=r"lacks columns \['Y1'\]"):
        read_csv_workload(data, "lab", adj, str(tmp_path / "miss.csv"))
    with pytest.raises(ValueError, match="--data: .* does not exist"):
        read_csv_workload(str(tmp_path / "none.csv"), "lab", adj)


def test_gin_without_causal_learn_names_the_extra(monkeypatch, capsys, tmp_path):
    from creator_plugin.benchmark import cli as bench_cli

    monkeypatch.setattr(bench_cli, "find_spec", lambda name: None if name == "causallearn"
                        else object())
    assert main(["--d", "2", "--methods", "CREATOR", "GIN", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "causallearn" in err and 'creator-plugin[bench]' in err


def test_cell_table_separates_cells_that_differ_only_by_missing_keys():
    """A pure-indicator cell (mixing set) and a dense one (mixing missing) stay two rows."""
    from creator_plugin.benchmark.figures import summary_markdown

    base = {"grid": "custom", "n_latent": 3, "status": "ok", "seed": 0, "shd": 1.0,
            "locr2": 0.9, "exact_dag": False, "correct_order": True, "seconds": 0.1}
    df = pd.DataFrame([{**base, "method": "CREATOR", "mixing": "pure"},
                       {**base, "method": "CREATOR", "mixing": None, "shd": 3.0}])
    table = summary_markdown(df)
    assert "| CREATOR | 3 | pure | 1/0/0 | 1.00 |" in table
    assert "| CREATOR | 3 | – | 1/0/0 | 3.00 |" in table
