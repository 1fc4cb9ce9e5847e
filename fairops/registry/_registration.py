"""Registry-based selection: pick a trial by a rule, register its model, point an alias at it.

A rule (:func:`select`: ``"fairband"``, ``"robust"``, ``"fairness>=0.8"``, a trial by hand, or a
``Selection``) picks a trial of a two-objective (accuracy, fairness) study; :func:`register_best` refits it
or reuses its logged model, registers a new version, places an alias and attaches the model card and the
Pareto-front picture; :func:`describe` says in words what the rule did. The rules and what a version
records: ``docs/mlflow/register_best.md``.

>>> import optuna
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> study = optuna.create_study(directions=["maximize", "maximize"])
>>> for acc, fair in [(0.9, 0.5), (0.8, 0.8), (0.6, 1.0)]:
...     study.add_trial(optuna.trial.create_trial(values=[acc, fair]))
>>> select(study, "fairness>=0.75").trial.number, select(study, "fairband", alpha=0.5).trial.number
(1, 1)
>>> describe(select(study, "fairband", alpha="auto"), study)
'Fairband: argmax alpha*accuracy + (1-alpha)*fairness over 3 fits, alpha rule auto (0.5*(mean fairness - mean accuracy) + 0.5 over all fits) = 0.5'
>>> describe(select(study, {"trial": 2}), study)
'trial 2 chosen by hand'
"""  # noqa: E501 - a doctest's expected output is one line

from __future__ import annotations

import json
import os
import tempfile
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import fairops
from fairops.fairband._selection import Selection, pareto_front, select_best, successful_fits

from ..errors import InputError
from ..tracking._parent_run import PARENT_ATTR, ROLE_TAG, STUDY_TAG
from ..tracking._search import quoted, tags_equal
from ..tracking._session import TRIAL_TAG, TrackingSession
from ._registration_options import Placement, Refit, VersionDetails, check_options
from ._run_once import MODEL_TAG, register_once
from ._selection_figures import figures_words, selection_metrics
from ._selection_rules import describe, record, rule_kind, select

if TYPE_CHECKING:
    import optuna

    from ..tracking._callback import FairnessTrackingCallback


@dataclass
class RegisteredBest:
    """What :func:`register_best` did: the registered version, its alias and the selection behind it.

    Parameters
    ----------
    name, version : str
        The registered model and its version.
    alias : str or None
        The alias set; None: an earlier registration whose version holds no alias now.
    run_id : str
        The run the model was logged in.
    model_uri : str
        Where the model was logged.
    pick : Selection
        The selection behind it.
    card : dict, default={}
        The version's model card.
    kept_version : str or None, default=None
        The version ``alias`` kept when the new version became the challenger (None: it took ``alias``).
    registered_before : bool, default=False
        True when an earlier registration of the study had registered this pick (nothing new was made).
    """

    name: str
    version: str
    alias: str | None  # None: an earlier registration whose version holds no alias now
    run_id: str
    model_uri: str
    pick: Selection
    card: dict = field(default_factory=dict)
    #: The version ``alias`` kept when the new version became the challenger (None: it took ``alias``).
    kept_version: str | None = None
    #: True when an earlier registration of the study had registered this pick (nothing new was made).
    registered_before: bool = False

    @property
    def alias_uri(self) -> str:
        """``models:/<name>@<alias>``."""
        return f"models:/{self.name}@{self.alias}"


