"""``fairops outliers --tune``: Fairband over FairLOF's hyperparameters, then the pick refitted on all rows."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._param_checks import check_alpha
from ...datasets import BudgetSlicer
from ...errors import InputError
from ...tracking._session import ensure_experiment
from .._driver import Outcome, TuningJob
from .._running import HEARTBEAT_SECONDS
from .data import OutlierData, load_outlier_data
from .report import compare, explained, fit_detector, format_table
from .tracking import (
    ProjectStores,
    _base_params,
    _client,
    default_model_name,
    log_result_run,
    print_where_to_find,
    resolve_stores,
)

TUNE_MAX_ROWS = 5000
METHODS = {"fb-auto": "auto", "fb-bal": 0.5, "hb": 1.0}
#: Fairband's search space over FairLOF (inclusive bounds); the exponents are drawn on a log scale.
SEARCH_SPACE = {"n_neighbors": (3, 30), "lambda": (0.0, 1.0), "weight_exponent": (0.5, 2.0),
                "share_exponent": (0.5, 2.0)}


def normalised_fairness(fair_wasserstein: float, plain_wasserstein: float) -> float:
    """Fairness in [0, 1]: the share of plain LOF's Wasserstein disparity that FairLOF removes.

    ``clip(1 - fair / plain, 0, 1)``: 0 = no better than LOF (or worse), 1 = proportional
    representation. When LOF is already proportional (plain = 0): 1 if FairLOF is too, else 0.

    Parameters
    ----------
    fair_wasserstein, plain_wasserstein : float
        Wasserstein disparity of FairLOF's and of plain LOF's outliers.

    Returns
    -------
    float
        The fairness in [0, 1].

    Examples
    --------
    >>> normalised_fairness(0.05, 0.2), normalised_fairness(0.3, 0.2), normalised_fairness(0.0, 0.0)
    (0.75, 0.0, 1.0)
    """
    if plain_wasserstein <= 0:
        return 1.0 if fair_wasserstein <= 0 else 0.0
    return float(min(1.0, max(0.0, 1.0 - fair_wasserstein / plain_wasserstein)))

def make_objective(data: OutlierData, *, seed: int = 0, top_t=None, correction="paper"):
    """Optuna objective over FairLOF's hyperparameters: returns (Jaccard vs LOF, normalised fairness).

    Parameters
    ----------
    data : OutlierData
        The rows; a trial's budget is a nested stratified share of them.
    seed : int, default=0
        Seeds the budget slices.
    top_t : int or None, default=None
        The outlier list size on all rows (scaled to a slice's rows).
    correction : {"paper", "per_value"}, default="paper"
        FairLOF's correction.

    Returns
    -------
    callable
        ``objective(trial) -> (jaccard, fairness)``.
    """
    from ...fairband import budget

    slicer = BudgetSlicer(np.zeros(data.n_rows, dtype=np.int8), data.sensitive, seed=seed)

    def objective(trial):
        fraction = budget(trial)
        low, high = SEARCH_SPACE["n_neighbors"]
        k = trial.suggest_int("n_neighbors", low, high)
        lam = trial.suggest_float("lambda", *SEARCH_SPACE["lambda"])
        weight_exponent = trial.suggest_float("weight_exponent", *SEARCH_SPACE["weight_exponent"], log=True)
        share_exponent = trial.suggest_float("share_exponent", *SEARCH_SPACE["share_exponent"], log=True)
        rows = slicer.indices(fraction)
        t = None if top_t is None else max(1, int(round(top_t * len(rows) / data.n_rows)))
        detector = fit_detector(data, n_neighbors=k, correction_strength=lam, weight_exponent=weight_exponent,
                                share_exponent=share_exponent, correction=correction, top_t=t, rows=rows)
        result = compare(detector, data.sensitive.iloc[rows])
        for name, value in result["FairLOF"].items():
            trial.set_user_attr(name, value)
        trial.set_user_attr("lof_wasserstein_disparity", result["LOF"]["wasserstein_disparity"])
        trial.set_user_attr("rows", int(len(rows)))
        trial.set_user_attr("n_neighbors_used", int(detector.n_neighbors_))
        fairness = normalised_fairness(result["FairLOF"]["wasserstein_disparity"],
                                       result["LOF"]["wasserstein_disparity"])
        return result["FairLOF"]["jaccard"], fairness

    return objective


@dataclass
class OutlierTuneSettings:
    """What ``fairops outliers --tune`` needs beyond the data, checked when made (the CLI flags map onto it).

    >>> OutlierTuneSettings(method="fb-bal").alpha, OutlierTuneSettings(fairband_alpha=0.3).alpha
    (0.5, 0.3)
    >>> OutlierTuneSettings(trials=0)
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: --trials must be a positive integer, got 0
    """

    method: str = "fb-auto"
    fairband_alpha: float | None = None
    iterations: int = 1
    trials: int | None = None
    n_jobs: int = 1
    heartbeat: float = HEARTBEAT_SECONDS
    seed: int = 0
    study_name: str | None = None
    progress: bool = True
    ui_port: int = 5000

    def __post_init__(self):
        if self.method not in METHODS:
            raise InputError(f"--method must be one of {sorted(METHODS)}, got {self.method!r}")
        check_alpha(self.alpha, name="--fairband-alpha", accepted="a number")
        if self.iterations < 1:
            raise InputError(f"--iterations must be a positive integer, got {self.iterations}")
        if self.trials is not None and self.trials < 1:
            raise InputError(f"--trials must be a positive integer, got {self.trials}")
        if self.n_jobs < 1:
            raise InputError(f"--n-jobs must be at least 1, got {self.n_jobs}")
        if not self.heartbeat > 0:
            raise InputError(f"--heartbeat must be a positive number of seconds, got {self.heartbeat}")

    @property
    def alpha(self):
        return METHODS[self.method] if self.fairband_alpha is None else self.fairband_alpha

    @property
    def target(self) -> int:
        """Fits of the run: ``trials``, or ``iterations`` x 206."""
        from ...fairband import iteration_size

        return self.trials if self.trials is not None else self.iterations * iteration_size()


def run_tune(args) -> int:
    """Fairband over FairLOF's hyperparameters, then the pick refitted on all rows (:func:`~..driver.drive`).

    Resuming, Ctrl-C (first: finish the fits in flight; second: abort), heartbeats on RDB storages (a
    dead worker's fit gets its failed child run), progress reports and several workers on one study
    work as in ``fairops tune``. Running a finished study again reports the pick's run logged earlier
    instead of logging it again.

    Parameters
    ----------
    args : argparse.Namespace
        The ``fairops outliers --tune`` options.

    Returns
    -------
    int
        The exit status.
    """
    from .._driver import drive
    from .._running import quiet_libraries

    settings = OutlierTuneSettings(method=args.method, fairband_alpha=args.fairband_alpha,
                                   iterations=args.iterations, trials=args.trials, n_jobs=args.n_jobs,
                                   heartbeat=args.heartbeat,
                                   seed=args.seed, study_name=args.study_name, progress=not args.no_progress,
                                   ui_port=args.ui_port)
    args.max_rows = TUNE_MAX_ROWS if args.max_rows is None else args.max_rows
    data = load_outlier_data(args.dataset, data=args.data, sensitive=args.sensitive, target=args.target,
                             max_rows=args.max_rows, seed=args.seed, categorical=args.categorical)
    if args.top_t is not None and not 1 <= args.top_t <= data.n_rows:
        raise InputError(f"--top-t must be an integer in [1, {data.n_rows}] (the rows used), got {args.top_t}")
    stores = resolve_stores(args.project_dir, args.tracking_uri, args.storage, tune=True)
    quiet_libraries()
    client = _client(stores.tracking_uri)
    experiment_id = ensure_experiment(client, args.experiment, stores.artifact_location)
    drive(OutlierTuneJob(settings, args, data, stores, experiment_id))
    return 0


_DESCRIPTION = ("**accuracy** = Jaccard of FairLOF's top-t outliers against plain LOF's on the same rows; "
                "**fairness** = the share of LOF's Wasserstein disparity between the sensitive groups that "
                "FairLOF removes.")


class OutlierTuneJob(TuningJob["_Pick", None, None]):
    """``fairops outliers --tune`` for the driver: FairLOF's objective, the pick refitted on all rows and
    logged (and registered) in a selection run."""

    def __init__(self, settings: OutlierTuneSettings, args, data: OutlierData, stores: ProjectStores,
                 experiment_id: str) -> None:
        from .._driver import Plan

        self.settings, self.args, self.data, self.stores, self.out = settings, args, data, stores, sys.stdout
        self.experiment_id = experiment_id
        assert stores.storage is not None  # the stores of a tuning run hold an Optuna storage
        alpha = settings.alpha
        self.objective = make_objective(data, seed=settings.seed, top_t=args.top_t, correction=args.correction)
        self.plan = Plan(
            storage=stores.storage, study_name=settings.study_name or
            f"outliers-{data.name}-{settings.method}-seed{settings.seed}", target=settings.target,
            tracking_uri=stores.tracking_uri, model_name=args.model_name or default_model_name(data.name),
            alpha=alpha, experiment_name=args.experiment, artifact_location=stores.artifact_location,
            family="fairlof", heartbeat=settings.heartbeat, n_jobs=settings.n_jobs, catch=(ValueError,),
            progress=settings.progress, ui_port=settings.ui_port, description=_DESCRIPTION, study_params={
                **_base_params(data, args), "method": settings.method,
                "alpha_rule": "auto (FB-auto)" if alpha == "auto" else f"{float(alpha):g}",
                "iterations": settings.iterations, "fits": settings.target,
                "accuracy_metric": "Jaccard of FairLOF's top-t vs LOF's",
                "fairness_ratio": "share of LOF's Wasserstein disparity removed"})

    def sampler(self):
        from ...fairband import FairbandSampler

        data = self.data
        configuration = {"job": "outliers", "data": data.name, "rows": data.n_rows,
                         "features": list(data.features.columns), "sensitive": list(data.sensitive.columns)}
        return FairbandSampler(alpha=self.settings.alpha, seed=self.settings.seed, configuration=configuration)

    def pruner(self):
        from ...fairband import FairbandPruner

        return FairbandPruner()

    def announce(self, study, done_before: int) -> None:
        data, settings, stores = self.data, self.settings, self.stores
        if stores.project is not None:
            print(f"project: {stores.project}")
        print(f"data: {data.name}  rows: {data.n_rows} of {data.n_source_rows}  features: "
              f"{data.features.shape[1]}  sensitive: {','.join(data.sensitive.columns)}")
        print(f"study: {study.study_name} ({stores.storage})  method: {settings.method}  alpha: {settings.alpha}  "
              f"fits: {settings.target - done_before} to run, {done_before} done", flush=True)

    def choose(self, study, tracker, trials) -> _Pick:
        from ...fairband import select_best

        parent_run_id = tracker.parent_run_id(study)
        pick = select_best(trials, alpha=self.settings.alpha)
        params = pick.trial.params
        detector = fit_detector(self.data, n_neighbors=params["n_neighbors"], correction_strength=params["lambda"],
                                weight_exponent=params["weight_exponent"], share_exponent=params["share_exponent"],
                                correction=self.args.correction, top_t=self.args.top_t)
        result = compare(detector, self.data.sensitive)
        print(f"Fairband pick: trial {pick.trial.number} (budget {pick.trial.user_attrs.get('budget', 1.0):.3f}, "
              f"alpha {pick.alpha:.3f}): k={params['n_neighbors']} lambda={params['lambda']:.3f} "
              f"weight_exponent={params['weight_exponent']:.3f} share_exponent={params['share_exponent']:.3f}; "
              f"on its slice Jaccard {pick.accuracy:.3f}, fairness {pick.fairness:.3f}")
        print(f"refitted on all {self.data.n_rows} rows (k={detector.n_neighbors_}, t={detector.top_t_}):")
        print(format_table(result, {"LOF": 0.0, "FairLOF": detector.fitted_lambda_}))
        print(explained(result))
        return _Pick(pick, detector, result, parent_run_id)

    def register(self, study, tracker, chosen: _Pick) -> _Logged:
        return _log_pick(self, study, tracker, chosen)

    def report(self, outcome: Outcome[_Pick, None]) -> None:
        version, before = outcome.registration.version, outcome.registration.before
        model_uri = f"models:/{self.plan.model_name}/{version.version}"
        if before:
            print(f"the pick was logged by an earlier run of this study: run {version.run_id}; nothing new logged")
        print(f"runs: parent {outcome.chosen.parent_run_id}, pick {version.run_id} in experiment "
              f"{self.args.experiment!r}")
        print_where_to_find(self.stores, self.experiment_id, model_uri, outcome.links, ui_port=self.settings.ui_port)


@dataclass(frozen=True)
class _Pick:
    """The Fairband pick of a FairLOF tuning, refitted on all rows, its comparison with LOF, and the study's
    parent run."""

    selection: Any
    detector: Any
    result: dict
    parent_run_id: str

    @property
    def trial(self):
        return self.selection.trial


@dataclass(frozen=True)
class _Logged:
    """The pick's selection run and the version it registered."""

    run_id: str
    version: str


def _log_pick(job: OutlierTuneJob, study, tracker, chosen: _Pick) -> _Logged:
    """Log the refitted pick in a selection run under the study's parent run, registering its model."""
    from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID

    from ...registry._registration import MODEL_TAG
    from ...tracking._callback import ROLE_TAG, STUDY_TAG, TRIAL_TAG

    data, args, pick, result = job.data, job.args, chosen.selection, chosen.result
    refit_fairness = normalised_fairness(result["FairLOF"]["wasserstein_disparity"],
                                         result["LOF"]["wasserstein_disparity"])
    run_params = {**_base_params(data, args), **pick.trial.params, "pick_trial": pick.trial.number,
                  "fairband_alpha": pick.alpha, "method": job.settings.method, "study": study.study_name,
                  "correction": args.correction, "top_t": chosen.detector.top_t_}
    tags = {MLFLOW_PARENT_RUN_ID: tracker.parent_run_id(study), ROLE_TAG: "selection", STUDY_TAG: study.study_name,
            TRIAL_TAG: str(pick.trial.number), MODEL_TAG: job.plan.model_name, "fairops.dataset": data.name}
    extra = {"accuracy": result["FairLOF"]["jaccard"], "fairness": refit_fairness, "pick_score": pick.score,
             "pick_accuracy": pick.accuracy, "pick_fairness": pick.fairness}
    run_id, model_uri = log_result_run(
        tracker.client, tracker.experiment_id(study), run_name=f"{study.study_name}/pick", detector=chosen.detector,
        data=data, result=result, params=run_params, tags=tags, tracking_uri=job.stores.tracking_uri,
        extra_metrics=extra, model_name=job.plan.model_name)
    return _Logged(run_id, model_uri.rsplit("/", 1)[-1])
