"""``fairops tune``: Fairband on a data set, every fit tracked in MLflow, the pick registered.

The job splits the data train / validation / test (stratified by label x group), gives each fit a
nested stratified slice of the training rows as its budget, tunes the paper's model families plus
the SCAFF forest and the bias reductions (so fair training competes with fair tuning), logs every fit as
a child run, then
refits the pick on all training rows, scores it on the test rows and registers it with an alias.

Storage is embedded by default: ``<project>/optuna.db`` and ``<project>/mlflow.db`` (SQLite). Give
``--storage postgresql+psycopg://...`` and ``--tracking-uri http://...`` and start the same command
on many machines: every worker joins one study and the Fairband schedule stays exact.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..datasets import LOADERS
from ..tracking.stores import storage_in, tracking_uri_in
from .options import refuse_options
from .progress import NO_PROGRESS_HELP, legend
from .driver import TuningJob
from .running import HEARTBEAT_SECONDS, quiet_libraries

METHODS = {"fb-auto": "FB-auto", "fb-bal": "FB-bal", "hb": "HB", "rs": "RS", "rs-bal": "RS-bal"}
SELECTIONS = ("robust", "paper")
SELECTION_HELP = ("robust (default): every fit gets at least 500 training rows and 50 positives, the full-budget "
                  "bracket starts with the library defaults (LightGBM, logistic regression), the fits are "
                  "ranked by lower confidence bounds, the best 3 and the most accurate fit are refit on all "
                  "training rows and the pick is chosen among the refits on cross-validated bounds; paper: the "
                  "paper's budget fractions, random configurations and argmax of alpha*accuracy + "
                  "(1-alpha)*fairness over the fits' values")
#: The ``--task`` help: its grammar and two examples.
TASK_HELP = ("with --data: METRIC@TARGET=VALUE,ratio=RATE, where METRIC is precision or recall, TARGET is tpr, "
             "fpr (a rate in [0, 1]) or top_k (a row count) setting the threshold on the validation rows, or "
             "threshold (a fixed probability cut-off in [0, 1]: positive at or above it on every row), and "
             "RATE is tpr, fpr or ppr (positive rate), whose lowest / highest ratio over the groups is the "
             "fairness, optionally followed by ',groups=lowest' (the default: the lowest of each sensitive "
             "column's ratio) or ',groups=intersectional' (one ratio over the columns' combined groups); "
             "e.g. 'precision@tpr=0.5,ratio=tpr' (the default: precision at 50%% TPR, equal "
             "opportunity), 'recall@fpr=0.05,ratio=fpr' (recall at 5%% FPR, predictive equality) or "
             "'precision@threshold=0.5,ratio=fpr' (precision of the decisions at probability >= 0.5)")
FAMILIES_HELP = ("comma-separated model families from logistic_regression, decision_tree, random_forest, "
                 "lightgbm, mlp (the paper's), scaff_forest (SCAFF's fair forest), exponentiated_gradient and "
                 "grid_search (bias reductions over a tree, a logistic regression or LightGBM, holding the task's "
                 "fairness ratio; they read the groups to fit, never to decide) (default: all eight; with "
                 "--blind all but scaff_forest)")


@dataclass
class TuneSettings:
    """Everything ``fairops tune`` needs; the CLI flags map one to one onto these fields."""

    dataset: str | None = "adult"
    data: str | None = None
    target: str | None = None
    sensitive: str | None = None
    task: str = "precision@tpr=0.5,ratio=tpr"
    method: str = "fb-auto"
    selection: str = "robust"
    alpha: float | None = None
    iterations: int = 1
    profile: str = "fast"
    families: list[str] | None = None
    max_train_rows: int | None = None
    storage: str | None = None
    tracking_uri: str | None = None
    project_dir: str = "fairops-project"
    study_name: str | None = None
    model_name: str | None = None
    n_jobs: int = 1
    seed: int = 0
    finalize: bool = True
    promote: bool = False
    progress: bool = True
    wait_timeout: float = 3600.0
    heartbeat: float = HEARTBEAT_SECONDS
    min_fairness: float | None = None
    ui_port: int = 5000
    positive: str | None = None
    decision: str = "single"
    blind: bool = False

    def __post_init__(self):
        from ..metrics.decisions import check_decision

        check_decision(self.decision)
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {sorted(METHODS)}, got {self.method!r}")
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {self.selection!r}")
        if self.alpha is not None and not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {self.alpha}")
        if self.alpha is not None and self.method.startswith("rs"):
            raise ValueError("--alpha applies to the Fairband methods (fb-auto, fb-bal, hb), not to random search")
        from ..fairband.schedule import check_iterations

        check_iterations(self.iterations)
        if self.n_jobs < 1:
            raise ValueError(f"n-jobs must be at least 1, got {self.n_jobs}")
        if not 1 <= self.ui_port <= 65534:
            raise ValueError(f"ui-port must be in [1, 65534] (the serve command takes the next), got {self.ui_port}")
        if (self.data is None) == (self.dataset is None):
            raise ValueError("give either --dataset NAME or --data FILE (with --target and --sensitive)")
        if self.data is not None and (not self.target or not self.sensitive):
            raise ValueError("--data needs --target COLUMN and --sensitive COLUMN[,COLUMN...]")
        if self.min_fairness is not None and not 0.0 <= self.min_fairness <= 1.0:
            raise ValueError(f"min-fairness must be in [0, 1], got {self.min_fairness}")
        if self.data is not None:
            from ..metrics import Task
            from ..metrics.decisions import check_per_group_target

            # an impossible task, or per-group decisions at a fixed threshold, is refused before any fit
            task = Task.from_string(self.task, sensitive=[self.sensitive])
            if self.decision == "per-group":
                check_per_group_target(task.target)

    @property
    def tuner(self) -> str:
        return METHODS[self.method]

    @property
    def source_name(self) -> str:
        return self.dataset if self.data is None else Path(self.data).stem

    def resolved(self) -> "TuneSettings":
        """A copy with the project folder created and default storage, tracking URI and names filled in."""
        project = Path(self.project_dir).resolve()
        needs_folder = self.storage is None or self.tracking_uri is None
        if needs_folder:
            project.mkdir(parents=True, exist_ok=True)
        alpha_part = "" if self.alpha is None else f"-alpha{self.alpha:g}"
        alpha_part += "" if self.min_fairness is None else f"-minfair{self.min_fairness:g}"
        mode = ("" if self.decision == "single" else f"-{self.decision}") + ("-blind" if self.blind else "")
        name = self.study_name or \
            f"{self.source_name}-{self.method}{alpha_part}{mode}-{self.profile}-seed{self.seed}"
        return TuneSettings(**{
            **self.__dict__,
            "project_dir": str(project),
            "storage": self.storage or storage_in(project),
            "tracking_uri": self.tracking_uri or tracking_uri_in(project),
            "study_name": name,
            "model_name": self.model_name or f"fairops-{self.source_name}",
        })


@dataclass
class TuneResult:
    """What a finished (or joined) run produced."""

    settings: TuneSettings
    study: object
    fits: int
    rows: dict = field(default_factory=dict)
    registered: object = None
    already_registered: bool = False
    links: object = None
    task: object = None
    failures: dict = field(default_factory=dict)
    choice: object = None
    verdict: object = None
    test_counts: str | None = None


def _failures(trials) -> dict:
    """Failed fits by reason (constant validation scores, errors)."""
    from ..tuning.quiet import failures

    return dict(failures(trials))


_WHY = {
    "constant validation scores": "the model gave every validation row the same score (a configuration "
                                  "regularised so strongly that it learnt nothing), so it ranks nothing",
    "error": "the fit raised an error (reported above as it happened)",
}


def failure_note(failures: dict, fits: int) -> str:
    """Why fits failed and whether it matters for the pick.

    >>> print(failure_note({"constant validation scores": 12}, 206))
    failed fits: 12 of 206 (5.8%): 12 constant validation scores: the model gave every validation row the same score (a configuration regularised so strongly that it learnt nothing), so it ranks nothing.
    They rank last and are never picked; with 94% of the fits compared, the pick is not affected.
    """
    failed = sum(failures.values())
    share = failed / max(fits, 1)
    reasons = "; ".join(f"{count} {reason}: {_WHY.get(reason, reason)}" for reason, count in sorted(failures.items()))
    verdict = (f"with {1 - share:.0%} of the fits compared, the pick is not affected" if share <= 0.1 else
               f"{share:.0%} of the fits did not compete, so fewer configurations were compared than the schedule "
               "planned (on small data, --selection robust gives every fit at least 500 rows)")
    return f"failed fits: {failed} of {fits} ({share:.1%}): {reasons}.\nThey rank last and are never picked; {verdict}."


def load_source(settings: TuneSettings):
    """The bundled data set or the user's file, as a :class:`~fairops.datasets.Dataset`."""
    from ..datasets import load_dataset, load_table

    if settings.data is not None:
        return load_table(settings.data, target=settings.target, sensitive=settings.sensitive, task=settings.task,
                          positive=settings.positive)
    return load_dataset(settings.dataset)


