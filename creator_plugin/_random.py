"""One way to turn a ``random_state`` into seeds, used by every random choice."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_generator", "draw_seed"]

_MAX_SEED = 2**31 - 1


def as_generator(random_state) -> np.random.Generator:
    """A numpy ``Generator`` from None, an int, a ``RandomState`` or a ``Generator``.

    A ``RandomState`` is consumed once (one seed is drawn from it), as
    scikit-learn does, so passing the same instance twice gives different
    streams; an int always gives the same stream.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(_MAX_SEED)))
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer; got {random_state}.")
        return np.random.default_rng(int(random_state))
    raise TypeError(
        f"random_state must be None, an int, a numpy Generator or RandomState; got "
        f"{random_state!r}."
    )


def draw_seed(rng: np.random.Generator) -> int:
    """Draw one integer seed in ``[0, 2**31 - 1)`` from ``rng`` (for a sub-task)."""
    return int(rng.integers(_MAX_SEED))
