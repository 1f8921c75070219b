"""Small parameter constraints: the estimator's and its options' values checked by name.

The form of scikit-learn's parameter validation (a dict of allowed values per
parameter; the first constraint a value satisfies accepts it) with the same
messages, without its private module: ``"The 'n_latent' parameter of
CREATOR must be an int in the range [1, inf) or a str among {'auto'}. Got 0
instead."``. A constraint is an :class:`Interval`, an :class:`Options`,
``"boolean"``, ``None`` or a type.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

__all__ = ["InvalidParameterError", "Interval", "Options", "describe", "satisfies",
           "validate_parameters"]


class InvalidParameterError(ValueError, TypeError):
    """A parameter's value is not allowed (a ``ValueError`` and a ``TypeError``)."""


class Interval:
    """Numbers of a type (``Integral`` or ``Real``) in an interval; a boolean never is one.

    Parameters
    ----------
    kind : {numbers.Integral, numbers.Real}
    left, right : number or None
        The bounds (None: unbounded).
    closed : {"left", "right", "both", "neither"}
    """

    def __init__(self, kind, left, right, *, closed: str):
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def is_satisfied_by(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.kind):
            return False
        if isinstance(value, Real) and math.isnan(value):
            return False
        # an unbounded side is the infinity there, open or closed as ``closed`` says
        left = -math.inf if self.left is None else self.left
        right = math.inf if self.right is None else self.right
        low_ok = value >= left if self.closed in ("left", "both") else value > left
        high_ok = value <= right if self.closed in ("right", "both") else value < right
        return bool(low_ok and high_ok)

    def __str__(self) -> str:
        name = "an int" if self.kind is Integral else "a float"
        cast = int if self.kind is Integral else float
        left = "-inf" if self.left is None else cast(self.left)
        right = "inf" if self.right is None else cast(self.right)
        lb = "[" if self.closed in ("left", "both") and self.left is not None else "("
        rb = "]" if self.closed in ("right", "both") and self.right is not None else ")"
        return f"{name} in the range {lb}{left}, {right}{rb}"


class Options:
    """Strings among a set."""

    def __init__(self, options):
        self.options = set(options)

    def is_satisfied_by(self, value) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return "a str among {" + ", ".join(repr(o) for o in sorted(self.options)) + "}"


def satisfies(constraint, value) -> bool:
    """Whether ``value`` satisfies one constraint."""
    if constraint is None:
        return value is None
    if constraint == "boolean":
        return isinstance(value, (bool, np.bool_))
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint.is_satisfied_by(value)


def describe(constraints: list) -> str:
    """What the constraints allow, in words (``"an int in the range [0, inf) or None"``)."""
    words = []
    for c in constraints:
        if c is None:
            words.append("None")
        elif c == "boolean":
            words.append("an instance of 'bool'")
        elif isinstance(c, type):
            name = (c.__qualname__ if c.__module__ == "builtins"
                    else f"{c.__module__}.{c.__qualname__}")
            words.append(f"an instance of {name!r}")
        else:
            words.append(str(c))
    if len(words) == 1:
        return words[0]
    return f"{', '.join(words[:-1])} or {words[-1]}"


def validate_parameters(constraints: dict, params: dict, caller_name: str) -> None:
    """Raise :class:`InvalidParameterError` naming the first parameter no constraint accepts.

    Parameters
    ----------
    constraints : dict
        ``{name: [constraint, ...]}``; parameters without an entry are not checked.
    params : dict
        ``{name: value}``.
    caller_name : str
        Who takes the parameters, for the message (e.g. ``"CREATOR"``).
    """
    for name, value in params.items():
        allowed = constraints.get(name)
        if allowed is None or any(satisfies(c, value) for c in allowed):
            continue
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller_name} must be {describe(allowed)}. "
            f"Got {value!r} instead.")