def make_sampler(settings: TuneSettings, configuration: dict | None = None):
    """The method's sampler: Fairband's (``configuration``, see :func:`study_configuration`, stored with a
    new study; a worker started with another one is refused, naming the first difference) or random search.
    """
    from ..fairband import FairbandSampler
    from ..tuning.baselines import FullBudgetRandomSampler, pick_alpha, start_configurations

    if settings.tuner.startswith("RS"):
        return FullBudgetRandomSampler(seed=settings.seed, min_fairness=settings.min_fairness)
    alpha = pick_alpha(settings.tuner) if settings.alpha is None else settings.alpha
    starts = start_configurations(settings.selection, (configuration or {}).get("families"), settings.profile)
    return FairbandSampler(alpha=alpha, seed=settings.seed, wait_timeout=settings.wait_timeout,
                           configuration=configuration, iterations=settings.iterations,
                           min_fairness=settings.min_fairness, start_configurations=starts)


def study_configuration(settings: TuneSettings, data, families: list[str]) -> dict:
    """Everything besides the sampler's own settings that defines a tuning study (its workers must agree).

    >>> from fairops.datasets import load_german
    >>> settings = TuneSettings(dataset="german", max_train_rows=300)
    >>> sorted(study_configuration(settings, load_german(), ["logistic_regression"]))
    ['data', 'data_sha256', 'families', 'max_train_rows', 'method', 'profile', 'selection', 'sensitive', 'task']
    """
    # the decision mode is recorded only when it is not the default, so studies from before it still join
    mode = {"decision": settings.decision} if settings.decision != "single" else {}
    return {"data": settings.source_name, "data_sha256": data_sha256(data), "task": str(data.task),
            "sensitive": list(data.task.sensitive), "method": settings.tuner, "families": list(families),
            "profile": settings.profile, "max_train_rows": settings.max_train_rows, "selection": settings.selection,
            **mode, **({"blind": True} if settings.blind else {})}


