"""Checks of a classifier's skops file: sizes before inflating, then the fitted state compiled code reads.

skops rebuilds scikit-learn's trees (also HistGradientBoosting's) and LightGBM's boosters from data, but
neither library checks that data before its compiled ``predict`` follows it: a child index out of range
reads outside the tree, a cycle never ends. fairops checks, in this order:

1. :func:`check_archive`: every entry's size from the zip directory and each ``.npy`` header, as
   for ``.npz`` files (per array and in total at most ``FAIROPS_MAX_ARRAY_BYTES``), before any is
   inflated; ``schema.json`` parsed with the same limit;
2. :func:`check_boosters`: every LightGBM model text in the schema
   (:func:`fairops.mlflow._lightgbm_text.check_model_text`), before skops hands it to LightGBM;
3. :func:`check_fitted`, on the loaded model before it predicts: every scikit-learn tree (indices in
   range, each node reached once from the root, no cycle, finite thresholds and values, features
   within the estimator's), every forest's trees against the forest, every MLP's weight shapes, every
   HistGradientBoosting model's ``TreePredictor`` nodes (the same structure checks on its node
   record, categorical splits against the bitsets and the features the bin mapper holds as categories)
   with what its predict hands them (known categories, the category encoder it made itself), and every
   preprocessing step of scikit-learn a model may hold (:mod:`fairops.mlflow._transformer_checks`), then
   that each step of a Pipeline gives the next as many columns as it was fitted on.

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
fairops.errors.InputError: DecisionTreeClassifier: tree node 0's left child 1 is reached twice (a cycle or a shared node)
"""  # noqa: E501 - a doctest's expected output is one line

from __future__ import annotations

import io
import json
import zipfile

import numpy as np

from .._state_checks import first_false, reached_from
from ..errors import InputError
from ._lightgbm_text import check_model_text
from ._model_files import MAX_ARRAY_BYTES_ENV, entry_size, max_array_bytes
from ._transformer_checks import check_transformer, check_widths

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
            raise InputError("a LightGBM Booster in the skops file holds no model text")
        try:
            text = json.loads(handle["content"])
        except ValueError:
            raise InputError("a LightGBM Booster's model text is not a JSON string") from None
        check_model_text(text)
        count += 1
    return count


def check_reached(left, right, inner, owner: str) -> None:
    """Every node reached exactly once from node 0 through the children of inner nodes (whose indices are
    in range): no cycle, no shared node, no node left out; predict follows these links without a bound."""
    count = len(left)
    reached = np.bincount(np.concatenate([left[inner], right[inner]]), minlength=count)
    reached[0] += 1
    bad = first_false(reached == 1)
    if bad is not None:
        parent = np.flatnonzero(inner & ((left == bad) | (right == bad)))
        side = "left" if len(parent) and left[parent[0]] == bad else "right"
        raise InputError(f"{owner}: tree node {parent[0] if len(parent) else '?'}'s {side} child {bad} is "
                         f"{'reached twice (a cycle or a shared node)' if reached[bad] else 'never reached'}")
    bad = first_false(reached_from(np.array([0]), left, right, inner))
    if bad is not None:
        raise InputError(f"{owner}: tree node {bad} is never reached from the root (a cycle apart from it)")


def check_tree(tree, n_features: int, owner: str) -> None:
    """A scikit-learn ``Tree``: structure, features and numbers (see the module docstring)."""
    count = int(tree.node_count)
    left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
    feature, threshold = np.asarray(tree.feature), np.asarray(tree.threshold)
    if count < 1 or left.shape != (count,) or right.shape != (count,) or int(tree.n_features) != n_features:
        raise InputError(f"{owner}: tree of {count} nodes over {tree.n_features} features does not fit the "
                         f"estimator's {n_features} features")
    leaf = left == -1
    if not np.array_equal(leaf, right == -1):
        raise InputError(f"{owner}: tree node {first_false(leaf == (right == -1))} has one child only")
    inner = ~leaf
    for name, values in (("left", left), ("right", right)):
        bad = first_false(~inner | ((values > 0) & (values < count)))
        if bad is not None:
            raise InputError(f"{owner}: tree node {bad}'s {name} child {values[bad]} is outside [1, {count})")
    bad = first_false(~inner | ((feature >= 0) & (feature < n_features) & np.isfinite(threshold)))
    if bad is not None:
        raise InputError(f"{owner}: tree node {bad} splits feature {feature[bad]} at {threshold[bad]}; "
                         f"features are [0, {n_features}) and thresholds finite")
    check_reached(left, right, inner, owner)
    values = np.asarray(tree.value)
    if values.shape[0] != count or not np.all(np.isfinite(values)):
        raise InputError(f"{owner}: tree values must be finite, one row per node")


