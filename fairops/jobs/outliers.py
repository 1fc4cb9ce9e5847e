"""``fairops outliers``: FairLOF against plain LOF on one data set, tracked in MLflow.

Without ``--tune``: one FairLOF fit (``--lambda`` a number in [0, 1], or ``auto`` for the Jaccard guide
point ``--target-jaccard``), the LOF vs FairLOF table printed, params + metrics + the lambda path logged in
one MLflow run, and the detector logged with the fairops FairLOF flavor (fitted with ``novelty=True`` so the
served model scores new rows).

With ``--tune``: Fairband searches FairLOF's own hyperparameters (``n_neighbors`` 3..30, ``lambda`` in
[0, 1], Flex ``flex_alpha`` and ``flex_beta`` in [0.5, 2], log scale) in a two-objective Optuna study:

- accuracy (quality) = Jaccard of FairLOF's top-t against plain LOF's top-t on the same rows;
- fairness = the share of plain LOF's Wasserstein disparity that FairLOF removes,
  ``clip(1 - Wass(FairLOF) / Wass(LOF), 0, 1)`` (see :func:`normalised_fairness`);
- budget = share of the rows: nested slices stratified by the intersection of the sensitive columns
  (``fairops.datasets.BudgetSlicer`` with a constant label), so a smaller slice is inside every larger one.

Every trial sets the user attributes ``jaccard``, ``preservation``, ``outlier_fraction``,
``euclidean_disparity`` and ``wasserstein_disparity`` and becomes a child run through
``FairnessTrackingCallback``; the Fairband pick is refitted on all rows, printed and logged with its model.

Features: the numeric columns (sensitive columns and the optional target excluded), each standardised to
mean 0 and sd 1 on the rows used; constant columns are dropped. Text/categorical columns are dropped
(``--categorical drop``, the FairLOF paper benchmark's choice) or one-hot encoded before standardising
(``--categorical onehot``). The logged model takes the *standardised* features: the means and scales are
logged with the run (``preprocessing/standardise.json``).

>>> data = load_outlier_data("german", max_rows=300, seed=0)
>>> detector = fit_detector(data, n_neighbors=5, lambda_=0.0)
>>> table = compare(detector, data.sensitive)
>>> table["FairLOF"]["jaccard"], table["change"]["wasserstein_disparity"]
(1.0, 0.0)
"""

from __future__ import annotations

import logging
import math
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..datasets import LOADERS, BudgetSlicer, load_dataset
from ..metrics import euclidean_disparity, jaccard, outlier_fraction, preservation, wasserstein_disparity

if TYPE_CHECKING:
    from ..fairlof import FairLOF

DEFAULT_DATASET = "credit_default"
DEFAULT_PROJECT = "fairops-project"
DEFAULT_EXPERIMENT = "fairops-outliers"
TUNE_MAX_ROWS = 5000
METHODS = {"fb-auto": "auto", "fb-bal": 0.5, "hb": 1.0}
METRICS = ("jaccard", "preservation", "outlier_fraction", "euclidean_disparity", "wasserstein_disparity")
SHORT = {"jaccard": "Jacc", "preservation": "Pres", "outlier_fraction": "OF",
         "euclidean_disparity": "ED", "wasserstein_disparity": "Wass"}
#: Fairband's search space over FairLOF (inclusive bounds); the exponents are drawn on a log scale.
SEARCH_SPACE = {"n_neighbors": (3, 30), "lambda": (0.0, 1.0), "flex_alpha": (0.5, 2.0), "flex_beta": (0.5, 2.0)}
READERS = {".csv": pd.read_csv, ".parquet": pd.read_parquet}


# --------------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class OutlierData:
    """Standardised features and readable sensitive labels of the rows FairLOF runs on."""

    name: str
    features: pd.DataFrame
    sensitive: pd.DataFrame
    n_source_rows: int
    means: dict = field(default_factory=dict)
    scales: dict = field(default_factory=dict)
    dropped: tuple = ()

    @property
    def n_rows(self) -> int:
        return len(self.features)

    def preprocessing(self) -> dict:
        """What a user must apply to raw rows before scoring them with the logged model."""
        return {"standardise": {"mean": self.means, "scale": self.scales},
                "features": list(self.features.columns), "sensitive": list(self.sensitive.columns),
                "dropped_columns": list(self.dropped)}


