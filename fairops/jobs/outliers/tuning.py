"""``fairops outliers --tune``: Fairband over FairLOF's hyperparameters, then the pick refitted on all rows."""

from __future__ import annotations

import sys
import warnings

import numpy as np

from ...datasets import BudgetSlicer
from .data import OutlierData, load_outlier_data
from .report import compare, explained, fit_detector, format_table
from .tracking import (ProjectStores, _base_params, _client, default_model_name, ensure_experiment, log_result_run,
                       print_where_to_find, resolve_stores)

TUNE_MAX_ROWS = 5000
METHODS = {"fb-auto": "auto", "fb-bal": 0.5, "hb": 1.0}
#: Fairband's search space over FairLOF (inclusive bounds); the exponents are drawn on a log scale.
SEARCH_SPACE = {"n_neighbors": (3, 30), "lambda": (0.0, 1.0), "weight_exponent": (0.5, 2.0),
                "share_exponent": (0.5, 2.0)}


def normalised_fairness(fair_wasserstein: float, plain_wasserstein: float) -> float:
    """Fairness in [0, 1]: the share of plain LOF's Wasserstein disparity that FairLOF removes.

    ``clip(1 - fair / plain, 0, 1)``: 0 = no better than LOF (or worse), 1 = proportional
    representation. When LOF is already proportional (plain = 0): 1 if FairLOF is too, else 0.

    >>> normalised_fairness(0.05, 0.2), normalised_fairness(0.3, 0.2), normalised_fairness(0.0, 0.0)
    (0.75, 0.0, 1.0)
    """
    if plain_wasserstein <= 0:
        return 1.0 if fair_wasserstein <= 0 else 0.0
    return float(min(1.0, max(0.0, 1.0 - fair_wasserstein / plain_wasserstein)))

def make_objective(data: OutlierData, *, seed: int = 0, top_t=None, correction="paper"):
    """Optuna objective over FairLOF's hyperparameters: returns (Jaccard vs LOF, normalised fairness)."""
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


def _open_study(args, stores: ProjectStores, data: OutlierData, alpha):
    import optuna

    from ...fairband import FairbandPruner, FairbandSampler
    from ..running import open_storage

    name = args.study_name or f"outliers-{data.name}-{args.method}-seed{args.seed}"
    try:
        study = optuna.create_study(directions=["maximize", "maximize"], storage=open_storage(stores.storage),
                                    study_name=name, sampler=FairbandSampler(alpha=alpha, seed=args.seed),
                                    pruner=FairbandPruner(), load_if_exists=True)
    except ValueError:
        raise
    except Exception as error:  # noqa: BLE001 - an unreachable server, a locked file
        raise ValueError(f"cannot open the Optuna storage {stores.storage!r}: {str(error).splitlines()[0]}") from None
    recorded = study.user_attrs.get("fairops.data")
    fingerprint = {"name": data.name, "rows": data.n_rows, "features": list(data.features.columns),
                   "sensitive": list(data.sensitive.columns)}
    if recorded is not None and recorded != fingerprint:
        raise ValueError(f"study {name!r} in {stores.storage} was run on other data ({recorded['name']}, "
                         f"{recorded['rows']} rows); use the same data options or another --study-name")
    study.set_user_attr("fairops.job", "outliers")
    study.set_user_attr("fairops.data", fingerprint)
    return study


