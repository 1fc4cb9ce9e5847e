"""MLflow model evaluator ``fairops``: fairness at a target threshold for named sensitive columns.

Registered through the ``mlflow.model_evaluator`` entry point, so that::

    mlflow.models.evaluate(model, data, targets="y", model_type="classifier",
                           evaluators=["default", "fairops"],
                           evaluator_config={"fairops": {"sensitive_features": ["sex"]}})

logs, next to the default evaluator's metrics:

- ``fairops_tpr_ratio``, ``fairops_fpr_ratio``, ``fairops_ppr_ratio`` (min over the columns) and
  the same per column (``fairops_tpr_ratio_sex``): lowest group rate / highest at the threshold
  reached by the target (default TPR 0.5, ties broken with ``seed``);
- ``fairops_tpr_ratio_lower`` / ``_upper`` (and the same for FPR and positive rate): a confidence
  interval for the ratio at ``interval_level`` (default 0.95) from the group counts, the one every fairops
  surface shows (:func:`fairops.metrics._figures.fairness_ratios`: exact, the level split over the columns);
- ``fairops_auc_s`` (and per column), ``fairops_auc_y``, ``fairops_precision``, ``fairops_recall`` (each with
  ``_lower`` / ``_upper``, Wilson's interval at the same level) and ``fairops_positive_share``;
- artifacts ``fairops_group_rates.csv`` (counts and rates per group) and ``fairops_group_roc.png``
  (one ROC curve per group, the operating point marked).

A group whose rate does not exist among the evaluation rows (a TPR with no positive rows, as COMPAS's
'Native American' often has in a sample; an FPR with no negative rows) is left out of that rate's ratio
and interval, as tuning leaves it out: a warning names it, the run's tag ``fairops.left_out_groups``
records it as JSON (``{"tpr": {"race": ["Native American"]}}``) and the rates table keeps its row. With
fewer than two groups left the ratio is refused, naming them.

Beside MLflow's ``"default"`` evaluator in one call, on any model fairops registers: its pyfunc answers class
labels (as MLflow's own classifier flavors do), which MLflow's classifier evaluator reads, and this evaluator
reads the model's scores itself. Rows already scored evaluate as data: the labels as ``predictions``, the
probabilities named by ``scores``. (MLflow 3.17's SHAP step, part of ``"default"``, raises on pandas ``str`` and
``category`` columns; with such inputs pass ``evaluator_config={"default": {"log_model_explainability": False},
...}``.)

Config keys: ``sensitive_features`` (a column name or list of columns of ``data``, or
``{name: values}`` when the sensitive columns are not model inputs, e.g. with ``feature_names=``),
``target`` (``{"tpr": t}``, ``{"fpr": f}``, ``{"top_k": k}``, or ``{"threshold": c}``: positive at a score
of ``c`` or more, a fixed cut; each key and value checked by name), ``pos_label`` (default 1),
``seed`` (default 0), ``interval_level`` (default 0.95), ``scores`` (a column of ``data`` holding the
probability of ``pos_label``, read instead of the model's, e.g. with no model), ``groups`` (``"lowest"``, the
default: the overall ratios are the lowest of the columns'; ``"intersectional"``: they are the ratios over the
columns' intersections, e.g. female x Black, also logged as ``fairops_tpr_ratio_sex_x_race``).
``decision`` (``"single"``, the default: one threshold for every row; ``"per-group"``: one threshold per
group of the sensitive columns' combinations, each at the target, as ``fairops tune --decision
per-group`` decides; ``"served"``: the model's own scores answer, its ``decision`` column and the score beside
it (``probability``, or a reduction's ``chance_positive``), as a fairops classifier registered by ``fairops
tune`` serves them at the rule set on its validation rows: the promotion gate's mode, so the gate shows the
figures tuning and the monitor show). The evaluator opts in only when ``sensitive_features`` is in its config.
Scores of a fairops classifier or SCAFF model come from its own ``predict`` (its scores answer,
``params={"answer": "scores"}``), as served: the rows go through its input checks (its input schema, the
groups of its decision, a finite probability), so a row a server would refuse is refused, naming its row, and
never scored. Other models' scores come from ``predict_proba`` (column of ``pos_label``) on the columns it was
fitted on.

>>> FairnessEvaluator.can_evaluate(model_type="classifier", evaluator_config={"sensitive_features": "sex"})
True
>>> FairnessEvaluator.can_evaluate(model_type="classifier", evaluator_config={})
False
"""

