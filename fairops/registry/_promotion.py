"""The fairness gate before promotion: a candidate version replaces ``@champion`` only if it passes.

:func:`promote` scores the candidate (``@challenger`` by default) and the champion on the same labelled
rows through ``mlflow.models.evaluate(..., evaluators="fairops")``, each in a child run of one
``promotion`` run, each row decided as the model serves it (its ``decision`` answer: the rule set on its
validation rows when it was registered; a version without that answer, at the task's target on these rows
as its ``fairops.decision`` says), so the gate shows the figures tuning showed on the same rows and the
monitor shows. It decides with ``mlflow.validate_evaluation_results`` over these checks, judged by one
:class:`~fairops.metrics.FairnessRule` (by default the one the candidate was registered under: the
four-fifths line 0.8 and 95% intervals):

- ``fairness_upper >= line``: the candidate's fairness is not below the rule's line beyond noise, i.e. the
  upper bound of its interval at the rule's level reaches it; a model the rows show to be unfair is refused,
  one they cannot judge is not;
- ``fairness >= min_fairness`` and ``fairness_lower >= min_fairness`` (no floor by default): the
  candidate's fairness ratio, and the lower bound of its interval, reach the floor;
- ``fairness_shortfall <= 0``: the champion's lower bound minus the candidate's upper bound; positive
  only when the candidate's fairness is below the champion's beyond noise (the intervals do not overlap);
- ``accuracy_drop <= max_accuracy_drop``: the champion's accuracy minus the candidate's.

The rows are read as the served models read them (:mod:`.served_rows`): each model's input columns by name
(the others listed once and ignored), every row through the model's own input checks, so a row a server would
refuse is refused here by its row, never scored. Rows either model was trained or validated on (by each
version's row record, :mod:`.row_record`, which ``fairops tune`` keeps with the versions it registers) are left
out of the gate, and the verdict says how many; a version without a sound record is refused by name unless
``row_record=False`` (then the verdict says the overlap went unchecked).

The verdict is recorded first (the promotion run's metrics and tags, then ``fairops.gate = passed |
refused`` with the reasons on the candidate version) and only then does ``@champion`` move, so a crash
leaves the old champion. One promotion or registration of a model runs at a time (:mod:`.registry_lock`),
so two at once leave one winner, and a refused version is never pointed at. A candidate that already is the
champion changes nothing.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..metrics import FairnessRule
from ._fresh_rows import gate_fresh_rows
from ._gate_figures import LABEL, figure_lines
from ._registration import _alias_holder
from ._registry_lock import registry_lock
from ._served_rows import check_gate_rows, extra_columns_line, with_groups
from ._tracking_uri import tracking_uri
from ._version_record import read_record

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

    from .._typing import ArrayLike
    from ..metrics import Task

CHAMPION, CHALLENGER = "champion", "challenger"
GATE_TAG = "fairops.gate"
_FAILED_METRIC = re.compile(r"Metric (\w+) ")


@dataclass
class Verdict:
    """What :func:`promote` decided: ``passed``, whether ``@champion`` ``moved``, and why not.

    Parameters
    ----------
    name : str
        The registered model.
    candidate : str
        The candidate version.
    champion : str or None
        The champion's version before the gate (None: there was none).
    passed, moved : bool
        Whether the candidate passed, and whether ``@champion`` moved to it.
    reasons : list of str, default=[]
        Why it was refused, one per failing check.
    gate : dict, default={}
        The gate's metrics.
    scores : dict, default={}
        The evaluations of the candidate (and the champion).
    run_id : str or None, default=None
        The promotion run.
    figures : list of str, default=[]
        Both models' figures on the gate's rows, the counts behind the ratio and the rule applied, as lines.
    """

    name: str
    candidate: str
    champion: str | None
    passed: bool
    moved: bool
    reasons: list = field(default_factory=list)
    gate: dict = field(default_factory=dict)
    scores: dict = field(default_factory=dict)
    run_id: str | None = None
    #: both models' figures on the gate's rows, the counts behind the ratio and the rule applied, as lines
    figures: list = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when passed (moved, or already the champion), 3 when refused."""
        return 0 if self.passed else 3

    def text(self) -> str:
        """The verdict in lines, one per failing check.

        Returns
        -------
        str
            What passed or was refused, the figures, and the reasons.
        """
        if self.passed and not self.moved:
            return f"{self.name} version {self.candidate} already is @champion: nothing changes"
        if self.passed:
            before = f"version {self.champion}" if self.champion else "no champion"
            return "\n".join([f"passed: {self.name}@champion moved to version {self.candidate} (was {before})",
                              *self.figures])
        lines = [f"refused: {self.name} version {self.candidate} stays out; @champion stays version {self.champion}",
                 *self.figures]
        return "\n".join(lines + [f"  refused because {reason}" for reason in self.reasons])