def run_tune(args) -> int:
    """Fairband over FairLOF's hyperparameters, then the pick refitted on all rows.

    Resuming, Ctrl-C (first: finish the fits in flight; second: abort), heartbeats on RDB storages,
    progress reports and several workers on one study work as in ``fairops tune``. Running a finished
    study again reports the pick's run logged earlier instead of logging it again.
    """
    import optuna

    from ...fairband import iteration_size, select_best
    from ...tracking.callback import ROLE_TAG, STUDY_TAG, TRIAL_TAG, FairnessTrackingCallback
    from .. import mlflow_study
    from ..progress import FitProgress
    from ..running import Interrupt, quiet_libraries, refuse_trials_beyond, stop_at, tracked, wait_for_fits

    alpha = METHODS[args.method] if args.fairband_alpha is None else args.fairband_alpha
    if alpha != "auto" and not 0.0 <= float(alpha) <= 1.0:
        raise ValueError(f"--fairband-alpha must be a number in [0, 1], got {alpha!r}")
    if args.iterations < 1:
        raise ValueError(f"--iterations must be a positive integer, got {args.iterations}")
    if args.trials is not None and args.trials < 1:
        raise ValueError(f"--trials must be a positive integer, got {args.trials}")
    if args.n_jobs < 1:
        raise ValueError(f"--n-jobs must be at least 1, got {args.n_jobs}")
    max_rows = TUNE_MAX_ROWS if args.max_rows is None else args.max_rows
    args.max_rows = max_rows
    data = load_outlier_data(args.dataset, data=args.data, sensitive=args.sensitive, target=args.target,
                             max_rows=max_rows, seed=args.seed, categorical=args.categorical)
    if args.top_t is not None and not 1 <= args.top_t <= data.n_rows:
        raise ValueError(f"--top-t must be an integer in [1, {data.n_rows}] (the rows used), got {args.top_t}")
    stores = resolve_stores(args.project_dir, args.tracking_uri, args.storage, tune=True)
    quiet_libraries()
    client = _client(stores.tracking_uri)
    experiment_id = ensure_experiment(client, args.experiment, stores.artifact_location)

    study = _open_study(args, stores, data, alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.set_metric_names(["accuracy", "fairness"])
    tracker = FairnessTrackingCallback(stores.tracking_uri, args.experiment, alpha=alpha, family="fairlof",
                                       artifact_location=stores.artifact_location, fast_sql=True)
    target = args.trials if args.trials is not None else args.iterations * iteration_size()
    tracker.log_study_params(study, {**_base_params(data, args), "method": args.method,
                                     "alpha_rule": "auto (FB-auto)" if alpha == "auto" else f"{float(alpha):g}",
                                     "iterations": args.iterations, "fits": target,
                                     "accuracy_metric": "Jaccard of FairLOF's top-t vs LOF's",
                                     "fairness_ratio": "share of LOF's Wasserstein disparity removed"})
    done_before = len([t for t in study.get_trials(deepcopy=False) if t.number < target])
    if stores.project is not None:
        print(f"project: {stores.project}")
    print(f"data: {data.name}  rows: {data.n_rows} of {data.n_source_rows}  features: {data.features.shape[1]}  "
          f"sensitive: {','.join(data.sensitive.columns)}")
    print(f"study: {study.study_name} ({stores.storage})  method: {args.method}  alpha: {alpha}  "
          f"fits: {target - done_before} to run, {done_before} done", flush=True)
    objective = make_objective(data, seed=args.seed, top_t=args.top_t, correction=args.correction)
    parent = tracker.parent_run_id(study)
    with mlflow_study.parent_run_ended(tracker, study):
        if done_before < target:
            tracker.reopen(study)
            progress = FitProgress(target, alpha, stream=sys.stdout, enabled=not args.no_progress)
            with Interrupt() as interrupt:
                study.optimize(refuse_trials_beyond(objective, target), n_trials=None if done_before else target,
                               n_jobs=args.n_jobs, catch=(ValueError,),
                               callbacks=[tracked(tracker, target), progress, stop_at(target), interrupt.callback])
            progress.close()
        if len([t for t in study.get_trials(deepcopy=False) if t.number < target]) < target:
            raise KeyboardInterrupt  # stopped early: the study keeps what was done
        trials = wait_for_fits(study, target, timeout=3600.0)

        pick = select_best(trials, alpha=alpha)
        params = pick.trial.params
        detector = fit_detector(data, n_neighbors=params["n_neighbors"], correction_strength=params["lambda"],
                                weight_exponent=params["weight_exponent"], share_exponent=params["share_exponent"],
                                correction=args.correction, top_t=args.top_t)
        result = compare(detector, data.sensitive)
        print(f"Fairband pick: trial {pick.trial.number} (budget {pick.trial.user_attrs.get('budget', 1.0):.3f}, "
              f"alpha {pick.alpha:.3f}): k={params['n_neighbors']} lambda={params['lambda']:.3f} "
              f"weight_exponent={params['weight_exponent']:.3f} share_exponent={params['share_exponent']:.3f}; "
              f"on its slice Jaccard {pick.accuracy:.3f}, fairness {pick.fairness:.3f}")
        print(f"refitted on all {data.n_rows} rows (k={detector.n_neighbors_}, t={detector.top_t_}):")
        print(format_table(result, {"LOF": 0.0, "FairLOF": detector.fitted_lambda_}))
        print(explained(result))

        earlier = _logged_pick(client, experiment_id, study.study_name, pick.trial.number)
        if earlier is not None:
            run_id, model_uri = earlier
            print(f"the pick was logged by an earlier run of this study: run {run_id}; nothing new logged")
        else:
            refit_fairness = normalised_fairness(result["FairLOF"]["wasserstein_disparity"],
                                                 result["LOF"]["wasserstein_disparity"])
            from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID

            run_params = {**_base_params(data, args), **params, "pick_trial": pick.trial.number,
                          "fairband_alpha": pick.alpha, "method": args.method, "study": study.study_name,
                          "correction": args.correction, "top_t": detector.top_t_}
            tags = {MLFLOW_PARENT_RUN_ID: parent, ROLE_TAG: "selection", STUDY_TAG: study.study_name,
                    TRIAL_TAG: str(pick.trial.number), "fairops.dataset": data.name}
            extra = {"accuracy": result["FairLOF"]["jaccard"], "fairness": refit_fairness, "pick_score": pick.score,
                     "pick_accuracy": pick.accuracy, "pick_fairness": pick.fairness}
            run_id, model_uri = log_result_run(client, experiment_id, run_name=f"{study.study_name}/pick",
                                               detector=detector, data=data, result=result, params=run_params,
                                               tags=tags, tracking_uri=stores.tracking_uri, extra_metrics=extra,
                                               model_name=args.model_name or default_model_name(data.name))
        tracker.finish(study)
    links = mlflow_study.publish(tracker, study, pick.trial, description=(
        "**accuracy** = Jaccard of FairLOF's top-t outliers against plain LOF's on the same rows; **fairness** "
        "= the share of LOF's Wasserstein disparity between the sensitive groups that FairLOF removes."),
        ui_port=args.ui_port, refit_run_id=run_id)
    print(f"runs: parent {parent}, pick {run_id} in experiment {args.experiment!r}")
    print_where_to_find(stores, experiment_id, model_uri, links, ui_port=args.ui_port)
    return 0


def _logged_pick(client, experiment_id: str, study_name: str, trial_number: int):
    """``(run_id, model_uri)`` of the pick run an earlier run of this study logged for this trial, or None."""
    from ...tracking.callback import ROLE_TAG, STUDY_TAG, TRIAL_TAG

    escaped = study_name.replace("'", "\\'")
    runs = client.search_runs([experiment_id], f"tags.`{ROLE_TAG}` = 'selection' and tags.`{STUDY_TAG}` = "
                              f"'{escaped}' and tags.`{TRIAL_TAG}` = '{trial_number}' and attributes.status = 'FINISHED'",
                              max_results=1)
    if not runs:
        return None
    models = client.search_logged_models([experiment_id], filter_string=f"source_run_id = '{runs[0].info.run_id}'",
                                         max_results=1)
    return runs[0].info.run_id, (models[0].model_uri if models else f"runs:/{runs[0].info.run_id}/model")
