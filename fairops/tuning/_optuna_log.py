"""What Optuna's optimize loop logs about a trial that returned NaN, for the Optuna versions it was read from.

Optuna reports a trial's end (INFO) and a failed trial (WARNING) on the logger of its private module
``optuna.study._optimize``, in English sentences that are not an API. The objective fails a fit whose
validation scores are constant by returning NaN, and Optuna then warns twice for that trial;
:class:`ConstantFitWarnings` recognises those two warnings by their text. Outside :data:`WRITTEN_FOR`
the logger or the words may have changed: the filter then drops nothing and the warnings show.

>>> internals_known("5.1.0"), internals_known("6.0.0")
(True, False)
"""

from __future__ import annotations

import logging

from .._versions import in_range

#: Optuna versions whose optimize-loop logger and warning texts this module was written for.
WRITTEN_FOR = ((5, 0), (6, 0))

#: Where Optuna reports a trial's end (INFO) and a failed trial (WARNING).
OPTIMIZE_LOGGER = "optuna.study._optimize"


def internals_known(version: str | None = None) -> bool:
    """True when ``version`` (default: the installed Optuna) is inside :data:`WRITTEN_FOR`."""
    if version is None:
        import optuna

        version = optuna.__version__
    return in_range(version, WRITTEN_FOR)


class ConstantFitWarnings(logging.Filter):
    """Drops Optuna's two warnings about a trial that returned NaN: the objective's constant fits."""

    def __init__(self):
        super().__init__()
        self._trials: set[str | None] = set()

    def filter(self, record) -> bool:
        message = record.getMessage()
        words = message.split()
        number = words[1] if len(words) > 1 and words[0] == "Trial" else None
        if "because of the following error: The value nan is not acceptable" in message:
            self._trials.add(number)
            return False
        return not (number in self._trials and message.endswith("failed with value (nan, nan)."))
