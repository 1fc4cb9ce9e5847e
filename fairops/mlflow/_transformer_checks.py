"""Checks of the fitted state of scikit-learn's preprocessing steps in a classifier's skops file.

A classifier flavor model may hold the everyday steps of scikit-learn (``sklearn.impute``,
``sklearn.preprocessing`` but ``FunctionTransformer``, ``sklearn.compose``, ``sklearn.feature_selection``,
``PCA`` and ``TruncatedSVD``). skops rebuilds them from data and scikit-learn reads their arrays
unchecked when it transforms: an edited file could make a step index outside its categories, hand the
next step fewer columns than it was fitted on, or turn every row into NaN. :func:`check_transformer`
checks, per step, what its ``transform`` reads (shapes against ``n_features_in_``, finite numbers,
sorted knots and categories, indices in range, the estimators inside) and :func:`output_width` says how
many columns it gives, so :func:`check_widths` can hold a Pipeline's and a ColumnTransformer's steps to
each other's ``n_features_in_``. Each refusal is a one-line ``ValueError`` naming the step and the
attribute. The encoders' and imputers' checks are :mod:`fairops.mlflow._encoder_checks` and
:mod:`fairops.mlflow._imputer_checks`; :mod:`fairops.mlflow._step_state` reads a step's attributes for all.

>>> import numpy as np
>>> from sklearn.preprocessing import StandardScaler
>>> scaler = StandardScaler().fit(np.array([[0.0, 1.0], [2.0, 3.0]]))
>>> check_transformer(scaler, "StandardScaler"), output_width(scaler)
(True, 2)
>>> scaler.scale_ = np.array([1.0, np.nan])
>>> check_transformer(scaler, "StandardScaler")
Traceback (most recent call last):
...
fairops.errors.InputError: StandardScaler: scale_[1] is nan; it must be finite
"""

from __future__ import annotations

import numpy as np

from .._state_checks import integers
from ..errors import InputError
from ._encoder_checks import check_kbins, check_one_hot, check_ordinal, check_target_encoder
from ._imputer_checks import check_iterative_imputer, check_knn_imputer, check_missing_indicator, check_simple_imputer
from ._step_state import (
    MAX_OUTPUT_COLUMNS,
    MAX_SPLINE_DEGREE,
    read_count,
    read_floats,
    read_indices,
    read_mask,
    read_n_features,
    read_vector,
)


def _check_power(model, owner: str) -> None:
    from sklearn.preprocessing import StandardScaler

    n = read_n_features(model, owner)
    read_vector(model, owner, "lambdas_", n)
    scaler = vars(model).get("_scaler")
    if model.standardize:
        if type(scaler) is not StandardScaler:
            raise InputError(f"{owner}: _scaler must be the StandardScaler of its output")
        _check_scaler(scaler, f"{owner}'s _scaler")
        if scaler.n_features_in_ != n:
            raise InputError(f"{owner}: its _scaler reads {scaler.n_features_in_} features, it {n}")


def _check_scaler(model, owner: str) -> None:
    n = read_n_features(model, owner)
    fitted = vars(model)
    for name in ("mean_", "scale_", "var_"):
        if fitted.get(name) is not None:
            read_vector(model, owner, name, n)
    scale = fitted.get("scale_")
    if scale is not None and np.any(np.asarray(scale) == 0):
        raise InputError(f"{owner}: scale_ holds 0; fit writes 1 for a constant feature")


def _check_quantile(model, owner: str) -> None:
    n = read_n_features(model, owner)
    count = read_count(owner, "n_quantiles_", vars(model).get("n_quantiles_"), 1)
    quantiles = read_floats(owner, "quantiles_", vars(model).get("quantiles_"), (count, n))
    references = read_floats(owner, "references_", vars(model).get("references_"), (count,), low=0.0, high=1.0)
    if np.any(np.diff(quantiles, axis=0) < 0) or np.any(np.diff(references) < 0):
        raise InputError(f"{owner}: quantiles_ and references_ must rise")


