"""The K-proportional pruning level of the fresh block 111000: the level it reports."""

import sys
from pathlib import Path

import numpy as np
import pytest

from creator_plugin.pruning import default_threshold

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
import prune_level_K  # noqa: E402


def test_the_candidate_level_is_the_default_from_ten_environments_and_proportional_below():
    for K in (10, 12, 20, 30):
        assert prune_level_K.candidate_level(K) == pytest.approx(default_threshold("residual", K))
    below = [prune_level_K.candidate_level(K) for K in range(2, 11)]
    assert np.allclose(np.diff(below), below[0] / 2)  # linear in K, through zero
    assert prune_level_K.candidate_level(5) == pytest.approx(0.2 / np.sqrt(2))
