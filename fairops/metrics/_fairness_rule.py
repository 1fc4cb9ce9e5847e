"""The fairness rule: one line and one confidence level, applied alike by tuning, the promotion gate and the monitor.

A model's fairness ratio on some rows is judged against the line by its interval at the rule's level (the exact
interval of :mod:`fairops.metrics._figures`):

- the interval **lies below the line** (its upper bound under it): the rows show the model to be unfair beyond
  noise. The gate refuses such a candidate, the monitor alerts on such a window;
- the ratio itself **meets the line** (point value at or above it): what ``fairops tune`` asks of the fit it
  picks, on the validation rows. Asking only that the interval reach the line would pick a fit whose true
  ratio may lie well under it, which the gate then refuses on new rows about half the time; a fit whose ratio
  meets the line on validation has an interval reaching it on new rows unless the validation figure was far
  off.

Between the two lies a fit whose ratio is under the line while its interval reaches it: the rows cannot tell.
:meth:`FairnessRule.standing` names the three cases, so that a pick can fall back from one to the next and say
so. The rule travels with a registered version (:meth:`FairnessRule.tags`), so that the gate and the monitor
judge the version by the rule it was chosen under unless told otherwise.

>>> rule = FairnessRule()
>>> rule.line, rule.level
(0.8, 0.95)
>>> rule.standing(0.85, 1.0), rule.standing(0.75, 0.9), rule.standing(0.6, 0.72)
('meets', 'unclear', 'below')
>>> FairnessRule.from_tags(FairnessRule(0.9, 0.99).tags()) == FairnessRule(0.9, 0.99)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InputError
from ._classification import FOUR_FIFTHS
from ._intervals import LEVEL

if TYPE_CHECKING:
    from collections.abc import Mapping

#: The version tags the rule is recorded under.
LINE_TAG, LEVEL_TAG = "fairops.fairness_line", "fairops.interval_level"
#: :meth:`FairnessRule.standing`'s answers, from best to worst.
STANDINGS = ("meets", "unclear", "below")


def _check_line(line: object) -> float:
    if isinstance(line, bool) or not isinstance(line, (int, float)) or not 0 <= line <= 1:
        raise InputError(f"fairness line must be a number in [0, 1] (0 turns it off), got {line!r}")
    return float(line)


def _check_level(level: object) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.5 <= level < 1:
        raise InputError(f"confidence level must be a number in [0.5, 1), e.g. 0.95, got {level!r}")
    return float(level)


@dataclass(frozen=True)
class FairnessRule:
    """A fairness line and the confidence level of the intervals it is judged by.

    Parameters
    ----------
    line : float, default=0.8
        The lowest acceptable fairness ratio (the four-fifths rule's 0.8 by default); 0 turns the rule off.
    level : float, default=0.95
        The confidence level of every interval shown and judged.

    Examples
    --------
    >>> FairnessRule(0.8, 0.9).describe()
    'fairness line 0.8, 90% intervals'
    >>> FairnessRule(line=1.5)
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: fairness line must be a number in [0, 1] (0 turns it off), got 1.5
    """

    line: float = FOUR_FIFTHS
    level: float = LEVEL

    def __post_init__(self) -> None:
        object.__setattr__(self, "line", _check_line(self.line))
        object.__setattr__(self, "level", _check_level(self.level))

    @property
    def active(self) -> bool:
        """False when the line is 0 (off): nothing is below it."""
        return self.line > 0

    def below(self, upper: float) -> bool:
        """True when an interval whose upper bound is ``upper`` lies below the line (NaN: not known, False).

        Parameters
        ----------
        upper : float
            The interval's upper bound.

        Returns
        -------
        bool
            Whether the rows show the ratio under the line beyond noise.
        """
        return self.active and math.isfinite(upper) and upper < self.line

    def meets(self, value: float) -> bool:
        """True when the ratio ``value`` itself is at or above the line (always, with the line off).

        Parameters
        ----------
        value : float
            The fairness ratio.

        Returns
        -------
        bool
            Whether it meets the line.
        """
        return not self.active or (math.isfinite(value) and value >= self.line)

    def standing(self, value: float, upper: float) -> str:
        """Where a ratio stands against the line: ``"meets"``, ``"unclear"`` or ``"below"``.

        ``"meets"``: the ratio is at or above the line; ``"below"``: its interval lies below the line;
        ``"unclear"``: neither (the rows cannot tell, or the ratio is undefined).

        Parameters
        ----------
        value, upper : float
            The ratio and its interval's upper bound.

        Returns
        -------
        str
            One of :data:`STANDINGS`.
        """
        if self.meets(value):
            return "meets"
        return "below" if self.below(upper) else "unclear"

    def replaced(self, *, line: float | None = None, level: float | None = None) -> FairnessRule:
        """This rule with ``line`` or ``level`` replaced where given.

        Parameters
        ----------
        line, level : float or None, default=None
            The new parts; None keeps this rule's.

        Returns
        -------
        FairnessRule
            A new rule (this one is frozen).

        Examples
        --------
        >>> FairnessRule(0.8, 0.95).replaced(level=0.9)
        FairnessRule(line=0.8, level=0.9)
        """
        return FairnessRule(self.line if line is None else line, self.level if level is None else level)

    def describe(self) -> str:
        """The rule in words, e.g. ``"fairness line 0.8, 95% intervals"``.

        Returns
        -------
        str
            The words.
        """
        line = f"fairness line {self.line:g}" if self.active else "no fairness line"
        return f"{line}, {percent(self.level)} intervals"

    def tags(self) -> dict[str, str]:
        """The version tags recording the rule.

        Returns
        -------
        dict of str to str
            :data:`LINE_TAG` and :data:`LEVEL_TAG`.
        """
        return {LINE_TAG: repr(self.line), LEVEL_TAG: repr(self.level)}

    @classmethod
    def from_tags(cls, tags: Mapping[str, str], *, line: float | None = None,
                  level: float | None = None) -> FairnessRule:
        """The rule a version was registered under, ``line`` and ``level`` replacing its parts when given.

        A version registered before the rule was recorded reads as the default rule (its recorded interval
        level, if any, kept).

        Parameters
        ----------
        tags : dict
            The version's tags.
        line, level : float or None, default=None
            Replace the recorded line or level.

        Returns
        -------
        FairnessRule
            The rule.

        Examples
        --------
        >>> FairnessRule.from_tags({"fairops.interval_level": "0.975"}, line=0.9)
        FairnessRule(line=0.9, level=0.975)
        """
        def recorded(key: str, default: float) -> float:
            text = tags.get(key)
            try:
                return default if text is None else float(text)
            except ValueError:
                raise InputError(f"the version's tag {key} is not a number: {text!r}") from None

        return cls(recorded(LINE_TAG, FOUR_FIFTHS), recorded(LEVEL_TAG, LEVEL)).replaced(line=line, level=level)


def percent(level: float) -> str:
    """A confidence level as a percentage, e.g. ``"97.5%"``.

    >>> percent(0.975), percent(0.95)
    ('97.5%', '95%')
    """
    return f"{level * 100:.4g}%"


#: The rule every command uses unless told otherwise.
DEFAULT_RULE = FairnessRule()
