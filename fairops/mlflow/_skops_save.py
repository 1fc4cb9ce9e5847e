"""What of a classifier goes into its skops file: the model without the attributes that refer back to it.

skops saves an object graph by recursing into it and saves no reference cycle: an attribute leading back
to an object that holds it recurses until Python's RecursionError. Two such attributes are left on fitted
scikit-learn models by scikit-learn itself, and neither is read by ``predict_proba``, so the saved copy goes
without them (the model passed in is not changed):

- ``_metadata_request``, the routing requests ``set_fit_request(...)`` records (scikit-learn's documented
  way to hand ``sensitive_features`` to a SCAFF model inside a Pipeline): the requests name their
  estimator as their owner. A loaded model routes nothing until requests are set again;
- a bound method of the object stored on the object itself, the same as its class's method
  (HistGradientBoosting leaves ``_raw_predict`` so after early stopping on a scorer).

Any other cycle is refused with the path round it (a TypeError, not skops' RecursionError).

>>> import sklearn
>>> from sklearn.linear_model import LogisticRegression
>>> with sklearn.config_context(enable_metadata_routing=True):
...     model = LogisticRegression().set_fit_request(sample_weight=True).fit([[0.0], [1.0]], [0, 1])
>>> cycle_path(model)
'LogisticRegression._metadata_request.owner'
>>> [name for _, name in leftovers(model)]
['_metadata_request']
>>> bytes_ = model_bytes(model)  # saved without it; the model keeps its requests
>>> "_metadata_request" in vars(model)
True
"""

from __future__ import annotations

import copy
import types


def _walked(value) -> bool:
    """Whether skops saves ``value``'s contents (functions and classes it saves by name only)."""
    return not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType)) \
        and (isinstance(value, (list, tuple, dict, types.MethodType)) or hasattr(value, "__dict__"))


def _children(value):
    """``(label, child)`` for what skops saves of ``value``: items, attributes, a method's object."""
    if isinstance(value, (list, tuple)):
        return [(f"[{index}]", item) for index, item in enumerate(value)]
    if isinstance(value, dict):
        return [(f"[{key!r}]", item) for key, item in value.items()]
    if isinstance(value, types.MethodType):
        return [(".__self__", value.__self__)]
    return [(f".{name}", item) for name, item in vars(value).items()]


def _objects(model):
    """Every object with attributes reachable from ``model``, once each."""
    seen, stack = set(), [model]
    while stack:
        value = stack.pop()
        if id(value) in seen or not _walked(value):
            continue
        seen.add(id(value))
        if not isinstance(value, (list, tuple, dict, types.MethodType)):
            yield value
        stack.extend(child for _, child in _children(value))


def leftovers(model) -> list[tuple[object, str]]:
    """``(holder, attribute)`` of the attributes the saved copy goes without (see the module docstring)."""
    from sklearn.base import BaseEstimator

    found = []
    for holder in _objects(model):
        for name, value in vars(holder).items():
            routing = name == "_metadata_request" and isinstance(holder, BaseEstimator)
            own_method = isinstance(value, types.MethodType) and value.__self__ is holder \
                and getattr(type(holder), name, None) is value.__func__
            if routing or own_method:
                found.append((holder, name))
    return found


def cycle_path(model) -> str | None:
    """The path from ``model`` to the first attribute leading back to an object on that path, or None."""
    path = {id(model): type(model).__name__}
    on_path, done = {id(model)}, set()
    stack = [(model, iter(_children(model)))]
    while stack:
        value, children = stack[-1]
        for label, child in children:
            if id(child) in on_path:
                return path[id(value)] + label
            if id(child) not in done and _walked(child):
                path[id(child)] = path[id(value)] + label
                on_path.add(id(child))
                stack.append((child, iter(_children(child))))
                break
        else:
            stack.pop()
            on_path.discard(id(value))
            done.add(id(value))
    return None


def model_bytes(model) -> bytes:
    """skops' bytes of ``model`` without its leftovers; a TypeError naming the path for any other cycle."""
    import skops.io

    if leftovers(model):
        model = copy.deepcopy(model)
        for holder, name in leftovers(model):
            del vars(holder)[name]
    try:
        return skops.io.dumps(model)
    except RecursionError:
        cycle = cycle_path(model)
    where = f"{cycle} leads back to an object holding it (a reference cycle, which skops cannot save)" if cycle \
        else "its objects nest deeper than skops can save"
    raise TypeError(f"cannot save a {type(model).__name__}: {where}")