def parse_lambda(text) -> float | str:
    """``"auto"`` or a float in [0, 1]; anything else is a ValueError naming ``--lambda``.

    >>> parse_lambda("auto"), parse_lambda("0.25")
    ('auto', 0.25)
    """
    if isinstance(text, str) and text.strip().lower() == "auto":
        return "auto"
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"--lambda must be a number in [0, 1] or 'auto', got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"--lambda must be a number in [0, 1] or 'auto', got {text!r}")
    return value


def _split_names(text) -> list[str]:
    if text is None:
        return []
    names = [name.strip() for name in (text.split(",") if isinstance(text, str) else text)]
    if any(not name for name in names):
        raise ValueError(f"--sensitive must be comma-separated column names, got {text!r}")
    return names


def _read_table(path) -> pd.DataFrame:
    path = Path(path)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise ValueError(f"--data file {str(path)!r} must end in one of {sorted(READERS)}")
    if not path.is_file():
        raise ValueError(f"--data file {str(path)!r} does not exist")
    return reader(path)


def _source(dataset, data, sensitive, target):
    """(name, frame of candidate feature columns, sensitive frame) before subsampling."""
    names = _split_names(sensitive)
    if data is not None:
        if dataset is not None:
            raise ValueError("give either --dataset or --data, not both")
        frame = _read_table(data)
        if not names:
            raise ValueError("--sensitive is required with --data (comma-separated column names)")
        wanted = names + ([target] if target is not None else [])
        missing = [name for name in wanted if name not in frame.columns]
        if missing:
            raise ValueError(f"column(s) {missing} not in {Path(data).name}; it has {list(frame.columns)}")
        drop = names + ([target] if target is not None else [])
        return Path(data).stem, frame.drop(columns=drop), frame[names]
    dataset = dataset or DEFAULT_DATASET
    if dataset not in LOADERS:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {sorted(LOADERS)} or pass --data FILE")
    bundled = load_dataset(dataset)
    if target is not None:
        raise ValueError("--target applies to --data only (bundled data sets keep their label apart)")
    names = names or list(bundled.sensitive.columns)
    columns = {}
    for name in names:
        if name in bundled.sensitive.columns:
            columns[name] = bundled.sensitive[name]
        elif name in bundled.X.columns:
            columns[name] = bundled.X[name]
        else:
            known = sorted(set(bundled.X.columns) | set(bundled.sensitive.columns))
            raise ValueError(f"unknown sensitive column {name!r} for dataset {dataset!r}; columns: {known}")
    features = bundled.X.drop(columns=[name for name in names if name in bundled.X.columns])
    return dataset, features, pd.DataFrame(columns)


def _check_sensitive(sensitive: pd.DataFrame, where: str) -> pd.DataFrame:
    for name in sensitive.columns:
        column = sensitive[name]
        if column.isna().any():
            raise ValueError(f"sensitive column {name!r} has {int(column.isna().sum())} missing values{where}")
        if column.nunique() < 2:
            raise ValueError(f"sensitive column {name!r} has a single value{where}; "
                             "fair outlier detection needs at least two groups")
    return sensitive.astype(str).reset_index(drop=True)


def _standardised(frame: pd.DataFrame, categorical: str):
    if categorical not in ("drop", "onehot"):
        raise ValueError(f"--categorical must be 'drop' or 'onehot', got {categorical!r}")
    numeric = frame.select_dtypes(include=["number", "bool"]).astype(np.float64)
    others = [c for c in frame.columns if c not in numeric.columns]
    if categorical == "onehot" and others:
        dummies = pd.get_dummies(frame[others].astype(str), prefix_sep="=", dtype=np.float64)
        numeric = pd.concat([numeric, dummies], axis=1)
        others = []
    missing = {c: int(n) for c, n in numeric.isna().sum().items() if n}
    if missing:
        raise ValueError(f"feature column(s) with missing values {missing}; impute or drop them first")
    if not np.isfinite(numeric.to_numpy()).all():
        raise ValueError("feature columns hold infinite values; clean them first")
    scale = numeric.std(axis=0, ddof=0)
    constant = [str(c) for c in scale.index[scale <= 0]]
    numeric = numeric.loc[:, scale > 0]
    if numeric.shape[1] == 0:
        raise ValueError("no usable feature column: FairLOF needs at least one numeric, non-constant feature "
                         "(try --categorical onehot)")
    means, scales = numeric.mean(axis=0), numeric.std(axis=0, ddof=0)
    standard = ((numeric - means) / scales).reset_index(drop=True)
    standard.columns = [str(c) for c in standard.columns]
    return (standard, {str(k): float(v) for k, v in means.items()}, {str(k): float(v) for k, v in scales.items()},
            tuple(str(c) for c in others) + tuple(constant))