def _check_spline(model, owner: str) -> None:
    from scipy.interpolate import BSpline

    n = read_n_features(model, owner)
    degree = read_count(owner, "degree", model.degree, 0, MAX_SPLINE_DEGREE)
    splines = vars(model).get("bsplines_")
    if not isinstance(splines, list) or len(splines) != n or not all(type(s) is BSpline for s in splines):
        raise InputError(f"{owner}: bsplines_ must hold one BSpline per feature")
    width = None
    for j, spline in enumerate(splines):
        knots = read_floats(owner, f"bsplines_[{j}].t", vars(spline).get("_t"), (None,))
        if spline.k != degree or np.any(np.diff(knots) < 0) or len(knots) < 2 * degree + 2:
            raise InputError(f"{owner}: bsplines_[{j}] must be of degree {degree} over rising knots")
        coefficients = read_floats(owner, f"bsplines_[{j}].c", vars(spline).get("_c"), (len(knots) - degree - 1, None))
        width = coefficients.shape[1] if width is None else width
        if coefficients.shape[1] != width or spline.axis != 0:
            raise InputError(f"{owner}: bsplines_[{j}] differs in shape from bsplines_[0]")
    assert width is not None  # n >= 1
    expected = n * width - (0 if model.include_bias else n)
    if read_count(owner, "n_features_out_", vars(model).get("n_features_out_"), 0, MAX_OUTPUT_COLUMNS) != expected:
        raise InputError(f"{owner}: n_features_out_ must be {expected} for its splines")


def _check_polynomial(model, owner: str) -> None:
    """The degrees and output sizes transform allocates from (as fit computes them, bounded)."""
    from sklearn.preprocessing import PolynomialFeatures

    n = read_n_features(model, owner)
    fitted = vars(model)
    high = read_count(owner, "_max_degree", fitted.get("_max_degree"), 0, MAX_SPLINE_DEGREE)
    low = read_count(owner, "_min_degree", fitted.get("_min_degree"), 0, high)
    for name, start in (("n_output_features_", low), ("_n_out_full", 0)):
        expected = PolynomialFeatures._num_combinations(n, start, high, model.interaction_only, model.include_bias)
        if read_count(owner, name, fitted.get(name), 0, MAX_OUTPUT_COLUMNS) != expected:
            raise InputError(f"{owner}: {name} {fitted.get(name)} differs from the {expected} terms of degrees "
                             f"{start} to {high} of {n} features")


def _check_selector(model, owner: str) -> None:
    n = read_n_features(model, owner)
    fitted = vars(model)
    for name in ("scores_", "pvalues_", "variances_"):
        if fitted.get(name) is not None:
            read_floats(owner, name, fitted[name], (n,), finite=False)
    if "support_" in fitted:
        read_mask(owner, "support_", fitted["support_"], n)
    if "ranking_" in fitted:
        integers(f"{owner}: ranking_", np.asarray(fitted["ranking_"]), shape=(n,), low=1)
    estimator = fitted.get("estimator_")
    if estimator is not None and type(model).__name__ != "SelectFromModel" \
            and getattr(estimator, "n_features_in_", None) != int(np.asarray(fitted.get("support_")).sum()):
        raise InputError(f"{owner}: estimator_ must read the {int(np.asarray(fitted['support_']).sum())} features "
                         "it selects")
    if type(model).__name__ == "SelectFromModel":
        # its estimator's own checks cover a tree's importances, which are computed from the (unchecked) nodes
        # when read, so only the weights it keeps are read here
        if estimator is None or getattr(estimator, "n_features_in_", None) != n:
            raise InputError(f"{owner}: estimator_ must weigh its {n} features")
        if "coef_" in vars(estimator):
            coef = np.asarray(estimator.coef_)
            read_floats(owner, "estimator_'s coef_", coef, (*coef.shape[:-1], n))


