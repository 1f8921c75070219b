"""The Open LLM Leaderboard loader and walkthrough, on a small synthetic file with its columns."""

import hashlib

import numpy as np
import pandas as pd
import pytest

from creator_plugin.casestudy.leaderboard import (
    PUBLISHED_CHAIN,
    SCORE_COLUMNS,
    leaderboard_walkthrough,
    load_open_llm_leaderboard,
    published_pairs,
    write_example_leaderboard,
)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    return write_example_leaderboard(tmp_path_factory.mktemp("lb") / "board.csv", n_rows=110)


def test_loader_groups_by_shape_and_keeps_the_normalised_scores(example):
    frame = pd.read_csv(example)
    data = load_open_llm_leaderboard(example)
    assert data.environments == ["Gemma2ForCausalLM 9.24B", "LlamaForCausalLM 8.03B",
                                 "Qwen2ForCausalLM 14.77B"]
    assert [x.shape for x in data.X_list] == [(110, 6)] * 3
    assert data.feature_names == list(SCORE_COLUMNS)
    assert data.n_rows_read == 335 and data.n_rows_dropped == {
        "missing_score": 0, "no_group": 0, "small_group": 5}
    assert data.sha256 == hashlib.sha256(example.read_bytes()).hexdigest()
    llama = frame[frame["Architecture"] == "LlamaForCausalLM"].head(110)
    np.testing.assert_array_equal(data.X_list[1], llama[list(SCORE_COLUMNS)].to_numpy(float))
    assert data.models[1] == list(llama["fullname"])
    assert "Raw" not in " ".join(data.feature_names)


def test_loader_other_grouping_and_bad_rows(example, tmp_path):
    frame = pd.read_csv(example, index_col=0)
    frame["BBH"] = frame["BBH"].astype(object)
    frame.loc[0, "BBH"] = "n/a"                       # a score that is not a number
    frame.loc[1, "#Params (B)"] = -1                  # unknown size
    frame.loc[2:200, "Base Model"] = "Removed"
    path = tmp_path / "edited.csv"
    frame.to_csv(path)
    data = load_open_llm_leaderboard(path)
    assert data.n_rows_dropped["missing_score"] == 1 and data.n_rows_dropped["no_group"] == 1
    assert data.environments[1] == "LlamaForCausalLM 8.03B" and len(data.X_list[1]) == 108
    with pytest.raises(ValueError, match="grouping by 'Base Model' leaves 1 environment"):
        load_open_llm_leaderboard(path, group_by="Base Model")
    by_base = load_open_llm_leaderboard(path, group_by="Base Model", min_rows=5)
    assert by_base.group_by == "Base Model" and "Removed" not in by_base.environments


@pytest.mark.parametrize("kwargs, message", [
    ({"min_rows": 1}, "min_rows must be an integer >= 2"),
    ({"min_rows": 500}, "leaves 0 environment"),
    ({"group_by": "No Such Column"}, "has no column 'No Such Column'"),
    ({"group_by": ""}, "group_by must be"),
])
def test_loader_errors_name_the_argument(example, kwargs, message):
    with pytest.raises(ValueError, match=message):
        load_open_llm_leaderboard(example, **kwargs)


def test_loader_refuses_missing_files_and_columns(tmp_path, example):
    with pytest.raises(ValueError, match="is not a file"):
        load_open_llm_leaderboard(tmp_path / "absent.csv")
    pd.read_csv(example).drop(columns=["MUSR"]).to_csv(tmp_path / "short.csv")
    with pytest.raises(ValueError, match="has no column 'MUSR'"):
        load_open_llm_leaderboard(tmp_path / "short.csv")


def testpublished_pairs_counts_the_chain_in_an_order():
    assert PUBLISHED_CHAIN[0] == ("MMLU-PRO", "BBH")
    assert published_pairs(["BBH", "IFEval", "MATH Lvl 5"]) == 3
    assert published_pairs(["MATH Lvl 5", "IFEval", "MMLU-PRO"]) == 0
    assert published_pairs(["IFEval", "MMLU-PRO", "MATH Lvl 5"]) == 2
    assert published_pairs(["IFEval", "GPQA", "MATH Lvl 5"]) is None


@pytest.mark.slow
def test_walkthrough_tables_on_the_synthetic_file(example):
    """CREATOR, LiNGCReL and PCA + MultiGroupDirectLiNGAM on the same rows (a few seconds)."""
    pytest.importorskip("lingam")
    data = load_open_llm_leaderboard(example)
    before = [x.copy() for x in data.X_list]
    tables = leaderboard_walkthrough(data, n_resamples=2,
                                     methods=("LiNGCReL", "PCA+MultiGroupDirectLiNGAM"))
    for x, y in zip(data.X_list, before):
        np.testing.assert_array_equal(x, y)
    assert list(tables["environments"]["rows"]) == [110, 110, 110]
    sel = tables["selection"]
    assert sel["n_latent"].nunique() == 1 and list(sel["k"]) == list(range(1, len(sel) + 1))
    methods = tables["methods"]
    chosen = int(sel["n_latent"].iloc[0])
    expected = ["CREATOR (n_latent=3)"] + ([f"CREATOR (n_latent={chosen})"] if chosen != 3
                                           else [])
    assert list(methods["method"]) == expected + ["LiNGCReL", "PCA+MultiGroupDirectLiNGAM"]
    creator = methods.iloc[0]
    assert creator["trusted"] == (creator["issues"] == "")
    assert creator["n_edges"] == len(creator["edges"].split("; ")) if creator["edges"] else True
    lat = tables["latents"]
    assert len(lat[lat["method"] == "LiNGCReL"]) == 3
    corr = lat[[f"corr {c}" for c in SCORE_COLUMNS]].to_numpy()
    assert np.all(np.abs(corr) <= 1 + 1e-9)
    best = [SCORE_COLUMNS[i] for i in np.argmax(np.abs(corr), axis=1)]
    assert [n.split(" #")[0] for n in lat["name"]] == best
    boot = tables["bootstrap"]
    assert len(boot) == 6 and boot["resamples"].eq(2).all()
    assert boot["edge_share"].between(0, 1).all() and boot["order_share"].between(0, 1).all()
    with pytest.raises(ValueError, match="n_latent must be"):
        leaderboard_walkthrough(data, n_latent=7)
    with pytest.raises(ValueError, match="methods: unknown"):
        leaderboard_walkthrough(data, methods=("nope",))
