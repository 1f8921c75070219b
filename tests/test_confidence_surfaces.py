"""Where the edge confidence shows: the bridges, the picture, ``creator fit``, the verdict,
``creator bench`` and the model file (``edge_confidence_`` itself: test_confidence.py).

The command-line, bench, DoWhy and rank-rule tests (about half a second each) carry the
slow mark, for the quick lane's time budget.
"""

from __future__ import annotations

import json
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pydot  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402
from pgmpy.base import DAG  # noqa: E402

from creator_plugin import CREATOR, confidence, simulate  # noqa: E402
from creator_plugin.adapters import (  # noqa: E402
    to_dowhy_causal_model,
    to_gcm,
    to_linear_gaussian_bn,
    to_networkx,
    to_pgmpy_dag,
    to_pydot,
    topology,
)
from creator_plugin.benchmark.grid import run_one  # noqa: E402
from creator_plugin.cli import main  # noqa: E402
from creator_plugin.output_dir import MARKER  # noqa: E402
from creator_plugin.plotting import confidence_opacity, plot_graph  # noqa: E402
from creator_plugin.quality import Verdict, with_undecided  # noqa: E402

#: simulate(4, 4, 300, random_state=seed) fitted with CREATOR(4, random_state=0): seed 13
#: has two undecided pairs (L1 -> L4, L2 -> L4), seed 1 none.
TWO_UNDECIDED, NONE_UNDECIDED = 13, 1


