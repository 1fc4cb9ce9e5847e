"""One tuning driver for every command that tunes (``fairops tune``, ``fairops outliers --tune``).

A command supplies a :class:`TuningJob`: its :class:`Plan` (storage, study, fits, tracking), its sampler,
its objective, and what it prints, picks and registers. :func:`drive` does the rest, the same way for
each: the study is opened or joined (a Fairband sampler refuses a worker started with another
configuration), every fit becomes a child run (a fit failed by a dead worker's heartbeat too), progress
is reported, Ctrl-C stops cleanly (the parent run ends KILLED), the run is worked to its end (dead
workers' fits redone, live workers' awaited), fits whose worker died before logging them are logged,
then the pick is made and registered once per study and pick
(:func:`fairops.registry._run_once.register_once`), and the study's views are published in MLflow.

Each hook returns what it produced as a new value and changes no value another hook made: ``choose``
returns the job's pick, ``register`` the new version, ``registered`` what acting on the registration
produced (a promotion's verdict); the driver keeps the registration as a :class:`Registration` and gathers
these, with the published links, into one frozen :class:`Outcome`, which the job's ``report`` turns into
the command's result.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from ..errors import InputError
from ..tracking._ui_links import DEFAULT_UI_PORT
from ._running import (
    HEARTBEAT_SECONDS,
    Interrupt,
    NumberedRun,
    SlotRun,
    StaleTrialCallbacks,
    open_storage,
    track_missing,
    tracked,
    work_until_complete,
)

if TYPE_CHECKING:
    from optuna import Study
    from optuna.trial import FrozenTrial

    from ..tracking._study_views import StudyLinks


@dataclass
class Plan:
    """Where and how a tuning job runs: the stores, the study, its fits and their tracking."""

    storage: str
    study_name: str
    target: int
    tracking_uri: str
    model_name: str
    alpha: float | Literal["auto"] | None
    study_params: dict = field(default_factory=dict)
    experiment_name: str | None = None
    artifact_location: str | None = None
    family: str | None = None
    metric_names: tuple = ("accuracy", "fairness")
    heartbeat: float = HEARTBEAT_SECONDS
    wait_timeout: float = 3600.0
    n_jobs: int = 1
    catch: tuple = (Exception,)
    progress: bool = True
    finalize: bool = True
    ui_port: int = DEFAULT_UI_PORT
    description: str = ""


class Picked(Protocol):
    """What a job's ``choose`` returns: a pick the driver registers and marks by its fit.

    Attributes
    ----------
    trial : optuna.trial.FrozenTrial
        The picked fit.
    """

    @property
    def trial(self) -> FrozenTrial: ...


class RegisteredVersion(Protocol):
    """What a job's ``register`` returns, and what an earlier registration of the same pick left: a version
    of the job's registered model (a :class:`~fairops.registry._registration.RegisteredBest`, an MLflow
    ``ModelVersion``).

    Attributes
    ----------
    version : str
        The version number.
    run_id : str
        The run that logged the version's model (listed beside the pick in the study's views).
    """

    @property
    def version(self) -> str: ...

    @property
    def run_id(self) -> str: ...


@dataclass(frozen=True)
class Registration:
    """The pick's registration as :func:`~fairops.registry._run_once.register_once` settled it.

    Parameters
    ----------
    version : RegisteredVersion
        The version the job's ``register`` made, or the one an earlier (or concurrent) run of the study
        registered for the same pick.
    before : bool
        True when that earlier run registered it: nothing new was registered.
    """

    version: RegisteredVersion
    before: bool


PickT = TypeVar("PickT", bound=Picked)
FollowUpT = TypeVar("FollowUpT")
ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class Outcome(Generic[PickT, FollowUpT]):
    """What :func:`drive` gathers from a finished run's hooks, for the job's ``report``.

    Parameters
    ----------
    study : optuna.Study
        The run's study.
    trials : tuple of optuna.trial.FrozenTrial
        The run's fits, as ``choose`` was given them.
    chosen : PickT
        What the job's ``choose`` returned.
    registration : Registration
        The pick's registration.
    follow_up : FollowUpT or None
        What the job's ``registered`` returned (``fairops tune --promote``: the promotion gate's verdict).
    links : StudyLinks
        The links to the study's views in MLflow.
    """

    study: Study
    trials: tuple[FrozenTrial, ...]
    chosen: PickT
    registration: Registration
    follow_up: FollowUpT | None
    links: StudyLinks


class TuningJob(Generic[PickT, FollowUpT, ResultT]):
    """What a command supplies to :func:`drive`; subclasses fill in the hooks.

    ``plan`` and ``objective`` are attributes; ``sampler()`` (and ``pruner()``) make the study's;
    ``announce`` prints the job's header, ``choose`` picks among the run's fits (returning a frozen value
    with the picked ``trial``), ``register`` logs and registers it (returning the new version, whose
    ``run_id`` names the run of its model), ``registered`` acts on the :class:`Registration` outside the
    model's lock and returns what that produced (a promotion's verdict; None by default), ``report`` prints
    the :class:`Outcome` and returns the command's result made from it; ``worker_done`` ends a worker that
    leaves the pick to another (``plan.finalize`` False) and returns the command's result.
    """

    plan: Plan
    objective: Any = None
    out = sys.stdout

    def sampler(self):
        raise NotImplementedError

    def pruner(self):
        return None

    def quiet(self):
        """A context the fits run in (e.g. silencing warnings the objective counts itself)."""
        return contextlib.nullcontext()

    def announce(self, study, done_before: int) -> None:
        raise NotImplementedError

    def worker_done(self, study, trials: list[FrozenTrial]) -> ResultT:
        raise NotImplementedError

    def choose(self, study, tracker, trials: list[FrozenTrial]) -> PickT:
        raise NotImplementedError

    def register(self, study, tracker, chosen: PickT) -> RegisteredVersion:
        raise NotImplementedError

    def registered(self, study, tracker, chosen: PickT, registration: Registration) -> FollowUpT | None:
        """After registration (``registration.before``: registered by an earlier or concurrent run); what
        it returns is :attr:`Outcome.follow_up`. None by default."""
        return None

    def report(self, outcome: Outcome[PickT, FollowUpT]) -> ResultT:
        raise NotImplementedError


def open_study(plan: Plan, sampler, pruner=None, on_stale=None):
    """Create the study, or join it when it exists (resume, or another worker).

    A Fairband sampler started with another configuration than the study's is refused before it
    creates a trial. ``on_stale(study, trial)`` hears of every trial this worker fails because its
    worker's heartbeat stopped.
    """
    import warnings

    import optuna

    from ..fairband import FairbandSampler

    storage = open_storage(plan.storage, plan.heartbeat, on_stale=on_stale)
    try:
        study = optuna.create_study(study_name=plan.study_name, storage=storage, sampler=sampler, pruner=pruner,
                                    directions=["maximize", "maximize"], load_if_exists=True)
    except ValueError:
        raise
    except Exception as error:  # noqa: BLE001 - an unreachable server, a locked file
        raise InputError(f"cannot open the Optuna storage {plan.storage!r}: {str(error).splitlines()[0]}") from None
    if isinstance(sampler, FairbandSampler):
        sampler.check_configuration(study)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.set_metric_names(list(plan.metric_names))
    return study


def run_of(study, target: int):
    """The fits the job asks for: the Fairband slots, or the first trials of another sampler's study."""
    from ..fairband import FairbandSampler

    return SlotRun(study, target) if isinstance(study.sampler, FairbandSampler) else NumberedRun(study, target)


