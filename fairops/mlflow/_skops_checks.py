"""Checks of a classifier's skops file: sizes before inflating, then the fitted state compiled code reads.

skops rebuilds scikit-learn's trees and LightGBM's boosters from data, but neither library checks
that data before its compiled ``predict`` follows it: a child index out of range reads outside the
tree, a cycle never ends. fairops checks, in this order:

1. :func:`check_archive`: every entry's size from the zip directory and each ``.npy`` header, as
   for ``.npz`` files (per array and in total at most ``FAIROPS_MAX_ARRAY_BYTES``), before any is
   inflated; ``schema.json`` parsed with the same limit;
2. :func:`check_boosters`: every LightGBM model text in the schema
   (:func:`fairops.mlflow._lightgbm_text.check_model_text`), before skops hands it to LightGBM;
3. :func:`check_fitted`, on the loaded model before it predicts: every scikit-learn tree (indices in
   range, each node reached once from the root, no cycle, finite thresholds and values, features
   within the estimator's), every forest's trees against the forest, every MLP's weight shapes.

(fairops' SCAFF estimators check their own arrays when skops rebuilds them.)

>>> import numpy as np
>>> from sklearn.tree import DecisionTreeClassifier
>>> tree = DecisionTreeClassifier(max_depth=2).fit(np.arange(8.0).reshape(-1, 1), [0, 0, 1, 1, 0, 0, 1, 1])
>>> check_fitted(tree)
>>> state = tree.tree_.__getstate__()
>>> state["nodes"]["right_child"][0] = 1
>>> tree.tree_.__setstate__(state)
>>> check_fitted(tree)
Traceback (most recent call last):
...
ValueError: DecisionTreeClassifier: tree node 0's left child 1 is reached twice (a cycle or a shared node)
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np

from ._lightgbm_text import check_model_text
from ._model_files import MAX_ARRAY_BYTES_ENV, entry_size, max_array_bytes

SCHEMA_ENTRY = "schema.json"


def check_archive(model_bytes: bytes, refuse) -> dict:
    """The skops schema, after every entry's size was checked (``refuse(problem)`` makes the error)."""
    left = max_array_bytes()
    try:
        archive = zipfile.ZipFile(io.BytesIO(model_bytes))
    except zipfile.BadZipFile as error:
        raise refuse(f"not a zip archive: {error}") from None
    with archive:
        names = [info.filename for info in archive.infolist()]
        if len(set(names)) != len(names) or SCHEMA_ENTRY not in names:
            raise refuse(f"its entries {names[:5]} are not one {SCHEMA_ENTRY} and unique .npy arrays")
        for info in archive.infolist():
            if info.filename == SCHEMA_ENTRY:
                if info.file_size > left:
                    raise refuse(f"{SCHEMA_ENTRY} declares {info.file_size} bytes, above the {left} bytes left of "
                                 f"the model's limit ({MAX_ARRAY_BYTES_ENV})")
                size = info.file_size
            elif info.filename.endswith(".npy"):
                member, *_, size = entry_size(archive, info, left, refuse, records=True)
                member.close()
            else:
                raise refuse(f"entry {info.filename!r} is neither {SCHEMA_ENTRY} nor a .npy array")
            left -= size
        try:
            schema = json.loads(archive.read(SCHEMA_ENTRY))
        except (ValueError, RecursionError) as error:
            raise refuse(f"{SCHEMA_ENTRY} is not valid JSON: {str(error)[:200]}") from None
    if not isinstance(schema, dict):
        raise refuse(f"{SCHEMA_ENTRY} holds a {type(schema).__name__}, not a JSON object")
    return schema


def _nodes(schema):
    """Every JSON object in the schema, without recursion (the schema may be deep)."""
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            yield value
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def check_boosters(schema: dict) -> int:
    """Check the model text of every LightGBM ``Booster`` in a skops schema; return how many there were."""
    count = 0
    for node in _nodes(schema):
        if node.get("__class__") != "Booster" or node.get("__module__") != "lightgbm.basic":
            continue
        content = node.get("content")
        handle = content.get("content", {}).get("_handle") if isinstance(content, dict) else None
        if not isinstance(handle, dict) or not isinstance(handle.get("content"), str):
            raise ValueError("a LightGBM Booster in the skops file holds no model text")
        try:
            text = json.loads(handle["content"])
        except ValueError:
            raise ValueError("a LightGBM Booster's model text is not a JSON string") from None
        check_model_text(text)
        count += 1
    return count