def _fit(seed: int, **kw) -> CREATOR:
    sim = simulate(4, 4, 300, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CREATOR(4, random_state=0, **kw).fit(sim.X)


@pytest.fixture(scope="module")
def doubtful():
    return _fit(TWO_UNDECIDED)


@pytest.fixture(scope="module")
def clear():
    return _fit(NONE_UNDECIDED)


@pytest.fixture(scope="module")
def old(doubtful, tmp_path_factory):
    """``doubtful`` as a model file saved before the confidence existed would load."""
    path = tmp_path_factory.mktemp("old") / "m.npz"
    model = CREATOR.load(_saved(doubtful, path))
    del model.edge_confidence_
    model.save(path)
    return CREATOR.load(path)


def _saved(model, path):
    model.save(path)
    return path


def _edges(model):
    return [(f"L{i + 1}", f"L{j + 1}", float(model.edge_confidence_[i, j]))
            for i, j in np.argwhere(model.adjacency_matrix_)]


# ------------------------------------------------------------------ bridges
def test_networkx_edges_carry_their_confidence_and_non_edges_are_absent(doubtful):
    expected = _edges(doubtful)
    for g in (to_networkx(doubtful), topology(doubtful), to_networkx(doubtful, environment=0)):
        assert isinstance(g, nx.DiGraph)
        assert sorted((u, v, a["confidence"]) for u, v, a in g.edges(data=True)) == \
            sorted(expected)
    # an undecided pair without an edge is no edge of the graph
    absent = [(i, j) for i, j in confidence.undecided_pairs(doubtful.edge_confidence_)
              if not doubtful.adjacency_matrix_[i, j]]
    assert absent and all(not to_networkx(doubtful).has_edge(f"L{i + 1}", f"L{j + 1}")
                          for i, j in absent)
    assert set(topology(doubtful).edges[expected[0][0], expected[0][1]]) == {"confidence"}


def test_networkx_names_follow_the_given_names(doubtful):
    names = ["a", "b", "c", "d"]
    g = to_networkx(doubtful, names)
    for i, j in np.argwhere(doubtful.adjacency_matrix_):
        assert g.edges[names[i], names[j]]["confidence"] == doubtful.edge_confidence_[i, j]


def test_pgmpy_dag_and_network_carry_the_confidence(doubtful):
    dag = to_pgmpy_dag(doubtful)
    assert isinstance(dag, DAG) and sorted(dag.nodes) == ["L1", "L2", "L3", "L4"]
    assert sorted((u, v, a["confidence"]) for u, v, a in dag.edges(data=True)) == \
        sorted(_edges(doubtful))
    bn = to_linear_gaussian_bn(doubtful, environment=0)
    assert sorted((u, v, a["confidence"]) for u, v, a in bn.edges(data=True)) == \
        sorted(_edges(doubtful))


@pytest.mark.slow
def test_dowhy_and_gcm_graphs_carry_the_confidence(doubtful):
    expected = sorted(_edges(doubtful))
    cm = to_dowhy_causal_model(doubtful, "L1", "L4", environment=0)
    assert sorted((u, v, a["confidence"]) for u, v, a in cm._graph._graph.edges(data=True)) \
        == expected
    scm = to_gcm(doubtful, environment=0)
    assert sorted((u, v, a["confidence"]) for u, v, a in scm.graph.edges(data=True)) == expected


def test_dot_edges_carry_confidence_label_and_width(doubtful):
    dot = to_pydot(doubtful)
    assert isinstance(dot, pydot.Dot)
    label = {str(n.get_name()): n.get("label").strip('"') for n in dot.get_nodes()
             if n.get("label")}
    got = {}
    for e in dot.get_edges():
        key = (label[str(e.get_source())], label[str(e.get_destination())])
        got[key] = (float(e.get("confidence")), e.get("label").strip('"'),
                    float(e.get("penwidth")))
    assert set(got) == {(u, v) for u, v, _ in _edges(doubtful)}
    for u, v, c in _edges(doubtful):
        assert got[u, v][0] == pytest.approx(c, abs=5e-4)
        assert got[u, v][1] == f"{c:.2f}"
        assert got[u, v][2] == pytest.approx(0.5 + 2.5 * c, abs=5e-3)
    text = dot.to_string()
    assert text.count("confidence=") == len(got) and text.count("penwidth=") == len(got)
    widths = sorted((c, w) for c, _, w in got.values())
    assert [w for _, w in widths] == sorted(w for _, w in widths)  # wider when surer


def test_a_fit_without_confidence_exports_as_before(old, doubtful):
    assert not hasattr(old, "edge_confidence_")
    assert all("confidence" not in a for *_, a in to_networkx(old).edges(data=True))
    assert all(a == {} for *_, a in topology(old).edges(data=True))
    assert all("confidence" not in a for *_, a in to_pgmpy_dag(old).edges(data=True))
    text = to_pydot(old).to_string()
    assert "confidence" not in text and "penwidth" not in text
    assert sorted(to_networkx(old).edges) == sorted(to_networkx(doubtful).edges)


# ------------------------------------------------------------------ picture
def _arrow_alpha(fig):
    return {a.get_gid(): a.get_alpha() for a in fig.axes[0].patches
            if isinstance(a, FancyArrowPatch)}


def test_picture_edges_fade_with_doubt_and_old_models_look_as_before(doubtful, old):
    fig, before = plot_graph(doubtful), plot_graph(old)
    try:
        alpha = _arrow_alpha(fig)
        for i, j in np.argwhere(doubtful.adjacency_matrix_):
            c = doubtful.edge_confidence_[i, j]
            assert alpha[f"edge {i}->{j}"] == pytest.approx(confidence_opacity(c))
        assert min(alpha.values()) < 0.9 < max(alpha.values())  # an undecided edge is fainter
        assert [t.get_text() for t in fig.axes[0].texts if t.get_gid() == "confidence note"] \
            == ["Fainter edges: less sure (edge confidence)"]
        assert set(_arrow_alpha(before).values()) == {None}  # opaque, as drawn before
        assert not [t for t in before.axes[0].texts if t.get_gid() == "confidence note"]
        assert before.get_size_inches()[1] < fig.get_size_inches()[1]  # no room for the line
    finally:
        plt.close(fig)
        plt.close(before)


def test_opacity_grows_with_the_confidence():
    values = [confidence_opacity(c) for c in (0.0, 0.1, 0.5, 0.9, 1.0)]
    assert np.all(np.diff(values) > 0) and values[-1] == 1.0 and values[0] > 0.1


# ------------------------------------------------------------------ verdict
def test_the_summary_counts_and_names_the_undecided_edges(doubtful, clear):
    two = doubtful.diagnostics_["quality"]
    none = clear.diagnostics_["quality"]
    assert two["checks"]["undecided_edges"] == {"count": 2, "pairs": [[0, 3], [1, 3]]}
    assert "2 edges are undecided" in two["summary"] and "L1 -> L4, L2 -> L4" in two["summary"]
    assert none["checks"]["undecided_edges"] == {"count": 0, "pairs": []}
    assert "No edge is undecided" in none["summary"]
    assert "undecided" not in " ".join(i["kind"] for i in two["issues"])  # never an issue


def test_with_undecided_appends_one_sentence():
    v = with_undecided(Verdict(summary="No reason for doubt found: x."), [(0, 2)], ["a", "b", "c"])
    assert v.summary == ("No reason for doubt found: x. 1 edge is undecided (confidence "
                         "between 0.1 and 0.9, edge_confidence_): a -> c.")
    assert v.checks["undecided_edges"] == {"count": 1, "pairs": [[0, 2]]} and not v.issues


@pytest.mark.slow
def test_rank_rules_have_no_undecided_sentence():
    model = _fit(TWO_UNDECIDED, pruning="rank")
    assert "undecided_edges" not in model.diagnostics_["quality"]["checks"]
    assert "undecided" not in model.diagnostics_["quality"]["summary"]


# ------------------------------------------------------------------ creator fit
@pytest.fixture
def doubtful_csv(tmp_path):
    X, labels = simulate(4, 4, 300, random_state=TWO_UNDECIDED).stacked()
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(4)]).assign(lab=labels)
    df.to_csv(tmp_path / "data.csv", index=False)
    return tmp_path / "data.csv"