from __future__ import annotations

import json
import logging
import os
import tempfile

import numpy as np
import pandas as pd
from mlflow.models.evaluation import EvaluationResult, ModelEvaluator
from mlflow.models.evaluation.artifacts import CsvEvaluationArtifact, ImageEvaluationArtifact

from fairops.metrics import Task, auc_s, auc_y, binarize, group_decisions, group_rates, precision, recall
from fairops.metrics._decisions import check_decision
from fairops.metrics._figures import fairness_ratios
from fairops.metrics._intervals import LEVEL, wilson_interval
from fairops.metrics._thresholds import checked_target

RATES = ("tpr", "fpr", "ppr")
CONFIG_KEYS = {"sensitive_features", "target", "pos_label", "seed", "interval_level", "groups", "decision", "scores"}
SERVED = "served"  # the decision mode that scores the model's own answer
GROUPINGS = ("lowest", "intersectional")
RATES_FILE = "fairops_group_rates.csv"
ROC_FILE = "fairops_group_roc.png"
LEFT_OUT_TAG = "fairops.left_out_groups"
#: The pyfunc loaders of fairops' classifier flavors: their rows are scored through the served model's checks.
FAIROPS_LOADERS = ("fairops.mlflow.classifier", "fairops.mlflow.scaff")
_BASE_OF = {"tpr": "positive rows", "fpr": "negative rows", "ppr": "rows"}

_logger = logging.getLogger(__name__)


def _sensitive_frame(config: dict, features: pd.DataFrame) -> pd.DataFrame:
    """The sensitive columns as strings: named columns of the data, or given as ``{name: values}``."""
    given = config.get("sensitive_features")
    if isinstance(given, dict):
        if not given:
            raise ValueError("evaluator_config['sensitive_features'] names no column; give one or more column names")
        frame = pd.DataFrame({str(name): np.asarray(values) for name, values in given.items()})
        if len(frame) != len(features):
            raise ValueError(f"evaluator_config['sensitive_features'] has {len(frame)} rows, the data {len(features)}")
        return frame.astype(str)
    return features[_sensitive_names(config, features.columns)].astype(str)


def _sensitive_names(config: dict, columns) -> list[str]:
    names = config.get("sensitive_features")
    if isinstance(names, str):
        names = [names]
    if not names:
        raise ValueError("evaluator_config['sensitive_features'] names no column; "
                         "give one or more column names of data")
    names = list(names)
    unknown = [name for name in names if name not in columns]
    if unknown:
        raise ValueError(
            f"evaluator_config['sensitive_features'] names unknown column(s) {unknown}; data has {list(columns)}"
        )
    return names


def _binary_labels(labels, pos_label) -> np.ndarray:
    if labels is None:
        raise ValueError("the fairops evaluator needs targets (a binary label column)")
    labels = np.asarray(labels)
    values = pd.unique(labels)
    if len(values) != 2 or pos_label not in set(values.tolist()):
        raise ValueError(
            f"the fairops evaluator needs a binary target holding pos_label={pos_label!r}; "
            f"got {len(values)} distinct value(s): {sorted(map(str, values))[:10]}"
        )
    return (labels == pos_label).astype(np.int8)


def _input_columns(model, features: pd.DataFrame) -> pd.DataFrame:
    schema = model.metadata.get_input_schema() if getattr(model, "metadata", None) else None
    if schema is None or not schema.has_input_names():
        return features
    return features[[name for name in schema.input_names() if name in features.columns]]


