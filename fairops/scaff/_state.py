"""A fitted SCAFF estimator as plain data (JSON-able dicts + NumPy arrays) and back.

``class_weight`` may be a dict keyed by class labels, which JSON would turn into text keys; it
is saved as a list of ``[label, weight]`` pairs instead.
"""

from __future__ import annotations

import numpy as np

# Fitted attributes that make up the model; all plain arrays.
STATE_ARRAYS = (
    "classes_",
    "bin_edges_",
    "bin_offsets_",
    "node_offsets_",
    "node_feature_",
    "node_threshold_",
    "node_threshold_bin_",
    "node_left_",
    "node_right_",
    "node_value_",
    "node_weight_",
    "node_gain_",
)
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
            raise ValueError("saved class_weight must be {'pairs': [[label, weight], ...]}")
        params["class_weight"] = {label: weight for label, weight in pairs}
    return params


def get_state(model) -> dict:
    """``{"params", "meta", "arrays"}`` of a fitted estimator."""
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
    return {"params": params_to_json(model.get_params(deep=False)), "meta": meta, "arrays": arrays}


def from_state(cls, state: dict):
    """Rebuild a fitted ``cls`` from :func:`get_state`'s output."""
    meta = state["meta"]
    if meta["class"] != cls.__name__:
        raise ValueError(f"state holds a {meta['class']}, not a {cls.__name__}")
    model = cls(**params_from_json(state["params"]))
    for name in STATE_ARRAYS:
        setattr(model, name, np.asarray(state["arrays"][name]))
    model.n_features_in_ = int(meta["n_features_in"])
    if "feature_names_in" in meta:
        model.feature_names_in_ = np.asarray(meta["feature_names_in"], dtype=object)
    model.sensitive_columns_ = list(meta["sensitive_columns"])
    model.n_sensitive_groups_ = int(meta["n_sensitive_groups"])
    model._categories = {int(k): list(v) for k, v in meta["categories"].items()}
    return model