def _resolve(client, name: str, candidate) -> str:
    text = str(candidate)
    if text.startswith("@"):
        version = _alias_holder(client, name, text[1:])
        if version is None:
            raise InputError(f"candidate {text!r}: registered model {name!r} has no alias {text[1:]!r}")
        return version
    if not text.isdigit():
        raise InputError(f"candidate must be a version number or '@alias', got {candidate!r}")
    client.get_model_version(name, text)  # refuses an unknown version
    return text


def _answers_decisions(model) -> bool:
    """Whether a loaded model answers its own ``decision`` (what ``fairops tune`` registers).

    The signature describes the default answer, a label; the scores answer's columns are in the metadata."""
    from ..mlflow.classifier import DECISION_OUTPUT

    metadata = getattr(getattr(model, "metadata", None), "metadata", None) or {}
    return DECISION_OUTPUT in {column for column, _ in metadata.get("fairops_scores_output", [])}


def _load_models(name: str, versions: list, uri) -> dict:
    """Version -> the model loaded by fairops' loader (given the URI, MLflow would import MLmodel's
    loader_module before any check)."""
    from ..mlflow.loader import load_model

    with tracking_uri(uri):
        return {version: load_model(f"models:/{name}/{version}") for version in versions}


def _evaluate(model, version: str, role: str, frame, config: dict) -> dict:
    import mlflow

    if _answers_decisions(model):
        config = {**config, "decision": "served"}
    with mlflow.start_run(nested=True, run_name=f"{role}: version {version}", tags={"fairops.role": role}):
        result = mlflow.models.evaluate(model, frame, targets=LABEL,
                                        model_type="classifier", evaluators="fairops",
                                        evaluator_config=config)
    return {key: float(value) for key, value in result.metrics.items()}


def gate_checks(task, candidate: dict, champion: dict | None, *, min_fairness=None, max_accuracy_drop=None,
                fairness_line=None):
    """``(gate metrics, MetricThresholds)`` for the candidate's and champion's evaluator metrics.

    >>> from fairops.metrics import Task
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    >>> scores = {"fairops_precision": 0.8, "fairops_tpr_ratio": 0.9, "fairops_tpr_ratio_lower": 0.7,
    ...           "fairops_tpr_ratio_upper": 1.0}
    >>> metrics, thresholds = gate_checks(task, scores, scores, min_fairness=0.8, max_accuracy_drop=0.01,
    ...                                   fairness_line=0.8)
    >>> sorted(thresholds), metrics["fairness_shortfall"]
    (['accuracy_drop', 'fairness', 'fairness_lower', 'fairness_shortfall', 'fairness_upper'], -0.30000000000000004)
    """
    from mlflow.models import MetricThreshold

    accuracy, fairness = f"fairops_{task.metric}", f"fairops_{task.fairness}_ratio"
    metrics = {"fairness": candidate[fairness], "fairness_lower": candidate[f"{fairness}_lower"],
               "fairness_upper": candidate[f"{fairness}_upper"]}
    thresholds = {}
    if fairness_line:
        thresholds["fairness_upper"] = MetricThreshold(threshold=float(fairness_line), greater_is_better=True)
    if min_fairness is not None:
        for key in ("fairness", "fairness_lower"):
            thresholds[key] = MetricThreshold(threshold=float(min_fairness), greater_is_better=True)
    if champion is not None:
        metrics["fairness_shortfall"] = champion[f"{fairness}_lower"] - candidate[f"{fairness}_upper"]
        thresholds["fairness_shortfall"] = MetricThreshold(threshold=0.0, greater_is_better=False)
        if max_accuracy_drop is not None:
            metrics["accuracy_drop"] = champion[accuracy] - candidate[accuracy]
            thresholds["accuracy_drop"] = MetricThreshold(threshold=float(max_accuracy_drop),
                                                          greater_is_better=False)
    return metrics, thresholds


def _decide(metrics: dict, thresholds: dict, task=None) -> list[str]:
    """The failing checks as lines (empty when ``mlflow.validate_evaluation_results`` passes), each naming
    the check, its figure and its bound in words."""
    import mlflow
    from mlflow.models.evaluation import EvaluationResult
    from mlflow.models.evaluation.validation import ModelValidationFailedException

    try:
        mlflow.validate_evaluation_results(thresholds, EvaluationResult(metrics=metrics, artifacts={}))
    except ModelValidationFailedException as failure:
        lines = [line for line in failure.message.splitlines() if line.strip()]
        named = [(_FAILED_METRIC.search(line), line) for line in lines]
        return [_reason(match[1], metrics, thresholds, task) if match and match[1] in thresholds else line
                for match, line in named]
    nan = [key for key in thresholds if not np.isfinite(metrics[key])]
    return [f"{key}: undefined on these rows (a group without the rate's rows)" for key in nan]