def load_outlier_data(dataset=None, *, data=None, sensitive=None, target=None, max_rows=None, seed=0,
                      categorical="drop") -> OutlierData:
    """Rows, standardised numeric features and sensitive labels for FairLOF.

    ``max_rows`` keeps about that many rows: a seeded sample stratified by the intersection of the
    sensitive columns (every non-empty group cell keeps at least one row; per-cell rounding
    can add or remove a few rows).

    >>> data = load_outlier_data("credit_default", max_rows=1000)
    >>> data.n_rows, data.features.shape[1], list(data.sensitive.columns)
    (1002, 20, ['SEX', 'EDUCATION', 'MARRIAGE'])
    """
    name, frame, groups = _source(dataset, data, sensitive, target)
    groups = _check_sensitive(groups, "")
    frame = frame.reset_index(drop=True)
    n_source = len(frame)
    if max_rows is not None:
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 2:
            raise ValueError(f"--max-rows must be an integer >= 2, got {max_rows!r}")
        if max_rows < n_source:
            rows = BudgetSlicer(np.zeros(n_source, dtype=np.int8), groups, seed=seed).indices(max_rows / n_source)
            frame, groups = frame.iloc[rows].reset_index(drop=True), groups.iloc[rows].reset_index(drop=True)
            groups = _check_sensitive(groups, f" in the {len(rows)}-row sample (raise --max-rows)")
    features, means, scales, dropped = _standardised(frame, categorical)
    return OutlierData(name, features, groups, n_source, means, scales, dropped)


# ------------------------------------------------------------------------------------ detectors
def fit_detector(data: OutlierData, *, n_neighbors=5, lambda_="auto", target_jaccard=0.9, alpha=1.0, beta=1.0,
                 top_t=None, rows=None) -> FairLOF:
    """A ``FairLOF(novelty=True)`` fitted on ``data`` (or its ``rows``); k is capped at rows - 1 as
    scikit-learn's LocalOutlierFactor does."""
    from ..fairlof import FairLOF  # imported on use: ``fairops --help`` stays quick

    features, sensitive = data.features, data.sensitive
    if rows is not None:
        features, sensitive = features.iloc[rows], sensitive.iloc[rows]
    n_rows = len(features)
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)) or n_neighbors < 1:
        raise ValueError(f"--neighbors must be a positive integer, got {n_neighbors!r}")
    if top_t is not None and (isinstance(top_t, bool) or not isinstance(top_t, (int, np.integer)) or top_t < 1):
        raise ValueError(f"--top-t must be a positive integer, got {top_t!r}")
    if top_t is not None and top_t > n_rows:
        raise ValueError(f"--top-t={top_t} is larger than the number of rows ({n_rows})")
    detector = FairLOF(n_neighbors=int(min(n_neighbors, n_rows - 1)), lambda_=lambda_, alpha=alpha, beta=beta,
                       top_t=top_t, target_jaccard=target_jaccard, novelty=True)
    return detector.fit(features.to_numpy(dtype=np.float64), sensitive_features=sensitive)


def outlier_metrics(lof_scores, top, plain_top, sensitive) -> dict:
    """Jacc, Pres, OF, ED and Wass of the outlier list ``top`` against plain LOF's ``plain_top``."""
    return {
        "jaccard": jaccard(top, plain_top),
        "preservation": preservation(lof_scores, top, plain_top),
        "outlier_fraction": outlier_fraction(lof_scores, top),
        "euclidean_disparity": euclidean_disparity(sensitive, top),
        "wasserstein_disparity": wasserstein_disparity(sensitive, top),
    }


