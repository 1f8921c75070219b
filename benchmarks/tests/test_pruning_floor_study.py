"""The d = 5 floor study and the K-proportional level: the quantities they report."""

import sys
from pathlib import Path

import numpy as np
import pytest

from creator_plugin.pruning import default_threshold

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
import oracle_floor_d5  # noqa: E402
import prune_level_d  # noqa: E402
import prune_level_K  # noqa: E402


def test_the_candidate_level_is_the_default_from_ten_environments_and_proportional_below():
    for K in (10, 12, 20, 30):
        assert prune_level_K.candidate_level(K) == pytest.approx(default_threshold("residual", K))
    below = [prune_level_K.candidate_level(K) for K in range(2, 11)]
    assert np.allclose(np.diff(below), below[0] / 2)  # linear in K, through zero
    assert prune_level_K.candidate_level(5) == pytest.approx(0.2 / np.sqrt(2))


def test_level_rules_keep_the_square_root_unless_an_exponent_is_given():
    assert prune_level_d.level(0.2, 0, 5, 10) == pytest.approx(default_threshold("residual", 10))
    key, numbers = prune_level_d._rule("0.15:0:1")
    assert key == "0.15:0:1"
    assert prune_level_d.level(*numbers[:2], 7, 10, *numbers[2:]) == pytest.approx(0.3)


def _chain(weights_1_to_2, n=4000, seed=0):
    """Latents 0 -> 1 -> 2 in five environments with uniform noises."""
    rng = np.random.default_rng(seed)
    Y = []
    for k in range(5):
        z = rng.uniform(-1, 1, (n, 3)) * np.sqrt(3)
        y0 = z[:, 0]
        y1 = (0.5 + 0.4 * k) * y0 + z[:, 1]
        y2 = weights_1_to_2[k] * y1 + z[:, 2]
        Y.append(np.column_stack([y0, y1, y2]))
    A = np.zeros((3, 3), dtype=int)
    A[0, 1] = A[1, 2] = 1
    return A, Y


def test_the_rule_on_true_latents_sees_edges_whose_weights_vary_and_misses_constant_ones():
    A, Y = _chain([0.3, 1.5, -0.8, 1.0, 0.2])
    G, stats = oracle_floor_d5.population_graph(A, Y)
    assert np.array_equal(G != 0, A != 0)
    assert min(stats) > 1  # in units of the level
    # the same weight in every environment lies in the span of the child's own
    # coefficient vector: invisible to the rule however many rows there are
    A, Y = _chain([0.9] * 5)
    G, stats = oracle_floor_d5.population_graph(A, Y)
    assert G[0, 1] == 1 and G[1, 2] == 0
    assert sorted(stats)[0] < 0.2