def data_sha256(data) -> str:
    """sha256 of a data set's values (features, label, sensitive columns), index and column names included.

    Both the study's configuration (a worker on other data is refused) and the parent run's
    ``data_sha256`` param hold it; a study keeps its value, so the value of given data must never change.

    >>> from fairops.datasets import load_german
    >>> data_sha256(load_german())[:16]
    '1d514ec9a66fdcd9'
    """
    import hashlib

    import pandas as pd

    digest = hashlib.sha256()
    for frame in (data.X, pd.DataFrame({"label": data.y}), data.sensitive):
        digest.update(",".join(map(str, frame.columns)).encode())
        digest.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return digest.hexdigest()


def pick_alpha_of(settings: TuneSettings):
    """The alpha of the final pick: the method's (or ``--alpha``)."""
    from ..tuning.baselines import pick_alpha

    return pick_alpha(settings.tuner) if settings.alpha is None else settings.alpha


def target_trials(settings: TuneSettings) -> int:
    """Fits the run is made of: iterations x the method's fits per Fairband iteration."""
    from ..tuning.baselines import trials_per_iteration

    return settings.iterations * trials_per_iteration(settings.tuner)


def _families(settings: TuneSettings) -> list[str]:
    """The families to tune: the chosen ones, checked, or every built-in one the run can use."""
    from ..tuning.search_space import check_families, families_for

    return check_families(settings.families or families_for(blind=settings.blind), blind=settings.blind)


def _evaluate_pick(objective, trial) -> tuple[object, dict]:
    model = objective.refit(trial, 1.0)
    return model, {"validation": objective.evaluate(model, "validation"), "test": objective.evaluate(model, "test")}


def _robust_rule(ranked, choice, n_fits: int) -> str:
    setting = ranked.alpha_rule
    how = "rule auto" if setting == "auto" else f"fixed at {float(setting):g}"
    tried = ", ".join(f"#{n}" for n in choice.refits)
    return (f"robust: argmax alpha*accuracy_low + (1-alpha)*fairness_low over {n_fits} fits (90% lower bounds, "
            f"alpha {how} = {ranked.alpha:.4g}); refit on all training rows: {tried}; chosen by the same score, "
            "cross-validated over the training and validation rows, among the refits the most accurate fit's refit "
            f"(#{choice.most_accurate.trial.number}) does not dominate on validation")


def choose(settings: TuneSettings, objective, trials, alpha):
    """(pick, its refit model, its scores, most accurate fit, its scores, refit choice or None).

    ``paper``: the paper's argmax over the fits, then refit. ``robust``: the lower-bound ranking's
    candidates and the most accurate fit refit on all training rows, the pick chosen among the refits.
    """
    from ..tuning import refit_choice
    from ..fairband import Selection, select_best
    from ..fairband.selection import successful_fits

    accurate = select_best(trials, alpha=1.0)
    if settings.selection == "paper":
        pick = select_best(trials, alpha=alpha)
        model, pick_scores = _evaluate_pick(objective, pick.trial)
        return pick, model, pick_scores, accurate, _evaluate_pick(objective, accurate.trial)[1], None
    ranked = select_best(trials, alpha=alpha, rule="robust")
    choice = refit_choice(objective, ranked, accurate.trial)
    chosen, best = choice.chosen, choice.most_accurate
    pick = Selection(chosen.trial, ranked.alpha, chosen.lower_score(ranked.alpha),
                     _robust_rule(ranked, choice, len(successful_fits(trials))), ranked.alpha_rule, ranked.candidates)
    return (pick, chosen.model, {"validation": chosen.validation, "test": chosen.test}, accurate,
            {"validation": best.validation, "test": best.test}, choice)


def budget_floor(selection: str) -> dict:
    """The objective's floor on rows per fit: the small-data floor with the robust rule, none with the paper's.

    >>> budget_floor("paper")
    {}
    """
    from ..tuning.objective import SMALL_DATA_FLOOR

    return dict(SMALL_DATA_FLOOR) if selection == "robust" else {}


def family_of(trial, families) -> str:
    """The model family of a fit (its ``model`` parameter, or the one family tuned)."""
    return str(trial.params.get("model", families[0] if len(families) == 1 else "?"))


def run_tune(settings: TuneSettings, *, out=None) -> TuneResult:
    """Run (or resume, or join) the study, then pick, refit, test and register (:func:`~.driver.drive`).

    >>> settings = TuneSettings(dataset="german", method="fb-bal", project_dir="/nonexistent/x", storage="x")
    >>> settings.tuner, target_trials(settings)
    ('FB-bal', 206)
    """
    from .driver import drive

    settings = settings.resolved()
    quiet_libraries()
    return drive(TuneJob(settings, out or sys.stdout))


