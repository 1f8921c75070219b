"""Trial: the measurement-noise polish started from the ordering's own polish.

``oracle_directions_diag.py``: the correction's polish (``polish_signal``)
started from the true directions gives SHD 0.60 / 0.38 on ``measured``
(package / independent, zoo 10000 block) against 0.84 / 0.58 from the
search's directions, so its start matters. With ``measurement_noise="auto"``
the ordering's own polish (``ordering.polish_directions``, on the noisy
residuals) is skipped and ``polish_signal`` starts from the search's raw
directions. Variant ``two_stage``: ``polish_directions`` first, then
``polish_signal`` from its result.

Tuning seeds only::

    python two_stage_polish_trial.py {package,independent} 0 50 OUT.jsonl
"""
import os
import sys

import creator_plugin.ordering as ordmod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cumulant_polish_trial import VARIANTS, _polish, main  # noqa: E402


def two_stage(X_red, alphas, signal, raw, **kw):
    first, _ = ordmod.polish_directions(X_red, alphas)
    return _polish(X_red, first, signal, raw, **kw)


if __name__ == "__main__":
    main(VARIANTS[:2] + [("two_stage", two_stage, {"measurement_noise": "auto"})])
