"""What the fairops flavors share: writing a sealed MLflow model directory around the model files.

A fairops flavor directory holds ``MLmodel`` (with the flavor's section and a ``python_function``
section pointing at the flavor module), ``data/`` (the model as data: see
:mod:`fairops.mlflow._model_files` and :mod:`fairops.mlflow.classifier`), the environment files, the
input example when given, by default the fairops wheel under ``wheels/`` (:mod:`fairops.mlflow._wheel`)
and, written last, ``fairops_manifest.json`` over all of it (:mod:`fairops.mlflow.sealing`).
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, Literal

import yaml

import fairops

from ..errors import InputError, RowError
from .sealing import DATA_FOLDER, ModelFilesError, read_model, verify_enclosing

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import pandas as pd
    from mlflow.models import Model, ModelSignature
    from mlflow.models.model import ModelInfo
    from mlflow.types import ParamSchema
    from sklearn.base import BaseEstimator

    from .._typing import StrPath
    from .sealing import ModelData

DATA_SUBPATH = DATA_FOLDER
# Versions a served model pins to the ones that saved it; the rest of fairops' dependencies
# install from the wheel's metadata.
PINNED = ("numpy", "pandas", "scipy", "scikit-learn", "lightgbm", "skops")


def pinned_requirements() -> list[str]:
    """``name==<installed version>`` for the libraries a served model's files depend on.

    >>> pinned_requirements()[0].startswith("numpy==")
    True
    """
    from importlib.metadata import version

    return [f"{name}=={version(name)}" for name in PINNED]


def default_pip_requirements() -> list[str]:
    """The model's own copy of the fairops wheel (``wheels/<digest>/fairops-...whl``) and the pins.

    A model saved with these installs with MLflow's default environment manager on a machine that
    has only the package index: the wheel comes from the model directory, the rest from the index.
    """
    from . import _wheel

    return [_wheel.requirement(), *pinned_requirements()]


def input_refused(reason: object) -> Exception:
    """The exception a served model raises for input that breaks its schema: HTTP 400, one line.

    An ``MlflowException`` (code ``INVALID_PARAMETER_VALUE``, so ``mlflow models serve`` answers 400)
    that is also a ``ValueError``. MLflow's scoring server rewrites a prediction error's ``message``
    to the whole input frame followed by the reason; this one keeps the reason as its message, so a
    client reads one line, and no stack trace is sent.

    A refusal of one row (a :class:`~fairops.errors.RowError`) is kept as ``row_error``, so a caller that
    handed on part of a larger table can name the row there.

    >>> error = input_refused("column 'age' must hold whole numbers; row 0 has 40.5")
    >>> error.message = "Failed to predict data '...'. Error: " + error.message
    >>> error.message, error.get_http_status_code(), isinstance(error, ValueError), error.row_error
    ("column 'age' must hold whole numbers; row 0 has 40.5", 400, True, None)
    """
    refusal = _refusal_class()(str(reason))
    refusal.row_error = reason if isinstance(reason, RowError) else None
    return refusal


@functools.cache
def _refusal_class():
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE

    class InputRefused(MlflowException, InputError):
        def __init__(self, reason: str):
            self._reason = reason
            super().__init__(reason, error_code=INVALID_PARAMETER_VALUE)

        message = property(lambda self: self._reason, lambda self, value: None)

    InputRefused.__qualname__ = "InputRefused"  # made on first use: importing MLflow takes seconds
    return InputRefused


class Flavor:
    """What every fairops flavor module does the same way, parametrised by the flavor.

    MLflow finds a flavor as a module with ``save_model``, ``log_model``, ``load_model`` and
    ``_load_pyfunc``; each fairops flavor module (:mod:`~fairops.mlflow.scaff`,
    :mod:`~fairops.mlflow.fairlof`, :mod:`~fairops.mlflow.classifier`) keeps its own ``save_model``
    (what it stores differs) and takes the rest from one ``Flavor``:

    - ``name``: the flavor's key in ``MLmodel``; ``module``: the module MLflow imports to load it;
    - ``model_argument``: the name ``save_model`` gives the model (``Model.log`` passes it by name);
    - ``read_native(data)``: the fitted model from the model's data files
      (:class:`~fairops.mlflow.sealing.ModelData`: each file read once, the bytes checked against the seal);
    - ``read_pyfunc(data)``: the pyfunc view from the same files.

    >>> flavor = Flavor("demo", "fairops.mlflow.scaff", "sk_model", read_native=str, read_pyfunc=str)
    >>> flavor.get_default_pip_requirements()[0].startswith("wheels/")
    True
    """

    def __init__(self, name: str, module: str, model_argument: str, *, read_native: Callable[[ModelData], Any],
                 read_pyfunc: Callable[..., Any]) -> None:
        self.name = name
        self.module = module
        self.model_argument = model_argument
        self.read_native = read_native
        self.read_pyfunc = read_pyfunc

    def get_default_pip_requirements(self) -> list[str]:
        """The shipped fairops wheel and the pinned libraries a served model installs."""
        return default_pip_requirements()

    def get_default_conda_env(self) -> dict[str, Any]:
        """A conda environment holding :meth:`get_default_pip_requirements`."""
        from ._mlflow_internals import mlflow_conda_env

        return mlflow_conda_env(self.get_default_pip_requirements())

    def log_model(self, model: BaseEstimator, name: str = "model", **kwargs: Any) -> ModelInfo:
        """Log ``model`` to the active run (or ``run_id=``) through MLflow's ``Model.log``; returns its
        ``ModelInfo``. ``kwargs`` are ``Model.log``'s (``registered_model_name``, ``run_id``, ...) and the
        flavor's ``save_model`` arguments (``input_example``, ``pip_requirements``, ...)."""
        import importlib

        from mlflow.models import Model

        return Model.log(artifact_path=None, name=name, flavor=importlib.import_module(self.module),
                         **{self.model_argument: model}, **kwargs)

    def load_model(self, model_uri: str, dst_path: str | None = None) -> BaseEstimator:
        """The fitted model from a model URI (``runs:/``, ``models:/name@alias``, a local path ...).

        Parameters
        ----------
        model_uri : str
            Any MLflow model URI of a model of this flavor.
        dst_path : str or None, default=None
            Where to download it (None: a temporary folder).

        Returns
        -------
        object
            The fitted estimator, read from the verified data files.
        """
        return self.read_native(self.read_data(local_model_dir(str(model_uri), dst_path)))

    def read_data(self, local_path: str) -> ModelData:
        """The verified data files of a local model directory that holds this flavor."""
        data = read_model(local_path)
        assert data.mlmodel is not None  # read_model parses MLmodel
        if self.name not in data.mlmodel["flavors"]:
            raise ModelFilesError(f"the model at {local_path} has no {self.name!r} flavor; its MLmodel names "
                                  f"{sorted(data.mlmodel['flavors'])}")
        return data

    def load_pyfunc(self, path: str, model_config: Mapping[str, Any] | None = None) -> Any:
        """MLflow's pyfunc loader hook: ``path`` is the model's data folder (verified, then read once).

        The model answers class labels, as MLflow's own classifier flavors do (what ``mlflow.models.evaluate``
        reads), unless ``model_config={"answer": "scores"}`` (or a call's ``params``) asks for scores.
        """
        return self.read_pyfunc(verify_enclosing(path), answer=chosen_answer(model_config, LABEL_ANSWER))