class TuneJob(TuningJob):
    """``fairops tune`` for the driver: the data, the objective over the model families, the pick and its
    registration with the refit model, and the summary."""

    def __init__(self, settings: TuneSettings, out) -> None:
        from ..tuning import FairnessObjective
        from . import mlflow_study
        from .driver import Plan

        self.settings, self.out = settings, out
        self.data = data = load_source(settings)
        self.families = families = _families(settings)
        self.objective = FairnessObjective(data, profile=settings.profile, families=families, seed=settings.seed,
                                           max_train_rows=settings.max_train_rows, decision=settings.decision,
                                           blind=settings.blind, **budget_floor(settings.selection))
        alpha = pick_alpha_of(settings)
        self.plan = Plan(
            storage=settings.storage, study_name=settings.study_name, target=target_trials(settings),
            tracking_uri=settings.tracking_uri, model_name=settings.model_name, alpha=alpha,
            study_params=study_params(settings, data, families, alpha), experiment_name=settings.study_name,
            artifact_location=mlflow_study.artifact_root(settings.project_dir, settings.tracking_uri),
            family=families[0] if len(families) == 1 else None,
            metric_names=(data.task.accuracy_name, data.task.fairness_name), heartbeat=settings.heartbeat,
            wait_timeout=settings.wait_timeout, n_jobs=settings.n_jobs, catch=(Exception,),
            progress=settings.progress, finalize=settings.finalize, ui_port=settings.ui_port,
            description=mlflow_study.describe_task(data, alpha))

    def sampler(self):
        return make_sampler(self.settings, study_configuration(self.settings, self.data, self.families))

    def quiet(self):
        from ..tuning.quiet import constant_fits_quiet

        return constant_fits_quiet()

    def announce(self, study, done_before: int) -> None:
        settings, data, target, out = self.settings, self.data, self.plan.target, self.out
        print(f"project: {settings.project_dir}\nstudy: {settings.study_name} ({settings.tuner}, "
              f"{target} fits, {done_before} already in the study)\nstorage: {settings.storage}\n"
              f"tracking: {settings.tracking_uri}\ndata: {data!r}\ntask: {data.task.describe()}\n"
              f"decisions: {decision_words(settings.decision, settings.blind, data)}", file=out, flush=True)
        if settings.progress and done_before < target:
            print(legend(self.plan.alpha), file=out, flush=True)

    def _result(self, study, trials) -> TuneResult:
        return TuneResult(self.settings, study, fits=len(trials), task=self.data.task, failures=_failures(trials))

    def worker_done(self, study, trials) -> TuneResult:
        result = self._result(study, trials)
        print(f"worker done: {result.fits} fits in the study", file=self.out)
        return result

    def choose(self, study, tracker, trials) -> "_Chosen":
        result = self._result(study, trials)
        chosen = _Chosen(result, *choose(self.settings, self.objective, trials, self.plan.alpha))
        pick, accurate = chosen.pick, chosen.accurate
        result.choice = chosen.choice
        result.test_counts = counts_text(self.objective.task, *self.objective.rows("test")[1:])
        result.rows = {
            f"Fairband pick (#{pick.trial.number}, {family_of(pick.trial, self.families)})":
                {"trial": pick.trial, **chosen.scores},
            f"most accurate (#{accurate.trial.number}, {family_of(accurate.trial, self.families)})":
                {"trial": accurate.trial, **chosen.accurate_scores},
        }
        return chosen

    def register(self, study, tracker, chosen: "_Chosen"):
        return _register(self.settings, study, self.objective, chosen.pick, chosen.model, chosen.scores,
                         chosen.accurate, chosen.accurate_scores)

    def registered(self, study, tracker, chosen: "_Chosen", version, before: bool) -> None:
        from . import mlflow_study

        result = chosen.result
        result.registered, result.already_registered = version, before
        if self.settings.promote and not before and version.kept_version is not None:
            result.verdict = _promote_now(self.settings, self.objective, version)
        mlflow_study.log_pick(tracker, study, result.rows, result.choice)

    def report(self, study, chosen: "_Chosen", version, before: bool, links) -> TuneResult:
        chosen.result.links = links
        print_summary(chosen.result, out=self.out)
        return chosen.result


@dataclass
class _Chosen:
    """The pick of a tune: the result so far, the pick with its refit model and scores, the most accurate fit."""

    result: TuneResult
    pick: object
    model: object
    scores: dict
    accurate: object
    accurate_scores: dict
    choice: object = None

    @property
    def trial(self):
        return self.pick.trial


def study_params(settings: TuneSettings, data, families, alpha) -> dict:
    """What the parent run records about the study: data and its hash, task, method, alpha rule, budget, seed."""
    from . import mlflow_study

    return {
        "dataset": settings.source_name, "data_source": data.source or settings.source_name,
        "data_sha256": data_sha256(data), "rows": len(data.y), **mlflow_study.task_params(data),
        "method": settings.tuner, "alpha_rule": "auto (FB-auto)" if alpha == "auto" else f"{float(alpha):g}",
        "selection": settings.selection,
        "profile": settings.profile, "seed": settings.seed, "iterations": settings.iterations,
        "fits": target_trials(settings), "families": ",".join(families),
        "max_train_rows": settings.max_train_rows if settings.max_train_rows is not None else "all",
        "min_fairness": settings.min_fairness if settings.min_fairness is not None else "none",
        "decision": settings.decision, "blind": settings.blind,
    }


def _servable(model, X_train):
    """The refit model behind a step that restores the training categories of text input."""
    from sklearn.pipeline import Pipeline

    from ..models import RestoreCategories

    return Pipeline([("restore_categories", RestoreCategories().fit(X_train)), ("model", model)])