def check_tree(tree, n_features: int, owner: str) -> None:
    """A scikit-learn ``Tree``: structure, features and numbers (see the module docstring)."""
    from .._state_checks import first_false

    count = int(tree.node_count)
    left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
    feature, threshold = np.asarray(tree.feature), np.asarray(tree.threshold)
    if count < 1 or left.shape != (count,) or right.shape != (count,) or int(tree.n_features) != n_features:
        raise ValueError(f"{owner}: tree of {count} nodes over {tree.n_features} features does not fit the "
                         f"estimator's {n_features} features")
    leaf = left == -1
    if not np.array_equal(leaf, right == -1):
        raise ValueError(f"{owner}: tree node {first_false(leaf == (right == -1))} has one child only")
    inner = ~leaf
    for name, values in (("left", left), ("right", right)):
        bad = first_false(~inner | ((values > 0) & (values < count)))
        if bad is not None:
            raise ValueError(f"{owner}: tree node {bad}'s {name} child {values[bad]} is outside [1, {count})")
    bad = first_false(~inner | ((feature >= 0) & (feature < n_features) & np.isfinite(threshold)))
    if bad is not None:
        raise ValueError(f"{owner}: tree node {bad} splits feature {feature[bad]} at {threshold[bad]}; "
                         f"features are [0, {n_features}) and thresholds finite")
    reached = np.bincount(np.concatenate([left[inner], right[inner]]), minlength=count)
    reached[0] += 1
    bad = first_false(reached == 1)
    if bad is not None:
        parent = np.flatnonzero(inner & ((left == bad) | (right == bad)))
        side = "left" if len(parent) and left[parent[0]] == bad else "right"
        raise ValueError(f"{owner}: tree node {parent[0] if len(parent) else '?'}'s {side} child {bad} is "
                         f"{'reached twice (a cycle or a shared node)' if reached[bad] else 'never reached'}")
    values = np.asarray(tree.value)
    if values.shape[0] != count or not np.all(np.isfinite(values)):
        raise ValueError(f"{owner}: tree values must be finite, one row per node")


def _check_mlp(model, owner: str) -> None:
    coefs, intercepts = list(model.coefs_), list(model.intercepts_)
    widths = [int(model.n_features_in_)]
    if len(coefs) != len(intercepts) or not coefs or int(model.n_layers_) != len(coefs) + 1:
        raise ValueError(f"{owner}: {len(coefs)} weight matrices, {len(intercepts)} intercepts and "
                         f"n_layers_ = {model.n_layers_} do not describe one network")
    for layer, (weights, bias) in enumerate(zip(coefs, intercepts)):
        weights, bias = np.asarray(weights), np.asarray(bias)
        if weights.ndim != 2 or weights.shape[0] != widths[-1] or bias.shape != (weights.shape[1],):
            raise ValueError(f"{owner}: layer {layer} has weights {weights.shape} and intercepts {bias.shape}; "
                             f"its input has {widths[-1]} units")
        if weights.dtype.kind != "f" or not (np.all(np.isfinite(weights)) and np.all(np.isfinite(bias))):
            raise ValueError(f"{owner}: layer {layer}'s weights must be finite floating-point numbers")
        widths.append(weights.shape[1])
    if widths[-1] != int(model.n_outputs_):
        raise ValueError(f"{owner}: the last layer has {widths[-1]} units, n_outputs_ is {model.n_outputs_}")


def _check_linear(model, owner: str) -> None:
    coef, intercept = np.asarray(model.coef_), np.asarray(model.intercept_)
    n_features = int(model.n_features_in_)
    if coef.ndim != 2 or coef.shape[1] != n_features or intercept.shape != (coef.shape[0],):
        raise ValueError(f"{owner}: coef_ {coef.shape} and intercept_ {intercept.shape} do not fit "
                         f"{n_features} features")
    if coef.dtype.kind != "f" or not (np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept))):
        raise ValueError(f"{owner}: coef_ and intercept_ must be finite floating-point numbers")


def _check_one(value, owner: str) -> None:
    from sklearn.ensemble import BaseEnsemble
    from sklearn.linear_model._base import LinearClassifierMixin
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import BaseDecisionTree

    fitted = vars(value)
    if isinstance(value, BaseDecisionTree) and "tree_" in fitted:  # a forest's template has none
        check_tree(value.tree_, int(value.n_features_in_), owner)
    elif isinstance(value, BaseEnsemble) and "estimators_" in fitted:
        n_features = int(value.n_features_in_)
        for member in value.estimators_:
            if not isinstance(member, BaseDecisionTree) or "tree_" not in vars(member) \
                    or int(member.n_features_in_) != n_features:
                raise ValueError(f"{owner}: a member {type(member).__name__} is not a fitted tree taking the "
                                 f"forest's {n_features} features")
    elif isinstance(value, MLPClassifier) and "coefs_" in fitted:
        _check_mlp(value, owner)
    elif isinstance(value, LinearClassifierMixin) and "coef_" in fitted:
        _check_linear(value, owner)


def check_fitted(model) -> None:
    """Check every tree, forest and network reachable from ``model``'s attributes (lists, dicts, steps)."""
    seen, stack = set(), [model]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif hasattr(value, "__dict__") and type(value).__module__.split(".")[0] in ("sklearn", "fairops",
                                                                                   "lightgbm"):
            _check_one(value, type(value).__name__)
            stack.extend(vars(value).values())
