"""The order-check level study re-decides the verdict from the recorded signals."""

import json
import sys
from pathlib import Path

import zoo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
import agreement_level_d as study  # noqa: E402


def _row(d, shd, cal, cond=1.0, weak=(), issues=(), settings=None):
    return {"simulator": "package", "family": "paper", "d": d, "n": 1000, "seed": 0,
            "settings": settings or zoo.settings_of(d), "status": "ok", "shd": shd, "cal": cal,
            "cond": cond, "weak": list(weak), "issues": list(issues)}


def test_a_row_is_flagged_by_any_part_of_the_order_check_or_another_issue():
    assert not study._flagged(_row(10, 0, 9.0, cond=5e8), 9.5, 1e9)
    assert study._flagged(_row(10, 0, 9.5), 9.5, 1e9)
    assert study._flagged(_row(10, 0, 1.0, cond=1e9), 9.5, 1e9)
    assert study._flagged(_row(10, 0, 1.0, weak=[2]), 9.5, 1e9)
    # the recorded unreliable_order is re-decided, any other issue stands
    assert not study._flagged(_row(10, 0, 1.0, issues=["unreliable_order"]), 9.5, 1e9)
    assert study._flagged(_row(10, 0, 1.0, issues=["n_latent_mismatch"]), 9.5, 1e9)


def test_compare_counts_both_rules_on_current_rows_only(tmp_path, capsys):
    rows = [_row(10, 0, 6.0), _row(10, 0, 12.0), _row(10, 3, 12.0), _row(10, 3, 5.8),
            _row(10, 0, 50.0, settings='{"old": 1}')]  # fitted under other settings
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    study.compare([str(path)])
    line = capsys.readouterr().out.strip().splitlines()[-1]
    # 4 current fits, 2 right and 2 wrong; the levels of d = 5 (5.5) flag all
    # four, the levels at d = 10 (10.5) one right and one wrong.
    assert line == "| package | 10 | 4 | 2 | 2 | 2 (100%) | 2 (100%) | 1 (50%) | 1 (50%) |"