def _as_text(frame):
    """Category columns as plain strings: what a client sends to a served model."""
    return frame.astype({c: object for c in frame.columns if str(frame[c].dtype) == "category"})


def _description(settings, study, objective, pick, scores, accurate, accurate_scores) -> str:
    """The registered version in words: task, the rule, and the pick against the most accurate fit."""
    from ..tracking.registry import describe

    def row(label, trial, measured):
        v, t = measured["validation"], measured["test"]
        family = f", {trial.params['model']}" if "model" in trial.params else ""
        return (f"| {label} (trial {trial.number}{family}) | {with_interval(v, 'accuracy')} "
                f"| {with_interval(v, 'fairness')} | {with_interval(t, 'accuracy')} | {with_interval(t, 'fairness')} |")

    task, v = objective.task, scores["validation"]
    return "\n".join([
        f"fairops tune on `{settings.source_name}`: {settings.tuner}, profile {settings.profile}, "
        f"seed {settings.seed}, selection {settings.selection}.",
        f"Task `{task}`: accuracy = {task.metric} at {task.target} = {task.target_value:g}, fairness = "
        f"{task.fairness.upper()} ratio over {task.over}; the positive class is {task.positive or 'label 1'}.",
        f"Validation fairness of this model: {with_interval(v, 'fairness')} (90% confidence interval from "
        f"the group counts); test fairness {with_interval(scores['test'], 'fairness')} "
        f"(test: {counts_text(task, *objective.rows('test')[1:])}).",
        *[f"{note.removeprefix('note: ')}: the validation figure did not hold on the test rows."
          for note in outside_notes({"This model": scores})],
        f"Selection: {describe(pick, study)}.",
        "Scores of the models refit on all training rows (value [90% interval]):",
        "",
        "| | validation accuracy | validation fairness | test accuracy | test fairness |",
        "|---|---|---|---|---|",
        row("this model", pick.trial, scores),
        row("most accurate fit", accurate.trial, accurate_scores),
        "",
        f"Serves `probability` (of the positive class), `positive_class` and `decision` (1 at or above "
        f"{'its group' if settings.decision == 'per-group' else 'the'} {threshold_origin(task)}"
        f"{'; the groups columns are required inputs' if settings.decision == 'per-group' else ''}); rows that "
        "break the input schema get HTTP 400 with the reason.",
    ])


def counts_text(task, y, sensitive) -> str:
    """The rows behind the task's fairness ratio, per group of each attribute (positives for TPR, negatives
    for FPR, all rows for the positive rate).

    >>> import numpy as np, pandas as pd
    >>> from fairops.metrics import Task
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    >>> counts_text(task, np.array([1, 1, 0, 1]), pd.DataFrame({"sex": ["f", "m", "m", "m"]}))
    '4 rows; behind the TPR ratio: sex f 1, m 2 positives'
    """
    from ..metrics.windows import BASE_UNIT, rate_bases

    bases = rate_bases(task, y, sensitive)
    parts = [f"{attribute} " + ", ".join(f"{group} {count}" for group, count in groups.items())
             + f" {BASE_UNIT[task.fairness]}" for attribute, groups in bases.attributes.items()]
    return f"{bases.rows} rows; behind the {task.fairness_label}: " + "; ".join(parts)


def outside_notes(rows: dict, choice=None) -> list[str]:
    """A line for each model whose test fairness lies outside its validation interval (and, for the robust
    pick, outside the cross-validated one): the validation figure did not hold on new rows.

    >>> rows = {"pick": {"validation": {"fairness": 0.67, "fairness_low": 0.27, "fairness_high": 1.0},
    ...                  "test": {"fairness": 0.2}}}
    >>> outside_notes(rows)
    ['note: pick: test fairness 0.2000 lies below its validation interval [0.2700, 1.0000]']
    """
    notes = []
    assessed = None if choice is None or choice.chosen.assessed is None else choice.chosen.assessed
    for number, (label, row) in enumerate(rows.items()):
        test = row["test"]["fairness"]
        intervals = [("validation", row["validation"])] + ([("cross-validated", assessed)]
                                                          if number == 0 and assessed is not None else [])
        for name, figures in intervals:
            low, high = figures.get("fairness_low"), figures.get("fairness_high")
            if low is None or high is None or low <= test <= high:
                continue
            side = "below" if test < low else "above"
            notes.append(f"note: {label}: test fairness {test:.4f} lies {side} its {name} interval "
                         f"[{low:.4f}, {high:.4f}]")
    return notes


def threshold_origin(task) -> str:
    """Where a single decision's threshold comes from, in words.

    >>> from fairops.metrics import Task
    >>> threshold_origin(Task.from_string("recall@threshold=0.3,ratio=tpr", sensitive=["sex"]))
    "task's fixed threshold (0.3)"
    """
    fixed = None if task is None else task.fixed_threshold
    return "threshold set on the validation rows" if fixed is None else f"task's fixed threshold ({fixed:g})"


def lifecycle_tags(objective, model, seed: int) -> dict:
    """The version tags :mod:`fairops.tracking.version_record` reads, from the refit pick's validation rows."""
    from ..tracking.version_record import validation_tags

    X, y, sensitive = objective.rows("validation")
    return validation_tags(objective.task, y, model.predict_proba(X)[:, 1], sensitive, seed=seed,
                           decision=objective.decision)


