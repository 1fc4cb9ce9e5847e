"""The one record of a Fairband run's settings, shared by the sampler and the pruner, and the study's
configuration fingerprint.

:class:`FairbandSettings` (eta, s_max, alpha, mode) is what both halves of the pair need to agree on.
The sampler owns it (``FairbandSampler.fairband_settings``); the pruner reads it from the study's
sampler through :func:`settings_of`, so neither module imports the other.

A study also stores the *configuration* of the run that created it: the settings, the seed and whatever
the caller adds (data and its hash, task, model families, ...). :func:`configuration_hash` names a
configuration and :func:`first_difference` says where two configurations part; :func:`record_configuration`
stores one with the study and :func:`check_same_configuration` refuses a worker whose configuration differs.

>>> FairbandSettings(alpha=0.5).as_record()
{'eta': 3, 's_max': 4, 'alpha': 0.5, 'mode': 'sync'}
>>> first_difference({"seed": 0, "data": "a"}, {"seed": 0, "data": "b"})
"data: 'a' in the study, 'b' here"
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.study import StudyDirection

from .._param_checks import check_alpha
from ..errors import InputError
from . import _optuna_internals as internals, _schedule as schedule
from ._errors import FairbandConfigurationError, FairbandScheduleError

SETTINGS_ATTR = "fairband:settings"
CONFIGURATION_ATTR_PREFIX = "fairband:configuration:"
MODES = ("sync", "async")
RESERVED_KEYS = ("eta", "s_max", "alpha", "mode", "seed", "min_fairness", "start_configurations")


@dataclass(frozen=True)
class FairbandSettings:
    """Hyperband's shape (``eta``, ``s_max``), Fairband's weight ``alpha`` and the ``mode``.

    Parameters
    ----------
    eta : int, default=3
        Hyperband's reduction factor.
    s_max : int, default=4
        The largest bracket.
    alpha : float or "auto", default="auto"
        Weight of accuracy in [0, 1], or dynamic per rung.
    mode : {"sync", "async"}, default="sync"
        One fit per trial on the paper's schedule, or one configuration per trial up its rungs.

    Examples
    --------
    >>> FairbandSettings(eta=2, s_max=1, alpha="auto", mode="async").mode
    'async'
    """

    eta: int = schedule.ETA
    s_max: int = schedule.S_MAX
    alpha: float | str = "auto"
    mode: str = "sync"

    def __post_init__(self) -> None:
        schedule.iteration_size(self.eta, self.s_max)  # validates eta and s_max
        object.__setattr__(self, "alpha", check_alpha(self.alpha))
        if self.mode not in MODES:
            raise InputError(f"mode must be 'sync' or 'async', got {self.mode!r}")

    def as_record(self) -> dict[str, Any]:
        """The settings as stored with the study.

        Returns
        -------
        dict
            ``eta``, ``s_max``, ``alpha`` and ``mode``.
        """
        return {"eta": self.eta, "s_max": self.s_max, "alpha": self.alpha, "mode": self.mode}

    def slot(self, index: int) -> schedule.Slot:
        """Slot number ``index`` of the schedule under these settings (a configuration's slot in async mode).

        Parameters
        ----------
        index : int
            The slot's number, from 0.

        Returns
        -------
        Slot
            Where it sits in the schedule.

        Examples
        --------
        >>> FairbandSettings().slot(143).rung, FairbandSettings(mode="async").slot(143).iteration
        (1, 1)
        """
        if self.mode == "async":
            return schedule.async_slot_of(index, self.eta, self.s_max)
        return schedule.slot_of(index, self.eta, self.s_max)

    def n_slots(self, iterations: int) -> int:
        """Slots in ``iterations`` iterations (fits in sync mode, configurations in async mode).

        Parameters
        ----------
        iterations : int
            Number of Hyperband iterations.

        Returns
        -------
        int
            Number of slots.

        Examples
        --------
        >>> FairbandSettings().n_slots(2), FairbandSettings(mode="async").n_slots(2)
        (412, 286)
        """
        if self.mode == "async":
            return iterations * schedule.configurations_per_iteration(self.eta, self.s_max)
        return iterations * schedule.iteration_size(self.eta, self.s_max)


def settings_of(study: optuna.Study) -> FairbandSettings | None:
    """The settings of ``study``'s sampler when it is a Fairband sampler, else None.

    >>> import optuna
    >>> settings_of(optuna.create_study()) is None
    True
    """
    settings = getattr(study.sampler, "fairband_settings", None)
    return settings if isinstance(settings, FairbandSettings) else None


def agreeing(settings: FairbandSettings, **wanted: object) -> FairbandSettings:
    """``settings`` after checking that every non-None value in ``wanted`` equals its field.

    >>> agreeing(FairbandSettings(), eta=3, alpha=None).eta
    3
    >>> agreeing(FairbandSettings(), alpha=1.0)
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: FairbandPruner alpha=1.0 differs from the sampler's 'auto'
    """
    for name, value in wanted.items():
        if value is not None and value != getattr(settings, name):
            raise InputError(f"FairbandPruner {name}={value!r} differs from the sampler's {getattr(settings, name)!r}")
    return settings


def check_study(study: optuna.Study) -> None:
    """Raise :class:`~fairops.fairband.FairbandScheduleError` unless a Fairband sampler can run ``study``: two
    maximized objectives, (accuracy, fairness), and a Fairband pruner, if any, whose settings agree.

    >>> import optuna
    >>> check_study(optuna.create_study(directions=["maximize"] * 2))
    >>> check_study(optuna.create_study())
    Traceback (most recent call last):
    ...
    fairops.fairband._errors.FairbandScheduleError: FairbandSampler needs a study with \
directions=['maximize', 'maximize'] returning (accuracy, fairness); got ['minimize']
    """
    directions = study.directions
    if len(directions) != 2 or any(d != StudyDirection.MAXIMIZE for d in directions):
        raise FairbandScheduleError(
            "FairbandSampler needs a study with directions=['maximize', 'maximize'] returning "
            f"(accuracy, fairness); got {[d.name.lower() for d in directions]}")
    check_pruner = getattr(study.pruner, "fairband_settings_for", None)
    if callable(check_pruner):
        try:
            check_pruner(study)
        except ValueError as err:
            raise FairbandScheduleError(str(err)) from None


def validated_configuration(configuration: object) -> dict[str, Any]:
    """A caller's configuration as a plain JSON-able dict; refuses what a study cannot store or compare.

    >>> validated_configuration({"data": "adult", "rows": 1000})
    {'data': 'adult', 'rows': 1000}
    >>> validated_configuration({"seed": 1})
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: configuration key 'seed' is set by FairbandSampler itself; use another name
    """
    if configuration is None:
        return {}
    if not isinstance(configuration, dict):
        raise TypeError(f"configuration must be a dict of JSON values, got {type(configuration).__name__}")
    for key in configuration:
        if not isinstance(key, str):
            raise TypeError(f"configuration keys must be strings, got {key!r}")
        if key in RESERVED_KEYS:
            raise InputError(f"configuration key {key!r} is set by FairbandSampler itself; use another name")
    try:
        text = json.dumps(configuration, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InputError(f"configuration must hold JSON values (finite numbers, text, lists, dicts): {error}") from None
    plain: dict[str, Any] = json.loads(text)
    return plain


def configuration_hash(configuration: dict[str, Any]) -> str:
    """A short, stable name of a configuration (sha256 of its canonical JSON).

    >>> configuration_hash({"b": 1, "a": [1, 2]}) == configuration_hash({"a": [1, 2], "b": 1})
    True
    """
    text = json.dumps(configuration, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def first_difference(stored: dict[str, Any], here: dict[str, Any]) -> str | None:
    """The first key (in sorted order) whose value differs, described for a person; None if equal.

    >>> first_difference({"a": 1}, {"a": 1, "b": 2})
    'b: not set in the study, 2 here'
    """
    for key in sorted(set(stored) | set(here)):
        mine, theirs = here.get(key, _MISSING), stored.get(key, _MISSING)
        if not _same(mine, theirs):
            return f"{key}: {_describe(theirs, 'in the study')}, {_describe(mine, 'here')}"
    return None


_MISSING = object()


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _describe(value: object, where: str) -> str:
    return f"not set {where}" if value is _MISSING else f"{value!r} {where}"


def check_same_configuration(study: optuna.Study, stored_hash: str, configuration: dict[str, Any], hash_: str) -> None:
    """Raise :class:`~fairops.fairband.FairbandConfigurationError` unless ``stored_hash``, the hash of the
    configuration ``study`` was started with, is ``hash_``, the hash of this worker's ``configuration``."""
    if stored_hash == hash_:
        return
    stored = internals.study_records(study).get(CONFIGURATION_ATTR_PREFIX + stored_hash)
    difference = (first_difference(stored, configuration) if isinstance(stored, dict)
                  else f"configuration {stored_hash} in the study, {hash_} here")
    raise FairbandConfigurationError(
        f"study {study.study_name!r} was started with another configuration ({difference}); "
        "use the study's settings or another study name")


def record_configuration(study: optuna.Study, configuration: dict[str, Any], hash_: str,
                         settings: FairbandSettings) -> None:
    """Store ``configuration`` (named by its hash ``hash_``) and ``settings`` with ``study`` unless already there.

    >>> import optuna
    >>> study = optuna.create_study()
    >>> record_configuration(study, {"seed": 0}, configuration_hash({"seed": 0}), FairbandSettings())
    >>> internals.study_records(study)[SETTINGS_ATTR]["mode"]
    'sync'
    """
    records = internals.study_records(study)
    name = CONFIGURATION_ATTR_PREFIX + hash_
    if name not in records:
        internals.write_study_record(study, name, configuration)
    if SETTINGS_ATTR not in records:
        internals.write_study_record(study, SETTINGS_ATTR, settings.as_record())