def _check_components(model, owner: str) -> None:
    n = read_n_features(model, owner)
    fitted = vars(model)
    components = read_floats(owner, "components_", fitted.get("components_"), (None, n))
    if fitted.get("mean_") is not None:
        read_vector(model, owner, "mean_", n)
    if getattr(model, "whiten", False):
        read_floats(owner, "explained_variance_", fitted.get("explained_variance_"), (len(components),), low=0.0)
        if np.any(np.asarray(fitted["explained_variance_"]) <= 0):
            raise InputError(f"{owner}: explained_variance_ must be positive to whiten")


def _check_simple(model, owner: str, names=(), divisors=()) -> None:
    """Finite vectors of one entry per feature; ``divisors`` (what transform divides by) never 0."""
    n = read_n_features(model, owner)
    for name in names:
        read_vector(model, owner, name, n)
    for name in divisors:
        if np.any(np.asarray(vars(model)[name]) == 0):
            raise InputError(f"{owner}: {name} holds 0; fit writes 1 for a constant feature")


def _check_column_transformer(model, owner: str) -> None:
    n = read_n_features(model, owner)
    fitted = vars(model)
    parts = fitted.get("transformers_")
    indices = fitted.get("_transformer_to_input_indices")
    if not isinstance(parts, list) or not isinstance(indices, dict):
        raise InputError(f"{owner}: transformers_ and _transformer_to_input_indices must describe its parts")
    for part in parts:
        if not isinstance(part, tuple) or len(part) != 3 or not isinstance(part[0], str) or part[0] not in indices:
            raise InputError(f"{owner}: each of transformers_ must be (name, transformer, columns), named in "
                             "_transformer_to_input_indices")
        name, step, columns = part
        read = read_indices(owner, f"_transformer_to_input_indices[{name!r}]", indices[name], n)
        if len(np.unique(read)) != len(read):
            raise InputError(f"{owner}: part {name!r} reads a column twice")
        if not isinstance(columns, (str, int, slice, list, np.ndarray)) or callable(columns):
            raise InputError(f"{owner}: part {name!r} has columns of type {type(columns).__name__}")
        _check_columns(owner, name, columns, read, fitted.get("feature_names_in_"), n)
        if isinstance(step, str):
            if step not in ("drop", "passthrough"):
                raise InputError(f"{owner}: part {name!r} is {step!r}, neither a step, 'drop' nor 'passthrough'")
            continue
        width = getattr(step, "n_features_in_", None)
        if width is not None and width != len(read):
            raise InputError(f"{owner}: part {name!r} reads {len(read)} columns, its step was fitted on {width}")


def _check_columns(owner: str, name: str, columns, read: np.ndarray, names, n: int) -> None:
    """The columns a part names select the indices it reads (labels where the frame was named, else
    positions or a mask)."""
    if isinstance(columns, slice):
        selected = np.arange(n)[columns]
    elif isinstance(columns, (str, int)):
        selected = np.array([columns])
    else:
        selected = np.asarray(columns)
    if selected.dtype == bool:
        selected = np.flatnonzero(read_mask(owner, f"part {name!r}'s columns", selected, n))
    elif selected.dtype.kind in "OU" and len(selected):
        if names is None or not all(isinstance(c, str) for c in selected):
            raise InputError(f"{owner}: part {name!r} names columns, but the model knows no column names")
        lookup = {label: i for i, label in enumerate(names)}
        if any(c not in lookup for c in selected):
            raise InputError(f"{owner}: part {name!r} names a column it was not fitted on")
        selected = np.array([lookup[c] for c in selected])
    elif len(selected):
        selected = read_indices(owner, f"part {name!r}'s columns", selected, n)
    if not np.array_equal(np.asarray(selected, dtype=np.int64).ravel(), read.astype(np.int64)):
        raise InputError(f"{owner}: part {name!r}'s columns differ from _transformer_to_input_indices")


