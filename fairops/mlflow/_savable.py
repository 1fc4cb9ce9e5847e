"""Whether a fitted classifier can be saved with the classifier flavor, and where a step that cannot sits.

The flavor saves with skops and loads with :data:`TRUSTED_TYPES` only; :func:`check_savable` refuses a model
holding any other type before anything is written, naming the type and the step holding it
(:func:`holding`); ``keep_model`` (:mod:`fairops.tracking`) asks it at the first trial that keeps a model.
:mod:`fairops.mlflow.classifier` is this module's face.
"""

from __future__ import annotations

from ..models._families import built_in_trusted_types
from . import _skops_save

# Types beyond skops' defaults (scikit-learn's estimators, NumPy, builtins) that the built-in model families
# and one's own scikit-learn models (HistGradientBoosting's trees) are made of, read from the family table;
# tests parametrised over the table check each family's list.
TRUSTED_TYPES = built_in_trusted_types()


def untrusted_types(model_bytes: bytes) -> list[str]:
    """Types a skops file names that neither skops' defaults nor :data:`TRUSTED_TYPES` cover.

    Parameters
    ----------
    model_bytes : bytes
        A skops file's content.

    Returns
    -------
    list of str
        The types, sorted.
    """
    import skops.io

    return sorted(set(skops.io.get_untrusted_types(data=model_bytes)) - set(TRUSTED_TYPES))


def type_names(value) -> set:
    """The qualified names of the types, functions and classes reachable from ``value``.

    What a skops file of it would name (a function or class held as a value by its own name).

    Parameters
    ----------
    value : object
        A model, or any object.

    Returns
    -------
    set of str
        ``module.qualname`` of each.
    """
    import types

    seen, stack, names = set(), [value], set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (type, types.FunctionType, types.BuiltinFunctionType)):
            names.add(f"{getattr(item, '__module__', '?')}.{getattr(item, '__qualname__', '?')}")
            continue
        names.add(f"{type(item).__module__}.{type(item).__qualname__}")
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif hasattr(item, "__dict__") and not isinstance(item, types.ModuleType):
            stack.extend(vars(item).values())
    return names


def _parts(model):
    """``(label, part)`` of a Pipeline's steps and a ColumnTransformer's parts."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    if isinstance(model, Pipeline):
        return [(f"step {name!r}", step) for name, step in model.steps]
    if isinstance(model, ColumnTransformer):
        return [(f"part {name!r}", part) for name, part, _ in getattr(model, "transformers_", model.transformers)]
    return []


def holding(model, names) -> str:
    """Where in ``model`` an object of one of the type ``names`` sits, as its steps and parts.

    Parameters
    ----------
    model : estimator
        A Pipeline, ColumnTransformer or other estimator.
    names : iterable of str
        Qualified type names (as :func:`type_names` gives them).

    Returns
    -------
    str
        E.g. ``step 'encode' > part 'numbers' > step 'impute'``; empty when it is the model itself or it is in
        no named step.
    """
    wanted = set(names)
    for label, part in _parts(model):
        if wanted & type_names(part):
            inner = holding(part, names)
            return f"{label} > {inner}" if inner else label
    return ""


def check_savable(model) -> bytes:
    """The skops bytes of ``model``, or a ``TypeError`` naming the types fairops does not load and their step.

    The step that holds them (a step of one's own, say) is named before anything is saved.

    Parameters
    ----------
    model : classifier
        A fitted model.

    Returns
    -------
    bytes
        Its skops bytes.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.impute import SimpleImputer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> X = np.array([[0.0], [np.nan], [2.0], [3.0]])
    >>> _ = check_savable(make_pipeline(SimpleImputer(), LogisticRegression()).fit(X, [0, 0, 1, 1]))
    """
    model_bytes = _skops_save.model_bytes(model)
    extra = untrusted_types(model_bytes)
    if extra:
        where = holding(model, extra)
        raise TypeError(f"cannot save a {type(model).__name__}: it holds type(s) fairops does not load {extra}"
                        f"{f' (in {where})' if where else ''}; fairops loads only scikit-learn, LightGBM and its "
                        "own estimators")
    return model_bytes
