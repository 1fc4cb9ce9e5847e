"""What ``fairops tune`` registers: the refit pick packaged for serving, its version tags and description, and
the record of the rows it saw."""

from __future__ import annotations

import numpy as np

from .report import counts_text, outside_notes, threshold_origin, with_interval
from .study import held_out_words

#: What ``fairops tune``'s figures of a registered version are of.
FIGURES_WORDS = ("the registered model, refit on all training rows, on the validation rows of fairops tune's split "
                 "(decided at the rule set there) and on its test rows (decided as served)")


def lifecycle_tags(objective, model, seed: int, rule=None, test: dict | None = None) -> dict:
    """The version tags :mod:`fairops.registry._version_record` reads, from the refit pick's validation rows, the
    fairness ``rule`` it was picked under and its ``test`` figures."""
    from ...metrics._fairness_rule import DEFAULT_RULE
    from ...registry._version_record import PREFIX, figure_tags, validation_tags

    X, y, sensitive = objective.rows("validation")
    tags = validation_tags(objective.task, y, model.predict_proba(X)[:, 1], sensitive, seed=seed,
                           decision=objective.decision, rule=rule or DEFAULT_RULE)
    if test is not None:
        tags.update(figure_tags("test", **{name: (test[name], test[f"{name}_low"], test[f"{name}_high"])
                                           for name in ("accuracy", "fairness")}))
    return tags | {f"{PREFIX}figures": FIGURES_WORDS}


def register_pick(settings, study, objective, chosen):
    """Register the refit pick (``chosen``, a :class:`~fairops.tuning._pick.PickChoice`) with its serving package."""
    from ...models import InputSchema
    from ...models._packaging import as_client_rows, servable, with_decision_columns
    from ...registry._registration import register_best
    from ...registry._registration_options import Placement, Refit, VersionDetails
    from ...tracking._session import TrackingSession

    X_train, _, sensitive_train = objective.rows("train")
    X_test, _, sensitive_test = objective.rows("test")
    served = servable(chosen.model, X_train)
    # a column takes a missing value where the training rows had some (and the model takes it), not elsewhere
    schema = InputSchema.for_model(served, X_train, missing_seen_only=True)
    decision = served_decision_of(objective, chosen.model, X_train, sensitive_train)
    example = with_decision_columns(decision, objective.task.sensitive, X_test.head(5), sensitive_test.head(5))
    scores, accurate_scores = chosen.scores, chosen.accurate_scores
    compared = {"trial": chosen.accurate.trial.number, "validation_refit": accurate_scores["validation"],
                "test": accurate_scores["test"]}
    return register_best(
        study, settings.model_name, rule=chosen.pick, placement=Placement(alias="champion"),
        refit=Refit(lambda params, trial: served, input_example=as_client_rows(example),
                    log_options={"input_schema": schema, "decision": decision}, figures=scores),
        details=VersionDetails(
            description=version_description(settings, study, objective, chosen),
            tags=lifecycle_tags(objective, served, settings.seed, settings.rule, scores["test"]),
            card_notes={"method": settings.tuner, "task": str(objective.task), "refit": "all training rows",
                        "test": scores["test"], "validation_refit": scores["validation"],
                        "most_accurate_fit_refit": compared, "input_schema": decision.extend_schema(schema).to_dict(),
                        "decision": decision.to_dict()}),
        session=TrackingSession(settings.tracking_uri, settings.study_name),
    )


