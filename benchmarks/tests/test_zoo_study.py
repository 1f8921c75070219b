"""The zoo's rows are keyed by the estimator's resolved settings, so a change of defaults refits."""

import json

import zoo

from creator_plugin import CREATOR


def _row(params: dict, settings: str | None) -> dict:
    row = {"d": 5, "params": json.dumps(params, sort_keys=True), "family": "paper", "seed": 0}
    if settings is not None:
        row["settings"] = settings
    return row


def test_settings_are_the_resolved_parameters_without_the_seed():
    settings = json.loads(zoo.settings_of(5, {"prune_threshold": 0.3}))
    # in the earlier constructor's keywords (zoo.EARLIER), so that rows fitted before
    # the options objects stay current
    expected = zoo._earlier_settings(CREATOR(5, prune_threshold=0.3))
    assert expected["n_refine"] == 3 and expected["revise_graph"] == "auto"
    expected.pop("random_state")
    expected["numerics"] = zoo.NUMERICS  # the fit's numerics revision
    del expected["order_branches"]  # "auto" takes no branches at d = 5 (next test)
    del expected["search_graph"]  # nor searches
    expected["disentangle"] = "evidence"  # what "auto" takes at d = 5 (below)
    assert settings == json.loads(json.dumps(expected, default=repr))


def test_settings_without_branches_match_rows_from_before_the_parameter():
    # Without branches the fit is the one before order_branches existed, so
    # those rows stay current; where "auto" branches, the key is kept.
    assert "order_branches" not in json.loads(zoo.settings_of(5))
    assert zoo.settings_of(5) == zoo.settings_of(5, {"order_branches": 0})
    assert zoo.settings_of(10, {"order_branches": 0}) != zoo.settings_of(10)
    assert json.loads(zoo.settings_of(10))["order_branches"] == "auto"
    assert json.loads(zoo.settings_of(5, {"order_branches": 2}))["order_branches"] == 2


def test_settings_without_the_graph_search_match_rows_from_before_the_parameter():
    assert "search_graph" not in json.loads(zoo.settings_of(5))
    assert zoo.settings_of(5) == zoo.settings_of(5, {"search_graph": False})
    assert zoo.settings_of(10, {"search_graph": False}) != zoo.settings_of(
        10, {"search_graph": "auto"})
    assert json.loads(zoo.settings_of(10, {"search_graph": "auto"}))["search_graph"] == "auto"
    assert zoo.settings_of(5, {"search_graph": "auto"}) == zoo.settings_of(5)
    assert json.loads(zoo.settings_of(5, {"search_graph": True}))["search_graph"] is True


def test_settings_of_the_automatic_disentanglement_match_rows_of_what_it_takes():
    # Outside its window "auto" is the evidence-weighted intersection, the
    # default before "auto" existed, so those rows stay current; inside it the
    # fit changed and the key does too.
    assert CREATOR(5).refine_options.disentangle == "auto"
    assert zoo.settings_of(5) == zoo.settings_of(5, {"disentangle": "evidence"})
    assert zoo.settings_of(15) == zoo.settings_of(15, {"disentangle": "evidence"})
    assert zoo.settings_of(10) != zoo.settings_of(10, {"disentangle": "evidence"})
    assert json.loads(zoo.settings_of(10))["disentangle"] == "auto"


def test_rows_of_earlier_numerics_are_not_current():
    # After a numerical correction (NUMERICS changed) rows of the earlier code
    # are fitted again, although no parameter changed.
    earlier = json.loads(zoo.settings_of(5))
    earlier["numerics"] = "an earlier revision"
    assert not zoo.current(_row({}, json.dumps(earlier, sort_keys=True)))
    del earlier["numerics"]
    assert not zoo.current(_row({}, json.dumps(earlier, sort_keys=True)))


def test_params_of_either_spelling_are_the_same_rows():
    assert zoo.params_key({"ordering__polish": False}) == zoo.params_key({"polish": False}) == (
        '{"polish": false}')
    assert zoo.settings_of(10, {"refine__disentangle": False}) == zoo.settings_of(
        10, {"disentangle": "evidence"})
    assert zoo.settings_of(5, {"refine__measurement_noise": True}) == zoo.settings_of(
        5, {"measurement_noise": "auto"})
    model = zoo.estimator(5, {"polish": False, "refine__revise_graph": False})
    assert model.ordering.polish is False and model.refine.revise_graph is False


def test_rows_of_other_settings_are_not_current():
    now = zoo.settings_of(5)
    assert zoo.current(_row({}, now))
    assert zoo.current(_row({}, now), "{}")
    assert not zoo.current(_row({}, now), '{"polish": false}')
    # a row from before settings were recorded, or fitted under other defaults
    assert not zoo.current(_row({}, None))
    earlier = json.loads(now)
    earlier["disentangle"] = "subspace" if earlier["disentangle"] != "subspace" else "evidence"
    assert not zoo.current(_row({}, json.dumps(earlier, sort_keys=True)))
    # explicit parameters resolve to their own settings
    assert zoo.current(_row({"polish": False}, zoo.settings_of(5, {"polish": False})))


def test_run_refits_rows_of_earlier_settings(tmp_path, monkeypatch):
    out = tmp_path / "rows.jsonl"
    stale = {**_row({}, "{}"), "simulator": "package", "status": "ok", "shd": 9}
    fresh = {**_row({}, zoo.settings_of(5)), "family": "heavy_tails", "simulator": "package",
             "status": "ok", "shd": 0}
    out.write_text(json.dumps(stale) + "\n" + json.dumps(fresh) + "\n")
    fitted = []

    def fake_fit(simulator, family, d, K, n, seed, params):
        fitted.append((family, seed))
        return {**_row(params, zoo.settings_of(d, params)), "family": family, "seed": seed}

    monkeypatch.setattr(zoo, "fit_one", fake_fit)
    zoo.main(["run", "--families", "paper,heavy_tails", "--first-seed", "0", "--seeds", "1",
              "--out", str(out)])
    assert fitted == [("paper", 0)]  # the stale row is refitted, the current one reused
    assert len(out.read_text().splitlines()) == 3  # earlier rows stay in the file