def _register(settings, study, objective, pick, model, scores, accurate, accurate_scores):
    from ..tracking.registry import register_best
    from ..models import InputSchema

    X_train, _, _ = objective.rows("train")
    X_test, _, sensitive_test = objective.rows("test")
    servable = _servable(model, X_train)
    schema = InputSchema.for_model(servable, X_train)
    decision = served_decision_of(objective, model, X_train)
    example = with_decision_columns(decision, objective, X_test.head(5), sensitive_test.head(5))
    compared = {"trial": accurate.trial.number, "validation_refit": accurate_scores["validation"],
                "test": accurate_scores["test"]}
    return register_best(
        study, settings.model_name, rule=pick, alias="champion",
        refit=lambda params, trial: servable, extra_tags=lifecycle_tags(objective, servable, settings.seed),
        tracking_uri=settings.tracking_uri, experiment_name=settings.study_name, input_example=_as_text(example),
        log_options={"input_schema": schema, "decision": decision},
        description=_description(settings, study, objective, pick, scores, accurate, accurate_scores),
        card_notes={"method": settings.tuner, "task": str(objective.task), "refit": "all training rows",
                    "test": scores["test"], "validation_refit": scores["validation"],
                    "most_accurate_fit_refit": compared, "input_schema": decision.extend_schema(schema).to_dict(),
                    "decision": decision.to_dict()},
    )


def with_interval(figures: dict, name: str) -> str:
    """``value [low, high]`` of a validation figure (the value alone when it has no interval).

    >>> with_interval({"fairness": 0.9, "fairness_low": 0.75, "fairness_high": 1.0}, "fairness")
    '0.9000 [0.7500, 1.0000]'
    """
    low, high = figures.get(f"{name}_low"), figures.get(f"{name}_high")
    text = f"{figures[name]:.4f}"
    return text if low is None or high is None else f"{text} [{low:.4f}, {high:.4f}]"


def _print_registered(result: TuneResult, out) -> None:
    """Where the new version went: ``@champion``, or ``@challenger`` beside the champion, with the gate."""
    from .promote import promote_command

    settings, registered = result.settings, result.registered
    print(f"\nregistered: models:/{settings.model_name}@{registered.alias} (version {registered.version})", file=out)
    if registered.kept_version is None:
        return
    print(f"@champion stays version {registered.kept_version}; version {registered.version} is the challenger",
          file=out)
    if result.verdict is not None:
        print(f"promotion gate on the test rows: {result.verdict.text()}", file=out)
        return
    default_uri = settings.tracking_uri == tracking_uri_in(settings.project_dir)
    command = promote_command(settings.model_name, dataset=settings.dataset, data=settings.data,
                              target=settings.target, sensitive=settings.sensitive,
                              seed=settings.seed, project_dir=settings.project_dir,
                              tracking_uri=None if default_uri else settings.tracking_uri)
    print(f"gate it (fairness and accuracy against the champion on the same rows):\n  {command}", file=out)


def _promote_now(settings: TuneSettings, objective, registered):
    """``--promote``: the gate at once, on the test rows of this run's split (``--min-fairness`` its floor)."""
    from ..tracking.promotion import promote

    X, y, sensitive = objective.rows("test")
    return promote(settings.model_name, X, y, sensitive, candidate=registered.version, task=objective.task,
                   min_fairness=settings.min_fairness, tracking_uri=settings.tracking_uri)


def served_decision_of(objective, model, X_train):
    """What the registered model decides: its validation rule, the task's positive class, and (when the
    model does not read every input the decision needs) the model's own input columns.

    A group column whose name is a model input holding other values (COMPAS's six-valued ``race``
    feature beside the Caucasian / non-Caucasian ``race`` it is judged on) is asked for as
    ``<name>_group``.
    """
    import dataclasses

    from ..models import ServedDecision

    rule = objective.decision_rule(model)
    positive = objective.task.positive or "label 1"
    if not hasattr(rule, "columns"):
        return ServedDecision(positive, rule)
    _, _, sensitive = objective.rows("train")
    renamed = tuple(
        f"{c}_group" if c in X_train.columns and not X_train[c].astype(str).equals(sensitive[c].astype(str)) else c
        for c in rule.columns)
    rule = dataclasses.replace(rule, columns=renamed)
    needs_own = any(c not in X_train.columns for c in renamed)
    return ServedDecision(positive, rule, tuple(X_train.columns) if needs_own else None)


def with_decision_columns(decision, objective, X, sensitive):
    """``X`` with the group columns the decision reads that the model does not (a client's full row)."""
    extra = {}
    for served, column in zip(decision.columns, objective.task.sensitive):
        if served not in X.columns:
            extra[served] = sensitive[column].astype(str).to_numpy()
    return X.assign(**extra)