def version_description(settings, study, objective, chosen) -> str:
    """The registered version in words: task, the rule, and the pick against the most accurate fit."""
    from ...registry._registration import describe

    def row(label, trial, measured):
        v, t = measured["validation"], measured["test"]
        family = f", {trial.params['model']}" if "model" in trial.params else ""
        return (f"| {label} (trial {trial.number}{family}) | {with_interval(v, 'accuracy')} "
                f"| {with_interval(v, 'fairness')} | {with_interval(t, 'accuracy')} | {with_interval(t, 'fairness')} |")

    from ...metrics._fairness_rule import percent
    from ...tuning._pick import pick_notes

    scores, level = chosen.scores, percent(settings.level)
    _, y_test, sensitive_test = objective.rows("test")
    task, v = objective.task, scores["validation"]
    chosen_notes = [note[0].upper() + note[1:] + "." for note in pick_notes(chosen, task.fairness_label)]
    return "\n".join([
        f"fairops tune on `{settings.source_name}`: {settings.tuner}, profile {settings.profile}, "
        f"seed {settings.seed}, selection {settings.selection}.",
        f"Task `{task}`: accuracy = {task.metric} at {task.target} = {task.target_value:g}, fairness = "
        f"{task.fairness.upper()} ratio over {task.over}; the positive class is {task.positive or 'label 1'}.",
        f"Validation fairness of this model: {with_interval(v, 'fairness')} ({level} confidence interval from "
        f"the group counts); test fairness {with_interval(scores['test'], 'fairness')} "
        f"(test: {counts_text(task, y_test, sensitive_test, held=held_out_words(settings))}).",
        f"Fairness rule: {settings.rule.describe()} (the gate and the monitor apply it to this version unless "
        "told otherwise).",
        *chosen_notes,
        *[f"{note.removeprefix('note: ')}: the validation figure did not hold on the test rows."
          for note in outside_notes({"This model": scores})],
        f"Selection: {describe(chosen.pick, study)}.",
        f"Scores of the models refit on all training rows (value [{level} interval]; test rows decided as served):",
        "",
        "| | validation accuracy | validation fairness | test accuracy | test fairness |",
        "|---|---|---|---|---|",
        row("this model", chosen.pick.trial, scores),
        row("most accurate fit" if settings.min_fairness is None else "most accurate among fits meeting the floor",
            chosen.accurate.trial, chosen.accurate_scores),
        "",
        f"Serves the decision's class label per row (what `mlflow.models.evaluate` reads); with params "
        f"`{{\"answer\": \"scores\"}}` (as `fairops serve` answers) `{_score_column(chosen.model)}`, `positive_class` "
        f"and `decision` (1 above {'its group' if settings.decision == 'per-group' else 'the'} "
        f"{threshold_origin(task)}"
        f"{'; the groups columns are required inputs' if settings.decision == 'per-group' else ''}); rows that "
        "break the input schema get HTTP 400 with the reason. The model card's `served_answer` says what each "
        "column holds and where the threshold is.",
    ])


def _score_column(model) -> str:
    """The score column the model's scores answer holds (``probability``, or a reduction's ``chance_positive``)."""
    from ...mlflow.answer import answer_columns

    return next(iter(answer_columns(model)))


def record_rows(settings, objective, data, registered) -> None:
    """Keep with the version the hashes of the rows it was trained or validated on, and of its test rows, each row
    known by the served model's input columns, the sensitive columns and its label
    (:mod:`fairops.registry._row_record`)."""
    from mlflow.tracking import MlflowClient

    from ...registry._row_record import RecordColumns, log_rows, served_input_columns

    name, version = settings.model_name, str(registered.version)
    columns = RecordColumns(inputs=served_input_columns(name, version, settings.tracking_uri),
                            sensitive=tuple(objective.task.sensitive), target=settings.target or "label")
    hashes = columns.hashes(data.X, data.y, data.sensitive)
    seen = np.concatenate([objective.rows(part)[0].index.to_numpy() for part in ("train", "validation")])
    held_out = objective.rows("test")[0].index.to_numpy()
    log_rows(MlflowClient(settings.tracking_uri), name, version, columns=columns, seen=hashes[seen],
             held_out=hashes[held_out], tracking_uri=settings.tracking_uri)


def served_decision_of(objective, model, X_train, sensitive_train):
    """What the registered model decides (:func:`~fairops.models._packaging.served_decision`): the rule set on
    the validation rows and the task's positive class."""
    from ...models._packaging import served_decision

    return served_decision(objective.decision_rule(model), objective.task.positive or "label 1", X_train,
                           sensitive_train)
