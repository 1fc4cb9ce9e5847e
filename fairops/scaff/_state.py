"""A fitted SCAFF estimator as plain data (JSON-able dicts + NumPy arrays) and back.

``class_weight`` may be a dict keyed by class labels, which JSON would turn into text keys; it
is saved as a list of ``[label, weight]`` pairs instead.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._param_checks import checked_params
from .._state_checks import only_names
from ..errors import InputError
from ._state_checks import STATE_ARRAYS, check_arrays, with_missing_sides

_PAIRS = "pairs"


def params_to_json(params: dict) -> dict:
    """``get_params()`` in a form that survives a JSON round trip.

    >>> params_to_json({"class_weight": {0: 1.0, 1: 4.0}, "theta": 0.5})
    {'class_weight': {'pairs': [[0, 1.0], [1, 4.0]]}, 'theta': 0.5}
    """
    params = dict(params)
    if isinstance(params.get("class_weight"), dict):
        params["class_weight"] = {_PAIRS: [[label, weight] for label, weight in params["class_weight"].items()]}
    return params


def params_from_json(params: dict) -> dict:
    """Inverse of :func:`params_to_json`.

    >>> params_from_json({"class_weight": {"pairs": [[0, 1.0], [1, 4.0]]}})
    {'class_weight': {0: 1.0, 1: 4.0}}
    """
    params = dict(params)
    weights = params.get("class_weight")
    if isinstance(weights, dict):
        pairs = weights.get(_PAIRS)
        if set(weights) != {_PAIRS} or not isinstance(pairs, list) or not all(
            isinstance(pair, list) and len(pair) == 2 for pair in pairs
        ):
            raise InputError("saved class_weight must be {'pairs': [[label, weight], ...]}")
        params["class_weight"] = {label: weight for label, weight in pairs}
    return params


def get_state(model) -> tuple[dict, dict]:
    """(meta, arrays) of a fitted estimator: ``{"params", "meta"}`` (JSON-able) and its NumPy arrays."""
    meta = {
        "class": type(model).__name__,
        "n_features_in": int(model.n_features_in_),
        "sensitive_columns": list(model.sensitive_columns_),
        "n_sensitive_groups": int(model.n_sensitive_groups_),
        "categories": {str(k): v for k, v in model._categories.items()},
    }
    if hasattr(model, "feature_names_in_"):
        meta["feature_names_in"] = [str(name) for name in model.feature_names_in_]
    arrays = {name: np.asarray(getattr(model, name)) for name in STATE_ARRAYS}
    return {"params": params_to_json(model.get_params(deep=False)), "meta": meta}, arrays


def _count(name: str, value, low: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < low:
        raise InputError(f"saved {name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _text_list(name: str, value, length: int | None = None) -> list:
    if not isinstance(value, (list, tuple, np.ndarray)) or not all(isinstance(item, str) for item in value):
        raise InputError(f"saved {name} must be a list of strings, got {value!r}")
    if length is not None and len(value) != length:
        raise InputError(f"saved {name} has {len(value)} names, the model has {length} features")
    return list(value)


def check_fitted(model) -> None:
    """Check a rebuilt model's parameters and fitted attributes; store its arrays in the kernels' dtypes.

    Raises ``ValueError``/``TypeError`` naming the first bad attribute (see :mod:`fairops.scaff._state_checks`).
    """
    checked_params(model)
    n_estimators = model._forest_spec()[0]
    n_features = _count("n_features_in", model.__dict__.get("n_features_in_"), 1)
    if "feature_names_in_" in model.__dict__:
        _text_list("feature_names_in", model.feature_names_in_, n_features)
    _text_list("sensitive_columns", model.__dict__.get("sensitive_columns_"))
    _count("n_sensitive_groups", model.__dict__.get("n_sensitive_groups_"), 0)
    categories = model.__dict__.get("_categories")
    if not isinstance(categories, dict) or not all(
        _count("categories key", key, 0) < n_features and isinstance(values, list)
        and all(isinstance(value, (str, int, float)) for value in values)
        for key, values in categories.items()
    ):
        raise InputError(f"saved categories must map feature positions below {n_features} to lists of labels, "
                         f"got {categories!r}")
    arrays = with_missing_sides({name: model.__dict__[name] for name in STATE_ARRAYS if name in model.__dict__},
                                n_features)
    for name, array in check_arrays(arrays, n_features=n_features, n_trees=n_estimators).items():
        setattr(model, name, array)


def from_state(cls, state: dict, arrays: dict):
    """Rebuild a fitted ``cls`` from :func:`get_state`'s output."""
    meta, params = (state.get(part) if isinstance(state, dict) else None for part in ("meta", "params"))
    if not (isinstance(meta, dict) and isinstance(params, dict) and isinstance(arrays, dict)):
        raise InputError("SCAFF state must be a dict of the dicts 'params' and 'meta', and a dict of arrays")
    if meta.get("class") != cls.__name__:
        raise InputError(f"state holds a {meta.get('class')!r}, not a {cls.__name__}")
    try:
        model = cls(**params_from_json(params))
    except TypeError as error:
        raise TypeError(f"saved params do not fit {cls.__name__}: {error}") from None
    arrays = with_missing_sides(arrays, _count("n_features_in", meta.get("n_features_in"), 1))
    only_names(arrays, STATE_ARRAYS, "SCAFF")
    for name in STATE_ARRAYS:
        setattr(model, name, arrays[name])
    model.n_features_in_ = meta.get("n_features_in")
    if "feature_names_in" in meta:
        model.feature_names_in_ = np.asarray(_text_list("feature_names_in", meta["feature_names_in"]), dtype=object)
    model.sensitive_columns_ = meta.get("sensitive_columns")
    model.n_sensitive_groups_ = meta.get("n_sensitive_groups")
    categories = meta.get("categories")
    if not isinstance(categories, dict) or not all(key.isdigit() for key in categories):
        raise InputError(f"saved categories must map feature positions to lists, got {categories!r}")
    model._categories = {int(key): values for key, values in categories.items()}
    check_fitted(model)
    return model