def _reason(key: str, metrics: dict, thresholds: dict, task) -> str:
    """One failing check in words.

    >>> from mlflow.models import MetricThreshold
    >>> bound = MetricThreshold(threshold=0.02, greater_is_better=False)
    >>> print(_reason("accuracy_drop", {"accuracy_drop": 0.034}, {"accuracy_drop": bound}, None))
    accuracy_drop: its accuracy is 0.0340 below the champion's, more than the 0.0200 allowed
    """
    value, bound = metrics[key], thresholds[key].threshold
    accuracy = "accuracy" if task is None else task.metric
    return key + ": " + {
        "fairness": f"its fairness ratio {value:.4f} is below the floor {bound:.4f}",
        "fairness_lower": f"the lower bound of its fairness interval, {value:.4f}, is below the floor {bound:.4f}",
        "fairness_upper": f"its fairness ratio is below {bound:.4f} beyond noise (the upper bound of its interval "
                          f"is {value:.4f})",
        "fairness_shortfall": f"its fairness is below the champion's beyond noise (its interval's upper bound is "
                              f"{value:.4f} under the champion's lower bound)",
        "accuracy_drop": f"its {accuracy} is {value:.4f} below the champion's, more than the {bound:.4f} allowed",
    }.get(key, f"{value:.4f} against the bound {bound:.4f}")


def _record(client, name: str, version: str, run_id: str, reasons: list, payload: dict) -> None:
    import mlflow

    verdict = "refused" if reasons else "passed"
    mlflow.set_tags({GATE_TAG: verdict, "fairops.candidate_version": version,
                     "fairops.champion_version": str(payload["champion"])})
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "gate.json")
        with open(path, "w") as handle:
            json.dump(payload, handle, indent=1, default=str)
        mlflow.log_artifact(path)
    client.set_model_version_tag(name, version, GATE_TAG, verdict)
    client.set_model_version_tag(name, version, "fairops.gate_reasons", "\n".join(reasons) or "every check passed")
    client.set_model_version_tag(name, version, "fairops.gate_run_id", run_id)


def _frame(X, y, sensitive):
    import pandas as pd

    frame = pd.DataFrame(X).reset_index(drop=True).copy()
    if LABEL in frame.columns:
        raise InputError(f"X must not hold a column named {LABEL!r} (the label travels in it)")
    labels = np.asarray(y)
    if len(labels) != len(frame) or not set(np.unique(labels).tolist()) <= {0, 1}:
        raise InputError(f"y must hold one 0/1 label per row of X ({len(frame)} rows)")
    frame[LABEL] = labels.astype(int)
    groups = pd.DataFrame(sensitive).reset_index(drop=True)
    return frame, {str(c): groups[c].astype(str).to_numpy() for c in groups.columns}