def _tracker(plan: Plan):
    from ..tracking._callback import FairnessTrackingCallback

    return FairnessTrackingCallback(plan.tracking_uri, experiment_name=plan.experiment_name, alpha=plan.alpha,
                                    family=plan.family, artifact_location=plan.artifact_location, synchronous=False)


def _fit_all(job: TuningJob[Any, Any, Any], study, run, tracker) -> None:
    """Work the run to its end (KeyboardInterrupt when Ctrl-C stops it first)."""
    from ._progress import FitProgress

    plan = job.plan
    tracker.reopen(study)
    progress = FitProgress(plan.target, plan.alpha, stream=job.out, enabled=plan.progress)
    with Interrupt() as interrupt, job.quiet():
        # Works until every fit is finished: redoes dead workers' fits, waits for live workers' ones.
        complete = work_until_complete(study, job.objective, run, n_jobs=plan.n_jobs, catch=plan.catch,
                                       callbacks=[tracked(tracker, run), progress], interrupt=interrupt,
                                       wait_timeout=plan.wait_timeout)
        tracker.flush()  # this worker's child runs are all written before anyone looks for missing ones
    progress.close()
    if not complete:
        raise KeyboardInterrupt  # stopped early: the study keeps what was done


def drive(job: TuningJob[PickT, FollowUpT, ResultT]) -> ResultT:
    """Run (or resume, or join) the job's study to its end, then pick, register and publish; see the module."""
    from ..registry._run_once import register_once
    from . import _mlflow_study as mlflow_study

    plan = job.plan
    stale = StaleTrialCallbacks()
    study = open_study(plan, job.sampler(), job.pruner(), on_stale=stale)
    run = run_of(study, plan.target)
    tracker = _tracker(plan)
    tracker.log_study_params(study, plan.study_params)
    stale.add(tracked(tracker, run))  # a dead worker's fit gets its (failed) child run too
    done_before = run.status()[0]
    job.announce(study, done_before)
    with mlflow_study.parent_run_ended(tracker, study, end=plan.finalize):
        if done_before < plan.target:
            _fit_all(job, study, run, tracker)
        trials = run.fits()
        if not plan.finalize:
            return job.worker_done(study, trials)
        track_missing(tracker, study, run, settle=2 * plan.heartbeat)  # fits whose worker died before logging
        chosen = job.choose(study, tracker, trials)
        version, before = register_once(tracker, study, plan.model_name, chosen.trial.number,
                                        lambda: job.register(study, tracker, chosen))
        registration = Registration(version, before)
        follow_up = job.registered(study, tracker, chosen, registration)
        tracker.finish(study)
    links = mlflow_study.publish(tracker, study, chosen.trial, description=plan.description, ui_port=plan.ui_port,
                                 refit_run_id=registration.version.run_id)
    return job.report(Outcome(study, tuple(trials), chosen, registration, follow_up, links))