# scikit-learn's HistGradientBoosting internals, read from scikit-learn 1.9's source (pyproject.toml asks
# for >= 1.9): TreePredictor's arrays and its node record, the fields of PREDICTOR_RECORD_DTYPE in
# sklearn/ensemble/_hist_gradient_boosting/common.pyx in their order. A scikit-learn whose record differs
# is refused by name (TreePredictor casts its nodes to the record on load, and the cast ones do not match)
# and tests/mlflow_models/test_skops_hist_gradient_boosting.py fails.
TREE_PREDICTOR = "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor"
HGB_NODE_RECORD = np.dtype([
    ("value", np.float64), ("count", np.uint32), ("feature_idx", np.intp), ("num_threshold", np.float64),
    ("missing_go_to_left", np.uint8), ("left", np.uint32), ("right", np.uint32), ("gain", np.float64),
    ("depth", np.uint32), ("is_leaf", np.uint8), ("bin_threshold", np.uint8), ("is_categorical", np.uint8),
    ("bitset_idx", np.uint32),
])
_BITSET_WORDS = 8  # a category bitset: 8 x 32 bits, one per value 0..255 a category may take


def _bitsets(predictor, name: str, owner: str) -> np.ndarray:
    array = vars(predictor).get(name)
    if not isinstance(array, np.ndarray) or array.dtype != np.uint32 or array.ndim != 2 \
            or array.shape[1] != _BITSET_WORDS:
        raise InputError(f"{owner}: {name} must be a uint32 array of {_BITSET_WORDS} words per row")
    return array


def check_tree_predictor(predictor, n_features: int, categorical: np.ndarray, owner: str) -> None:
    """A HistGradientBoosting ``TreePredictor`` whose raw-data predict reads ``n_features`` columns, of which
    ``categorical`` (a mask) are categories: its nodes' structure, features, thresholds, values, bitsets."""
    nodes = vars(predictor).get("nodes")
    if not isinstance(nodes, np.ndarray) or nodes.dtype != HGB_NODE_RECORD or nodes.ndim != 1 or not len(nodes):
        raise InputError(f"{owner}: its nodes are not a list of the node record this check was written for "
                         f"(scikit-learn 1.9's PREDICTOR_RECORD_DTYPE)")
    raw = _bitsets(predictor, "raw_left_cat_bitsets", owner)
    if _bitsets(predictor, "binned_left_cat_bitsets", owner).shape != raw.shape:
        raise InputError(f"{owner}: binned_left_cat_bitsets and raw_left_cat_bitsets differ in shape")
    count = len(nodes)
    inner = nodes["is_leaf"] == 0
    left, right = nodes["left"].astype(np.int64), nodes["right"].astype(np.int64)
    for name, values in (("left", left), ("right", right)):
        bad = first_false(~inner | ((values > 0) & (values < count)))
        if bad is not None:
            raise InputError(f"{owner}: tree node {bad}'s {name} child {values[bad]} is outside [1, {count})")
    check_reached(left, right, inner, owner)
    feature = nodes["feature_idx"]
    bad = first_false(~inner | ((feature >= 0) & (feature < n_features)))
    if bad is not None:
        raise InputError(f"{owner}: tree node {bad} splits feature {feature[bad]}; features are [0, {n_features})")
    split_on_category = inner & (nodes["is_categorical"] != 0)
    # +inf is a real threshold: a split that sends only the missing values right
    threshold = nodes["num_threshold"]
    bad = first_false(~(inner & ~split_on_category) | (threshold > -np.inf))
    if bad is not None:
        raise InputError(f"{owner}: tree node {bad} splits at {threshold[bad]}; thresholds are numbers or +inf")
    bad = first_false(~split_on_category | (categorical[np.where(split_on_category, feature, 0)]
                                            & (nodes["bitset_idx"] < len(raw))))
    if bad is not None:
        raise InputError(f"{owner}: tree node {bad} splits feature {feature[bad]} as categories with bitset "
                         f"{nodes['bitset_idx'][bad]}; the feature must be a category one and bitsets are "
                         f"[0, {len(raw)})")
    if not np.all(np.isfinite(nodes["value"])):
        raise InputError(f"{owner}: tree node {first_false(np.isfinite(nodes['value']))}'s value is not finite")


