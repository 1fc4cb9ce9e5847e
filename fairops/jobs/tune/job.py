"""``fairops tune`` for the tuning driver: the data and objective, the pick, its registration and the summary."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from ...datasets.row_ids import row_hashes
from ...tuning.pick import PickChoice, budget_floor, choose_pick
from ..driver import TuningJob
from ..options import decision_words
from ..progress import legend
from ..running import quiet_libraries
from .registration import record_rows, register_pick
from .report import counts_text, failures_of, print_summary
from .settings import TuneSettings, families_of, pick_alpha_of, target_trials
from .study import held_out_rows, held_out_words, load_source, make_sampler, study_configuration, study_params


@dataclass
class TuneResult:
    """What a finished (or joined) run produced."""

    settings: TuneSettings
    study: Any
    fits: int
    rows: dict = field(default_factory=dict)
    registered: Any = None
    already_registered: bool = False
    links: Any = None
    task: Any = None
    failures: dict = field(default_factory=dict)
    choice: Any = None
    verdict: Any = None
    test_counts: str | None = None


def run_tune(settings: TuneSettings, *, out=None) -> TuneResult:
    """Run (or resume, or join) the study, then pick, refit, test and register (:func:`~.driver.drive`).

    >>> settings = TuneSettings(dataset="german", method="fb-bal", project_dir="/nonexistent/x", storage="x")
    >>> settings.tuner, target_trials(settings)
    ('FB-bal', 206)
    """
    from ..driver import drive

    settings = settings.resolved()
    quiet_libraries()
    return drive(TuneJob(settings, out or sys.stdout))


class TuneJob(TuningJob):
    """``fairops tune`` for the driver: the data, the objective over the model families, the pick and its
    registration with the refit model, and the summary."""

    def __init__(self, settings: TuneSettings, out) -> None:
        from ...tuning import FairnessObjective
        from .. import mlflow_study
        from ..driver import Plan

        assert settings.storage and settings.study_name and settings.tracking_uri and settings.model_name, \
            "TuneJob runs resolved settings (TuneSettings.resolved)"
        self.settings, self.out = settings, out
        self.data = data = load_source(settings)
        self.families = families = families_of(settings)
        self.row_ids = row_hashes(data.X, data.sensitive)
        self.objective = FairnessObjective(data, profile=settings.profile, families=families, seed=settings.seed,
                                           max_train_rows=settings.max_train_rows, decision=settings.decision,
                                           blind=settings.blind, test_rows=held_out_rows(settings, data, self.row_ids),
                                           **budget_floor(settings.selection))
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
        from ...tuning.quiet import constant_fits_quiet

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
        return TuneResult(self.settings, study, fits=len(trials), task=self.data.task, failures=failures_of(trials))

    def worker_done(self, study, trials) -> TuneResult:
        result = self._result(study, trials)
        print(f"worker done: {result.fits} fits in the study", file=self.out)
        return result

    def choose(self, study, tracker, trials) -> _Chosen:
        result = self._result(study, trials)
        picked = choose_pick(self.settings.selection, self.objective, trials, self.plan.alpha)
        chosen = _Chosen(result, picked)
        pick, accurate = picked.pick, picked.accurate
        result.choice = picked.refits
        _, y_test, sensitive_test = self.objective.rows("test")
        result.test_counts = counts_text(self.objective.task, y_test, sensitive_test,
                                         held=held_out_words(self.settings))
        result.rows = {
            f"Fairband pick (#{pick.trial.number}, {family_of(pick.trial, self.families)})":
                {"trial": pick.trial, **picked.scores},
            f"most accurate (#{accurate.trial.number}, {family_of(accurate.trial, self.families)})":
                {"trial": accurate.trial, **picked.accurate_scores},
        }
        return chosen

    def register(self, study, tracker, chosen: _Chosen):
        registered = register_pick(self.settings, study, self.objective, chosen.picked)
        record_rows(self.settings, self.objective, self.row_ids, registered)
        return registered

    def registered(self, study, tracker, chosen: _Chosen, version, before: bool) -> None:
        from .. import mlflow_study

        result = chosen.result
        result.registered, result.already_registered = version, before
        if self.settings.promote and not before and version.kept_version is not None:
            result.verdict = _promote_now(self.settings, self.objective, version)
        mlflow_study.log_pick(tracker, study, result.rows, result.choice)

    def report(self, study, chosen: _Chosen, version, before: bool, links) -> TuneResult:
        chosen.result.links = links
        print_summary(chosen.result, out=self.out)
        return chosen.result


@dataclass(frozen=True)
class _Chosen:
    """What the driver carries from choosing to reporting: the result so far and the pick."""

    result: TuneResult
    picked: PickChoice

    @property
    def trial(self):
        return self.picked.trial


def _promote_now(settings: TuneSettings, objective, registered):
    """``--promote``: the gate at once, on the test rows of this run's split (``--min-fairness`` its floor)."""
    from ...tracking.promotion import promote

    assert settings.model_name is not None  # resolved settings
    X, y, sensitive = objective.rows("test")
    return promote(settings.model_name, X, y, sensitive, candidate=registered.version, task=objective.task,
                   min_fairness=settings.min_fairness, tracking_uri=settings.tracking_uri)


def family_of(trial, families) -> str:
    """The model family of a fit (its ``model`` parameter, or the one family tuned)."""
    return str(trial.params.get("model", families[0] if len(families) == 1 else "?"))
