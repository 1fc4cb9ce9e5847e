"""The options of :func:`~fairops.registry.register_best`, grouped by what they decide.

- :class:`Refit`: the model to register in place of the one logged with the trial, fitted anew for the
  chosen configuration, and what is logged with it (input example, pip requirements, flavor options);
- :class:`Placement`: where the new version lands: the alias it takes, the one it takes instead when
  that alias is held, and whether an earlier registration of the same study and pick is the answer;
- :class:`VersionDetails`: what the version says besides the selection's own record: its description,
  extra tags and notes for its model card.

Where the registration is tracked is a :class:`~fairops.tracking.TrackingSession` (or the study's
:class:`~fairops.tracking.FairnessTrackingCallback`), passed as ``session=``. Each option is a frozen
dataclass checked when it is made, so a wrong value is refused where it is written; :func:`check_options`
checks that ``register_best`` was given one of each.

They replace the flat keywords of earlier versions, which ``register_best`` now refuses as unknown:
``alias``, ``if_taken`` and ``once`` are :class:`Placement`'s; the ``refit`` callable, ``input_example``,
``pip_requirements`` and ``log_options`` are :class:`Refit`'s; ``description``, ``extra_tags`` (now
``tags``) and ``card_notes`` are :class:`VersionDetails`'; ``tracking_uri`` and ``experiment_name`` are
``session=TrackingSession(tracking_uri, experiment_name)``.

>>> Placement(alias="candidate", if_taken=None)
Placement(alias='candidate', if_taken=None, once=False)
>>> Placement(alias="v2")
Traceback (most recent call last):
...
fairops.errors.InputError: alias must be a non-empty name not of the form 'v<number>', got 'v2'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError

# what register_best itself hands to the flavor's log_model
_PASSED_BY_REGISTER_BEST = ("run_id", "tracking_uri", "registered_model_name", "input_example", "pip_requirements")


def _check_mapping(label: str, value) -> None:
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(f"{label} must be None or a mapping, got {value!r}")


@dataclass(frozen=True, eq=False)
class Refit:
    """The chosen configuration fitted anew, and what is logged with it.

    Without a ``Refit``, :func:`~fairops.registry.register_best` registers the model logged with the
    chosen trial (``FairnessTrackingCallback(log_models=True)`` and ``keep_model``), as it was logged.

    Parameters
    ----------
    fit : callable
        ``fit(params, trial) -> fitted estimator``: the chosen trial's parameters (a ``dict``) and the
        trial itself; returns the model to register (e.g. the configuration fitted on all training
        rows). It is logged with its fairops flavor.
    input_example : pandas.DataFrame, optional
        A few input rows, logged with the model (MLflow infers the signature from them).
    pip_requirements : list of str or str, optional
        The model's pip requirements (a list, or the path of a requirements file); None = the
        flavor's: the shipped fairops wheel and pinned libraries.
    log_options : mapping, optional
        More keyword arguments for the flavor's ``log_model``; for a classifier,
        ``{"input_schema": InputSchema.for_model(model, X_train)}`` records the training categories.
        The keywords ``register_best`` passes itself (``input_example``, ``pip_requirements``,
        ``run_id``, ``tracking_uri``, ``registered_model_name``) are refused.
    figures : mapping, optional
        The refit model's own figures, by the rows they are on: ``{"validation": {"accuracy": ..., "fairness":
        ..., ...}, "test": {...}}`` (e.g. :meth:`fairops.tuning.FairnessObjective.evaluate`'s). The selection
        run logs them (``validation_accuracy``, ``test_fairness_low``, ...) and the version's ``accuracy`` and
        ``fairness`` tags are their validation figures, in place of the chosen trial's: the registered model is
        the refit, not the trial's fit.

    Raises
    ------
    TypeError
        ``fit`` is not callable or ``log_options`` is not a mapping.
    fairops.errors.InputError
        ``log_options`` names a keyword ``register_best`` passes itself.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> Refit(lambda params, trial: LogisticRegression(**params), pip_requirements=["fairops"]).pip_requirements
    ['fairops']
    >>> Refit(lambda params, trial: None, log_options={"input_example": None})
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: log_options must not set 'input_example': register_best passes it itself (a field of Refit)
    """  # noqa: E501 - a doctest's expected output is one line

    fit: Callable[[dict, Any], Any]
    input_example: Any = field(default=None, repr=False)  # a data frame: its repr would fill a screen
    pip_requirements: Sequence[str] | str | None = None
    log_options: Mapping[str, Any] | None = None
    figures: Mapping[str, Mapping[str, float]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not callable(self.fit):
            raise TypeError(f"fit must be a callable(params, trial) -> fitted model, got {self.fit!r}")
        _check_mapping("log_options", self.log_options)
        _check_mapping("figures", self.figures)
        for rows, values in (self.figures or {}).items():
            if not isinstance(values, Mapping) or not {"accuracy", "fairness"} <= set(values):
                raise InputError(f"figures[{rows!r}] must be a mapping holding 'accuracy' and 'fairness', "
                                 f"got {values!r}")
        for key in _PASSED_BY_REGISTER_BEST:
            if key in (self.log_options or {}):
                own = " (a field of Refit)" if key in ("input_example", "pip_requirements") else ""
                raise InputError(f"log_options must not set {key!r}: register_best passes it itself{own}")


def _check_alias(label: str, value) -> None:
    if not isinstance(value, str) or not value or (value.lower().startswith("v") and value[1:].isdigit()):
        raise InputError(f"{label} must be a non-empty name not of the form 'v<number>', got {value!r}")


@dataclass(frozen=True)
class Placement:
    """Where a version registered by :func:`~fairops.registry.register_best` lands.

    Parameters
    ----------
    alias : str, default "champion"
        The alias the new version takes.
    if_taken : str or None, default "challenger"
        When ``alias`` already points at another version of the model, the new version takes
        ``if_taken`` instead and ``alias`` stays where it is (the ``kept_version`` of the result;
        :func:`fairops.registry.promote` gates the challenger). None moves ``alias`` to the new version
        whatever it pointed at.
    once : bool, default False
        Register once per study and pick: when an earlier (or concurrent) registration of the same
        study registered the same trial, that version is the answer (``registered_before=True``) and
        nothing new is made; see :func:`fairops.registry._run_once.register_once`.

    Raises
    ------
    fairops.errors.InputError
        An alias is empty or of the form ``v<number>`` (MLflow keeps those for version numbers), or
        ``if_taken`` equals ``alias``.
    TypeError
        ``once`` is not a bool.

    Examples
    --------
    >>> Placement()
    Placement(alias='champion', if_taken='challenger', once=False)
    >>> Placement(alias="candidate", if_taken="candidate")
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: if_taken must differ from alias, both are 'candidate'
    """

    alias: str = "champion"
    if_taken: str | None = "challenger"
    once: bool = False

    def __post_init__(self) -> None:
        _check_alias("alias", self.alias)
        if self.if_taken is not None:
            _check_alias("if_taken", self.if_taken)
        if self.alias == self.if_taken:
            raise InputError(f"if_taken must differ from alias, both are {self.alias!r}")
        if not isinstance(self.once, bool):
            raise TypeError(f"once must be True or False, got {self.once!r}")


@dataclass(frozen=True)
class VersionDetails:
    """What a version registered by :func:`~fairops.registry.register_best` says besides its selection.

    The version always records the selection: its tags ``selection_rule``, ``selection_kind``,
    ``trial_number``, ``accuracy``, ``fairness`` (and ``alpha_rule``, ``selection_alpha`` for a
    Fairband pick) and the ``model_card.json`` of its selection run.

    Parameters
    ----------
    description : str, optional
        The version's description (Markdown); None (or empty) =
        :func:`~fairops.registry._registration.default_description`: the rule, the pick's scores and the most
        accurate fit's.
    tags : mapping, optional
        More version tags, their values turned into strings; set after the selection's own, so a key of
        both takes the value given here.
    card_notes : mapping, optional
        Recorded under ``"notes"`` in the model card (JSON; a value JSON cannot hold is written as its
        ``str``).

    Raises
    ------
    TypeError
        ``description`` is not a string, or ``tags`` or ``card_notes`` is not a mapping.

    Examples
    --------
    >>> VersionDetails(tags={"owner": "risk team"}).tags
    {'owner': 'risk team'}
    """

    description: str | None = None
    tags: Mapping[str, Any] | None = None
    card_notes: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.description is not None and not isinstance(self.description, str):
            raise TypeError(f"description must be None or a string, got {self.description!r}")
        _check_mapping("tags", self.tags)
        _check_mapping("card_notes", self.card_notes)


def check_options(name, refit, placement, details, session) -> None:
    """Refuse what :func:`~fairops.registry.register_best` cannot take: an empty model name, or an option
    not of its type (a bare callable as ``refit``, a tracking URI as ``session``, each told how to pass it)."""
    if not isinstance(name, str) or not name:
        raise InputError(f"name must be a non-empty registered model name, got {name!r}")
    if refit is not None and not isinstance(refit, Refit):
        hint = "; wrap the callable: refit=Refit(fit)" if callable(refit) else ""
        raise TypeError(f"refit must be None or a fairops.registry.Refit, got {refit!r}{hint}")
    for label, value, kind in (("placement", placement, Placement), ("details", details, VersionDetails)):
        if not isinstance(value, kind):
            raise TypeError(f"{label} must be a fairops.registry.{kind.__name__}, got {value!r}")
    if session is not None and not hasattr(session, "experiment_id"):
        hint = "; for a tracking URI pass session=TrackingSession(uri)" if isinstance(session, str) else ""
        raise TypeError(f"session must be None, a TrackingSession or a FairnessTrackingCallback, got {session!r}{hint}")
