"""The constructor's options objects: ``ordering=OrderingOptions(...)``, ``refine=...``.

Their fields are reached by ``set_params`` and a grid search; ``clone``,
``repr`` and model files keep them (without pickle); the earlier
constructor's keywords raise a ``TypeError`` naming their spelling now, and
model files written with them (tests/data/model_f741e1b_options.npz, written
by commit f741e1b with non-default settings) load in the current spelling
and refit to the same numbers.
"""

import json
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

from creator_plugin import CREATOR, OrderingOptions, RefineOptions, simulate
from creator_plugin.options import EARLIER_KEYWORDS, upgrade_parameters

DATA = Path(__file__).with_name("data")


@pytest.fixture(scope="module")
def sim():
    return simulate(3, 4, 200, n_features=5, random_state=7)


def _quiet_fit(est, X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, **kw)


@pytest.mark.parametrize("keyword", sorted(EARLIER_KEYWORDS))
def test_earlier_keywords_name_their_spelling_now(keyword):
    spelling = EARLIER_KEYWORDS[keyword].split("(")[0]  # "ordering=OrderingOptions"
    with pytest.raises(TypeError, match=f"no parameter '{keyword}': it is {spelling}"):
        CREATOR(3, **{keyword: None})
    with pytest.raises(TypeError, match=f"no parameter '{keyword}'"):
        CREATOR(3).set_params(**{keyword: None})
    with pytest.raises(TypeError, match="unexpected keyword argument 'no_such'"):
        CREATOR(3, no_such=1)


@pytest.mark.parametrize("value, hint", [("likelihood", r"RefineOptions\(disentangle=True\)"),
                                         ("auto", "refine='auto'")])
def test_earlier_disentangle_values_name_their_spelling_now(sim, value, hint):
    with pytest.raises(ValueError, match=hint):
        CREATOR(3, disentangle=value).fit(sim.X)


def test_set_params_reaches_the_fields():
    est = CREATOR(4).set_params(refine__revise_graph=False, ordering__n_reestimate=1)
    assert est.refine == RefineOptions(revise_graph=False)
    assert est.ordering == OrderingOptions(n_reestimate=1)
    # from refine=None the other steps stay off
    off = CREATOR(4, refine=None).set_params(refine__search_graph=True)
    assert off.refine == RefineOptions.none().replace(search_graph=True)
    deep = CREATOR(4, refine=None).get_params(deep=True)
    assert deep["refine__revise_graph"] is False and deep["ordering__polish"] is True
    assert CREATOR(4).set_params(**deep).refine_options == RefineOptions.none()
    with pytest.raises(TypeError, match="RefineOptions has no field 'revise'"):
        CREATOR(4).set_params(refine__revise=True)
    with pytest.raises(ValueError, match="ordering__<field> and refine__<field>"):
        CREATOR(4).set_params(scorer__x=1)
    with pytest.raises(ValueError, match="'order_branches' parameter of RefineOptions"):
        CREATOR(4).set_params(refine__order_branches=-1)


@pytest.mark.slow
def test_grid_search_over_a_refine_field(sim):
    X, env = sim.stacked()

    def edges(estimator, X, y=None):  # any score: the search must run and refit
        return -float(estimator.adjacency_matrix_.sum())

    search = GridSearchCV(CREATOR(3, random_state=0, quality=False),
                          {"refine__revise_graph": [True, False]}, scoring=edges,
                          cv=KFold(2, shuffle=True, random_state=0))
    _quiet_fit(search, X, environments=env)
    assert [p["refine__revise_graph"] for p in search.cv_results_["params"]] == [True, False]
    chosen = search.best_params_["refine__revise_graph"]
    assert search.best_estimator_.refine == RefineOptions(revise_graph=chosen)
    assert (search.best_estimator_.diagnostics_["graph_revision"] is None) is (not chosen)


def test_clone_and_repr_keep_the_options():
    est = CREATOR(4, ordering=OrderingOptions(n_reestimate=0, scorer_options={"n_features": 8}),
                  scorer="hsic_rff", refine=RefineOptions(order_branches=1))
    copy = clone(est)
    assert copy.get_params() == est.get_params()
    text = repr(est)
    assert "OrderingOptions(n_reestimate=0, scorer_options={'n_features': 8})" in text
    assert "RefineOptions(order_branches=1)" in text
    assert eval(repr(est.refine)) == est.refine and eval(repr(est.ordering)) == est.ordering
    assert repr(CREATOR(4)) == "CREATOR(n_latent=4)"


def test_options_are_frozen_and_checked():
    options = RefineOptions()
    with pytest.raises(AttributeError):
        options.revise_graph = False
    with pytest.raises(ValueError, match="'ica_fun' parameter of OrderingOptions"):
        OrderingOptions(ica_fun="tanh")
    with pytest.raises(ValueError, match="'revise_graph' parameter of RefineOptions"):
        RefineOptions(revise_graph="yes")
    with pytest.raises(ValueError, match="'refine' parameter of CREATOR"):
        CREATOR(3, refine="none").fit(np.zeros((30, 3)), environments=np.repeat([0, 1, 2], 10))


