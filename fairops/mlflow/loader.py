"""Load a model fairops wrote, trusting nothing in it but data: the way to load from a shared store.

:func:`load_model` (a pyfunc model, like ``mlflow.pyfunc.load_model``) and :func:`load_native` (the
fitted estimator or pipeline):

1. download the model directory (any MLflow model URI: ``models:/name@alias``, ``runs:/``, a path);
2. verify its seal (:mod:`fairops.mlflow.sealing`): the manifest over every file, ``MLmodel``
   included, and its HMAC-SHA256 when ``FAIROPS_MODEL_KEY`` is set. Each file is opened once, and
   the bytes whose sha256 was checked are the bytes parsed in steps 3 and 4: a file swapped after it
   was checked is never read;
3. pick the loader from :data:`fairops.mlflow.flavors.FLAVORS`, a table fixed in code, by the fairops
   flavor the directory names; ``MLmodel``'s ``loader_module``, code paths and any list of trusted types are
   never used;
4. the flavor reads its data with what fairops' code trusts: a fixed table of estimator classes
   (SCAFF, FairLOF) or skops with :data:`fairops.mlflow.classifier.TRUSTED_TYPES`.

``mlflow.pyfunc.load_model`` of a fairops model also runs fairops' loader (steps 2 and 4), but only
because ``MLmodel`` says so: whoever can rewrite ``MLmodel`` chooses what MLflow runs, and MLflow
reads ``MLmodel`` (and ``requirements.txt``) itself before fairops' checks. See
docs/mlflow/loading.md.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from . import _flavor_base as _flavor
from .flavors import FLAVORS
from .sealing import ModelFilesError, read_model

if TYPE_CHECKING:
    from types import ModuleType

    from mlflow.models import Model
    from mlflow.pyfunc import PyFuncInput, PyFuncModel, PyFuncOutput
    from sklearn.base import BaseEstimator

    from .sealing import ModelData


def _open(model_uri: str, dst_path: str | None) -> tuple[Model, ModuleType, ModelData]:
    """(MLmodel as a ``Model``, the flavor module, the data files): everything read once, as verified."""
    from mlflow.models import Model

    data = read_model(_flavor.local_model_dir(str(model_uri), dst_path))
    meta = Model.from_dict(data.mlmodel)  # the MLmodel bytes the seal covered, not the file read again
    names = [name for name in meta.flavors if name in FLAVORS]
    if len(names) != 1:
        raise ModelFilesError(f"{model_uri} is not a model fairops wrote: its MLmodel names the flavors "
                              f"{sorted(meta.flavors)}, fairops loads exactly one of {sorted(FLAVORS)}")
    return meta, FLAVORS[names[0]], data


def load_model(model_uri: str, dst_path: str | None = None) -> PyFuncModel:
    """A verified fairops model as an ``mlflow.pyfunc.PyFuncModel`` (signature enforced on predict).

    A classifier answers its scores frame (``probability`` or ``chance_positive``, and the decision), where
    ``mlflow.pyfunc.load_model`` answers class labels; ``params={"answer": "label"}`` asks for those.

    Parameters
    ----------
    model_uri : str
        Any MLflow model URI (``models:/name@alias``, ``runs:/``, a path).
    dst_path : str or None, default=None
        Where to download it (None: a temporary folder).

    Returns
    -------
    mlflow.pyfunc.PyFuncModel
        The model, checking request column names against its input schema first.

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fairops.mlflow import classifier
    >>> X = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    >>> path = tempfile.mkdtemp() + "/model"
    >>> _ = classifier.save_model(LogisticRegression().fit(X, [0, 0, 1, 1]), path, input_example=X, pip_requirements=[])
    >>> load_model(path).predict(X).columns.tolist()
    ['probability']
    """
    meta, flavor, data = _open(model_uri, dst_path)
    model = _checked_pyfunc_class()(model_meta=meta,
                                    model_impl=flavor.FLAVOR.read_pyfunc(data, answer=_flavor.SCORES_ANSWER))
    # the manifest the loaded files were checked against, as a row record names it (fairops.registry._row_record)
    model.fairops_manifest_sha256 = data.manifest_sha256  # type: ignore[attr-defined]  # CheckedPyFuncModel's
    return model


def _names(data: object) -> list[Any] | None:
    """The column names of pyfunc input (a DataFrame's columns, a dict's keys), None for unnamed input."""
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return list(data.columns)
    return list(data) if isinstance(data, dict) else None


@functools.cache
def _checked_pyfunc_class() -> type[PyFuncModel]:
    """``PyFuncModel`` checking a request's column names against the model's input schema first.

    MLflow's signature check drops every column the signature does not name before the model sees the
    input, so `` x1 `` sent beside (or instead of) the model's ``x1`` would be ignored without a word;
    :meth:`fairops.models.InputSchema.check_names` refuses it before that, as a one-line 400 when served.
    """
    from mlflow.pyfunc import PyFuncModel

    from ..models import InputSchema

    class CheckedPyFuncModel(PyFuncModel):
        def __init__(self, model_meta: Model, model_impl: Any) -> None:
            super().__init__(model_meta=model_meta, model_impl=model_impl)
            document = (model_meta.metadata or {}).get("fairops_input_schema")
            self.fairops_schema = None if document is None else InputSchema.from_dict(document)
            # the class whose probability the answer holds (the classifier flavor's); None: a model without one
            self.fairops_positive_class = getattr(model_impl, "positive_class", None)

        def predict(self, data: PyFuncInput, params: dict[str, Any] | None = None) -> PyFuncOutput:
            names = _names(data)
            if self.fairops_schema is not None and names is not None:
                try:
                    self.fairops_schema.check_names(names)
                except ValueError as error:
                    raise _flavor.input_refused(error) from None
            return super().predict(data, params=params)

    CheckedPyFuncModel.__qualname__ = "CheckedPyFuncModel"  # made on first use: importing MLflow takes seconds
    return CheckedPyFuncModel


def load_native(model_uri: str, dst_path: str | None = None) -> BaseEstimator:
    """The verified fitted estimator (SCAFF, FairLOF) or pipeline (other classifiers).

    Parameters
    ----------
    model_uri : str
        Any MLflow model URI.
    dst_path : str or None, default=None
        Where to download it (None: a temporary folder).

    Returns
    -------
    object
        The fitted model.
    """
    _, flavor, data = _open(model_uri, dst_path)
    return flavor.FLAVOR.read_native(data)
