"""Suggesting a model from the family table (:mod:`fairops.models._families`) inside an Optuna trial.

:func:`make_model` suggests a family (the ``model`` parameter) and its hyperparameters, and wraps the
estimator in a pipeline with the encoding the family needs. :func:`register_family` adds a family of
your own to the table for this process (the classifier flavor's trust list stays the built-in one, so
a model of your own family logs with a flavor of your choice, not fairops').

>>> import optuna
>>> study = optuna.create_study()
>>> model = make_model(study.ask(), profile="fast", families=["decision_tree"])
>>> type(model.steps[-1][1]).__name__
'DecisionTreeClassifier'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from fairops.models import CategoryCodes
from fairops.models._families import FAMILIES, PAPER_FAMILIES, Family, families_for  # noqa: F401 (re-exported)

from ..errors import InputError

if TYPE_CHECKING:
    from collections.abc import Mapping

    import optuna
    import pandas as pd
    from optuna.trial import FixedTrial
    from sklearn.base import BaseEstimator
    from sklearn.pipeline import Pipeline

    from .._typing import ArrayLike, Features
    from ..metrics import Task

PROFILES = ("paper", "fast")
# The libraries' own defaults in each family's parameter names: LightGBM's (100 rounds, learning rate 0.1, 31
# leaves, 20 rows per leaf; its unlimited depth becomes the range's largest), scikit-learn's logistic
# regression (C = 1, l2, tol 1e-4; max_iter 100 becomes the range's smallest, 101). fairlearn's exponentiated
# gradient over LightGBM's defaults is not among them: as a start it cost ./dev demo 80 s of its 165 s of CPU
# (its refit and five cross-validation fits on all of Adult's rows), and on COMPAS's five seeds FB-auto's test
# figures with it (68.2 / 74.9) and without it (65.7 / 75.7) differed within the noise.
LIBRARY_DEFAULTS = {
    "lightgbm": lambda profile: {"lgbm_boosting_type": "gbdt", "lgbm_n_estimators": 100, "lgbm_learning_rate": 0.1,
                                 "lgbm_max_depth": 12 if profile == "fast" else 543, "lgbm_num_leaves": 31,
                                 "lgbm_min_child_samples": 20},
    "logistic_regression": lambda profile: {"lr_C": 1.0, "lr_penalty": "l2", "lr_tol": 1e-4, "lr_max_iter": 101},
}


def register_family(name: str, suggest: Callable, *, needs_encoding: bool = True,
                    reads_sensitive: bool = False) -> None:
    """Add a family to the table for this process.

    Parameter names should be prefixed with the family name so families never share a distribution.

    Parameters
    ----------
    name : str
        The family's name (the ``model`` parameter's value).
    suggest : callable
        ``suggest(trial, profile, seed)`` returns an unfitted estimator; with ``reads_sensitive``,
        ``suggest(trial, profile, seed, sensitive_columns)``.
    needs_encoding : bool, default=True
        The family takes one-hot categories and scaled numbers (the pipeline adds them).
    reads_sensitive : bool, default=False
        The model reads the sensitive columns.

    Examples
    --------
    >>> register_family("constant", lambda trial, profile, seed: None)
    >>> "constant" in FAMILIES
    True
    >>> del FAMILIES["constant"]
    """
    if not isinstance(name, str) or not name:
        raise InputError(f"name must be a non-empty string, got {name!r}")
    if not callable(suggest):
        raise TypeError(f"suggest must be callable, got {type(suggest).__name__}")
    FAMILIES[name] = Family(name, suggest, needs_encoding, reads_sensitive)


def library_defaults(families: Sequence[str] | None = None, profile: str = "fast") -> list[dict]:
    """The library defaults of the tuned families that have them (LightGBM, then logistic regression), as
    parameter values of :func:`make_model`: ``FairbandSampler(start_configurations=...)`` makes them the
    first full-budget fits, so a run's pick is chosen knowing how the defaults do.

    >>> [start["model"] for start in library_defaults()]
    ['lightgbm', 'logistic_regression']
    >>> [start["model"] for start in library_defaults(["lightgbm", "exponentiated_gradient"])]
    ['lightgbm']
    >>> library_defaults(["lightgbm"])[0]["lgbm_num_leaves"], "model" in library_defaults(["lightgbm"])[0]
    (31, False)
    """
    names = list(PAPER_FAMILIES if families is None else families)
    return [{**({"model": name} if len(names) > 1 else {}), **LIBRARY_DEFAULTS[name](profile)}
            for name in LIBRARY_DEFAULTS if name in names]


def check_families(families: Sequence[str], *, blind: bool = False) -> list[str]:
    """``families`` as a list, refusing unknown names and, with ``blind``, families reading the sensitive columns.

    Parameters
    ----------
    families : sequence of str
        Family names, at least one.
    blind : bool, default=False
        The run leaves the sensitive columns out of the models' inputs.

    Returns
    -------
    list of str
        The names.

    Examples
    --------
    >>> check_families(["scaff_forest"], blind=True)
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: --families scaff_forest does not apply with --blind: it reads the sensitive columns from its inputs
    """  # noqa: E501 - a doctest's expected output is one line
    names = list(families)
    unknown = [name for name in names if name not in FAMILIES]
    if not names or unknown:
        raise InputError(f"families must be a non-empty list from {sorted(FAMILIES)}, got unknown {unknown}")
    reading = [name for name in names if FAMILIES[name].reads_sensitive]
    if blind and reading:
        raise InputError(f"--families {','.join(reading)} does not apply with --blind: it reads the sensitive "
                         "columns from its inputs")
    return names


def _encoder(X):
    """One-hot categories and scaled numbers; a column with missing values is imputed first (the median of a
    number, the most frequent value of a category) and flagged in a missing-value indicator column, all
    inside the model, so a served model imputes as it was fitted."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import MissingIndicator, SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    missing = [c for c in X.columns if X[c].isna().any()]
    coded = [c for c in X.columns if str(X[c].dtype) == "category"]
    other = [c for c in X.columns if str(X[c].dtype) in ("object", "bool")]
    numeric = [c for c in X.columns if c not in coded and c not in other]

    def imputed(name, columns, strategy, first=(), then=None, **options):
        # a budget slice may lack every value of a column: kept, so every slice gives the same columns
        impute = SimpleImputer(strategy=strategy, keep_empty_features=True, **options)
        return (f"{name}_imputed", Pipeline([*first, ("impute", impute), then]), columns)

    def split(columns):
        return [c for c in columns if c not in missing], [c for c in columns if c in missing]

    coded, coded_missing = split(coded)
    other, other_missing = split(other)
    numeric, numeric_missing = split(numeric)
    parts = [("categorical",
              Pipeline([("codes", CategoryCodes()), ("one_hot", OneHotEncoder(handle_unknown="ignore"))]), coded)]
    if coded_missing:  # a missing category's code is -1
        parts.append(imputed("categorical", coded_missing, "most_frequent", [("codes", CategoryCodes())],
                             ("one_hot", OneHotEncoder(handle_unknown="ignore")), missing_values=-1))
    if other:
        parts.append(("text", OneHotEncoder(handle_unknown="ignore"), other))
    if other_missing:
        parts.append(imputed("text", other_missing, "most_frequent", then=("one_hot",
                                                                            OneHotEncoder(handle_unknown="ignore"))))
    parts.append(("numeric", StandardScaler(), numeric))
    if numeric_missing:
        parts.append(imputed("numeric", numeric_missing, "median", then=("scale", StandardScaler())))
    if missing:
        parts.append(("missing", MissingIndicator(features="all"), missing))
    return ColumnTransformer(parts)