@pytest.mark.slow
def test_fit_writes_edge_confidence_csv_and_reports_the_undecided(doubtful_csv, tmp_path,
                                                                   capsys, doubtful):
    out = tmp_path / "out"
    assert main(["fit", str(doubtful_csv), "--env-column", "lab", "--n-latent", "4",
                 "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    table = pd.read_csv(out / "edge_confidence.csv", index_col=0)
    assert list(table.columns) == list(table.index) == ["L1", "L2", "L3", "L4"]
    model = CREATOR.load(out / "model.npz")
    np.testing.assert_array_equal(table.to_numpy(), model.edge_confidence_)
    np.testing.assert_allclose(model.edge_confidence_, doubtful.edge_confidence_, atol=1e-12)
    assert "edge_confidence.csv" in json.loads((out / MARKER).read_text())["files"]
    assert "edge_confidence.csv" in stdout.splitlines()[0]
    assert "Undecided edges (2;" in stdout
    for i, j in ((0, 3), (1, 3)):
        c = model.edge_confidence_[i, j]
        kept = "in the graph" if model.adjacency_matrix_[i, j] else "not in the graph"
        assert f"  L{i + 1} -> L{j + 1}: {c:.2f} ({kept})" in stdout
    diag = json.loads((out / "diagnostics.json").read_text())
    assert diag["quality"]["checks"]["undecided_edges"]["count"] == 2


@pytest.mark.slow
def test_fit_report_without_undecided_edges(tmp_path, capsys):
    X, labels = simulate(4, 4, 300, random_state=NONE_UNDECIDED).stacked()
    pd.DataFrame(X).add_prefix("x").assign(lab=labels).to_csv(tmp_path / "d.csv", index=False)
    assert main(["fit", str(tmp_path / "d.csv"), "--env-column", "lab", "--n-latent", "4",
                 "--out", str(tmp_path / "o")]) == 0
    assert "Undecided edges: none" in capsys.readouterr().out


# ------------------------------------------------------------------ creator bench
@pytest.mark.slow
def test_bench_rows_count_the_undecided_edges():
    cell = {"grid": "custom", "n_latent": 4, "n_environments": 4, "n_samples": 300,
            "setting": 1}
    row = run_one("CREATOR", cell, 0)
    assert row["status"] == "ok" and row["info"] == ""
    assert isinstance(row["undecided_edges"], int) and 0 <= row["undecided_edges"] <= 12

    def plain(X_list, n_latent, random_state):
        return np.zeros((n_latent, n_latent)), [x[:, :n_latent] for x in X_list], None

    def noted(X_list, n_latent, random_state):
        two = np.full((n_latent, n_latent), 0.5)
        return (*plain(X_list, n_latent, random_state),
                {"edge_confidence": two.tolist(), "note": "x"})

    assert np.isnan(run_one("plain", cell, 0, {"plain": plain})["undecided_edges"])
    row = run_one("noted", cell, 0, {"noted": noted})
    assert row["undecided_edges"] == 16 and row["info"] == '{"note": "x"}'


# ------------------------------------------------------------------ model file
def test_model_file_keeps_it_and_checks_it(doubtful, tmp_path):
    loaded = CREATOR.load(_saved(doubtful, tmp_path / "m.npz"))
    np.testing.assert_array_equal(loaded.edge_confidence_, doubtful.edge_confidence_)
    bad = CREATOR.load(tmp_path / "m.npz")
    bad.edge_confidence_ = bad.edge_confidence_ * 3
    bad.save(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match=r"edge_confidence_ has values outside \[0, 1\]"):
        CREATOR.load(tmp_path / "bad.npz")
    bad.edge_confidence_ = np.zeros((3, 3))
    bad.save(tmp_path / "shape.npz")
    with pytest.raises(ValueError, match="edge_confidence_ has shape"):
        CREATOR.load(tmp_path / "shape.npz")
