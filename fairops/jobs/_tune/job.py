"""``fairops tune`` for the tuning driver: the data and objective, the pick, its registration and the summary."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...datasets._row_ids import row_hashes
from ...tuning._pick import PickChoice, budget_floor, choose_pick, pick_notes
from .._driver import Outcome, RegisteredVersion, Registration, TuningJob
from .._options import decision_words
from .._progress import legend
from .._running import quiet_libraries
from .registration import record_rows, register_pick
from .report import counts_text, failures_of, missing_lines, print_summary
from .settings import TuneSettings, families_of, pick_alpha_of, target_trials
from .study import held_out_rows, held_out_words, load_source, make_sampler, study_configuration, study_params

if TYPE_CHECKING:
    from optuna import Study

    from ...metrics import Task
    from ...registry._promotion import Verdict
    from ...tracking._study_views import StudyLinks
    from ...tuning._refit_choice import RefitChoice


@dataclass(frozen=True)
class TuneResult:
    """What a finished (or joined) run produced, as ``fairops tune`` prints it.

    Parameters
    ----------
    settings : TuneSettings
        The run's resolved settings.
    study : optuna.Study
        The run's study.
    fits : int
        How many fits the study holds for the run.
    rows : dict
        The summary's rows, the pick's first then the most accurate fit's: label to the fit's ``trial`` and
        its refit ``validation`` and ``test`` figures (empty for a worker that left the pick to another).
    registered : RegisteredVersion or None
        The pick's registered version (None: nothing picked).
    already_registered : bool
        True when an earlier run of the study had registered the pick: nothing new was registered.
    links : StudyLinks or None
        The links to the study's views in MLflow.
    task : Task or None
        What accuracy and fairness measure.
    failures : dict
        Failed fits by reason.
    choice : RefitChoice or None
        The robust rule's refit choice (None under the paper's rule).
    verdict : Verdict or None
        The promotion gate's verdict (``--promote`` when the new version became the challenger).
    test_counts : str or None
        The test rows behind the fairness ratio, in words.
    notes : tuple of str, default=()
        Which fits were set aside and against which standing of the fairness line the pick was made.
    missing : list of str
        The summary's lines on missing feature values (none: the data had none).
    """

    settings: TuneSettings
    study: Study
    fits: int
    rows: dict = field(default_factory=dict)
    registered: RegisteredVersion | None = None
    already_registered: bool = False
    links: StudyLinks | None = None
    task: Task | None = None
    failures: dict = field(default_factory=dict)
    choice: RefitChoice | None = None
    verdict: Verdict | None = None
    test_counts: str | None = None
    notes: tuple = ()
    missing: list = field(default_factory=list)


@dataclass(frozen=True)
class TunePick:
    """What ``fairops tune`` picked from a finished run, with what its summary and parent run show of it.

    Parameters
    ----------
    picked : PickChoice
        The pick refit, its scores, and the most accurate fit beside it.
    rows : dict
        The summary's rows, the pick's first then the most accurate fit's: label to the fit's ``trial`` and
        its refit ``validation`` and ``test`` figures.
    test_counts : str
        The test rows behind the fairness ratio, in words.
    notes : tuple of str, default=()
        Which fits were set aside and against which standing of the fairness line the pick was made.
    """

    picked: PickChoice
    rows: dict
    test_counts: str
    notes: tuple = ()

    @property
    def trial(self):
        """The picked fit."""
        return self.picked.trial


def run_tune(settings: TuneSettings, *, out=None) -> TuneResult:
    """Run (or resume, or join) the study, then pick, refit, test and register (:func:`~.driver.drive`).

    >>> settings = TuneSettings(dataset="german", method="fb-bal", project_dir="/nonexistent/x", storage="x")
    >>> settings.tuner, target_trials(settings)
    ('FB-bal', 206)
    """
    from .._driver import drive

    settings = settings.resolved()
    quiet_libraries()
    return drive(TuneJob(settings, out or sys.stdout))


class TuneJob(TuningJob[TunePick, "Verdict", TuneResult]):
    """``fairops tune`` for the driver: the data, the objective over the model families, the pick and its
    registration with the refit model, and the summary."""

    def __init__(self, settings: TuneSettings, out) -> None:
        from ...tuning import FairnessObjective
        from .. import _mlflow_study as mlflow_study
        from .._driver import Plan

        assert settings.storage and settings.study_name and settings.tracking_uri and settings.model_name, \
            "TuneJob runs resolved settings (TuneSettings.resolved)"
        self.settings, self.out = settings, out
        self.data = data = load_source(settings)
        self.families = families = families_of(settings)
        self.row_ids = row_hashes(data.X, data.sensitive)
        self.objective = FairnessObjective(data, profile=settings.profile, families=families, seed=settings.seed,
                                           max_train_rows=settings.max_train_rows, decision=settings.decision,
                                           blind=settings.blind, test_rows=held_out_rows(settings, data, self.row_ids),
                                           level=settings.level, **budget_floor(settings.selection))
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
        from ...tuning._quiet import constant_fits_quiet

        return constant_fits_quiet()

    def announce(self, study, done_before: int) -> None:
        settings, data, target, out = self.settings, self.data, self.plan.target, self.out
        print(f"project: {settings.project_dir}\nstudy: {settings.study_name} ({settings.tuner}, "
              f"{target} fits, {done_before} already in the study)\nstorage: {settings.storage}\n"
              f"tracking: {settings.tracking_uri}\ndata: {data!r}\ntask: {data.task.describe()}\n"
              f"decisions: {decision_words(settings.decision, settings.blind, data)}", file=out, flush=True)
        if data.unlabelled:
            print(f"left out: {data.unlabelled:,} rows of {settings.data} whose label ({settings.target}) is missing",
                  file=out, flush=True)
        for line in missing_lines(data.X, self.families):
            print(line, file=out, flush=True)
        if settings.progress and done_before < target:
            print(legend(self.plan.alpha), file=out, flush=True)

    def worker_done(self, study, trials) -> TuneResult:
        result = TuneResult(self.settings, study, fits=len(trials), task=self.data.task, failures=failures_of(trials))
        print(f"worker done: {result.fits} fits in the study", file=self.out)
        return result

    def choose(self, study, tracker, trials) -> TunePick:
        settings = self.settings
        picked = choose_pick(settings.selection, self.objective, trials, self.plan.alpha, settings.rule)
        pick, accurate = picked.pick, picked.accurate
        _, y_test, sensitive_test = self.objective.rows("test")
        most = "most accurate fit" if settings.min_fairness is None else "most accurate among fits meeting the floor"
        rows = {
            f"Fairband pick (#{pick.trial.number}, {family_of(pick.trial, self.families)})":
                {"trial": pick.trial, **picked.scores},
            f"{most} (#{accurate.trial.number}, {family_of(accurate.trial, self.families)})":
                {"trial": accurate.trial, **picked.accurate_scores},
        }
        return TunePick(picked, rows, counts_text(self.objective.task, y_test, sensitive_test,
                                                  held=held_out_words(settings)),
                        tuple(pick_notes(picked, self.objective.task.fairness_label)))

    def register(self, study, tracker, chosen: TunePick) -> RegisteredVersion:
        registered = register_pick(self.settings, study, self.objective, chosen.picked)
        record_rows(self.settings, self.objective, self.data, registered)
        return registered

    def registered(self, study, tracker, chosen: TunePick, registration: Registration) -> Verdict | None:
        """``--promote``: the gate's verdict when this run's new version became the challenger. A version an
        earlier run registered without a row record of the current rule gets one now (how such a version is
        recorded again: its tune run again)."""
        from mlflow.tracking import MlflowClient

        from ...registry._registration import RegisteredBest
        from ...registry._row_record import has_current_record
        from .. import _mlflow_study as mlflow_study

        new = registration.version  # an MLflow ModelVersion when an earlier run registered the pick
        name = self.settings.model_name
        assert name is not None  # resolved settings
        if registration.before and not has_current_record(MlflowClient(self.settings.tracking_uri), name, new.version):
            record_rows(self.settings, self.objective, self.data, new)
            print(f"recorded the rows {name} version {new.version} was trained and validated on (row rule of this "
                  "fairops)", file=self.out, flush=True)
        verdict = None
        if self.settings.promote and not registration.before and isinstance(new, RegisteredBest) \
                and new.kept_version is not None:
            verdict = _promote_now(self.settings, self.objective, new)
        mlflow_study.log_pick(tracker, study, chosen.rows, chosen.picked.refits)
        return verdict

    def report(self, outcome: Outcome[TunePick, Verdict]) -> TuneResult:
        chosen, registration = outcome.chosen, outcome.registration
        result = TuneResult(
            self.settings, outcome.study, fits=len(outcome.trials), rows=chosen.rows, registered=registration.version,
            already_registered=registration.before, links=outcome.links, task=self.data.task,
            failures=failures_of(outcome.trials), choice=chosen.picked.refits, verdict=outcome.follow_up,
            test_counts=chosen.test_counts, notes=chosen.notes,
            missing=missing_lines(self.data.X, self.families))
        print_summary(result, out=self.out)
        return result


def _promote_now(settings: TuneSettings, objective, registered):
    """``--promote``: the gate at once, on the test rows of this run's split (``--min-fairness`` its floor)."""
    from ...registry._promotion import promote

    assert settings.model_name is not None  # resolved settings
    X, y, sensitive = objective.rows("test")
    return promote(settings.model_name, X, y, sensitive, candidate=registered.version, task=objective.task,
                   min_fairness=settings.min_fairness, fairness_line=settings.fairness_line, level=settings.level,
                   tracking_uri=settings.tracking_uri, source="the test rows")


def family_of(trial, families) -> str:
    """The model family of a fit (its ``model`` parameter, or the one family tuned)."""
    return str(trial.params.get("model", families[0] if len(families) == 1 else "?"))