def make_model(trial: optuna.Trial | FixedTrial, *, profile: str = "fast", families: Sequence[str] | None = None,
               seed: int = 0, X_example: pd.DataFrame | None = None, sensitive_columns: Sequence[str] | None = None,
               task: Task | None = None) -> Pipeline:
    """Suggest a family and its hyperparameters; return an unfitted scikit-learn pipeline.

    Families that need it get one-hot encoding of categorical columns and scaling of numeric ones
    (``X_example`` decides which columns are which; pandas category/object/bool = categorical).
    A family that reads the sensitive columns (the SCAFF forest) needs ``sensitive_columns``; a
    reduction needs the ``task`` (a :class:`~fairops.metrics.Task`) whose fairness ratio it constrains,
    and its base family's parameters are suggested with it. Fit the pipeline with :func:`fit_model`,
    which hands a reduction its groups.

    Parameters
    ----------
    trial : optuna.Trial or optuna.trial.FixedTrial
        Suggests the family and its hyperparameters.
    profile : {"fast", "paper"}, default="fast"
        The search space's profile.
    families : sequence of str or None, default=None
        The families to choose from (None: the paper's five).
    seed : int, default=0
        The model's seed.
    X_example : DataFrame or None, default=None
        Rows whose dtypes decide the encoding (None: no encoding step).
    sensitive_columns : sequence of str or None, default=None
        The sensitive columns, for a family that reads them.
    task : Task or None, default=None
        The task, for a reduction.

    Returns
    -------
    Pipeline
        The encoding (when needed) and the unfitted estimator, the last step named after its family.
    """
    if profile not in PROFILES:
        raise InputError(f"profile must be one of {PROFILES}, got {profile!r}")
    names = list(PAPER_FAMILIES if families is None else families)
    unknown = [n for n in names if n not in FAMILIES]
    if not names or unknown:
        raise InputError(f"families must be a non-empty list from {sorted(FAMILIES)}, got {names!r}")
    from sklearn.pipeline import Pipeline

    name = trial.suggest_categorical("model", names) if len(names) > 1 else names[0]
    family = FAMILIES[name]
    if family.bases:
        if task is None:
            raise InputError(f"family {name!r} constrains the task's fairness ratio: pass task")
        base = FAMILIES[trial.suggest_categorical(family.base_param, list(family.bases))]  # type: ignore[arg-type, index]
        estimator = family.suggest(trial, profile, seed, _suggested(base, trial, profile, seed, sensitive_columns),
                                   task)
        needs_encoding = base.needs_encoding
    else:
        estimator = _suggested(family, trial, profile, seed, sensitive_columns)
        needs_encoding = family.needs_encoding
    steps = []
    if needs_encoding and X_example is not None:
        steps.append(("encode", _encoder(X_example)))
    steps.append((name, estimator))
    return Pipeline(steps)


