"""Checks of a reduction read back from a saved model, before it predicts.

A reduction's own state is its weights, its predictors and its classes; each predictor is then checked
by the checks of its own family (the classifier flavor walks into them). Refused: weights that are not
finite, negative, not summing to 1, or not one per predictor; more predictors than :data:`MAX_PREDICTORS`;
a predictor that is not a fitted base model (:data:`BASE_PREDICTORS`: the families a reduction fits, and the
constant answer of a best response to labels of one class), so never a reduction: a reduction of reductions
would answer each row with predictors x predictors calls; more than :data:`MAX_PREDICTOR_NODES` nodes
(tree nodes, weights) across the predictors; a predictor that cannot give a probability of a 0/1 label;
classes that are not two.

>>> import numpy as np
>>> from fairops.reductions import ExponentiatedGradient
>>> X = np.random.default_rng(0).normal(size=(200, 2)); s = (X[:, 1] > 0).astype(int); y = (X[:, 0] > 0).astype(int)
>>> model = ExponentiatedGradient(max_iter=5).fit(X, y, sensitive_features=s)
>>> check_reduction(model)
>>> model.weights_ = model.weights_ * 2
>>> check_reduction(model)
Traceback (most recent call last):
...
fairops.errors.InputError: ExponentiatedGradient: weights_ sum to 2, not 1
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

#: More predictors than any fit makes (each iteration adds at most nine: one best response and the
#: gap's eight), kept as a bound on what a saved file may make the loader build and run.
MAX_PREDICTORS = 10_000
#: Nodes (tree nodes, network and linear weights) a saved reduction's predictors may hold together: above a
#: fit of the fast profile's largest (about 180 LightGBM predictors of 150 trees of 63 leaves: 3.4 million).
MAX_PREDICTOR_NODES = 50_000_000
#: What a saved reduction's predictors may be, by type (exactly; a subclass is not one of them).
BASE_PREDICTORS = (
    "sklearn.tree._classes.DecisionTreeClassifier",
    "sklearn.linear_model._logistic.LogisticRegression",
    "lightgbm.sklearn.LGBMClassifier",
    "sklearn.ensemble._forest.RandomForestClassifier",
    "sklearn.neural_network._multilayer_perceptron.MLPClassifier",
    "fairops.models._network.WeightDecayMLP",
    "sklearn.dummy.DummyClassifier",
)


def _type_name(value) -> str:
    return f"{type(value).__module__}.{type(value).__qualname__}"


def predictor_nodes(predictor) -> int:
    """Tree nodes or weights of one base predictor (read off its fitted state, cheaply)."""
    fitted = vars(predictor)
    name = _type_name(predictor)
    if name.endswith("DecisionTreeClassifier"):
        return int(predictor.tree_.node_count)
    if name.endswith("RandomForestClassifier"):
        return sum(int(tree.tree_.node_count) for tree in fitted.get("estimators_", []))
    if name.endswith("LGBMClassifier"):
        booster = predictor.booster_
        return 2 * int(np.sum(booster.feature_importance(importance_type="split"))) + int(booster.num_trees())
    weights = fitted.get("coefs_", []) + [fitted.get("coef_", np.zeros(1))]
    return int(sum(np.size(w) for w in weights))


def check_reduction(model) -> None:
    """Refuse a reduction whose saved state is not one a fit produces (see the module docstring)."""
    owner = type(model).__name__
    weights, predictors = model.__dict__.get("weights_"), model.__dict__.get("predictors_")
    if not isinstance(predictors, list) or not predictors or len(predictors) > MAX_PREDICTORS:
        raise InputError(f"{owner}: predictors_ must be a list of 1 to {MAX_PREDICTORS} fitted predictors")
    weights = np.asarray(weights)
    if weights.dtype.kind != "f" or weights.shape != (len(predictors),):
        raise InputError(f"{owner}: weights_ must be {len(predictors)} floating-point numbers, one per predictor; "
                         f"got {weights.dtype} of shape {weights.shape}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise InputError(f"{owner}: weights_ must be finite and non-negative")
    if abs(float(weights.sum()) - 1.0) > 1e-6:
        raise InputError(f"{owner}: weights_ sum to {float(weights.sum()):.6g}, not 1")
    classes = np.asarray(model.__dict__.get("classes_", []))
    if classes.shape != (2,) or classes[0] == classes[1]:
        raise InputError(f"{owner}: classes_ must hold two distinct classes, got {classes.tolist()[:5]}")
    nodes = 0
    for index, predictor in enumerate(predictors):
        if _type_name(predictor) not in BASE_PREDICTORS:
            allowed = ", ".join(name.rsplit(".", 1)[1] for name in BASE_PREDICTORS)
            raise InputError(f"{owner}: predictor {index} ({type(predictor).__name__}) is not a fitted classifier of "
                             f"a base family ({allowed}); a reduction holds base models only, never a reduction")
        nodes += predictor_nodes(predictor)
        if nodes > MAX_PREDICTOR_NODES:
            raise InputError(f"{owner}: its first {index + 1} predictors hold {nodes:,} nodes, more than the "
                             f"{MAX_PREDICTOR_NODES:,} a reduction may hold")
        learned = np.asarray(getattr(predictor, "classes_", []))
        if not (hasattr(predictor, "predict_proba") and learned.ndim == 1 and 1 <= len(learned) <= 2
                and set(learned.tolist()) <= {0, 1}):
            raise InputError(f"{owner}: predictor {index} ({type(predictor).__name__}) is not a fitted classifier "
                             "of 0/1 labels with predict_proba")
