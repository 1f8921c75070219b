"""Share CREATOR's reduction and ordering between fits that differ only after them.

The paper's tau table fits the paper preset at ten thresholds on the same data
with the same ``random_state``. The threshold acts only in pruning, after the
ordering, and the ordering (exact HSIC, about 20 s at d = K = 5, n = 1000) is
almost all of a fit's time. :func:`ordering_for` keeps the
:class:`creator_plugin._fit.OrderingStage` of each (data, settings, seed) it
computed, and :func:`creator_plugin._fit.fit_arrays` takes it as
``ordering=``: the fit checks that the stage is its own (same data, ordering
settings and random state on entry) and gives exactly the fit it would have
computed (``tests/test_bench_protocol.py`` checks this).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .._config import FitConfig
from .._fit import OrderingStage, data_key, order_stage

__all__ = ["ordering_for"]

_STAGES: OrderedDict[tuple, OrderingStage] = OrderedDict()
_MAX_ENTRIES = 64  # one per seed of a 50-seed table, with room to spare


def ordering_for(X_list: list[np.ndarray], config: FitConfig, seed: int) -> OrderingStage:
    """The reduction and ordering of a fit of ``X_list`` with ``config`` and integer ``seed``.

    Computed on the first request and kept (at most 64, oldest dropped
    first); later requests with the same data, ordering settings and seed
    return the kept stage.

    Parameters
    ----------
    X_list : list of ndarray (n_k, p)
        Validated environments.
    config : FitConfig
    seed : int
        The fit's ``random_state``.

    Returns
    -------
    OrderingStage
    """
    key = (data_key(X_list), config.ordering_settings, int(seed))
    if key in _STAGES:
        _STAGES.move_to_end(key)
        return _STAGES[key]
    stage = _STAGES[key] = order_stage(X_list, config, np.random.default_rng(int(seed)))
    while len(_STAGES) > _MAX_ENTRIES:
        _STAGES.popitem(last=False)
    return stage