#: What a fairops classifier's pyfunc answers, chosen per call with ``params={"answer": ...}``: ``"label"``
#: (one class label per row, as MLflow's classifier flavors answer and ``mlflow.models.evaluate`` reads) or
#: ``"scores"`` (a frame with the score, the decision and what explains it).
ANSWER_PARAM = "answer"
LABEL_ANSWER, SCORES_ANSWER = "label", "scores"
ANSWERS = (LABEL_ANSWER, SCORES_ANSWER)


def answer_params() -> ParamSchema:
    """The signature's params: ``answer`` (a string, no default: the loader's default holds)."""
    from mlflow.types import ParamSchema, ParamSpec

    return ParamSchema([ParamSpec(ANSWER_PARAM, "string", None)])


def chosen_answer(params: Mapping[str, Any] | None, default: str) -> str:
    """The answer ``params`` (a call's params or a model_config) asks for, else ``default``; another is refused.

    >>> chosen_answer(None, "label"), chosen_answer({"answer": "scores"}, "label")
    ('label', 'scores')
    """
    answer = (params or {}).get(ANSWER_PARAM) or default
    if answer not in ANSWERS:
        raise input_refused(f"params {ANSWER_PARAM!r} must be one of {', '.join(map(repr, ANSWERS))}, "
                            f"got {answer!r}")
    return answer


