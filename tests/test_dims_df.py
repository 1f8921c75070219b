"""``creator dims`` says why its degrees of freedom are not monotone in k.

Up to the Ledermann bound every environment has its own k-factor model, with
``K ((p - k)^2 - (p + k)) / 2`` degrees of freedom, falling with k; beyond it
the tests fit one loading subspace shared by all environments
(:func:`shared_subspace_df`), which has fewer parameters: the degrees of
freedom rise there, and the output says so.
"""

from __future__ import annotations

import pandas as pd

from creator_plugin import simulate
from creator_plugin.cli import main
from creator_plugin.dimension import DimensionSelection, select_n_latent, shared_subspace_df


def _six_by_six():
    return simulate(n_latent=3, n_environments=6, n_samples=500, n_features=6,
                    measurement_noise=0.1, random_state=0)


def test_the_degrees_of_freedom_follow_the_two_models_and_the_summary_says_why():
    sim = _six_by_six()
    sel = select_n_latent(sim.X)
    p, K = sel.rank, len(sim.X)
    assert p == 6 and sel.test_scope == "per_environment"
    for t in sel.tests:
        k = t["k"]
        if t.get("model") == "shared_subspace":
            assert t["df"] == shared_subspace_df(p, k, K)
        else:
            assert t["df"] == K * ((p - k) ** 2 - (p + k)) // 2
    dfs = [t["df"] for t in sel.tests]
    assert dfs == [54, 24, 45]  # falls, then rises where the shared model takes over
    text = sel.summary()
    assert ("the degrees of freedom rise from 24 (k = 2, one model per environment) "
            "to 45 (k = 3)") in text
    assert "no degrees of freedom to test with 6 columns" in text


def test_no_note_when_every_test_is_per_environment():
    sel = DimensionSelection(n_latent=2, decided_by="factor_lr_test", criteria={},
                             spectrum=pd.Series([2.0, 1.0]).to_numpy(), rank=8,
                             tests=[{"k": 1, "statistic": 90.0, "df": 20, "p_value": 0.0},
                                    {"k": 2, "statistic": 10.0, "df": 13, "p_value": 0.6}])
    assert "degrees of freedom" not in sel.summary()


def test_cli_table_names_the_model_of_every_row(tmp_path, capsys):
    X, env = _six_by_six().stacked()
    csv = tmp_path / "six.csv"
    pd.DataFrame(X).add_prefix("x").assign(lab=env).to_csv(csv, index=False)
    assert main(["dims", str(csv), "--env-column", "lab"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()
            and line.rstrip().endswith(("environment", "subspace"))]
    assert [(r[0], r[2], " ".join(r[4:])) for r in rows] == [
        ("1", "54", "per environment"), ("2", "24", "per environment"),
        ("3", "45", "shared subspace")]
    assert "degrees of freedom rise from 24" in out