def print_summary(result: TuneResult, *, out=None) -> None:
    """The pick vs the most accurate fit, on validation (refit, with intervals) and test, and where to look next."""
    out = out or sys.stdout
    task = result.task
    accuracy, fairness = (task.metric, task.fairness_label) if task else ("accuracy", "fairness")
    label_width = max([28, *(len(label) + 2 for label in result.rows)])
    wide = 25
    print("\n" + f"{'':<{label_width}}{'validation':>{2 * wide}}{'test':>{2 * wide}}", file=out)
    print(f"{'':<{label_width}}{accuracy:>{wide}}{fairness:>{wide}}{accuracy:>{wide}}{fairness:>{wide}}", file=out)
    for label, row in result.rows.items():
        v, t = row["validation"], row["test"]
        print(f"{label:<{label_width}}{with_interval(v, 'accuracy'):>{wide}}{with_interval(v, 'fairness'):>{wide}}"
              f"{with_interval(t, 'accuracy'):>{wide}}{with_interval(t, 'fairness'):>{wide}}", file=out)
    if task is not None:
        print(f"({accuracy} = {task.accuracy_name}; {fairness} = lowest / highest over "
              f"{task.over}; positive class: {task.positive or 'label 1'})", file=out)
    where = "thresholds per group" if result.settings.decision == "per-group" else threshold_origin(task)
    print("(models refit on all training rows; value [90% confidence interval]; the test rows are "
          f"scored at the {where})", file=out)
    if result.test_counts:
        print(f"(test: {result.test_counts})", file=out)
    for note in outside_notes(result.rows, result.choice):
        print(f"{note}: the validation figure did not hold on these rows", file=out)
    if result.choice is not None:
        print(_refit_note(result.choice), file=out)
    if result.failures:
        print(failure_note(result.failures, result.fits), file=out)
    settings = result.settings
    if result.already_registered:
        print(f"\nalready registered by an earlier run of this study: {settings.model_name} version "
              f"{result.registered.version} (models:/{settings.model_name}/{result.registered.version}); "
              "nothing new registered", file=out)
    elif result.registered is not None:
        _print_registered(result, out)
    if result.registered is not None:
        print(serving_text(settings), file=out)
    if result.links is not None:
        print(result.links.text(), file=out)


def _refit_note(choice) -> str:
    """One line on the robust rule's refits: how many, and which the most accurate refit dominated."""
    dominated = ", ".join(f"#{n}" for n in choice.dominated)
    note = (f"(robust selection: {len(choice.refits)} fits refit on all training rows; "
            + (f"dropped as dominated by the most accurate refit: {dominated}" if dominated
               else "none dominated by the most accurate refit"))
    assessed = choice.chosen.assessed
    if assessed is not None:
        note += (f"; chosen on 5-fold cross-validation over the training and validation rows, where the pick's "
                 f"fairness is {with_interval(assessed, 'fairness')}")
    return note + ")"


def serving_text(settings: TuneSettings) -> str:
    """The command serving the registered model's ``@champion`` (pasted verbatim from any folder) and a request
    to try."""
    from ..tracking.ui_links import serve_command

    port = settings.ui_port + 1
    # @champion, not the version number: after a promotion the same command serves the promoted model
    command = serve_command(settings.tracking_uri, f"models:/{settings.model_name}@champion", port)
    return (f"serve it: {command}\n"
            f"  then POST rows to http://127.0.0.1:{port}/invocations as "
            '{"dataframe_records": [{"<column>": <value>, ...}, ...]} (one object per row, every input column)')


def _run(args) -> int:
    if args.data is not None:
        refuse_options(args, ["--dataset"], "with --data FILE: give one data source")
    else:
        refuse_options(args, ["--target", "--sensitive", "--task", "--positive"],
                       "to a bundled --dataset, which brings its own label, sensitive columns and task "
                       "(they go with --data FILE)")
    settings = TuneSettings(
        dataset=None if args.data else args.dataset, data=args.data, target=args.target,
        sensitive=args.sensitive, task=args.task, method=args.method, selection=args.selection, alpha=args.alpha,
        iterations=args.iterations, profile=args.profile,
        families=args.families.split(",") if args.families else None, max_train_rows=args.max_train_rows,
        storage=args.storage, tracking_uri=args.tracking_uri, project_dir=args.project_dir,
        study_name=args.study_name, model_name=args.model_name, n_jobs=args.n_jobs, seed=args.seed,
        finalize=not args.no_finalize, promote=args.promote, progress=not args.no_progress, heartbeat=args.heartbeat,
        wait_timeout=args.wait_timeout, min_fairness=args.min_fairness, ui_port=args.ui_port,
        positive=args.positive,
        decision=args.decision, blind=args.blind,
    )
    result = run_tune(settings)
    return result.verdict.exit_code if result.verdict is not None else 0


def add_decision_options(parser) -> None:
    """``--decision`` and ``--blind`` (shared by ``fairops tune`` and ``fairops compare``)."""
    parser.add_argument(
        "--decision", default=TuneSettings.decision, choices=["single", "per-group"],
        help="single: one threshold for everyone (default, the paper's); per-group: one threshold per group of "
             "the task's sensitive attributes, each group at the task's target on validation, searched with the "
             "model (where deciding per group is allowed; the served model then needs the group columns)")
    parser.add_argument(
        "--blind", action="store_true",
        help="the sensitive columns are not model inputs (still used to measure fairness); proxies such as "
             "Adult's relationship still carry them")


