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
attribute.

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

import numbers

import numpy as np

from .._state_checks import check_shape, floats, integers
from ..errors import InputError

# Above this a saved step would ask transform for more columns than any model here makes (PolynomialFeatures
# of a high degree, SplineTransformer of many knots): refused rather than allocated.
MAX_OUTPUT_COLUMNS = 1 << 20
MAX_SPLINE_DEGREE = 20


def _is_index(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _count(owner: str, name: str, value, low: int = 0, high: int | None = None) -> int:
    if not _is_index(value) or int(value) < low or (high is not None and int(value) > high):
        upper = "" if high is None else f" and <= {high}"
        raise InputError(f"{owner}: {name} must be an integer >= {low}{upper}, got {value!r}")
    return int(value)


def _n_features(model, owner: str) -> int:
    # SelectFromModel reads both from its estimator_ (a property)
    n = _count(owner, "n_features_in_", getattr(model, "n_features_in_", None), 1)
    names = getattr(model, "feature_names_in_", None)
    if names is not None and (not isinstance(names, np.ndarray) or names.shape != (n,)
                              or not all(isinstance(name, str) for name in names)):
        raise InputError(f"{owner}: feature_names_in_ must be {n} column names")
    return n


def _floats(owner: str, name: str, value, shape: tuple, **limits) -> np.ndarray:
    return floats(f"{owner}: {name}", np.asarray(value), shape=shape, **limits)


def _vector(model, owner: str, name: str, n: int, **limits) -> np.ndarray:
    return _floats(owner, name, vars(model).get(name), (n,), **limits)


def _mask(owner: str, name: str, value, n: int) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype != bool or array.shape != (n,):
        raise InputError(f"{owner}: {name} must be {n} true/false flags, got {array.dtype} of shape {array.shape}")
    return array


def _indices(owner: str, name: str, value, high: int) -> np.ndarray:
    array = np.asarray(value)
    if array.shape == (0,):  # an empty list reads as floats
        return np.zeros(0, dtype=np.int64)
    return integers(f"{owner}: {name}", array, shape=(None,), low=0, high=high)


def _sorted_categories(owner: str, name: str, values) -> np.ndarray:
    """One feature's categories as scikit-learn's encoders find them by binary search: unique and sorted
    (a missing value, NaN or None, last)."""
    array = values if isinstance(values, np.ndarray) else None
    if array is None or array.ndim != 1 or array.dtype.kind not in "biufUSO" or len(array) == 0:
        raise InputError(f"{owner}: {name} must be a non-empty 1-D array of numbers or text")
    present = array
    if array.dtype.kind == "f":
        present = array[:-1] if np.isnan(array[-1]) else array
        if np.isnan(present).any() or np.isinf(present).any():
            raise InputError(f"{owner}: {name} holds a NaN or infinite category before its last")
    elif array.dtype.kind == "O":
        present = array[:-1] if array[-1] is None or (isinstance(array[-1], float) and np.isnan(array[-1])) \
            else array
        if not all(isinstance(v, str) for v in present) and not all(
                isinstance(v, numbers.Real) and np.isfinite(float(v)) for v in present):
            raise InputError(f"{owner}: {name} must hold text or finite numbers (or true/false), one kind")
    try:
        ordered = all(a < b for a, b in zip(present[:-1], present[1:]))
    except TypeError:
        ordered = False
    if not ordered:
        raise InputError(f"{owner}: {name} must be unique and sorted, as fit writes them")
    return array


def _categories(model, owner: str, n: int) -> list:
    categories = vars(model).get("categories_")
    if not isinstance(categories, list) or len(categories) != n:
        raise InputError(f"{owner}: categories_ must list the categories of its {n} features")
    return [_sorted_categories(owner, f"categories_[{i}]", values) for i, values in enumerate(categories)]


def _optional_indices(owner: str, name: str, value, sizes) -> None:
    """None, or per feature None or an index into that feature's ``sizes``."""
    if value is None:
        return
    array = np.asarray(value, dtype=object)
    if array.shape != (len(sizes),):
        raise InputError(f"{owner}: {name} must have one entry per feature ({len(sizes)})")
    for i, (index, size) in enumerate(zip(array, sizes)):
        if index is not None and not (_is_index(index) and 0 <= int(index) < size):
            raise InputError(f"{owner}: {name}[{i}] = {index!r} is not an index into its {size} categories")


def _check_infrequent(model, owner: str, categories: list) -> None:
    """The mappings an encoder with infrequent categories reads (when it has them)."""
    fitted = vars(model)
    if not isinstance(fitted.get("_infrequent_enabled", False), bool):
        raise InputError(f"{owner}: _infrequent_enabled must be true or false")
    if not fitted.get("_infrequent_enabled"):
        return
    for name in ("_default_to_infrequent_mappings", "_infrequent_indices"):
        entries = fitted.get(name)
        if not isinstance(entries, list) or len(entries) != len(categories):
            raise InputError(f"{owner}: {name} must have one entry per feature")
        for i, (entry, known) in enumerate(zip(entries, categories)):
            if entry is None:
                continue
            values = _indices(owner, f"{name}[{i}]", entry, len(known))
            if name == "_default_to_infrequent_mappings" and len(values) != len(known):
                raise InputError(f"{owner}: {name}[{i}] must map each of its {len(known)} categories")


def _check_one_hot(model, owner: str) -> None:
    n = _n_features(model, owner)
    categories = _categories(model, owner, n)
    _check_infrequent(model, owner, categories)
    sizes = [len(known) for known in categories]
    for name in ("drop_idx_", "_drop_idx_after_grouping"):
        _optional_indices(owner, name, vars(model).get(name), sizes)
    outs = vars(model).get("_n_features_outs")
    if not isinstance(outs, list) or outs != list(model._compute_n_features_outs()):
        raise InputError(f"{owner}: _n_features_outs {outs!r} differs from what its categories and drops give")


def _check_ordinal(model, owner: str) -> None:
    n = _n_features(model, owner)
    categories = _categories(model, owner, n)
    _check_infrequent(model, owner, categories)
    missing = vars(model).get("_missing_indices")
    if not isinstance(missing, dict) or not all(
            _is_index(feature) and 0 <= int(feature) < n and _is_index(index)
            and 0 <= int(index) < len(categories[int(feature)]) for feature, index in missing.items()):
        raise InputError(f"{owner}: _missing_indices must map features to the index of their missing category")


def _check_target_encoder(model, owner: str) -> None:
    n = _n_features(model, owner)
    categories = _categories(model, owner, n)
    _check_infrequent(model, owner, categories)
    kind = vars(model).get("target_type_")
    classes = np.asarray(vars(model).get("classes_")) if kind in ("binary", "multiclass") else np.zeros(0)
    if kind not in ("binary", "multiclass", "continuous") or classes.ndim != 1:
        raise InputError(f"{owner}: target_type_ {kind!r} is not one TargetEncoder fits")
    per_feature = len(classes) if kind == "multiclass" else 1
    encodings = vars(model).get("encodings_")
    if not isinstance(encodings, list) or len(encodings) != n * per_feature:
        raise InputError(f"{owner}: encodings_ must hold {n * per_feature} arrays")
    for index, encoding in enumerate(encodings):
        _floats(owner, f"encodings_[{index}]", encoding, (len(categories[index // per_feature]),))
    _floats(owner, "target_mean_", vars(model).get("target_mean_"), (per_feature,) if kind == "multiclass" else ())


def _check_simple_imputer(model, owner: str) -> None:
    n = _n_features(model, owner)
    fitted = vars(model)
    for name in ("_fit_dtype", "_fill_dtype"):
        dtype = fitted.get(name)
        if name in fitted and (not isinstance(dtype, np.dtype) or dtype.kind not in "biufO"):
            raise InputError(f"{owner}: {name} must be a numeric or object dtype, got {dtype!r}")
    statistics = np.asarray(fitted.get("statistics_"))
    check_shape(f"{owner}: statistics_", statistics, (n,))
    if statistics.dtype.kind == "f":
        if np.isinf(statistics).any():
            raise InputError(f"{owner}: statistics_ holds an infinite value")
        if model.keep_empty_features and np.isnan(statistics).any():
            raise InputError(f"{owner}: statistics_ holds NaN, the mark of an empty feature it keeps")
    elif statistics.dtype.kind not in "biuO":
        raise InputError(f"{owner}: statistics_ has dtype {statistics.dtype}; expected numbers or objects")
    _check_indicator(model, owner, n)


def _check_indicator(model, owner: str, n: int) -> None:
    indicator = vars(model).get("indicator_")
    if model.add_indicator != (indicator is not None):
        raise InputError(f"{owner}: add_indicator is {model.add_indicator} but indicator_ is {indicator!r}")
    if indicator is not None and _n_features(indicator, f"{owner}'s indicator_") != n:
        raise InputError(f"{owner}: its indicator_ reads {indicator.n_features_in_} features, it {n}")


def _check_missing_indicator(model, owner: str) -> None:
    n = _n_features(model, owner)
    fitted = vars(model)
    if _count(owner, "_n_features", fitted.get("_n_features"), 1) != n:
        raise InputError(f"{owner}: _n_features {fitted.get('_n_features')} differs from n_features_in_ {n}")
    _indices(owner, "features_", fitted.get("features_"), n)


def _check_knn_imputer(model, owner: str) -> None:
    n = _n_features(model, owner)
    fitted = vars(model)
    data = _floats(owner, "_fit_X", fitted.get("_fit_X"), (None, n), finite=False)
    if np.isinf(data).any():
        raise InputError(f"{owner}: _fit_X holds an infinite value")
    mask = np.asarray(fitted.get("_mask_fit_X"))
    if mask.dtype != bool or mask.shape != data.shape or not np.array_equal(mask, np.isnan(data)):
        raise InputError(f"{owner}: _mask_fit_X must flag the missing values of _fit_X")
    valid = _mask(owner, "_valid_mask", fitted.get("_valid_mask"), n)
    if not np.array_equal(valid, ~mask.all(axis=0)):
        raise InputError(f"{owner}: _valid_mask must flag the features _fit_X holds a value of")
    if not callable(model.metric) and model.metric != "nan_euclidean":
        raise InputError(f"{owner}: metric {model.metric!r} is not one KNNImputer takes")
    _count(owner, "n_neighbors", model.n_neighbors, 1)
    _check_indicator(model, owner, n)


def _check_iterative_imputer(model, owner: str) -> None:
    from sklearn.impute import SimpleImputer

    n = _n_features(model, owner)
    fitted = vars(model)
    initial = fitted.get("initial_imputer_")
    if type(initial) is not SimpleImputer:
        raise InputError(f"{owner}: initial_imputer_ must be a SimpleImputer")
    _check_simple_imputer(initial, f"{owner}'s initial_imputer_")
    empty = _mask(owner, "_is_empty_feature", fitted.get("_is_empty_feature"), n)
    width = n if model.keep_empty_features else int((~empty).sum())
    for name in ("_min_value", "_max_value"):
        _floats(owner, name, fitted.get(name), (width,), finite=False)
    if np.isnan(fitted["_min_value"]).any() or np.isnan(fitted["_max_value"]).any():
        raise InputError(f"{owner}: _min_value and _max_value must be numbers")
    sequence = fitted.get("imputation_sequence_")
    if not isinstance(sequence, list):
        raise InputError(f"{owner}: imputation_sequence_ must be a list")
    for number, triplet in enumerate(sequence):
        where = f"{owner}: imputation_sequence_[{number}]"
        if type(triplet).__name__ != "_ImputerTriplet" or len(triplet) != 3:
            raise InputError(f"{where} must be an _ImputerTriplet")
        feature, neighbours, estimator = triplet
        _count(where, "feat_idx", feature, 0, width - 1)
        neighbours = _indices(where, "neighbor_feat_idx", neighbours, width)
        if not hasattr(estimator, "predict") or not hasattr(estimator, "n_features_in_") \
                or _count(where, "its estimator's n_features_in_", estimator.n_features_in_) != len(neighbours):
            raise InputError(f"{where}: its estimator must be a fitted regressor of its {len(neighbours)} neighbours")
        if "coef_" in vars(estimator):  # a linear regressor (BayesianRidge, the default)
            _floats(where, "its estimator's coef_", estimator.coef_, (len(neighbours),))
            _floats(where, "its estimator's intercept_", estimator.intercept_, ())
        if model.sample_posterior:
            sigma = np.asarray(vars(estimator).get("sigma_"))
            _floats(where, "its estimator's sigma_", sigma, (len(neighbours), len(neighbours)))
    _count(owner, "n_iter_", fitted.get("n_iter_"), 0)
    _check_indicator(model, owner, n)


def _check_kbins(model, owner: str) -> None:
    from sklearn.preprocessing import OneHotEncoder

    n = _n_features(model, owner)
    fitted = vars(model)
    counts = integers(f"{owner}: n_bins_", np.asarray(fitted.get("n_bins_")), shape=(n,), low=1,
                      high=MAX_OUTPUT_COLUMNS)
    edges = fitted.get("bin_edges_")
    if not isinstance(edges, np.ndarray) or edges.shape != (n,):
        raise InputError(f"{owner}: bin_edges_ must hold one array of edges per feature")
    for j, (feature_edges, count) in enumerate(zip(edges, counts)):
        values = _floats(owner, f"bin_edges_[{j}]", feature_edges, (count + 1,))
        if np.any(np.diff(values) < 0):
            raise InputError(f"{owner}: bin_edges_[{j}] must rise")
    if model.encode != "ordinal":
        encoder = fitted.get("_encoder")
        if type(encoder) is not OneHotEncoder:
            raise InputError(f"{owner}: _encoder must be the OneHotEncoder of its bins")
        _check_one_hot(encoder, f"{owner}'s _encoder")
        if [len(c) for c in encoder.categories_] != counts.tolist():
            raise InputError(f"{owner}: its _encoder's categories differ from its bins")


def _check_power(model, owner: str) -> None:
    from sklearn.preprocessing import StandardScaler

    n = _n_features(model, owner)
    _vector(model, owner, "lambdas_", n)
    scaler = vars(model).get("_scaler")
    if model.standardize:
        if type(scaler) is not StandardScaler:
            raise InputError(f"{owner}: _scaler must be the StandardScaler of its output")
        _check_scaler(scaler, f"{owner}'s _scaler")
        if scaler.n_features_in_ != n:
            raise InputError(f"{owner}: its _scaler reads {scaler.n_features_in_} features, it {n}")


def _check_scaler(model, owner: str) -> None:
    n = _n_features(model, owner)
    fitted = vars(model)
    for name in ("mean_", "scale_", "var_"):
        if fitted.get(name) is not None:
            _vector(model, owner, name, n)
    scale = fitted.get("scale_")
    if scale is not None and np.any(np.asarray(scale) == 0):
        raise InputError(f"{owner}: scale_ holds 0; fit writes 1 for a constant feature")


def _check_quantile(model, owner: str) -> None:
    n = _n_features(model, owner)
    count = _count(owner, "n_quantiles_", vars(model).get("n_quantiles_"), 1)
    quantiles = _floats(owner, "quantiles_", vars(model).get("quantiles_"), (count, n))
    references = _floats(owner, "references_", vars(model).get("references_"), (count,), low=0.0, high=1.0)
    if np.any(np.diff(quantiles, axis=0) < 0) or np.any(np.diff(references) < 0):
        raise InputError(f"{owner}: quantiles_ and references_ must rise")


def _check_spline(model, owner: str) -> None:
    from scipy.interpolate import BSpline

    n = _n_features(model, owner)
    degree = _count(owner, "degree", model.degree, 0, MAX_SPLINE_DEGREE)
    splines = vars(model).get("bsplines_")
    if not isinstance(splines, list) or len(splines) != n or not all(type(s) is BSpline for s in splines):
        raise InputError(f"{owner}: bsplines_ must hold one BSpline per feature")
    width = None
    for j, spline in enumerate(splines):
        knots = _floats(owner, f"bsplines_[{j}].t", vars(spline).get("_t"), (None,))
        if spline.k != degree or np.any(np.diff(knots) < 0) or len(knots) < 2 * degree + 2:
            raise InputError(f"{owner}: bsplines_[{j}] must be of degree {degree} over rising knots")
        coefficients = _floats(owner, f"bsplines_[{j}].c", vars(spline).get("_c"), (len(knots) - degree - 1, None))
        width = coefficients.shape[1] if width is None else width
        if coefficients.shape[1] != width or spline.axis != 0:
            raise InputError(f"{owner}: bsplines_[{j}] differs in shape from bsplines_[0]")
    assert width is not None  # n >= 1
    expected = n * width - (0 if model.include_bias else n)
    if _count(owner, "n_features_out_", vars(model).get("n_features_out_"), 0, MAX_OUTPUT_COLUMNS) != expected:
        raise InputError(f"{owner}: n_features_out_ must be {expected} for its splines")


def _check_polynomial(model, owner: str) -> None:
    """The degrees and output sizes transform allocates from (as fit computes them, bounded)."""
    from sklearn.preprocessing import PolynomialFeatures

    n = _n_features(model, owner)
    fitted = vars(model)
    high = _count(owner, "_max_degree", fitted.get("_max_degree"), 0, MAX_SPLINE_DEGREE)
    low = _count(owner, "_min_degree", fitted.get("_min_degree"), 0, high)
    for name, start in (("n_output_features_", low), ("_n_out_full", 0)):
        expected = PolynomialFeatures._num_combinations(n, start, high, model.interaction_only, model.include_bias)
        if _count(owner, name, fitted.get(name), 0, MAX_OUTPUT_COLUMNS) != expected:
            raise InputError(f"{owner}: {name} {fitted.get(name)} differs from the {expected} terms of degrees "
                             f"{start} to {high} of {n} features")


def _check_selector(model, owner: str) -> None:
    n = _n_features(model, owner)
    fitted = vars(model)
    for name in ("scores_", "pvalues_", "variances_"):
        if fitted.get(name) is not None:
            _floats(owner, name, fitted[name], (n,), finite=False)
    if "support_" in fitted:
        _mask(owner, "support_", fitted["support_"], n)
    if "ranking_" in fitted:
        integers(f"{owner}: ranking_", np.asarray(fitted["ranking_"]), shape=(n,), low=1)
    estimator = fitted.get("estimator_")
    if estimator is not None and type(model).__name__ != "SelectFromModel" \
            and getattr(estimator, "n_features_in_", None) != int(np.asarray(fitted.get("support_")).sum()):
        raise InputError(f"{owner}: estimator_ must read the {int(np.asarray(fitted['support_']).sum())} features "
                         "it selects")
    if type(model).__name__ == "SelectFromModel":
        importances = getattr(estimator, "coef_", getattr(estimator, "feature_importances_", None))
        if estimator is None or importances is None or np.shape(importances)[-1] != n:
            raise InputError(f"{owner}: estimator_ must weigh its {n} features")
        _floats(owner, "estimator_'s weights", np.asarray(importances, dtype=np.float64), np.shape(importances))


def _check_components(model, owner: str) -> None:
    n = _n_features(model, owner)
    fitted = vars(model)
    components = _floats(owner, "components_", fitted.get("components_"), (None, n))
    if fitted.get("mean_") is not None:
        _vector(model, owner, "mean_", n)
    if getattr(model, "whiten", False):
        _floats(owner, "explained_variance_", fitted.get("explained_variance_"), (len(components),), low=0.0)
        if np.any(np.asarray(fitted["explained_variance_"]) <= 0):
            raise InputError(f"{owner}: explained_variance_ must be positive to whiten")


def _check_simple(model, owner: str, names=(), divisors=()) -> None:
    """Finite vectors of one entry per feature; ``divisors`` (what transform divides by) never 0."""
    n = _n_features(model, owner)
    for name in names:
        _vector(model, owner, name, n)
    for name in divisors:
        if np.any(np.asarray(vars(model)[name]) == 0):
            raise InputError(f"{owner}: {name} holds 0; fit writes 1 for a constant feature")


def _check_column_transformer(model, owner: str) -> None:
    n = _n_features(model, owner)
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
        read = _indices(owner, f"_transformer_to_input_indices[{name!r}]", indices[name], n)
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
        selected = np.flatnonzero(_mask(owner, f"part {name!r}'s columns", selected, n))
    elif selected.dtype.kind in "OU" and len(selected):
        if names is None or not all(isinstance(c, str) for c in selected):
            raise InputError(f"{owner}: part {name!r} names columns, but the model knows no column names")
        lookup = {label: i for i, label in enumerate(names)}
        if any(c not in lookup for c in selected):
            raise InputError(f"{owner}: part {name!r} names a column it was not fitted on")
        selected = np.array([lookup[c] for c in selected])
    elif len(selected):
        selected = _indices(owner, f"part {name!r}'s columns", selected, n)
    if not np.array_equal(np.asarray(selected, dtype=np.int64).ravel(), read.astype(np.int64)):
        raise InputError(f"{owner}: part {name!r}'s columns differ from _transformer_to_input_indices")


def _checks():
    """``[(types, check)]`` of the steps checked here, read once."""
    from sklearn import decomposition, feature_selection, impute, preprocessing
    from sklearn.compose import ColumnTransformer
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401 - makes impute.IterativeImputer

    return [
        ((impute.SimpleImputer,), _check_simple_imputer),
        ((impute.MissingIndicator,), _check_missing_indicator),
        ((impute.KNNImputer,), _check_knn_imputer),
        ((impute.IterativeImputer,), _check_iterative_imputer),
        ((preprocessing.OneHotEncoder,), _check_one_hot),
        ((preprocessing.OrdinalEncoder,), _check_ordinal),
        ((preprocessing.TargetEncoder,), _check_target_encoder),
        ((preprocessing.KBinsDiscretizer,), _check_kbins),
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
            _check_simple(m, o, ("K_fit_rows_",)), _floats(o, "K_fit_all_", vars(m).get("K_fit_all_"), ()))),
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