def relative_change(value: float, anchor: float) -> float:
    """(value - anchor) / anchor; 0 when both are 0, NaN when only the anchor is 0.

    >>> relative_change(0.1, 0.2), relative_change(0.0, 0.0)
    (-0.5, 0.0)
    """
    if anchor == 0:
        return 0.0 if value == 0 else math.nan
    return (value - anchor) / anchor


def compare(detector: FairLOF, sensitive) -> dict:
    """LOF and FairLOF rows of the paper's metrics plus the relative ED / Wass change."""
    lof = outlier_metrics(detector.lof_scores_, detector.plain_outliers_, detector.plain_outliers_, sensitive)
    fair = outlier_metrics(detector.lof_scores_, detector.outliers_, detector.plain_outliers_, sensitive)
    change = {name: relative_change(fair[name], lof[name]) for name in ("euclidean_disparity", "wasserstein_disparity")}
    return {"LOF": lof, "FairLOF": fair, "change": change}


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


def format_table(result: dict, lambdas: dict) -> str:
    """The LOF vs FairLOF table as printed by the command."""
    header = f"{'':<10}{'lambda':>7}{'Jacc':>8}{'Pres':>8}{'OF':>7}{'ED':>9}{'ED chg':>9}{'Wass':>9}{'Wass chg':>10}"
    lines = [header]
    for label in ("LOF", "FairLOF"):
        row = result[label]
        if label == "LOF":
            ed_change = wass_change = "-"
        else:
            ed_change, wass_change = (_percent(result["change"][name])
                                      for name in ("euclidean_disparity", "wasserstein_disparity"))
        lines.append(f"{label:<10}{lambdas[label]:>7.2f}{row['jaccard']:>8.3f}{row['preservation']:>8.4f}"
                     f"{row['outlier_fraction']:>7.3f}{row['euclidean_disparity']:>9.4f}{ed_change:>9}"
                     f"{row['wasserstein_disparity']:>9.4f}{wass_change:>10}")
    return "\n".join(lines)


def _percent(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:+.1f}%"


def result_metrics(result: dict) -> dict:
    """MLflow metrics of a comparison: FairLOF's under the plain names (as trial runs have them),
    LOF's prefixed ``lof_``, and the changes ``*_change``; NaN values are left out."""
    metrics = dict(result["FairLOF"])
    metrics.update({f"lof_{name}": value for name, value in result["LOF"].items()})
    metrics.update({f"{name}_change": value for name, value in result["change"].items()})
    return {name: float(value) for name, value in metrics.items() if math.isfinite(value)}


# ------------------------------------------------------------------------------ MLflow / Optuna
@dataclass(frozen=True)
class Places:
    project: Path | None
    tracking_uri: str
    storage: str | None
    artifact_location: str | None


def resolve_places(project_dir, tracking_uri=None, storage=None, *, tune=False) -> Places:
    """The project folder (created when it backs a default store) and the stores to use."""
    project = Path(project_dir).resolve()
    needs_folder = tracking_uri is None or (tune and storage is None)
    if needs_folder:
        try:
            project.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(f"cannot create --project-dir {str(project)!r}: {error.strerror}") from None
    artifact_location = None
    if tracking_uri is None:
        tracking_uri = f"sqlite:///{project / 'mlflow.db'}"
        artifact_location = (project / "mlartifacts").as_uri()
    if tune and storage is None:
        storage = f"sqlite:///{project / 'optuna.db'}"
    return Places(project if needs_folder else None, tracking_uri, storage, artifact_location)


def ensure_experiment(client, name: str, artifact_location=None) -> str:
    """Id of the experiment ``name``, created (with its artifact root) when missing."""
    from mlflow.exceptions import MlflowException

    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    try:
        return client.create_experiment(name, artifact_location)
    except MlflowException:  # created by another process in between
        experiment = client.get_experiment_by_name(name)
        if experiment is None:
            raise
        return experiment.experiment_id