def _suggested(family, trial, profile, seed, sensitive_columns):
    if family.reads_sensitive:
        if not sensitive_columns:
            raise InputError(f"family {family.name!r} reads the sensitive columns: pass sensitive_columns")
        return family.suggest(trial, profile, seed, list(sensitive_columns))
    return family.suggest(trial, profile, seed)


def fit_model(model: BaseEstimator, X: Features, y: ArrayLike,
              sensitive: pd.DataFrame | Mapping[str, ArrayLike] | None = None) -> BaseEstimator:
    """Fit a pipeline of :func:`make_model` (or any estimator), handing a reduction its groups.

    A last step whose ``fit`` takes ``sensitive_features`` (a reduction) gets ``sensitive``, the groups
    it is fair over.

    Parameters
    ----------
    model : estimator or Pipeline
        The unfitted model.
    X : DataFrame or array-like
        Training features.
    y : array-like
        Training labels.
    sensitive : DataFrame, dict or None, default=None
        The groups, needed by a reduction only.

    Returns
    -------
    estimator
        The fitted model.

    Examples
    --------
    >>> import optuna, pandas as pd
    >>> from fairops.datasets import load_german
    >>> data = load_german()
    >>> trial = optuna.trial.FixedTrial({"eg_base": "decision_tree", "eg_ratio_bound": 0.9, "eg_fp_cost": 0.7,
    ...     "eg_ratio_bound_slack": 0.01, "eg_eps": 0.1, "eg_max_iter": 10, "dt_criterion": "gini", "dt_max_depth": 4,
    ...     "dt_min_samples_leaf": 5, "dt_min_samples_split": 10})
    >>> model = make_model(trial, families=["exponentiated_gradient"], X_example=data.X, task=data.task)
    >>> fitted = fit_model(model, data.X, data.y, data.sensitive[list(data.task.sensitive)])
    >>> fitted[-1].n_predictors_ >= 1
    True
    """
    from sklearn.utils.validation import has_fit_parameter

    steps = getattr(model, "steps", None)
    name, last = steps[-1] if steps else (None, model)
    if not has_fit_parameter(last, "sensitive_features"):
        return model.fit(X, y)
    if sensitive is None:
        raise InputError(f"{type(last).__name__} fits with the sensitive groups: pass sensitive")
    return model.fit(X, y, **{f"{name}__sensitive_features" if name else "sensitive_features": sensitive})