@pytest.mark.slow
def test_refine_none_and_auto_are_their_options(sim):
    def fit(**kw):
        return _quiet_fit(CREATOR(3, random_state=0, **kw), sim.X)

    for short, long in ((None, RefineOptions.none()), ("auto", RefineOptions())):
        a, b = fit(refine=short), fit(refine=long)
        np.testing.assert_array_equal(a.components_, b.components_)
    assert CREATOR.paper(3).refine is None


def test_earlier_parameters_in_the_current_spelling():
    old = {"n_latent": 3, "n_refine": 1, "refine_min_sources": 2, "polish": False,
           "disentangle": "likelihood", "revise_graph": False, "order_branches": 1,
           "search_graph": True, "ica_options": {"max_iter": 300}, "measurement_noise": "auto",
           "scorer_options": None, "weak_evidence_level": 0.2}
    assert upgrade_parameters(old) == {
        "n_latent": 3, "disentangle": "evidence",
        "ordering": OrderingOptions(n_reestimate=1, reestimate_min_sources=2, polish=False,
                                    ica_max_iter=300, weak_evidence_level=0.2),
        "refine": RefineOptions(revise_graph=False, order_branches=1, search_graph=True,
                                disentangle=True, measurement_noise=True)}
    assert upgrade_parameters({"n_latent": 3, "disentangle": "auto", "measurement_noise": None}
                              ) == {"n_latent": 3, "disentangle": "evidence", "refine": "auto"}
    assert upgrade_parameters({"disentangle": "evidence", "n_refine": 3})["refine"] == (
        RefineOptions(disentangle=False))
    current = {"n_latent": 3, "refine": None}
    assert upgrade_parameters(current) == current


def test_a_model_file_of_f741e1b_with_options_loads_and_refits_the_same(sim):
    model = CREATOR.load(DATA / "model_f741e1b_options.npz")
    assert model.get_params() == CREATOR(
        3, random_state=5,
        ordering=OrderingOptions(n_reestimate=1, reestimate_min_sources=2, polish=False,
                                 ica_max_iter=300, weak_evidence_level=0.2),
        refine=RefineOptions(revise_graph=False, order_branches=1, search_graph=True,
                             disentangle=True, measurement_noise=True)).get_params()
    expected = np.load(DATA / "model_f741e1b_options_expected.npz")
    np.testing.assert_array_equal(model.transform(expected["rows"]), expected["latents"])
    # The same data: the same graph and, to the rounding that SciPy's public BFGS and
    # L-BFGS-B calls moved since f741e1b (tests/identity/refactor_identity.py), the same
    # numbers.
    refit = _quiet_fit(clone(model), sim.X)
    np.testing.assert_allclose(refit.components_, model.components_, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(refit.adjacency_matrix_, expected["adjacency"])
    np.testing.assert_allclose(refit.diagnostics_["measurement_noise"]["noise_shares"],
                               model.diagnostics_["measurement_noise"]["noise_shares"],
                               rtol=1e-10, atol=1e-12)


def test_options_are_saved_as_their_fields(sim, tmp_path):
    est = CREATOR(3, random_state=0, scorer="hsic_rff",
                  ordering=OrderingOptions(polish=False, scorer_options={"n_features": 8}),
                  refine=RefineOptions(revise_graph=False))
    model = _quiet_fit(est, sim.X)
    model.save(tmp_path / "m.npz")
    with zipfile.ZipFile(tmp_path / "m.npz") as zf:
        meta = json.loads(np.load(zf.open("__metadata__.npy")).tobytes())
    assert meta["format_version"] == 2
    assert meta["params"]["refine"] == {"__options__": "RefineOptions",
                                        **RefineOptions(revise_graph=False).to_dict()}
    assert meta["params"]["ordering"]["scorer_options"] == {"n_features": 8}
    loaded = CREATOR.load(tmp_path / "m.npz")  # allow_pickle=False
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.transform(sim.X[0]), model.transform(sim.X[0]))
    # a file naming another options class, or a field out of range, is refused
    with np.load(tmp_path / "m.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    for change, match in ((("refine", "__options__", "Evil"), "unknown options class"),
                          (("ordering", "polish", "yes"), "'polish' parameter")):
        bad = json.loads(json.dumps(meta))
        bad["params"][change[0]][change[1]] = change[2]
        arrays["__metadata__"] = np.frombuffer(json.dumps(bad).encode(), np.uint8)
        np.savez(tmp_path / "bad.npz", **arrays)
        with pytest.raises(ValueError, match=match):
            CREATOR.load(tmp_path / "bad.npz")
