"""Case studies on real learned representations.

:mod:`creator_plugin.casestudy.llm` reproduces the CREATOR paper's language-model
case study offline (``creator casestudy llm``; needs the ``[llm]`` extra).
:mod:`creator_plugin.casestudy.leaderboard` reads the Open LLM Leaderboard as
multi-environment data and runs CREATOR beside the field's methods on it
(:func:`load_open_llm_leaderboard`, :func:`leaderboard_walkthrough`; example
``examples/07_leaderboard.py``).
Nothing here is imported by ``import creator_plugin``, and nothing here imports
torch until an encoder is loaded.
"""

from .leaderboard import (
    LeaderboardData,
    leaderboard_walkthrough,
    load_open_llm_leaderboard,
    write_example_leaderboard,
)

__all__ = ["LeaderboardData", "leaderboard_walkthrough", "load_open_llm_leaderboard",
           "write_example_leaderboard"]