def decision_words(decision: str, blind: bool, data) -> str:
    """The decision mode in one line (printed before a run).

    >>> from fairops.datasets import load_german
    >>> decision_words("per-group", True, load_german())
    "one threshold per group of sex, each at the task's target on validation; models do not see sex"
    """
    columns, fixed = ", ".join(data.task.sensitive), data.task.fixed_threshold
    rule = (f"one threshold per group of {columns}, each at the task's target on validation"
            if decision == "per-group" else "one threshold for everyone, set on validation" if fixed is None
            else f"one threshold for everyone, the task's fixed {fixed:g}")
    unseen = [c for c in data.sensitive.columns if c in data.X.columns]
    inputs = f"models do not see {', '.join(unseen)}" if blind else "sensitive columns are model inputs"
    return f"{rule}; {inputs}"


def add_parser(subcommands) -> None:
    parser = subcommands.add_parser(
        "tune", help="Fairband over the paper's model families + SCAFF, tracked in MLflow, pick registered",
        description=__doc__.split("\n\n")[0])
    source = parser.add_argument_group("data")
    source.add_argument("--dataset", default=TuneSettings.dataset, choices=sorted(LOADERS), metavar="NAME",
                        help=f"a bundled data set with its paper task: {', '.join(sorted(LOADERS))}")
    source.add_argument("--data", metavar="FILE", help="a CSV or Parquet file of one's own (instead of --dataset)")
    source.add_argument("--target", metavar="COLUMN", help="with --data: the label column, two values (the larger "
                        "one, numbers by value, text in sorted order, is the positive class unless --positive)")
    source.add_argument("--sensitive", metavar="COLUMNS", help="with --data: sensitive column(s), comma-separated; "
                        "the fairness is the lowest of their ratios (each column's groups on its own; "
                        "groups=intersectional in --task: over their combined groups)")
    source.add_argument("--task", default=TuneSettings.task, metavar="SPEC", help=TASK_HELP)
    source.add_argument("--positive", metavar="VALUE",
                        help="with --data: the target value that is the positive class (default: the larger "
                             "value, numbers by value)")
    source.add_argument("--max-train-rows", type=int, metavar="N",
                        help="fit on a stratified sample of N training rows (quick looks; default: all)")
    search = parser.add_argument_group("search")
    search.add_argument("--method", default=TuneSettings.method, choices=sorted(METHODS),
                        help="fb-auto: Fairband, alpha from the fits' mean accuracy and fairness; fb-bal: "
                             "Fairband, alpha 0.5; hb: Hyperband on accuracy alone (alpha 1); rs / rs-bal: "
                             "random search on all rows, picked at alpha 1 / 0.5")
    search.add_argument("--selection", default=TuneSettings.selection, choices=list(SELECTIONS), help=SELECTION_HELP)
    search.add_argument("--alpha", type=float, help="a fixed alpha in [0, 1] instead of the method's: fits rank by "
                        "alpha * accuracy + (1 - alpha) * fairness (default: the method's)")
    search.add_argument("--iterations", type=int, default=TuneSettings.iterations,
                        help="Fairband iterations, 206 fits each")
    search.add_argument("--profile", default=TuneSettings.profile, choices=["fast", "paper"],
                        help="search ranges: fast (small models, minutes) or paper (the paper's full ranges)")
    search.add_argument("--families", metavar="NAMES", help=FAMILIES_HELP)
    search.add_argument("--seed", type=int, default=TuneSettings.seed,
                        help="seed of the data split, the sampler and the models")
    search.add_argument("--min-fairness", type=float, metavar="F",
                        help="fairness floor in [0, 1]: fits below it are infeasible (Optuna's constraints, seen "
                             "by study.best_trials and optuna-dashboard) and never picked")
    add_decision_options(search)
    search.add_argument("--n-jobs", type=int, default=TuneSettings.n_jobs,
                        help="fits run in parallel threads in this process")
    where = parser.add_argument_group("storage and tracking")
    where.add_argument("--project-dir", default=TuneSettings.project_dir,
                       help="folder of the embedded SQLite stores (default: ./fairops-project)")
    where.add_argument("--storage", help="Optuna storage URL, e.g. postgresql+psycopg://..., or grpc://host:port "
                                         "for a fairops grpc-proxy (default: sqlite:///<project-dir>/optuna.db)")
    where.add_argument("--tracking-uri", help="MLflow tracking URI, e.g. http://mlflow:5000 "
                                              "(default: sqlite:///<project-dir>/mlflow.db)")
    where.add_argument("--study-name", help="join or name the study (default: from data, method, profile, seed)")
    where.add_argument("--model-name", help="registered model name (default: fairops-<data>)")
    where.add_argument("--no-finalize", action="store_true",
                       help="worker only: fit and log until every fit of the run is finished, leave the pick "
                            "and registration to another worker")
    where.add_argument("--heartbeat", type=float, default=TuneSettings.heartbeat,
                       help="seconds between worker heartbeats on RDB storages; a worker silent for 3 "
                            "heartbeats has its fits failed and fitted again by another (default: 10)")
    where.add_argument("--wait-timeout", type=float, default=TuneSettings.wait_timeout,
                       help="seconds to wait at most for another worker's fits before giving up with an error")
    where.add_argument("--promote", action="store_true",
                       help="when the new version becomes @challenger, run the promotion gate at once on the "
                            "test rows (exit 3 when refused); see fairops promote")
    where.add_argument("--no-progress", action="store_true",
                       help=NO_PROGRESS_HELP)
    where.add_argument("--ui-port", type=int, default=TuneSettings.ui_port,
                       help="port of mlflow ui in the printed command and links; the printed serve command "
                            "uses the next one")
    parser.set_defaults(run=_run)