def _client(tracking_uri: str):
    from mlflow.tracking import MlflowClient

    logging.getLogger("mlflow.store.db.utils").setLevel(logging.WARNING)  # no table-creation chatter
    client = MlflowClient(tracking_uri)
    try:
        client.search_experiments(max_results=1)
    except Exception as error:  # noqa: BLE001 - any store failure is the user's URL or server
        raise ValueError(f"cannot reach the MLflow tracking store {tracking_uri!r}: {str(error).splitlines()[0]}")
    return client


def log_result_run(client, experiment_id: str, *, run_name: str, detector: FairLOF, data: OutlierData,
                   result: dict, params: dict, tags: dict, tracking_uri: str, path: dict | None = None,
                   extra_metrics: dict | None = None):
    """One finished run: params, metrics, preprocessing + lambda path, and the FairLOF model.

    Returns ``(run_id, model_uri)``.
    """
    from mlflow.entities import Metric, Param

    from ..mlflow._flavor import log_estimator

    run = client.create_run(experiment_id, run_name=run_name, tags=tags)
    run_id = run.info.run_id
    try:
        now = run.info.start_time
        metrics = {**result_metrics(result), **(extra_metrics or {})}
        client.log_batch(run_id,
                         metrics=[Metric(k, float(v), now, 0) for k, v in metrics.items()],
                         params=[Param(k, str(v)[:6000]) for k, v in params.items()])
        client.log_dict(run_id, data.preprocessing(), "preprocessing/standardise.json")
        if path is not None:
            client.log_dict(run_id, {k: np.asarray(v).tolist() for k, v in path.items()}, "fairlof/lambda_path.json")
        example = pd.concat([data.features.head(3), data.sensitive.head(3)], axis=1)
        with warnings.catch_warnings():  # the 0/1 "outlier" output column is an integer on purpose
            warnings.filterwarnings("ignore", message="Hint: Inferred schema contains integer", category=UserWarning)
            info = log_estimator(detector, run_id=run_id, tracking_uri=tracking_uri, name="model",
                                 input_example=example, feature_names=list(data.features.columns))
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED")
    return run_id, info.model_uri


def _base_params(data: OutlierData, args) -> dict:
    return {"dataset": data.name, "rows": data.n_rows, "source_rows": data.n_source_rows,
            "features": data.features.shape[1], "sensitive": ",".join(data.sensitive.columns),
            "categorical": args.categorical, "seed": args.seed,
            "max_rows": args.max_rows if args.max_rows is not None else "all"}


def _where_to_look(places: Places, model_uri: str) -> None:
    if places.tracking_uri.startswith("sqlite:"):
        print(f"look: mlflow ui --backend-store-uri {places.tracking_uri}")
    else:
        print(f"look: {places.tracking_uri}")
    print(f"model: {model_uri}  (MLFLOW_TRACKING_URI={places.tracking_uri}; load with "
          "fairops.mlflow.fairlof.load_model or mlflow.pyfunc.load_model; input = standardised features "
          "+ sensitive columns, see preprocessing/standardise.json in the run)")


