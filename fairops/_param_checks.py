"""Parameter constraints: one declarative table per estimator, checked by one function.

In the manner of scikit-learn's ``_parameter_constraints`` (whose checker is private to
scikit-learn), each fairops estimator class holds ``_param_constraints``: a dict from every
constructor parameter to the list of what it may be. A value passes when it matches any entry:

- ``None``: the value None;
- ``bool``: True or False (NumPy's booleans too); ``str``, ``dict``, ``callable``: a string, a
  dict, a callable;
- :class:`Interval`: an integer, a float (not an integer) or any real number, within a range
  (a range open to one side takes finite numbers only);
- :class:`Options`: one of the listed strings;
- :class:`Satisfies`: any other test, described in words.

:func:`check_params` raises :class:`InvalidParameterError` (a ``ValueError`` and a ``TypeError``,
as scikit-learn's) naming the first parameter that matches no entry, and what it may be.

>>> table = {"max_depth": [None, Interval("int", 1, None)], "theta": [Interval("real", 0, 1)],
...          "mode": [Options("max", "mean")]}
>>> check_params({"max_depth": 3, "theta": 0.5, "mode": "max"}, table)
>>> check_params({"max_depth": 0, "theta": 0.5, "mode": "max"}, table)
Traceback (most recent call last):
...
fairops._param_checks.InvalidParameterError: max_depth must be None or an integer >= 1, got 0
>>> describe(table["theta"] + table["mode"])
"a number in [0, 1] or one of ['max', 'mean']"
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .errors import InputError


class InvalidParameterError(InputError, TypeError):
    """A constructor parameter outside its constraints (caught as ValueError or TypeError)."""


def is_int(value) -> bool:
    """An integer that is not a boolean."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def is_real(value) -> bool:
    """A real number that is not a boolean."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


_KINDS = {
    "int": ("an integer", is_int),
    "float": ("a float", lambda value: is_real(value) and not is_int(value)),
    "real": ("a number", is_real),
}
def _number(bound) -> str:
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


_CLOSED = {"both": ("[", "]"), "left": ("[", ")"), "right": ("(", "]"), "neither": ("(", ")")}


@dataclass(frozen=True)
class Interval:
    """Numbers of ``kind`` ("int", "float" or "real") from ``low`` to ``high`` (None: unbounded)."""

    kind: str
    low: float | None
    high: float | None
    closed: str = "both"

    def matches(self, value) -> bool:
        if not _KINDS[self.kind][1](value):
            return False
        if self.kind != "int" and not math.isfinite(value):
            return False
        left, right = _CLOSED[self.closed]
        above = self.low is None or (value >= self.low if left == "[" else value > self.low)
        below = self.high is None or (value <= self.high if right == "]" else value < self.high)
        return bool(above and below)

    def __str__(self) -> str:
        noun = _KINDS[self.kind][0]
        if self.kind != "int" and (self.low is None or self.high is None):
            noun = "a finite " + noun.split(" ", 1)[1]
        left, right = _CLOSED[self.closed]
        if self.low is None and self.high is None:
            return noun
        if self.high is None:
            return f"{noun} {'>=' if left == '[' else '>'} {_number(self.low)}"
        if self.low is None:
            return f"{noun} {'<=' if right == ']' else '<'} {_number(self.high)}"
        return f"{noun} in {left}{_number(self.low)}, {_number(self.high)}{right}"


@dataclass(frozen=True)
class Options:
    """One of the given strings."""

    values: tuple

    def __init__(self, *values: str):
        object.__setattr__(self, "values", values)

    def matches(self, value) -> bool:
        return isinstance(value, str) and value in self.values

    def __str__(self) -> str:
        return f"one of {list(self.values)}"


@dataclass(frozen=True)
class Satisfies:
    """Any other constraint: ``test(value)`` must hold; ``text`` says what it asks for."""

    test: Callable[[object], bool]
    text: str

    def matches(self, value) -> bool:
        return bool(self.test(value))

    def __str__(self) -> str:
        return self.text


_PLAIN = {
    bool: ("True or False", lambda value: isinstance(value, (bool, np.bool_))),
    str: ("a string", lambda value: isinstance(value, str)),
    dict: ("a dict", lambda value: isinstance(value, dict)),
    callable: ("a callable", callable),
}


#: scikit-learn's random_state: None, a seed or a RandomState.
RANDOM_STATE = [None, Interval("int", 0, 2**32 - 1),
                Satisfies(lambda value: isinstance(value, np.random.RandomState), "a numpy RandomState")]


def _matches(entry, value) -> bool:
    if entry is None:
        return value is None
    if entry in _PLAIN:
        return _PLAIN[entry][1](value)
    return entry.matches(value)


def describe(allowed: list) -> str:
    """What a parameter with these constraints may be, in words."""
    words = ["None" if entry is None else _PLAIN[entry][0] if entry in _PLAIN else str(entry) for entry in allowed]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def check_alpha(alpha, *, auto: bool = True, name: str = "alpha", accepted: str | None = None) -> float | str:
    """Fairband's weight of accuracy, checked: ``"auto"`` (when ``auto``) or a real number in [0, 1], as a float.

    The one check of an ``alpha`` wherever fairops takes one (sampler, pruner, scorer, tracking callback, the
    commands). ``accepted`` is what the message says may be given, before "in [0, 1]" (by default
    "'auto' or a float", or "a float" without ``auto``): a caller that also takes None, or reads a number
    from its command line, says so.

    >>> check_alpha("auto"), check_alpha(1)
    ('auto', 1.0)
    >>> check_alpha(1.5, auto=False)
    Traceback (most recent call last):
    ...
    fairops._param_checks.InvalidParameterError: alpha must be a float in [0, 1], got 1.5
    """
    if auto and isinstance(alpha, str) and alpha == "auto":
        return alpha
    if is_real(alpha) and 0 <= alpha <= 1:  # NaN fails both comparisons
        return float(alpha)
    if accepted is None:
        accepted = "'auto' or a float" if auto else "a float"
    raise InvalidParameterError(f"{name} must be {accepted + ' ' if accepted else ''}in [0, 1], got {alpha!r}")


def check_params(params: dict, constraints: dict) -> None:
    """Refuse the first of ``params`` that matches none of its ``constraints`` entries."""
    for name, allowed in constraints.items():
        value = params[name]
        if not any(_matches(entry, value) for entry in allowed):
            raise InvalidParameterError(f"{name} must be {describe(allowed)}, got {value!r}")


def checked_params(estimator) -> dict:
    """``estimator.get_params(deep=False)``, each checked against the class's ``_param_constraints``."""
    params = estimator.get_params(deep=False)
    check_params(params, type(estimator)._param_constraints)
    return params