def _checks():
    """``[(types, check)]`` of the steps checked here, read once."""
    from sklearn import decomposition, feature_selection, impute, preprocessing
    from sklearn.compose import ColumnTransformer
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401 - makes impute.IterativeImputer

    return [
        ((impute.SimpleImputer,), check_simple_imputer),
        ((impute.MissingIndicator,), check_missing_indicator),
        ((impute.KNNImputer,), check_knn_imputer),
        ((impute.IterativeImputer,), check_iterative_imputer),
        ((preprocessing.OneHotEncoder,), check_one_hot),
        ((preprocessing.OrdinalEncoder,), check_ordinal),
        ((preprocessing.TargetEncoder,), check_target_encoder),
        ((preprocessing.KBinsDiscretizer,), check_kbins),
        ((preprocessing.PowerTransformer,), _check_power),
        ((preprocessing.StandardScaler,), _check_scaler),
        ((preprocessing.RobustScaler,), lambda m, o: _check_simple(
            m, o, [k for k in ("center_", "scale_") if vars(m).get(k) is not None],
            ["scale_"] if vars(m).get("scale_") is not None else [])),
        ((preprocessing.MinMaxScaler,), lambda m, o: _check_simple(m, o, ("min_", "scale_"))),
        ((preprocessing.MaxAbsScaler,), lambda m, o: _check_simple(m, o, ("scale_",), ("scale_",))),
        ((preprocessing.QuantileTransformer,), _check_quantile),
        ((preprocessing.SplineTransformer,), _check_spline),
        ((preprocessing.PolynomialFeatures,), _check_polynomial),
        ((preprocessing.KernelCenterer,), lambda m, o: (
            _check_simple(m, o, ("K_fit_rows_",)), read_floats(o, "K_fit_all_", vars(m).get("K_fit_all_"), ()))),
        ((preprocessing.Binarizer, preprocessing.Normalizer), _check_simple),
        ((feature_selection.SelectorMixin,), _check_selector),
        ((decomposition.PCA, decomposition.TruncatedSVD), _check_components),
        ((ColumnTransformer,), _check_column_transformer),
    ]


_TABLE: list = []


def check_transformer(value, owner: str) -> bool:
    """Check ``value``'s fitted state if it is a step checked here (see the module docstring); returns
    whether it was one."""
    if not _TABLE:
        _TABLE.extend(_checks())
    for types, check in _TABLE:
        if isinstance(value, types):
            if not _fitted(value):
                return True  # an unfitted template (a ColumnTransformer's transformers) is never used
            check(value, owner)
            return True
    return False


def _fitted(value) -> bool:
    """Whether scikit-learn would take ``value`` as fitted (its own rule: an attribute ending in ``_``)."""
    return any(name.endswith("_") and not name.startswith("__") for name in vars(value))


def output_width(value) -> int | None:
    """How many columns a fitted step's ``transform`` gives (None: not a step whose width is known here)."""
    from sklearn.base import TransformerMixin
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    if isinstance(value, str):
        return None
    if isinstance(value, Pipeline):
        return output_width(value.steps[-1][1])
    if isinstance(value, ColumnTransformer):
        total = 0
        for name, step, _ in value.transformers_:
            read = len(value._transformer_to_input_indices[name])
            width = 0 if step == "drop" else read if step == "passthrough" else output_width(step)
            if width is None:
                return None
            total += width
        return total
    if not isinstance(value, TransformerMixin) or not _fitted(value):
        return None
    try:
        return len(value.get_feature_names_out())
    except Exception:  # noqa: BLE001 - a step that cannot name its columns has no width known here
        return None


def check_widths(model, owner: str) -> None:
    """A Pipeline's steps each give the next as many columns as it was fitted on."""
    from sklearn.pipeline import Pipeline

    if not isinstance(model, Pipeline):
        return
    steps = [(name, step) for name, step in model.steps if not (isinstance(step, str) or step is None)]
    for (name, step), (after, following) in zip(steps, steps[1:]):
        width, wanted = output_width(step), getattr(following, "n_features_in_", None)
        if width is not None and wanted is not None and width != wanted:
            raise InputError(f"{owner}: step {name!r} gives {width} columns, step {after!r} was fitted on {wanted}")
