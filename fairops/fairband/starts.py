"""Start configurations: parameter values the first configurations of bracket 0 take instead of random draws.

>>> from fairops.fairband import slot_of
>>> starts = checked_starts([{"x": 0.5}], s_max=4)
>>> start_of(starts, slot_of(138)), start_of(starts, slot_of(139))  # the first two slots of bracket 0
({'x': 0.5}, {})
"""

from __future__ import annotations

from typing import Any

from optuna.distributions import BaseDistribution, CategoricalDistribution

from ..errors import InputError
from . import _schedule as schedule
from ._settings import validated_configuration


def checked_starts(starts, s_max) -> tuple[dict, ...]:
    """``start_configurations`` as a tuple of dicts, refused unless they fit bracket 0 and hold JSON values."""
    if starts is None:
        return ()
    starts = tuple(starts)
    if not all(isinstance(start, dict) and all(isinstance(k, str) for k in start) for start in starts):
        raise TypeError("start_configurations must be a list of dicts of parameter values")
    if isinstance(s_max, int) and len(starts) > s_max + 1:
        raise InputError(f"start_configurations holds {len(starts)} configurations; bracket 0 has room for "
                         f"s_max + 1 = {s_max + 1}")
    validated_configuration({"starts": list(starts)})  # JSON values only
    return starts


def start_value(value, name: str, distribution: BaseDistribution):
    """``value`` of parameter ``name`` once checked to lie in ``distribution``."""
    if isinstance(distribution, CategoricalDistribution):
        inside = value in distribution.choices
    else:
        # Optuna's numeric distributions both have low and high, but no common base declares them
        inside = (isinstance(value, (int, float))
                  and distribution.low <= value <= distribution.high)  # type: ignore[attr-defined]
    if not inside:
        raise InputError(f"start configuration value {name}={value!r} is outside its distribution {distribution}")
    return value


def start_of(starts: tuple[dict, ...], slot: schedule.Slot) -> dict[str, Any]:
    """The start configuration's values for a rung-0 slot of bracket 0 in the first iteration, else {}."""
    if slot.iteration == 0 and slot.bracket == 0 and slot.position < len(starts):
        return dict(starts[slot.position])
    return {}