def _keeps_width(step) -> bool:
    """Whether a step of HistGradientBoosting's own category encoder outputs one column per column it takes."""
    from sklearn.preprocessing import FunctionTransformer, OrdinalEncoder
    from sklearn.utils import check_array

    if isinstance(step, str):
        return step == "passthrough"
    return isinstance(step, OrdinalEncoder) or (
        isinstance(step, FunctionTransformer) and getattr(step.func, "func", None) is check_array)


def _preprocessed_width(model, owner: str) -> int:
    """Columns the predictors read: the input's, or those of the category encoder the model made itself
    (categorical_features from the input's dtypes), which reorders them and skips the input's check."""
    from sklearn.compose import ColumnTransformer

    n_features = int(model.n_features_in_)
    encoder = vars(model).get("_preprocessor")
    if encoder is None:
        return n_features
    unknown = ValueError(f"{owner}: its category encoder is not the one scikit-learn makes (an OrdinalEncoder and "
                         f"check_array over masks of its {n_features} columns)")
    parts = vars(encoder).get("transformers_") if isinstance(encoder, ColumnTransformer) else None
    if not isinstance(parts, list) or not all(isinstance(part, tuple) and len(part) == 3 for part in parts):
        raise unknown
    width = 0
    for _, step, columns in parts:
        mask, dropped = np.asarray(columns), isinstance(step, str) and step == "drop"
        if mask.dtype != bool or mask.shape != (n_features,) or not (dropped or _keeps_width(step)):
            raise unknown
        width += 0 if dropped else int(mask.sum())
    if width != n_features:
        raise InputError(f"{owner}: its category encoder passes {width} of its {n_features} columns")
    return width


def _check_known_categories(mapper, n_features: int, owner: str) -> np.ndarray:
    """The bin mapper's category mask, and its known category values of which predict makes bitsets."""
    categorical = np.asarray(vars(mapper).get("is_categorical_"))
    thresholds = vars(mapper).get("bin_thresholds_")
    if categorical.shape != (n_features,) or not isinstance(thresholds, list) or len(thresholds) != n_features:
        raise InputError(f"{owner}: its bin mapper does not describe its {n_features} features")
    for feature in np.flatnonzero(categorical):
        values = np.asarray(thresholds[feature])
        if values.ndim != 1 or values.dtype.kind not in "iuf" \
                or not np.all((values >= 0) & (values < 256) & (values == np.floor(values))):
            raise InputError(f"{owner}: feature {feature}'s known categories must be whole numbers in [0, 256)")
    return categorical != 0


def _check_hist_gradient_boosting(model, owner: str) -> list:
    """A fitted HistGradientBoosting model: what its raw-data predict reads; returns its predictors."""
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

    fitted = vars(model)
    if fitted.get("_in_fit"):
        raise InputError(f"{owner}: saved in the middle of fit (_in_fit is set)")
    n_features = _preprocessed_width(model, owner)
    categorical = _check_known_categories(fitted.get("_bin_mapper"), n_features, owner)
    per_iteration = int(model.n_trees_per_iteration_)
    baseline = np.asarray(fitted.get("_baseline_prediction"))
    if baseline.dtype.kind != "f" or baseline.size != per_iteration or not np.all(np.isfinite(baseline)):
        raise InputError(f"{owner}: _baseline_prediction must be {per_iteration} finite number(s)")
    predictors = fitted.get("_predictors")
    if not isinstance(predictors, list) or not all(isinstance(trees, list) and len(trees) == per_iteration
                                                   for trees in predictors):
        raise InputError(f"{owner}: _predictors must be a list of {per_iteration} TreePredictor(s) per iteration")
    found = []
    for number, trees in enumerate(predictors):
        for tree in trees:
            if type(tree) is not TreePredictor:
                raise InputError(f"{owner}: iteration {number} holds a {type(tree).__name__}, not a TreePredictor")
            check_tree_predictor(tree, n_features, categorical, f"{owner} iteration {number}'s TreePredictor")
            found.append(tree)
    return found