# ---------------------------------------------------------------------------------------- runs
def run_single(args) -> int:
    """One FairLOF fit against plain LOF, printed and logged."""
    lam = parse_lambda(args.lambda_)
    data = load_outlier_data(args.dataset, data=args.data, sensitive=args.sensitive, target=args.target,
                             max_rows=args.max_rows, seed=args.seed, categorical=args.categorical)
    detector = fit_detector(data, n_neighbors=args.neighbors, lambda_=lam, target_jaccard=args.target_jaccard,
                            alpha=args.alpha, beta=args.beta, top_t=args.top_t)
    result = compare(detector, data.sensitive)
    lambdas = {"LOF": 0.0, "FairLOF": detector.fitted_lambda_}
    places = resolve_places(args.project_dir, args.tracking_uri)
    if places.project is not None:
        print(f"project: {places.project}")
    print(f"data: {data.name}  rows: {data.n_rows} of {data.n_source_rows}  features: {data.features.shape[1]}  "
          f"sensitive: {','.join(data.sensitive.columns)}")
    guide = f" (guide point for Jaccard {args.target_jaccard})" if lam == "auto" else ""
    print(f"detector: FairLOF k={detector.n_neighbors_} t={detector.top_t_} alpha={args.alpha} beta={args.beta} "
          f"lambda={detector.fitted_lambda_:.2f}{guide}")
    print(format_table(result, lambdas))

    client = _client(places.tracking_uri)
    experiment_id = ensure_experiment(client, args.experiment, places.artifact_location)
    params = {**_base_params(data, args), "n_neighbors": detector.n_neighbors_, "lambda": args.lambda_,
              "fitted_lambda": detector.fitted_lambda_, "target_jaccard": args.target_jaccard,
              "flex_alpha": args.alpha, "flex_beta": args.beta, "top_t": detector.top_t_}
    tags = {"fairops.role": "outliers", "fairops.dataset": data.name}
    run_id, model_uri = log_result_run(client, experiment_id, run_name=f"fairlof-{data.name}", detector=detector,
                                       data=data, result=result, params=params, tags=tags,
                                       tracking_uri=places.tracking_uri, path=detector.path())
    print(f"run: {run_id} in experiment {args.experiment!r}")
    _where_to_look(places, model_uri)
    return 0


def make_objective(data: OutlierData, *, seed: int = 0, top_t=None):
    """Optuna objective over FairLOF's hyperparameters: returns (Jaccard vs LOF, normalised fairness)."""
    from ..fairband import budget

    slicer = BudgetSlicer(np.zeros(data.n_rows, dtype=np.int8), data.sensitive, seed=seed)

    def objective(trial):
        fraction = budget(trial)
        low, high = SEARCH_SPACE["n_neighbors"]
        k = trial.suggest_int("n_neighbors", low, high)
        lam = trial.suggest_float("lambda", *SEARCH_SPACE["lambda"])
        alpha = trial.suggest_float("flex_alpha", *SEARCH_SPACE["flex_alpha"], log=True)
        beta = trial.suggest_float("flex_beta", *SEARCH_SPACE["flex_beta"], log=True)
        rows = slicer.indices(fraction)
        t = None if top_t is None else max(1, int(round(top_t * len(rows) / data.n_rows)))
        detector = fit_detector(data, n_neighbors=k, lambda_=lam, alpha=alpha, beta=beta, top_t=t, rows=rows)
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


def _open_study(args, places: Places, data: OutlierData, alpha):
    import optuna

    from ..fairband import FairbandPruner, FairbandSampler
    from .running import open_storage

    name = args.study_name or f"outliers-{data.name}-{args.method}-seed{args.seed}"
    try:
        study = optuna.create_study(directions=["maximize", "maximize"], storage=open_storage(places.storage),
                                    study_name=name, sampler=FairbandSampler(alpha=alpha, seed=args.seed),
                                    pruner=FairbandPruner(), load_if_exists=True)
    except ValueError:
        raise
    except Exception as error:  # noqa: BLE001 - an unreachable server, a locked file
        raise ValueError(f"cannot open the Optuna storage {places.storage!r}: {str(error).splitlines()[0]}") from None
    recorded = study.user_attrs.get("fairops.data")
    fingerprint = {"name": data.name, "rows": data.n_rows, "features": list(data.features.columns),
                   "sensitive": list(data.sensitive.columns)}
    if recorded is not None and recorded != fingerprint:
        raise ValueError(f"study {name!r} in {places.storage} was run on other data ({recorded['name']}, "
                         f"{recorded['rows']} rows); use the same data options or another --study-name")
    study.set_user_attr("fairops.job", "outliers")
    study.set_user_attr("fairops.data", fingerprint)
    return study