def promote(name: str, X: pd.DataFrame, y: ArrayLike, sensitive: pd.DataFrame | Mapping[str, ArrayLike], *,
            candidate: str = "@challenger", task: Task | None = None, min_fairness: float | None = None,
            max_accuracy_drop: float | None = 0.02, fairness_line: float | None = None, level: float | None = None,
            tracking_uri: str | None = None, experiment_id: str | None = None, lock_wait: float = 600.0,
            row_record: bool = True,
            source: str = "the gate's rows") -> Verdict:
    """Gate ``candidate`` against ``@champion`` on rows ``X`` with labels ``y`` (0/1) and ``sensitive`` columns.

    ``task`` (a :class:`~fairops.metrics.Task`) defaults to the one the candidate was registered with;
    the evaluations use its accuracy metric, target and fairness ratio. Rows either version was trained or
    validated on are left out (an error when none is left). See the module docstring.

    Parameters
    ----------
    name : str
        The registered model.
    X : DataFrame
        Labelled rows to gate on.
    y : array-like of shape (n_samples,)
        Their 0/1 labels.
    sensitive : DataFrame or dict
        Their sensitive columns.
    candidate : str, default="@challenger"
        A version number or ``"@alias"``.
    task : Task or None, default=None
        The task (None: the one the candidate was registered with).
    min_fairness : float or None, default=None
        A floor for the candidate's fairness and its lower bound.
    max_accuracy_drop : float or None, default=0.02
        The most accuracy the candidate may lose against the champion.
    fairness_line : float or None, default=None
        Refuses a candidate whose fairness interval lies below it (0: off); None: the line of the
        :class:`~fairops.metrics.FairnessRule` the candidate was registered under (0.8, the four-fifths line,
        for a version that records none).
    level : float or None, default=None
        The intervals' confidence level; None: the candidate's rule's (0.95 for a version that records none).
    tracking_uri : str or None, default=None
        MLflow tracking URI (None: MLflow's default).
    experiment_id : str or None, default=None
        Experiment of the promotion run (None: the candidate's run's).
    lock_wait : float, default=600.0
        Seconds to wait for the model's registry lock.
    row_record : bool, default=True
        Leave out the rows each version's row record says it saw, refusing a version without a sound one;
        False: score every row, the verdict saying the overlap was not checked.
    source : str, default="the gate's rows"
        How messages name the rows (e.g. the file's name); ``X``'s index names each row in it.

    Returns
    -------
    Verdict
        The decision, recorded before ``@champion`` moves.
    """
    from mlflow.tracking import MlflowClient

    FairnessRule().replaced(line=fairness_line, level=level)  # refuses a line or level out of range, first
    for label, bound in (("min_fairness", min_fairness), ("max_accuracy_drop", max_accuracy_drop)):
        if bound is not None and not (isinstance(bound, (int, float)) and 0 <= bound <= 1):
            raise InputError(f"{label} must be a number in [0, 1] or None, got {bound!r}")
    import pandas as pd

    X = with_groups(X, sensitive)  # a blind model's decision reads its groups' columns, given apart from X
    frame, groups = _frame(X, y, sensitive)
    client = MlflowClient(tracking_uri)
    with registry_lock(client, name, wait=lock_wait):
        version = _resolve(client, name, candidate)
        champion = _alias_holder(client, name, CHAMPION)
        if version == champion:
            return Verdict(name, version, champion, passed=True, moved=False)
        versions = [version] + ([champion] if champion else [])
        record = read_record(client, name, version)
        task = task or record.task
        models = _load_models(name, versions, tracking_uri)
        ignored = check_gate_rows(models, pd.DataFrame(X), pd.DataFrame(sensitive), task, source)
        fresh = gate_fresh_rows(client, name, models, X, y, sensitive, checked=row_record, tracking_uri=tracking_uri)
        positions = pd.DataFrame(X).index.to_numpy()
        frame = frame[fresh.keep].reset_index(drop=True)
        groups = {column: values[fresh.keep] for column, values in groups.items()}
        rule = record.rule.replaced(line=fairness_line, level=level)
        config = {"sensitive_features": {c: groups[c] for c in task.sensitive}, "target": task.threshold,
                  "decision": record.decision, "interval_level": rule.level}
        notes = fresh.lines(positions) + ([extra_columns_line(ignored, source)] if ignored else [])
        verdict = _gate(client, name, models, version, champion, frame, config, task,
                        experiment_id or _experiment_of(client, name, version), fresh, notes,
                        min_fairness=min_fairness, max_accuracy_drop=max_accuracy_drop, rule=rule, uri=tracking_uri)
        if verdict.passed:
            client.set_registered_model_alias(name, CHAMPION, version)
        return verdict


def _experiment_of(client, name: str, version: str):
    """The experiment of the version's run (None for a version without one)."""
    run_of = client.get_model_version(name, version).run_id
    return client.get_run(run_of).info.experiment_id if run_of else None


def _gate(client, name, models, version, champion, frame, config, task, experiment, fresh, notes, *, uri, rule,
          **bounds) -> Verdict:
    import mlflow

    with tracking_uri(uri):
        title = f"promote {name} v{version}" + (f" over v{champion}" if champion else "")
        with mlflow.start_run(experiment_id=experiment, run_name=title, tags={"fairops.role": "promotion"}) as run:
            scores = {"candidate": _evaluate(models[version], version, "candidate", frame, config)}
            if champion is not None:
                own = client.get_model_version(name, champion).tags.get("fairops.decision", "single")
                scores["champion"] = _evaluate(models[champion], champion, "champion", frame,
                                               {**config, "decision": own})
            metrics, thresholds = gate_checks(task, scores["candidate"], scores.get("champion"),
                                              fairness_line=rule.line or None, **bounds)
            reasons = _decide(metrics, thresholds, task)
            figures = figure_lines(task, frame, config["sensitive_features"], scores, rule=rule, **bounds) + notes
            mlflow.log_metrics({f"{role}.{key}": value for role, values in scores.items()
                                for key, value in values.items() if np.isfinite(value)})
            mlflow.log_metrics({f"gate.{key}": value for key, value in metrics.items() if np.isfinite(value)})
            mlflow.set_tags(rule.tags())
            payload = {"name": name, "candidate": version, "champion": champion, "task": str(task),
                       "rule": {"line": rule.line, "level": rule.level},
                       "rows": len(frame), "rows_left_out": fresh.left_out, "rows_seen_by": fresh.seen_by,
                       "row_records_checked": fresh.checked,
                       "checks": {k: str(v) for k, v in thresholds.items()},
                       "gate": metrics, "reasons": reasons, "scores": scores}
            _record(client, name, version, run.info.run_id, reasons, payload)
    return Verdict(name, version, champion, not reasons, not reasons, reasons, metrics, scores, run.info.run_id,
                   figures)