def _given_scores(column, features: pd.DataFrame) -> np.ndarray:
    if column not in features.columns:
        raise ValueError(f"evaluator_config['scores'] names {column!r}, which is not a column of data; "
                         f"it has {list(features.columns)}")
    scores = pd.to_numeric(features[column], errors="coerce").to_numpy(dtype=np.float64)
    if not np.all((scores >= 0) & (scores <= 1)):
        raise ValueError(f"evaluator_config['scores']: column {column!r} must hold probabilities in [0, 1]")
    return scores


def _served_answer(model, features: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(score, decision)`` as a fairops classifier registered with its decision answers them (the score is
    ``probability``, or a reduction's ``chance_positive``), every row through the model's own input checks."""
    from fairops.mlflow.answer import DECISION_OUTPUT, SCORE_OUTPUTS, score_of
    from fairops.registry._served_rows import model_inputs, served_output, take_inputs

    if model is None:
        raise ValueError("evaluator_config['decision'] = 'served' scores a model's own answer: give the model")
    reads = model_inputs(model)
    inputs, _ = take_inputs(reads, features, "the evaluation data")
    output = served_output(model, inputs, "the evaluation data", reads.schema)
    if not isinstance(output, pd.DataFrame) or DECISION_OUTPUT not in output.columns \
            or not set(SCORE_OUTPUTS) & set(output.columns):
        raise ValueError(f"evaluator_config['decision'] = 'served' needs a model answering {SCORE_OUTPUTS[0]!r} "
                         f"and {DECISION_OUTPUT!r} (a fairops classifier registered with its decision, as fairops "
                         "tune registers it)")
    return np.asarray(score_of(output), dtype=np.float64), output[DECISION_OUTPUT].to_numpy().astype(np.int8)


def _served_scores(model, features: pd.DataFrame, pos_label) -> np.ndarray:
    """The probability of ``pos_label`` as the served model answers it, every row through its own input checks
    (a row it refuses is refused here, by its row, never scored)."""
    from fairops.registry._served_rows import model_inputs, probability, served_output, take_inputs

    reads = model_inputs(model)
    inputs, _ = take_inputs(reads, features, "the evaluation data")
    answered = probability(served_output(model, inputs, "the evaluation data", reads.schema))
    raw = model.get_raw_model()
    classes = [value.item() if hasattr(value, "item") else value for value in getattr(raw, "classes_", [0, 1])]
    positive = getattr(model, "fairops_positive_class", None)
    positive = classes[-1] if positive is None else positive
    if pos_label == positive or pos_label not in classes:
        return answered
    return 1.0 - answered  # the other of the model's two classes


def _scores(model, features: pd.DataFrame, config: dict) -> np.ndarray:
    if config.get("scores") is not None:
        return _given_scores(config["scores"], features)
    if model is None:
        raise ValueError("the fairops evaluator needs a model to score the rows, or evaluator_config['scores'] "
                         "naming the column of data that holds them (evaluating scored data without a model)")
    pos_label = config.get("pos_label", 1)
    loader = getattr(getattr(model, "metadata", None), "flavors", {}).get("python_function", {}).get("loader_module")
    if loader in FAIROPS_LOADERS:
        return _served_scores(model, features, pos_label)
    raw = model.get_raw_model() if hasattr(model, "get_raw_model") else model
    if not hasattr(raw, "predict_proba"):
        raise ValueError(
            f"the fairops evaluator needs a score: the model ({type(raw).__name__}, loader {loader}) "
            "has no predict_proba"
        )
    names = getattr(raw, "feature_names_in_", None)  # what the model reads (a decision may read more columns)
    inputs = features[[str(n) for n in names]] if names is not None and set(map(str, names)) <= set(features.columns) \
        else _input_columns(model, features)
    probabilities = np.asarray(raw.predict_proba(inputs), dtype=np.float64)
    classes = list(getattr(raw, "classes_", [0, 1]))
    column = classes.index(pos_label) if pos_label in classes else probabilities.shape[1] - 1
    return probabilities[:, column]


def _undefined_ratio(ratio, rate: str, name: str, left_out: dict) -> None:
    """Refuse a ratio with fewer than two groups holding its rate, naming the groups left out."""
    if np.isnan(ratio.value):
        groups = left_out.get(rate, {}).get(name, [])
        without = f"; group(s) {groups} have none among the evaluation rows" if groups else ""
        raise ValueError(f"the {rate} ratio of {name!r} needs at least two groups with {_BASE_OF[rate]}{without}")



def _say_left_out(left_out: dict) -> None:
    for rate, by_attribute in left_out.items():
        for name, groups in by_attribute.items():
            _logger.warning("fairops evaluator: %s is undefined for group(s) %s of %r (no %s among the evaluation "
                            "rows); the %s ratio and its interval leave them out, as tuning does", rate, groups, name,
                            _BASE_OF[rate], rate)


def _roc_picture(path: str, y: np.ndarray, score: np.ndarray, y_pred: np.ndarray, sensitive: pd.DataFrame):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import roc_curve

    names = list(sensitive.columns)
    figure, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 4), squeeze=False)
    for axis, name in zip(axes[0], names):
        for group in sorted(pd.unique(sensitive[name]), key=str):
            rows = (sensitive[name] == group).to_numpy()
            if len(np.unique(y[rows])) < 2:
                continue
            fpr, tpr, _ = roc_curve(y[rows], score[rows])
            line = axis.plot(fpr, tpr, label=f"{group}")[0]
            positives, negatives = y[rows] == 1, y[rows] == 0
            axis.plot(y_pred[rows][negatives].mean(), y_pred[rows][positives].mean(), "o", color=line.get_color())
        axis.plot([0, 1], [0, 1], ":", color="grey")
        axis.set(title=f"ROC per group of {name}", xlabel="false-positive rate", ylabel="true-positive rate")
        axis.legend(title="group (dot: operating point)", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


class FairnessEvaluator(ModelEvaluator):
    """Fairness ratios, AUC_S and per-group rates for the sensitive columns named in the config."""

    @classmethod
    def can_evaluate(cls, *, model_type, evaluator_config, **kwargs) -> bool:
        return model_type == "classifier" and "sensitive_features" in (evaluator_config or {})

    def compute(self, *, features: pd.DataFrame, labels, score, config: dict, decided=None):
        """``(metrics, rate_table, y, y_pred, sensitive, left_out)`` without logging anything; ``left_out`` is
        ``{rate: {attribute: [groups]}}``, the groups each rate's ratio leaves out; ``decided``: the 0/1
        decisions of ``decision="served"``."""
        unknown = sorted(set(config) - CONFIG_KEYS)
        if unknown:
            raise ValueError(f"unknown fairops evaluator_config key(s) {unknown}; known: {sorted(CONFIG_KEYS)}")
        sensitive = _sensitive_frame(config, features)
        names = list(sensitive.columns)
        y = _binary_labels(labels, config.get("pos_label", 1))
        try:
            target = checked_target(config.get("target", {"tpr": 0.5}))
        except ValueError as error:
            raise ValueError(f"evaluator_config['target']: {error}") from None
        seed = int(config.get("seed", 0))
        if config.get("decision") == SERVED:
            if decided is None:
                raise ValueError("evaluator_config['decision'] = 'served' needs the model's decisions")
            y_pred = np.asarray(decided, dtype=np.int8)
        elif check_decision(config.get("decision", "single")) == "per-group":
            y_pred = group_decisions(score, y, sensitive, seed=seed, **target)
        else:
            y_pred = binarize(score, y, seed=seed, **target)
        level = float(config.get("interval_level", LEVEL))
        metrics = {"fairops_auc_y": auc_y(y, score), "fairops_auc_s": auc_s(score, sensitive),
                   "fairops_precision": precision(y, y_pred), "fairops_recall": recall(y, y_pred),
                   "fairops_positive_share": float(y_pred.mean())}
        hits = int((y & y_pred).sum())
        for name, base in (("precision", int(y_pred.sum())), ("recall", int(y.sum()))):
            metrics[f"fairops_{name}_lower"], metrics[f"fairops_{name}_upper"] = wilson_interval(hits, base,
                                                                                                 level=level)
        grouping = config.get("groups", "lowest")
        if grouping not in GROUPINGS:
            raise ValueError(f"evaluator_config['groups'] must be one of {GROUPINGS}, got {grouping!r}")
        attributes = {name: sensitive[name] for name in names}
        combined = "_x_".join(names) if grouping == "intersectional" and len(names) > 1 else None
        if combined is not None:
            attributes[combined] = sensitive[names].astype(str).agg(" x ".join, axis=1)
        records, left_out = [], {}
        for name, columns in attributes.items():
            rates = group_rates(y, y_pred, columns)
            records.extend({**record, "attribute": name} for record in rates.to_records())
            metrics[f"fairops_auc_s_{name}"] = auc_s(score, columns)
            for rate in RATES:
                groups = [str(g) for g in rates.groups if g not in rates.defined(rate).groups]
                if groups:
                    left_out.setdefault(rate, {})[name] = groups
        columns = {name: sensitive[name].to_numpy() for name in names}
        for rate in RATES:
            # the figures every fairops surface shows (fairops.metrics._figures), for each rate in turn
            task = Task("precision", "tpr", 0.5, rate, tuple(names), groups=grouping)
            overall, by_attribute, _ = fairness_ratios(task, y, y_pred, columns, level=level)
            scored = {**by_attribute, **({combined: overall} if combined is not None else {})}
            for name, ratio in scored.items():
                _undefined_ratio(ratio, rate, name, left_out)
                metrics[f"fairops_{rate}_ratio_{name}"] = ratio.value
                metrics[f"fairops_{rate}_ratio_lower_{name}"] = ratio.lower
                metrics[f"fairops_{rate}_ratio_upper_{name}"] = ratio.upper
            metrics[f"fairops_{rate}_ratio"], metrics[f"fairops_{rate}_ratio_lower"], \
                metrics[f"fairops_{rate}_ratio_upper"] = overall.value, overall.lower, overall.upper
        return metrics, pd.DataFrame.from_records(records), y, y_pred, sensitive, left_out

    def evaluate(self, *, model_type, dataset, run_id, evaluator_config, model=None, extra_metrics=None,
                 custom_artifacts=None, predictions=None, **kwargs):
        from mlflow.entities import Metric
        from mlflow.tracking import MlflowClient

        config = dict(evaluator_config or {})
        features = dataset.features_data
        if not isinstance(features, pd.DataFrame):
            features = pd.DataFrame(features, columns=dataset.feature_names)
        _sensitive_frame(config, features)
        _binary_labels(dataset.labels_data, config.get("pos_label", 1))
        decided = None
        if config.get("decision") == SERVED:
            score, decided = _served_answer(model, features)
        else:
            score = _scores(model, features, config)
        metrics, table, y, y_pred, sensitive, left_out = self.compute(
            features=features, labels=dataset.labels_data, score=score, config=config, decided=decided
        )
        _say_left_out(left_out)
        client = MlflowClient()
        if left_out:
            client.set_tag(run_id, LEFT_OUT_TAG, json.dumps(left_out, sort_keys=True))
        stamp = int(pd.Timestamp.now().timestamp() * 1000)
        client.log_batch(run_id, metrics=[Metric(k, float(v), stamp, 0) for k, v in metrics.items()])
        artifact_uri = client.get_run(run_id).info.artifact_uri
        with tempfile.TemporaryDirectory() as folder:
            table.to_csv(os.path.join(folder, RATES_FILE), index=False)
            _roc_picture(os.path.join(folder, ROC_FILE), y, score, y_pred, sensitive)
            client.log_artifact(run_id, os.path.join(folder, RATES_FILE))
            client.log_artifact(run_id, os.path.join(folder, ROC_FILE))
        artifacts = {
            "fairops_group_rates": CsvEvaluationArtifact(uri=f"{artifact_uri}/{RATES_FILE}"),
            "fairops_group_roc": ImageEvaluationArtifact(uri=f"{artifact_uri}/{ROC_FILE}"),
        }
        return EvaluationResult(metrics=metrics, artifacts=artifacts, run_id=run_id)