def save_flavor_model(
    estimator: BaseEstimator,
    path: StrPath,
    *,
    flavor_name: str,
    loader_module: str,
    classes: dict[str, type] | None = None,
    extra: dict[str, Any] | None = None,
    make_pyfunc: Callable[..., Any] | None = None,
    write_data: Callable[[str], None] | None = None,
    flavor_conf: dict[str, Any] | None = None,
    conda_env: dict[str, Any] | str | None = None,
    mlflow_model: Model | None = None,
    signature: ModelSignature | Literal[False] | None = None,
    input_example: pd.DataFrame | None = None,
    pip_requirements: list[str] | None = None,
    extra_pip_requirements: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
    answers: bool = False,
) -> Model:
    """Write a complete, sealed MLflow model directory for a fairops estimator (no requirement inference).

    The data folder is written by ``write_data(folder)`` when given, else as state files
    (``classes``, ``extra``: :func:`fairops.mlflow._model_files.write_state`). ``flavor_conf`` adds
    keys to the flavor's section of ``MLmodel``. Without ``pip_requirements`` (or ``conda_env``) the
    model ships the fairops wheel and pins what its files depend on (:func:`default_pip_requirements`).
    ``answers``: the model is a classifier whose call chooses its answer (:data:`ANSWERS`), a param of its signature.
    """
    from mlflow.models import Model

    from . import _mlflow_internals as internals, _model_files, sealing

    internals.validate_env_arguments(conda_env, pip_requirements, extra_pip_requirements)
    path = os.path.abspath(os.fspath(path))
    internals.prepare_save_path(path)
    if write_data is not None:
        write_data(os.path.join(path, DATA_SUBPATH))
    else:
        assert classes is not None, "a flavor saving state files names its classes"
        _model_files.write_state(estimator, os.path.join(path, DATA_SUBPATH), classes, extra)
    mlflow_model = Model() if mlflow_model is None else mlflow_model
    signature = _signature(mlflow_model, path, input_example, signature,
                           lambda: make_pyfunc(estimator, extra))  # type: ignore[misc]  # inferring: given
    if signature is not None:
        if answers and signature.params is None:
            signature.params = answer_params()
        mlflow_model.signature = signature
    if metadata is not None:
        mlflow_model.metadata = metadata
    _write_mlmodel(mlflow_model, path, estimator, flavor_name, loader_module, flavor_conf, answers)
    requirements = _write_environment(path, conda_env, pip_requirements, extra_pip_requirements)
    _ship_wheel(path, requirements)
    sealing.seal(path)
    return mlflow_model


