"""Model files checked as a whole: the relations between the arrays, not only each alone.

``CREATOR.load`` used to accept weights where the graph has no edge, an
all-zero ``mixing_`` (``inverse_transform`` then returns the mean),
environment labels that are dicts, lists or ``None``, and a file without
``n_environments_`` (after which per-environment lists were not
length-checked). A file written by the previous release still loads and
gives the same ``transform``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creator_plugin import CREATOR, simulate

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")]

DATA = Path(__file__).with_name("data")
QUICK = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    sim = simulate(3, 3, 200, n_features=4, random_state=0)
    model = CREATOR(3, random_state=0, quality=False).fit(sim.X)
    assert model.adjacency_matrix_.sum() >= 1 and (model.adjacency_matrix_ == 0).sum() > 3
    path = tmp_path_factory.mktemp("m") / "model.npz"
    model.save(path)
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    meta = json.loads(arrays.pop("__metadata__").tobytes())
    return model, arrays, meta


def _write(path, arrays, meta):
    np.savez(path, **arrays, __metadata__=np.frombuffer(json.dumps(meta).encode(), np.uint8))
    return path


def _ref(meta, name, k=None):
    v = meta["attributes"][name]
    return (v if k is None else v[k])["__ndarray__"]


def _load_fails(tmp_path, arrays, meta, match):
    path = _write(tmp_path / "bad.npz", arrays, meta)
    with pytest.raises(ValueError, match=match) as info:
        CREATOR.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def _edit(saved):
    _, arrays, meta = saved
    return dict(arrays), json.loads(json.dumps(meta))


def _off_edge(model) -> tuple[int, int]:
    A = model.adjacency_matrix_
    i, j = next((i, j) for i in range(3) for j in range(3) if i < j and not A[i, j])
    return i, j


def test_weight_where_the_graph_has_no_edge(saved, tmp_path):
    model, _, _ = saved
    arrays, meta = _edit(saved)
    i, j = _off_edge(model)
    W = arrays[_ref(meta, "weights_", 1)].copy()
    W[i, j] = 0.7
    arrays[_ref(meta, "weights_", 1)] = W
    _load_fails(tmp_path, arrays, meta, rf"weights_\[1\] has weight 0.7 from latent {i} to {j}")


@pytest.mark.parametrize("name", ["mixing_", "components_"])
def test_a_degenerate_code(saved, tmp_path, name):
    arrays, meta = _edit(saved)
    arrays[_ref(meta, name)] = np.zeros_like(arrays[_ref(meta, name)])
    _load_fails(tmp_path, arrays, meta, f"{name} has rank 0, not 3")
    arrays[_ref(meta, name)][:, :] = 1.0  # rank one
    _load_fails(tmp_path, arrays, meta, f"{name} has rank 1, not 3")


@pytest.mark.parametrize("labels, match", [
    ([{"a": 1}, "b", "c"], "labels are strings"),
    ([["a"], "b", "c"], "labels are strings"),
    ([None, "b", "c"], "labels are strings"),
    ([float("nan"), 1.0, 2.0], "finite"),
    (["a", "a", "b"], "a label twice"),
    (["a", 1, 2], "mixes strings with numbers"),
    (["a", "b"], "one label per environment"),
])
def test_environment_labels(saved, tmp_path, labels, match):
    arrays, meta = _edit(saved)
    meta["attributes"]["environment_labels_"] = labels
    _load_fails(tmp_path, arrays, meta, match)


@pytest.mark.parametrize("name", ["n_environments_", "environment_labels_", "weights_",
                                  "intercepts_", "noise_scales_"])
def test_missing_attributes(saved, tmp_path, name):
    arrays, meta = _edit(saved)
    del meta["attributes"][name]
    _load_fails(tmp_path, arrays, meta, f"'{name}'.* missing")


def test_n_environments_decides_every_list(saved, tmp_path):
    arrays, meta = _edit(saved)
    meta["attributes"]["n_environments_"] = 2
    _load_fails(tmp_path, arrays, meta, "one entry per environment|one label per environment")


def test_n_latent_parameter_and_attribute_agree(saved, tmp_path):
    arrays, meta = _edit(saved)
    meta["params"]["n_latent"] = 2
    _load_fails(tmp_path, arrays, meta, "contradicts the parameter n_latent=2")


def test_negative_noise_scale(saved, tmp_path):
    arrays, meta = _edit(saved)
    arrays[_ref(meta, "noise_scales_", 0)] = -arrays[_ref(meta, "noise_scales_", 0)]
    _load_fails(tmp_path, arrays, meta, "negative scales")


def test_column_names_are_checked(saved, tmp_path):
    arrays, meta = _edit(saved)
    for names, match in [([0, 1, 2], "list of 4 names"), ([0, 1, 2, 2], "duplicated"),
                         ([0, 1, {"x": 1}, 3], "type dict"), ([0, "a", 2, 3], "mix strings")]:
        meta["attributes"]["column_names_in_"] = names
        _load_fails(tmp_path, arrays, meta, match)


# --------------------------------------------------------------- the old file
def test_a_file_of_the_previous_release_loads_and_transforms_the_same():
    """tests/data/model_f741e1b.npz was written by commit f741e1b (the release before these
    checks) from simulate(3, 4, 300, n_features=4, random_state=0) with string names and
    labels; model_f741e1b_expected.npz holds its transform of 20 rows, computed then."""
    model = CREATOR.load(DATA / "model_f741e1b.npz")
    expected = np.load(DATA / "model_f741e1b_expected.npz")
    rows = pd.DataFrame(expected["rows"], columns=["alpha", "beta", "gamma", "delta"])
    np.testing.assert_array_equal(model.transform(rows), expected["latents"])
    np.testing.assert_array_equal(model.inverse_transform(expected["latents"]),
                                  expected["observations"])
    np.testing.assert_array_equal(model.adjacency_matrix_, expected["adjacency"])
    assert model.environment_labels_ == ["lab A", "lab B", "lab C", "lab D"]
    assert list(model.feature_names_in_) == ["alpha", "beta", "gamma", "delta"]
    with pytest.raises(ValueError, match="order"):
        model.transform(rows[["delta", "gamma", "beta", "alpha"]])


# ----------------------------------------------------------------- properties
RELATIONS = ["off_edge_weight", "rank_mixing", "rank_components", "label_type", "label_twice",
             "short_list", "negative_scale", "cycle_order"]


@QUICK
@given(relation=st.sampled_from(RELATIONS), k=st.integers(0, 2),
       value=st.floats(1e-6, 1e6) | st.floats(-1e6, -1e-6),
       bad_label=st.sampled_from([None, [1], {"a": 1}, float("inf")]),
       data=st.data())
def test_one_broken_relation_is_refused(saved, tmp_path_factory, relation, k, value,
                                        bad_label, data):
    model, arrays, meta = saved
    arrays, meta = dict(arrays), json.loads(json.dumps(meta))
    attrs = meta["attributes"]
    if relation == "off_edge_weight":
        i, j = _off_edge(model)
        W = arrays[_ref(meta, "weights_", k)].copy()
        W[i, j] = value
        arrays[_ref(meta, "weights_", k)] = W
    elif relation in ("rank_mixing", "rank_components"):
        name = relation.replace("rank_", "") + "_"
        M = arrays[_ref(meta, name)].copy()
        col = data.draw(st.integers(0, 2))
        if name == "mixing_":
            M[:, col] = M[:, (col + 1) % 3] * value
        else:
            M[col] = M[(col + 1) % 3] * value
        arrays[_ref(meta, name)] = M
    elif relation == "label_type":
        attrs["environment_labels_"][k] = bad_label
    elif relation == "label_twice":
        attrs["environment_labels_"][k] = attrs["environment_labels_"][(k + 1) % 3]
    elif relation == "short_list":
        name = data.draw(st.sampled_from(["weights_", "intercepts_", "noise_scales_",
                                          "latents_", "environment_labels_"]))
        attrs[name] = attrs[name][:k] + attrs[name][k + 1:]
    elif relation == "negative_scale":
        s = arrays[_ref(meta, "noise_scales_", k)].copy()
        s[data.draw(st.integers(0, 2))] = -abs(value)
        arrays[_ref(meta, "noise_scales_", k)] = s
    else:
        order = list(attrs["causal_order_"])
        i, j = (int(v) for v in np.argwhere(model.adjacency_matrix_)[0])
        a, b = order.index(i), order.index(j)
        order[a], order[b] = j, i
        attrs["causal_order_"] = order
    path = _write(tmp_path_factory.mktemp("r") / "m.npz", arrays, meta)
    with pytest.raises(ValueError, match="not a valid creator-plugin model file"):
        CREATOR.load(path)