def run_tune(args) -> int:
    """Fairband over FairLOF's hyperparameters, then the pick refitted on all rows.

    Resuming, Ctrl-C (first: finish the fits in flight; second: abort), heartbeats on RDB storages,
    the progress bar and several workers on one study work as in ``fairops tune``.
    """
    import optuna

    from ..fairband import iteration_size, select_best
    from ..mlflow.tracking import ROLE_TAG, STUDY_TAG, FairnessTrackingCallback
    from .progress import FitProgress
    from .running import Interrupt, Silent, bounded, quiet_libraries, stop_at, tracked, wait_for_fits

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
    places = resolve_places(args.project_dir, args.tracking_uri, args.storage, tune=True)
    quiet_libraries()
    client = _client(places.tracking_uri)
    experiment_id = ensure_experiment(client, args.experiment, places.artifact_location)

    study = _open_study(args, places, data, alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.set_metric_names(["accuracy", "fairness"])
    tracker = FairnessTrackingCallback(places.tracking_uri, args.experiment, alpha=None if alpha == "auto" else alpha,
                                       artifact_location=places.artifact_location)
    target = args.trials if args.trials is not None else args.iterations * iteration_size()
    done_before = len([t for t in study.get_trials(deepcopy=False) if t.number < target])
    if places.project is not None:
        print(f"project: {places.project}")
    print(f"data: {data.name}  rows: {data.n_rows} of {data.n_source_rows}  features: {data.features.shape[1]}  "
          f"sensitive: {','.join(data.sensitive.columns)}")
    print(f"study: {study.study_name} ({places.storage})  method: {args.method}  alpha: {alpha}  "
          f"fits: {target - done_before} to run, {done_before} done", flush=True)
    objective = make_objective(data, seed=args.seed, top_t=args.top_t)
    parent = tracker.parent_run_id(study)
    if done_before < target:
        progress = FitProgress(target, alpha, stream=Silent() if args.no_progress else sys.stdout)
        with Interrupt() as interrupt:
            study.optimize(bounded(objective, target), n_trials=None if done_before else target,
                           n_jobs=args.n_jobs, catch=(ValueError,),
                           callbacks=[tracked(tracker, target), progress, stop_at(target), interrupt.callback])
        progress.close()
    if len([t for t in study.get_trials(deepcopy=False) if t.number < target]) < target:
        raise KeyboardInterrupt  # stopped early: the study keeps what was done
    trials = wait_for_fits(study, target, timeout=3600.0)

    pick = select_best(trials, alpha=alpha)
    params = pick.trial.params
    detector = fit_detector(data, n_neighbors=params["n_neighbors"], lambda_=params["lambda"],
                            alpha=params["flex_alpha"], beta=params["flex_beta"], top_t=args.top_t)
    result = compare(detector, data.sensitive)
    print(f"Fairband pick: trial {pick.trial.number} (budget {pick.trial.user_attrs.get('budget', 1.0):.3f}, "
          f"alpha {pick.alpha:.3f}): k={params['n_neighbors']} lambda={params['lambda']:.3f} "
          f"flex_alpha={params['flex_alpha']:.3f} flex_beta={params['flex_beta']:.3f}; "
          f"on its slice Jaccard {pick.accuracy:.3f}, fairness {pick.fairness:.3f}")
    print(f"refitted on all {data.n_rows} rows (k={detector.n_neighbors_}, t={detector.top_t_}):")
    print(format_table(result, {"LOF": 0.0, "FairLOF": detector.fitted_lambda_}))

    refit_fairness = normalised_fairness(result["FairLOF"]["wasserstein_disparity"],
                                         result["LOF"]["wasserstein_disparity"])
    from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID

    run_params = {**_base_params(data, args), **params, "pick_trial": pick.trial.number,
                  "fairband_alpha": pick.alpha, "method": args.method, "study": study.study_name,
                  "top_t": detector.top_t_}
    tags = {MLFLOW_PARENT_RUN_ID: parent, ROLE_TAG: "selection", STUDY_TAG: study.study_name,
            "fairops.dataset": data.name}
    extra = {"accuracy": result["FairLOF"]["jaccard"], "fairness": refit_fairness, "pick_score": pick.score,
             "pick_accuracy": pick.accuracy, "pick_fairness": pick.fairness}
    run_id, model_uri = log_result_run(client, experiment_id, run_name=f"{study.study_name}/pick", detector=detector,
                                       data=data, result=result, params=run_params, tags=tags,
                                       tracking_uri=places.tracking_uri, extra_metrics=extra)
    tracker.finish(study)
    print(f"runs: parent {parent}, pick {run_id} in experiment {args.experiment!r}")
    _where_to_look(places, model_uri)
    return 0


def _run(args) -> int:
    return run_tune(args) if args.tune else run_single(args)


def add_parser(subcommands) -> None:
    parser = subcommands.add_parser(
        "outliers", help="FairLOF vs LOF on a data set (optionally tuned with Fairband), tracked in MLflow",
        description="FairLOF against plain LOF: metrics printed and logged to MLflow with the model. "
                    "Features: numeric columns standardised (categoricals dropped or one-hot).")
    source = parser.add_argument_group("data")
    source.add_argument("--dataset", default=None,
                        help=f"bundled data set, one of {sorted(LOADERS)} (default {DEFAULT_DATASET})")
    source.add_argument("--data", default=None, help="a .csv or .parquet file of one's own (with --sensitive)")
    source.add_argument("--sensitive", default=None,
                        help="comma-separated sensitive columns (default for bundled data: all of its sensitive ones)")
    source.add_argument("--target", default=None, help="label column of --data to leave out of the features")
    source.add_argument("--categorical", default="drop", help="'drop' (default) or 'onehot' for text columns")
    source.add_argument("--max-rows", type=int, default=None,
                        help=f"stratified seeded sample of about this many rows (all; {TUNE_MAX_ROWS} with --tune)")
    model = parser.add_argument_group("FairLOF")
    model.add_argument("--neighbors", type=int, default=5, help="k (default 5)")
    model.add_argument("--lambda", dest="lambda_", metavar="LAMBDA", default="auto",
                       help="a number in [0, 1] or 'auto' (default)")
    model.add_argument("--target-jaccard", type=float, default=0.9, help="guide point for --lambda auto (0.9)")
    model.add_argument("--alpha", type=float, default=1.0, help="Flex exponent of the W term (1 = FairLOF)")
    model.add_argument("--beta", type=float, default=1.0, help="Flex exponent of the D term (1 = FairLOF)")
    model.add_argument("--top-t", type=int, default=None, help="outlier list size (default min(500, 5%% of rows))")
    tune = parser.add_argument_group(
        "tuning (--tune)", "Fairband searches k, lambda and the Flex exponents itself (--neighbors, --lambda, "
        "--alpha, --beta are then not used); quality = Jaccard vs LOF, fairness = share of LOF's Wasserstein "
        "disparity removed, budget = share of the rows")
    tune.add_argument("--tune", action="store_true", help="search k, lambda, Flex alpha and beta with Fairband")
    tune.add_argument("--method", default="fb-auto", choices=sorted(METHODS), help="Fairband alpha rule (fb-auto)")
    tune.add_argument("--fairband-alpha", type=float, default=None, help="fixed Fairband alpha (overrides --method)")
    tune.add_argument("--iterations", type=int, default=1, help="Fairband iterations of 206 fits (default 1)")
    tune.add_argument("--trials", type=int, default=None, help="stop after this many fits (a short run)")
    tune.add_argument("--study-name", default=None,
                      help="Optuna study name (default outliers-<data>-<method>-seed<seed>)")
    tune.add_argument("--storage", default=None, help="Optuna storage URL (default sqlite:///<project>/optuna.db)")
    tune.add_argument("--n-jobs", type=int, default=1, help="fits run in parallel threads in this process")
    tune.add_argument("--no-progress", action="store_true", help="no progress bar (none is drawn off a terminal)")
    where = parser.add_argument_group("tracking")
    where.add_argument("--project-dir", default=DEFAULT_PROJECT,
                       help=f"folder of the default stores ({DEFAULT_PROJECT})")
    where.add_argument("--tracking-uri", default=None,
                       help="MLflow tracking URI (default sqlite:///<project>/mlflow.db)")
    where.add_argument("--experiment", default=DEFAULT_EXPERIMENT, help=f"MLflow experiment ({DEFAULT_EXPERIMENT})")
    parser.add_argument("--seed", type=int, default=0)
    parser.set_defaults(run=_run)


__all__ = [
    "OutlierData", "compare", "fit_detector", "format_table", "load_outlier_data", "make_objective",
    "normalised_fairness", "outlier_metrics", "parse_lambda", "relative_change", "run_single", "run_tune",
]