def _signature(mlflow_model: Model, path: str, input_example: pd.DataFrame | None,
               signature: ModelSignature | Literal[False] | None, pyfunc: Callable[[], Any]) -> ModelSignature | None:
    """The signature to record: the given one, none for ``False``, else inferred from the saved example."""
    from ._mlflow_internals import infer_signature_from_example, save_example

    saved_example = save_example(mlflow_model, input_example, path)
    if signature is None and saved_example is not None:
        return infer_signature_from_example(saved_example, pyfunc())
    return None if signature is False else signature


def _write_mlmodel(mlflow_model, path, estimator, flavor_name, loader_module, flavor_conf, answers=False) -> None:
    """``MLmodel`` with the pyfunc section (loading through ``loader_module``) and the flavor's section.

    A classifier choosing its answer declares it as its pyfunc ``model_config``: MLflow passes a loader's
    ``model_config`` only for the keys a model declares, so ``load_model(uri, model_config={"answer": "scores"})``
    reaches it."""
    from mlflow.models.model import MLMODEL_FILE_NAME
    from mlflow.pyfunc import add_to_model

    from . import _model_files
    from ._mlflow_internals import environment_files

    files = environment_files()
    add_to_model(mlflow_model, loader_module=loader_module, data=DATA_SUBPATH, conda_env=files.conda,
                 python_env=files.python, model_config={ANSWER_PARAM: LABEL_ANSWER} if answers else None)
    mlflow_model.add_flavor(flavor_name, **{
        "data": DATA_SUBPATH,
        "fairops_version": fairops.__version__,
        "estimator": type(estimator).__name__,
        "format_version": _model_files.FORMAT_VERSION,
        **(flavor_conf or {}),
    })
    mlflow_model.save(os.path.join(path, MLMODEL_FILE_NAME))


def _write_environment(path, conda_env, pip_requirements, extra_pip_requirements) -> list[str]:
    """The conda, pip and Python environment files; returns the pip requirements written."""
    from . import _mlflow_internals as internals

    if conda_env is None:
        defaults = default_pip_requirements() if pip_requirements is None else None
        conda_env, pip_requirements, pip_constraints = internals.process_pip_requirements(
            defaults, pip_requirements, extra_pip_requirements
        )
    else:
        conda_env, pip_requirements, pip_constraints = internals.process_conda_env(conda_env)
    files = internals.environment_files()
    with open(os.path.join(path, files.conda), "w") as handle:
        yaml.safe_dump(conda_env, stream=handle, default_flow_style=False)
    if pip_constraints:
        with open(os.path.join(path, files.constraints), "w") as handle:
            handle.write("\n".join(pip_constraints))
    with open(os.path.join(path, files.requirements), "w") as handle:
        handle.write("\n".join(pip_requirements))
    internals.write_python_env(os.path.join(path, files.python))
    return pip_requirements


def _ship_wheel(path, pip_requirements) -> None:
    """Copy the running fairops wheel into the model when a requirement names it (refusing other wheels)."""
    from . import _wheel

    for line in pip_requirements:
        if line.startswith(f"{_wheel.WHEELS_FOLDER}/"):
            if line != _wheel.requirement():
                raise InputError(f"requirement {line!r} names a wheel this fairops does not ship; the wheel of "
                                 f"the running fairops is {_wheel.requirement()!r}")
            _wheel.ship(path, line)


def local_model_dir(model_uri: str, dst_path: str | None = None) -> str:
    """Download (or locate) a model URI and return the local directory."""
    from ._mlflow_internals import download_artifact

    return download_artifact(model_uri, dst_path)


def as_frame(data: object) -> pd.DataFrame:
    """pyfunc input as a DataFrame (pyfunc hands DataFrames; a dict or array is also accepted)."""
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, dict):
        return pd.DataFrame(data)
    return pd.DataFrame(data)


def pick_columns(frame: pd.DataFrame, names: Sequence[str], what: str) -> pd.DataFrame:
    """``frame[names]`` or a ValueError naming the missing columns."""
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise InputError(f"input lacks the {what} column(s) {missing}; the model records {list(names)}")
    return frame[list(names)]
