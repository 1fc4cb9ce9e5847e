"""The model families fairops tunes: each one's search space and what loading its fitted model must trust.

One table, :data:`FAMILIES`, read by tuning (:func:`fairops.tuning.make_model`) and by the classifier flavor
(:data:`fairops.mlflow.classifier.TRUSTED_TYPES` holds every family's ``trusted_types``), so a family added
here is tuned and loads. The paper's five families (logistic regression, decision tree, random forest,
LightGBM, a feed-forward network) follow its published search space, in a ``"paper"`` and a capped ``"fast"``
profile; the SCAFF forest reads the sensitive columns; ``exponentiated_gradient`` and ``grid_search`` are
bias reductions over a base family. The ranges and why: ``docs/fairband/search_space.md`` and
``docs/fairband/reductions.md``.

A family's ``suggest(trial, profile, seed)`` (with ``reads_sensitive``, also ``sensitive_columns``; a
reduction also ``base, task``) calls ``trial.suggest_*`` and returns an unfitted estimator; nothing here
imports Optuna, so a served model importing :mod:`fairops.models` does not either.

>>> sorted(FAMILIES)  # doctest: +NORMALIZE_WHITESPACE
['decision_tree', 'exponentiated_gradient', 'grid_search', 'lightgbm', 'logistic_regression', 'mlp',
 'random_forest', 'scaff_forest']
>>> [name for name, family in FAMILIES.items() if family.reads_sensitive]
['scaff_forest']
>>> [name for name, family in FAMILIES.items() if family.bases]
['exponentiated_gradient', 'grid_search']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ._columns import SCAFFOnColumns
from ._network import WeightDecayMLP


@dataclass(frozen=True)
class Family:
    """A model family of the tuning table (see the module docstring).

    Parameters
    ----------
    name : str
        The family's name in the table.
    suggest : callable
        ``suggest(trial, profile, seed)`` (the module docstring gives the other forms): an unfitted
        estimator with hyperparameters suggested on ``trial``.
    needs_encoding : bool, default=True
        The family takes one-hot categories and scaled numbers (a pipeline adds them).
    reads_sensitive : bool, default=False
        ``suggest`` also takes the sensitive column names (the model reads them).
    trusted_types : tuple of str, default=()
        The types beyond skops' defaults its fitted model is made of.
    bases : tuple of str, default=()
        A reduction's base families (the base family decides the encoding), empty for every other family.
    base_param : str or None, default=None
        The parameter that chooses a reduction's base family.
    """

    name: str
    suggest: Callable
    needs_encoding: bool = True
    reads_sensitive: bool = False
    trusted_types: tuple[str, ...] = ()
    bases: tuple[str, ...] = ()
    base_param: str | None = None


# Types every served classifier pipeline holds, whatever its family (see fairops.tuning.make_model).
SHARED_TRUSTED_TYPES = (
    "collections.OrderedDict",
    "fairops.models._columns.RestoreCategories",
    "fairops.models._encoding.CategoryCodes",
)


# Types of scikit-learn models fitted outside tuning (one's own pipeline) beyond skops' defaults: a fitted
# HistGradientBoosting model's trees, and the check_array step of the category encoder it makes for
# categorical columns. fairops.mlflow._skops_checks checks their state before predict reads it.
OWN_MODEL_TRUSTED_TYPES = (
    "functools.partial",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.utils.validation.check_array",
)


# Types of scikit-learn's everyday preprocessing steps beyond skops' defaults, in one's own pipeline and in the
# families' encoding of columns with missing values: the dtype an imputer or a discretiser records, the column
# selector a ColumnTransformer was given, IterativeImputer and its per-feature record, SplineTransformer's
# B-splines (and the array function they keep) and the score functions of univariate feature selection (called
# in fit only). fairops.mlflow._transformer_checks checks each step's state before it transforms.
PREPROCESSING_TRUSTED_TYPES = (
    "numpy.dtype",
    "scipy._lib.array_api_compat.numpy._aliases.asarray",
    "scipy.interpolate._bsplines.BSpline",
    "sklearn.compose._column_transformer.make_column_selector",
    "sklearn.feature_selection._mutual_info.mutual_info_classif",
    "sklearn.feature_selection._mutual_info.mutual_info_regression",
    "sklearn.feature_selection._univariate_selection.chi2",
    "sklearn.feature_selection._univariate_selection.f_classif",
    "sklearn.feature_selection._univariate_selection.f_oneway",
    "sklearn.feature_selection._univariate_selection.f_regression",
    "sklearn.feature_selection._univariate_selection.r_regression",
    "sklearn.impute._iterative.IterativeImputer",
    "sklearn.impute._iterative._ImputerTriplet",
)


def _cap(profile: str, paper, fast):
    return fast if profile == "fast" else paper


def _logistic_regression(trial, profile, seed):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(
        C=trial.suggest_categorical("lr_C", [1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0]),
        l1_ratio=1.0 if trial.suggest_categorical("lr_penalty", ["l1", "l2"]) == "l1" else 0.0,
        tol=trial.suggest_float("lr_tol", 5e-5, 1e-2, log=True),
        max_iter=trial.suggest_int("lr_max_iter", 101, _cap(profile, 8300, 300), log=True),
        solver="liblinear", random_state=seed)


def _decision_tree(trial, profile, seed):
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(
        criterion=trial.suggest_categorical("dt_criterion", ["gini", "entropy"]),
        max_depth=trial.suggest_int("dt_max_depth", 1, _cap(profile, 46, 20)),
        min_samples_leaf=trial.suggest_int("dt_min_samples_leaf", 1, 183, log=True),
        min_samples_split=trial.suggest_int("dt_min_samples_split", 2, 404, log=True),
        random_state=seed)


def _random_forest(trial, profile, seed):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(
        n_estimators=trial.suggest_int("rf_n_estimators", 3, _cap(profile, 1588, 60), log=True),
        criterion=trial.suggest_categorical("rf_criterion", ["gini", "entropy"]),
        max_depth=trial.suggest_int("rf_max_depth", 1, _cap(profile, 59, 16)),
        max_features=trial.suggest_categorical("rf_max_features", ["sqrt", "log2"]),
        min_samples_leaf=trial.suggest_int("rf_min_samples_leaf", 1, 172, log=True),
        min_samples_split=trial.suggest_int("rf_min_samples_split", 2, 348, log=True),
        n_jobs=1, random_state=seed)


def _lightgbm(trial, profile, seed):
    from lightgbm import LGBMClassifier

    return LGBMClassifier(
        boosting_type=trial.suggest_categorical("lgbm_boosting_type", ["gbdt", "goss", "dart"]),
        n_estimators=trial.suggest_int("lgbm_n_estimators", 2, _cap(profile, 14495, 150), log=True),
        learning_rate=trial.suggest_float("lgbm_learning_rate", 0.01, 1.0, log=True),
        max_depth=trial.suggest_int("lgbm_max_depth", 2, _cap(profile, 543, 12), log=True),
        num_leaves=trial.suggest_int("lgbm_num_leaves", 2, _cap(profile, 755, 63), log=True),
        min_child_samples=trial.suggest_int("lgbm_min_child_samples", 2, 214, log=True),
        n_jobs=1, random_state=seed, verbose=-1)


_HIDDEN = {
    "paper": ["20", "20-20", "20-10", "50", "50-50", "50-25", "100", "100-100", "100-50",
              "200", "200-200", "200-100", "500", "500-500", "500-200"],
    "fast": ["20", "20-20", "20-10", "50", "50-50", "50-25"],
}


def _mlp(trial, profile, seed):
    hidden = trial.suggest_categorical("mlp_hidden_layers", _HIDDEN[profile])
    betas = trial.suggest_categorical("mlp_betas", ["0.9-0.999", "0.9-0.9995", "0.95-0.999", "0.95-0.9995"])
    beta_1, beta_2 = (float(b) for b in betas.split("-"))
    return WeightDecayMLP(
        hidden_layer_sizes=tuple(int(h) for h in hidden.split("-")),
        weight_decay=trial.suggest_categorical("mlp_weight_decay", [0.0, 1e-3, 1e-2]),
        batch_size=_cap(profile, 2048, 512),
        max_epochs=trial.suggest_categorical("mlp_max_epochs", _cap(profile, [25, 50, 75], [10, 20])),
        learning_rate=trial.suggest_float("mlp_lr", 5e-4, 5e-3, log=True),
        beta_1=beta_1, beta_2=beta_2, random_state=seed)


def _scaff_forest(trial, profile, seed, sensitive_columns):
    return SCAFFOnColumns(
        sensitive_columns=tuple(sensitive_columns),
        theta=trial.suggest_float("scaff_theta", 0.0, 1.0),
        n_estimators=trial.suggest_int("scaff_n_estimators", 10, _cap(profile, 500, 50), log=True),
        max_depth=trial.suggest_int("scaff_max_depth", 2, _cap(profile, 10, 6)),
        max_features=trial.suggest_categorical("scaff_max_features", ["sqrt", "log2"]),
        random_state=seed)


def _game(trial, prefix, profile, task):
    """What a reduction's game holds: the task's fairness ratio over its groups as a ratio bound, and (but
    in the paper's profile) the error's cost of a false positive, as a share of both costs."""
    game = {"constraint": task.fairness, "groups": task.groups,
            "ratio_bound": trial.suggest_float(f"{prefix}_ratio_bound", 0.8, 0.99),
            "ratio_bound_slack": trial.suggest_categorical(f"{prefix}_ratio_bound_slack", [0.01, 0.02])}
    if profile != "paper":
        fp_cost = trial.suggest_float(f"{prefix}_fp_cost", 0.5, 0.95)
        game["costs"] = {"fp": fp_cost, "fn": 1.0 - fp_cost}
    return game


def _exponentiated_gradient(trial, profile, seed, base, task):
    from ..reductions import ExponentiatedGradient

    return ExponentiatedGradient(
        base, **_game(trial, "eg", profile, task),
        eps=trial.suggest_float("eg_eps", 0.025, 1.0, log=True),
        max_iter=trial.suggest_int("eg_max_iter", 10, _cap(profile, 49, 20), log=True),
        random_state=seed)


def _grid_search(trial, profile, seed, base, task):
    from ..reductions import GridSearch

    return GridSearch(
        base, **_game(trial, "gs", profile, task),
        grid_size=trial.suggest_int("gs_grid_size", 5, _cap(profile, 40, 15), log=True),
        grid_limit=trial.suggest_float("gs_grid_limit", 0.5, 10.0, log=True),
        constraint_weight=trial.suggest_float("gs_constraint_weight", 0.0, 1.0),
        random_state=seed)


_TREE = ("sklearn.tree._tree.Tree",)
_LIGHTGBM = ("lightgbm.basic.Booster", "lightgbm.sklearn.LGBMClassifier")
_REDUCTION_BASES = ("decision_tree", "logistic_regression", "lightgbm")
# A reduction's model holds its own type and its base family's (a tree, a logistic regression, LightGBM).
_REDUCTION_TYPES = ("fairops.reductions._exponentiated_gradient.ExponentiatedGradient",
                    "fairops.reductions._grid_search.GridSearch", *_TREE, *_LIGHTGBM)

#: The built-in families; :func:`fairops.tuning.register_family` adds to :data:`FAMILIES` only.
BUILT_IN = (
    Family("logistic_regression", _logistic_regression),
    Family("decision_tree", _decision_tree, trusted_types=_TREE),
    Family("random_forest", _random_forest, trusted_types=_TREE),
    Family("lightgbm", _lightgbm, needs_encoding=False, trusted_types=_LIGHTGBM),
    Family("mlp", _mlp, trusted_types=(
        "fairops.models._network.WeightDecayMLP",
        "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
        "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
    )),
    Family("scaff_forest", _scaff_forest, needs_encoding=False, reads_sensitive=True, trusted_types=(
        "fairops.models._columns.SCAFFOnColumns",
        "fairops.scaff._forest.SCAFFClassifier",
        "fairops.scaff._tree_classifier.SCAFFTreeClassifier",
    )),
    Family("exponentiated_gradient", _exponentiated_gradient, trusted_types=_REDUCTION_TYPES,
           bases=_REDUCTION_BASES, base_param="eg_base"),
    Family("grid_search", _grid_search, trusted_types=_REDUCTION_TYPES, bases=_REDUCTION_BASES, base_param="gs_base"),
)
FAMILIES: dict[str, Family] = {family.name: family for family in BUILT_IN}
PAPER_FAMILIES = ("logistic_regression", "decision_tree", "random_forest", "lightgbm", "mlp")


def built_in_trusted_types() -> tuple[str, ...]:
    """Every type a built-in family's fitted pipeline or one's own scikit-learn model may hold beyond skops'
    defaults, sorted.

    >>> "sklearn.tree._tree.Tree" in built_in_trusted_types()
    True
    """
    return tuple(sorted({*SHARED_TRUSTED_TYPES, *OWN_MODEL_TRUSTED_TYPES, *PREPROCESSING_TRUSTED_TYPES,
                         *(t for family in BUILT_IN for t in family.trusted_types)}))


def families_for(*, blind: bool = False) -> list[str]:
    """The built-in families a run tunes by default: all eight, or without those reading the sensitive columns.

    Parameters
    ----------
    blind : bool, default=False
        Leave out the families whose model reads the sensitive columns (the reductions read them only to
        fit, so they stay).

    Returns
    -------
    list of str
        Family names in table order.

    Examples
    --------
    >>> len(families_for()), "scaff_forest" in families_for(blind=True), families_for(blind=True)[-1]
    (8, False, 'grid_search')
    """
    return [family.name for family in BUILT_IN if not (blind and family.reads_sensitive)]
