"""The pooled table of the fresh blocks reads each fit once and counts blocks against the bars."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
import pooled_blocks  # noqa: E402
from zoo import settings_of  # noqa: E402


def _row(family, seed, shd, order=True, flagged=False, params="{}", settings=None):
    return {"simulator": "package", "family": family, "d": 5, "seed": seed, "params": params,
            "settings": settings_of(5, json.loads(params)) if settings is None else settings,
            "status": "ok", "shd": shd, "correct_order": order, "flagged": flagged}


def test_blocks_are_pooled_once_and_old_settings_or_other_params_are_left_out(tmp_path):
    rows = ([_row("paper", 10000 + i, 0) for i in range(4)]
            + [_row("paper", 30000 + i, 1, order=i > 0) for i in range(4)]
            + [_row("paper", 30000, 1, order=False)]  # the same fit, read once
            + [_row("paper", 30005, 9, settings="old")]  # earlier defaults
            + [_row("paper", 30006, 9, params='{"polish": false}')]
            + [_row("near_gaussian", 10000, 9)]  # a flag family
            + [_row("measured", 10000 + i, 3, flagged=i < 1) for i in range(2)])
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    loaded = pooled_blocks.load([str(path)])
    assert len(loaded) == 10
    text = pooled_blocks.table(loaded)
    paper = next(line for line in text.splitlines() if "| paper |" in line)
    # block 10000: 0.00 and every order right; block 30000: 1.00, 3 of 4 orders right.
    assert "| 0.00 | 1.00 | 8 | 0.50 (0.19) | 87.5% | 1 of 2 |" in paper
    measured = next(line for line in text.splitlines() if "| measured |" in line)
    assert "| 3.00 | – |" in measured and "0 of 1" in measured
    summary = pooled_blocks.verdict(loaded)
    assert summary.splitlines()[0].startswith("all blocks: 1 of 2 fits with SHD >= 2 flagged")
    assert "0 of 8 with SHD <= 1" in summary
