"""The peers study: its workloads, its time limit in one process and its tables."""

import json
import time

import numpy as np
import pandas as pd
import pytest
from peers import WORKLOADS, _call_in_process, markdown_tables, run

from creator_plugin.benchmark.isolation import FitTimeout
from creator_plugin.interventional import simulate_single_node


def test_interventional_workloads_are_the_zoo_families():
    sim = WORKLOADS["single-soft-laplace"](60, 3)
    assert sim.params["family"] == "single_node_soft" and len(sim.X) == 6
    assert sim.X[0].shape == (60, 10)
    direct = simulate_single_node(5, 6, 60, n_features=10, random_state=3,
                                  intervention="soft", noise="laplace")
    np.testing.assert_array_equal(sim.X[4], direct.X[4])
    assert WORKLOADS["multi-hard-laplace"](60, 3).params["family"] == "multi_node"


def test_in_process_time_limit():
    def slow(a):
        while True:
            time.sleep(0.01)

    start = time.perf_counter()
    with pytest.raises(FitTimeout):
        _call_in_process(slow, (1,), 0.2)
    assert time.perf_counter() - start < 2
    assert _call_in_process(lambda a: a + 1, (1,), 5)[0] == 2


@pytest.mark.slow
def test_cpu_time_limit_ignores_time_spent_waiting():
    def busy_then_sleep(a):
        time.sleep(0.5)  # waiting costs no CPU time
        while True:
            sum(range(1000))

    start = time.perf_counter()
    with pytest.raises(FitTimeout, match="cpu time"):
        _call_in_process(busy_then_sleep, (1,), 0.2, clock="cpu")
    assert time.perf_counter() - start >= 0.5  # the sleep did not count
    result, cpu_seconds = _call_in_process(lambda a: time.sleep(0.3) or a, (4,), 5, clock="cpu")
    assert result == 4 and cpu_seconds < 0.2


def test_rows_and_tables_from_a_tiny_run(tmp_path):
    out = tmp_path / "rows.csv"

    def broken(X, d, seed):
        raise ValueError("no")

    df = run(["single-hard-laplace"], {"broken": broken}, 1, 50, 5.0, out=out,
             in_process=True)
    assert list(df.status) == ["failed"] and out.exists()
    rows = pd.DataFrame([
        {"workload": "w", "method": m, "seed": s, "n_samples": 10, "time_limit": 5.0,
         "status": "ok", "shd_corr": shd, "mcc": mcc, "seconds": 0.1, "n_est_edges": 2,
         "n_true_edges": 3, "info": json.dumps({"verdict": v}) if m == "CREATOR" else ""}
        for m, s, shd, mcc, v in [
            ("CREATOR", 0, 1, 0.9, ["trusted"]), ("CREATOR", 1, 3, 0.7, ["unreliable_order"]),
            ("Other", 0, 4, 0.95, None), ("Other", 1, 4, 0.95, None)]]
        + [{"workload": "w", "method": "Other", "seed": 2, "n_samples": 10, "time_limit": 5.0,
            "status": "timeout"}])
    text = markdown_tables(rows)
    # means over the finished fits, best SHD and best MCC bold, unfinished fits counted
    assert "| `w` | **2.00** / 0.80 | 4.00 / **0.95** (2/3 fits) |" in text
    assert "| `w` | 2 | 1 | unreliable_order (1) |" in text
    assert ("Seeds 0–2 (3 per cell at most), 10 rows per environment, "
            "time limit per fit: 5 s.") in text
    rows["clock"] = np.where(rows.method == "Other", "cpu", None)
    assert ("time limit per fit: 5 s (CREATOR); 5 s of CPU time (Other)."
            in markdown_tables(rows))
    assert "Median seconds per fit:" in markdown_tables(rows)
    rows["clock"] = "cpu"
    assert "Median CPU seconds per fit:" in markdown_tables(rows)


def test_common_seeds_keeps_the_seeds_of_every_method():
    from peers import common_seeds

    df = pd.DataFrame({"workload": ["w"] * 5 + ["v"], "method": ["a", "a", "a", "b", "b", "a"],
                       "seed": [0, 1, 2, 0, 1, 7]})
    kept = common_seeds(df)
    assert sorted(kept[kept.workload == "w"].seed) == [0, 0, 1, 1]
    assert list(kept[kept.workload == "v"].seed) == [7]
