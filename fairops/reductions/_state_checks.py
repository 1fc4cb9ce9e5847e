"""Checks of a reduction read back from a saved model, before it predicts.

A reduction's own state is its weights, its predictors and its classes; each predictor is then checked
by the checks of its own family (the classifier flavor walks into them). Refused: weights that are not
finite, negative, not summing to 1, or not one per predictor; more predictors than :data:`MAX_PREDICTORS`;
a predictor that cannot give a probability of a 0/1 label; classes that are not two.

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
    for index, predictor in enumerate(predictors):
        learned = np.asarray(getattr(predictor, "classes_", []))
        if not (hasattr(predictor, "predict_proba") and learned.ndim == 1 and 1 <= len(learned) <= 2
                and set(learned.tolist()) <= {0, 1}):
            raise InputError(f"{owner}: predictor {index} ({type(predictor).__name__}) is not a fitted classifier "
                             "of 0/1 labels with predict_proba")