def pareto_picture(study, pick: Selection, path: str) -> None:
    """Accuracy vs fairness of every fit, the Pareto front as a line and the pick as a star (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fits = successful_fits(study)
    front = pareto_front(fits)
    figure, axis = plt.subplots(figsize=(6.2, 4.8))
    budgets = [float(t.user_attrs.get("budget", 1.0)) for t in fits]
    points = axis.scatter([t.values[0] for t in fits], [t.values[1] for t in fits], c=budgets, cmap="viridis",
                          s=14, alpha=0.7, label=f"fits ({len(fits)})")
    if any(b != 1.0 for b in budgets):
        figure.colorbar(points, ax=axis, label="budget (share of training data)")
    axis.plot([t.values[0] for t in front], [t.values[1] for t in front], "-", color="black", lw=1,
              label="Pareto front")
    axis.scatter([pick.trial.values[0]], [pick.trial.values[1]], marker="*", s=260, color="red",
                 edgecolor="black", zorder=5, label=f"pick: trial {pick.trial.number}")
    title = textwrap.fill(f"{study.study_name}: {describe(pick, fits)}", 70)
    axis.set(xlabel="accuracy", ylabel="fairness")
    axis.set_title(title, fontsize=8)
    axis.legend(fontsize=8, loc="lower left")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def _scores(trial) -> dict:
    return {"trial": trial.number, "accuracy": float(trial.values[0]), "fairness": float(trial.values[1])}


def default_description(study, pick: Selection) -> str:
    """What the version is: the rule, the pick's scores and the most accurate fit's, as the study measured them."""
    accurate = select_best(study, alpha=1.0).trial
    return (f"Picked from study {study.study_name!r} by {describe(pick, study)}: trial {pick.trial.number}, "
            f"accuracy {pick.trial.values[0]:.4f}, fairness {pick.trial.values[1]:.4f} (as the study measured it). "
            f"Compared with the most accurate fit, trial {accurate.number}: accuracy {accurate.values[0]:.4f}, "
            f"fairness {accurate.values[1]:.4f}.")


def _card(study, pick: Selection, name, version, alias, flavor, refit: bool, extra: Mapping | None,
          answer: Mapping | None = None) -> dict:
    trial = pick.trial
    keep = ("budget", "bracket", "rung", "configuration_id", "auc_y", "auc_s", "alpha")
    accurate = select_best(study, alpha=1.0).trial
    return {
        "model": {"name": name, "version": str(version), "alias": alias, "flavor": flavor},
        "fairops_version": fairops.__version__,
        "study": {"name": study.study_name, "n_trials": len(study.get_trials(deepcopy=False)),
                  "n_fits": len(successful_fits(study))},
        "selection": {**record(pick, study), "refit": refit},
        "trial": {"number": trial.number, "params": trial.params,
                  "accuracy": float(trial.values[0]), "fairness": float(trial.values[1]),
                  "attributes": {k: trial.user_attrs[k] for k in keep if k in trial.user_attrs}},
        "most_accurate_fit": _scores(accurate),
        "pareto_front": [_scores(t) for t in pareto_front(study)],
        **({"served_answer": dict(answer)} if answer else {}),
        **({"notes": extra} if extra else {}),
    }


def _logged_model_uri(client, experiment_id, study, trial) -> str:
    """The URI of the model logged with ``trial``'s run, refused unless MLflow holds it READY (a FAILED or
    PENDING logged model has no loadable files: its flavor failed to save it)."""
    refit = ("pass refit=Refit(fit) to register the chosen configuration fitted anew, or track the study with "
             "FairnessTrackingCallback(log_models=True) and keep_model(...)")
    runs = client.search_runs(
        [experiment_id],
        tags_equal(**{STUDY_TAG: study.study_name, TRIAL_TAG: trial.number, ROLE_TAG: "trial"}),
        max_results=1,
    )
    if runs:
        models = client.search_logged_models(
            experiment_ids=[runs[0].info.experiment_id],
            filter_string=f"source_run_id = {quoted(runs[0].info.run_id)}",
            max_results=1,
        )
        if models:
            model = models[0]
            status = getattr(model.status, "name", str(model.status))
            if status != "READY":
                reason = runs[0].data.tags.get("fairops.model_error", "its flavor did not finish saving it")
                raise InputError(f"trial {trial.number}'s logged model {model.model_id} is {status} ({reason}); it "
                                 f"cannot be loaded, so it is not registered: {refit}")
            return model.model_uri
    raise InputError(f"trial {trial.number} has no logged model; {refit}")


def _alias_holder(client, name: str, alias: str) -> str | None:
    """The version ``alias`` points at, or None (no such alias, or no such registered model)."""
    from mlflow.exceptions import MlflowException

    try:
        return str(client.get_model_version_by_alias(name, alias).version)
    except MlflowException:
        return None


def _place_alias(client, name: str, version: str, alias: str, if_taken: str | None):
    """Point ``alias`` (or ``if_taken`` when ``alias`` is held by another version) at ``version``;
    returns the alias set and the version that kept ``alias`` (None when ``version`` took it)."""
    kept = _alias_holder(client, name, alias) if if_taken else None
    if kept is None or kept == version:
        alias, kept = alias, None
    else:
        assert if_taken is not None  # another version holds alias only when if_taken was asked about
        alias = if_taken
    client.set_registered_model_alias(name, alias, version)
    return alias, kept


def _version_tags(pick: Selection, rule_text: str, extra_tags: Mapping | None, refit: Refit | None) -> dict:
    """The new version's tags: the rule that made the pick, the registered model's validation figures (the refit's
    when known, else the chosen trial's) and which those are, and the caller's own."""
    figures = (refit.figures or {}).get("validation") if refit is not None else None
    accuracy, fairness = (figures["accuracy"], figures["fairness"]) if figures else pick.trial.values
    tags = {"selection_rule": rule_text, "selection_kind": rule_kind(pick), "trial_number": str(pick.trial.number),
            "accuracy": f"{accuracy:.6g}", "fairness": f"{fairness:.6g}", "figures": figures_words(pick, refit)}
    if pick.alpha is not None:
        tags.update(alpha_rule=str(pick.alpha_rule), selection_alpha=f"{pick.alpha:.6g}")
    tags.update({str(k): str(v) for k, v in (extra_tags or {}).items()})
    return tags


def _log_selection_files(client, run_id: str, study, pick: Selection, card: dict) -> None:
    """``selection/model_card.json``, ``selection_rule.json`` and ``pareto_front.png`` in the selection run."""
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "model_card.json"), "w") as handle:
            json.dump(card, handle, indent=1, default=str)
        with open(os.path.join(folder, "selection_rule.json"), "w") as handle:
            json.dump(record(pick, study), handle, indent=1)
        pareto_picture(study, pick, os.path.join(folder, "pareto_front.png"))
        client.log_artifacts(run_id, folder, artifact_path="selection")


# the defaults of register_best's options: frozen values, so one of each serves every call
_CHAMPION = Placement()
_AS_SELECTED = VersionDetails()


def register_best(study: optuna.Study, name: str, rule: str | Mapping[str, Any] | Selection = "fairband", *,
                  alpha: float | Literal["auto"] | None = None, refit: Refit | None = None,
                  placement: Placement = _CHAMPION, details: VersionDetails = _AS_SELECTED,
                  session: TrackingSession | FairnessTrackingCallback | None = None) -> RegisteredBest:
    """Pick a trial of ``study`` by ``rule``, register its model as a new version of ``name``, place an alias.

    A ``selection`` run logs the pick, its model card and Pareto-front picture; the version is tagged with
    the rule that made the pick (``docs/mlflow/register_best.md``).

    Parameters
    ----------
    study : optuna.study.Study
        A two-objective (accuracy, fairness) study.
    name : str
        The registered model; created when missing.
    rule : str, dict or Selection, default "fairband"
        Which trial: ``"fairband"``, ``"robust"``, a constraint such as ``"fairness>=0.8"``,
        ``{"trial": number}``, ``{"run_id": id}``, or a :class:`~fairops.fairband.Selection`.
    alpha : float, "auto" or None, optional
        Fairband's weight of accuracy for ``"fairband"`` and ``"robust"``; None = the study's sampler's.
    refit : Refit, optional
        Fit the chosen configuration anew and register that; None = the model logged with the trial.
    placement : Placement, default Placement()
        The alias the version takes, and whether an earlier registration of the same pick is the answer.
    details : VersionDetails, default VersionDetails()
        The version's description, extra tags and card notes.
    session : TrackingSession or FairnessTrackingCallback, optional
        The store and experiment of the selection run; None = ``TrackingSession()``.

    Returns
    -------
    RegisteredBest
        The version, the alias it took, the selection run, the pick and its model card.

    Raises
    ------
    fairops.errors.InputError
        ``name`` is empty, the rule yields no pick, or (without ``refit``) the pick has no logged model.
    TypeError
        An option is not of its type or unknown.

    See Also
    --------
    fairops.registry.promote : The gate that moves ``@champion`` to a challenger.

    Examples
    --------
    >>> import tempfile, optuna, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fairops.tracking import Refit, TrackingSession
    >>> study = optuna.create_study(directions=["maximize", "maximize"], study_name="credit")
    >>> study.add_trial(optuna.trial.create_trial(values=[0.8, 0.9], params={}, distributions={}))
    >>> X, y = pd.DataFrame({"income": [1.0, 2.0, 3.0, 4.0]}), [0, 0, 1, 1]
    >>> refit = Refit(lambda params, trial: LogisticRegression().fit(X, y), input_example=X.head(2),
    ...               pip_requirements=["fairops"])
    >>> session = TrackingSession(f"sqlite:///{tempfile.mkdtemp()}/mlflow.db", settle_seconds=0)
    >>> best = register_best(study, "credit", {"trial": 0}, refit=refit, session=session)
    >>> best.alias_uri, best.version
    ('models:/credit@champion', '1')
    """
    check_options(name, refit, placement, details, session)
    pick = select(study, rule, alpha=alpha, tracking_uri=None if session is None else session.tracking_uri)
    session = session if session is not None else TrackingSession()
    if not placement.once:
        return _register_new(session, study, name, pick, refit, placement, details)
    # once per study and pick: the version an earlier (or concurrent) registration made, or a new one
    registered, before = register_once(session, study, name, pick.trial.number,
                                       lambda: _register_new(session, study, name, pick, refit, placement, details))
    return _earlier_registration(session.client, registered, pick, placement) if before else registered


def _register_new(session, study, name: str, pick: Selection, refit: Refit | None, placement: Placement,
                  details: VersionDetails) -> RegisteredBest:
    """A new version of ``name`` for ``pick``, made in a new selection run (see :func:`register_best`)."""
    from mlflow.entities import Metric, Param
    from mlflow.exceptions import MlflowException
    from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID, MLFLOW_RUN_NAME

    from ..mlflow._mlflow_internals import use_tracking_uri
    from ..mlflow.flavors import log_estimator

    client = session.client
    experiment_id = session.experiment_id(study)
    rule_text = describe(pick, study)
    tags = {MLFLOW_RUN_NAME: f"{study.study_name}/selection", ROLE_TAG: "selection", STUDY_TAG: study.study_name,
            TRIAL_TAG: str(pick.trial.number), MODEL_TAG: name, "selection_rule": rule_text,
            "fairops_version": fairops.__version__, "figures": figures_words(pick, refit)}
    stored = study.user_attrs.get(PARENT_ATTR)
    if stored and stored.get("experiment_id") == experiment_id:
        tags[MLFLOW_PARENT_RUN_ID] = stored["run_id"]
    run_id = client.create_run(experiment_id, tags=tags).info.run_id
    try:
        params, metrics = selection_metrics(study, pick, refit)
        client.log_batch(run_id, metrics=[Metric(k, v, 0, 0) for k, v in metrics.items()],
                         params=[Param(k, v) for k, v in params.items()])
        if refit is not None:
            model = refit.fit(dict(pick.trial.params), pick.trial)
            info = log_estimator(model, run_id=run_id, tracking_uri=session.tracking_uri, registered_model_name=name,
                                 input_example=refit.input_example, pip_requirements=refit.pip_requirements,
                                 **(refit.log_options or {}))
            flavor, version = type(model).__name__, info.registered_model_version
            answer = (getattr(info, "metadata", None) or {}).get("fairops_answer")  # what it serves, in words
        else:
            source = _logged_model_uri(client, experiment_id, study, pick.trial)
            try:
                client.create_registered_model(name)
            except MlflowException:  # it exists already
                pass
            # MLflow resolves a models:/ source with a client of the process-wide tracking URI
            with use_tracking_uri(session.tracking_uri):
                version = client.create_model_version(name, source, run_id=run_id).version
            flavor, answer = "logged with the trial", None
        alias, kept = _place_alias(client, name, str(version), placement.alias, placement.if_taken)
        client.update_model_version(name, str(version),
                                    description=details.description or default_description(study, pick))
        for key, value in _version_tags(pick, rule_text, details.tags, refit).items():
            client.set_model_version_tag(name, str(version), key, value)
        card = _card(study, pick, name, version, alias, flavor, refit is not None, details.card_notes, answer)
        _log_selection_files(client, run_id, study, pick, card)
        client.set_terminated(run_id, "FINISHED")
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    return RegisteredBest(name, str(version), alias, run_id, f"models:/{name}/{version}", pick, card, kept)


def _earlier_registration(client, version, pick: Selection, placement: Placement) -> RegisteredBest:
    """What registering ``pick`` again finds: the version registered before, the alias it holds (``alias``,
    ``if_taken``, or another one; None when it holds none) and the card its selection run logged."""
    alias, if_taken = placement.alias, placement.if_taken
    number = str(version.version)
    held = [a for a in (alias, if_taken) if a is not None and _alias_holder(client, version.name, a) == number]
    placed = held[0] if held else next(iter(client.get_model_version(version.name, number).aliases), None)
    kept = _alias_holder(client, version.name, alias) if placed == if_taken and if_taken is not None else None
    with tempfile.TemporaryDirectory() as folder:
        try:
            with open(client.download_artifacts(version.run_id, "selection/model_card.json", folder)) as handle:
                card = json.load(handle)
        except Exception:  # noqa: BLE001 - a card that cannot be read leaves the answer without one
            card = {}
    return RegisteredBest(version.name, number, placed, version.run_id, f"models:/{version.name}/{number}", pick,
                          card, kept, registered_before=True)