def _check_mlp(model, owner: str) -> None:
    coefs, intercepts = list(model.coefs_), list(model.intercepts_)
    widths = [int(model.n_features_in_)]
    if len(coefs) != len(intercepts) or not coefs or int(model.n_layers_) != len(coefs) + 1:
        raise InputError(f"{owner}: {len(coefs)} weight matrices, {len(intercepts)} intercepts and "
                         f"n_layers_ = {model.n_layers_} do not describe one network")
    for layer, (weights, bias) in enumerate(zip(coefs, intercepts)):
        weights, bias = np.asarray(weights), np.asarray(bias)
        if weights.ndim != 2 or weights.shape[0] != widths[-1] or bias.shape != (weights.shape[1],):
            raise InputError(f"{owner}: layer {layer} has weights {weights.shape} and intercepts {bias.shape}; "
                             f"its input has {widths[-1]} units")
        if weights.dtype.kind != "f" or not (np.all(np.isfinite(weights)) and np.all(np.isfinite(bias))):
            raise InputError(f"{owner}: layer {layer}'s weights must be finite floating-point numbers")
        widths.append(weights.shape[1])
    if widths[-1] != int(model.n_outputs_):
        raise InputError(f"{owner}: the last layer has {widths[-1]} units, n_outputs_ is {model.n_outputs_}")


def _check_linear(model, owner: str) -> None:
    coef, intercept = np.asarray(model.coef_), np.asarray(model.intercept_)
    n_features = int(model.n_features_in_)
    if coef.ndim != 2 or coef.shape[1] != n_features or intercept.shape != (coef.shape[0],):
        raise InputError(f"{owner}: coef_ {coef.shape} and intercept_ {intercept.shape} do not fit "
                         f"{n_features} features")
    if coef.dtype.kind != "f" or not (np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept))):
        raise InputError(f"{owner}: coef_ and intercept_ must be finite floating-point numbers")


def _check_one(value, owner: str) -> list:
    """Check ``value`` if it is a model of a kind checked here; returns the TreePredictors it checked."""
    from sklearn.ensemble import BaseEnsemble, HistGradientBoostingClassifier, HistGradientBoostingRegressor
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
                raise InputError(f"{owner}: a member {type(member).__name__} is not a fitted tree taking the "
                                 f"forest's {n_features} features")
    elif isinstance(value, (HistGradientBoostingClassifier, HistGradientBoostingRegressor)) and "_predictors" in fitted:
        return _check_hist_gradient_boosting(value, owner)
    elif isinstance(value, MLPClassifier) and "coefs_" in fitted:
        _check_mlp(value, owner)
    elif isinstance(value, LinearClassifierMixin) and "coef_" in fitted:
        _check_linear(value, owner)
    else:
        check_transformer(value, owner)
    return []


def check_fitted(model) -> None:
    """Check every tree, forest, boosting model and network reachable from ``model``'s attributes (lists,
    dicts, steps); a TreePredictor outside a fitted HistGradientBoosting model is refused (nothing checks it)."""
    from sklearn.pipeline import Pipeline

    seen, stack, predictors, pipelines = set(), [model], set(), []
    checked: set = set()
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
            checked.update(id(tree) for tree in _check_one(value, type(value).__name__))
            if _type_name(value) == TREE_PREDICTOR:
                predictors.add(id(value))
            if isinstance(value, Pipeline):
                pipelines.append(value)
            stack.extend(vars(value).values())
    if predictors - checked:
        raise InputError("a TreePredictor outside a fitted HistGradientBoosting model: nothing checks its nodes")
    for pipeline in pipelines:  # once every step's own state is checked, so their widths can be read
        check_widths(pipeline, type(pipeline).__name__)


def _type_name(value) -> str:
    return f"{type(value).__module__}.{type(value).__qualname__}"
