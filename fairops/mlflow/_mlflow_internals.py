"""Every place fairops reaches past MLflow's public API to save a model or to resolve a tracking URI, for the
MLflow versions they were read from.

A fairops flavor writes its model directory the way MLflow's own flavors do (``mlflow.sklearn``'s
``save_model``): the save path checked and made, the input example saved and the signature inferred from it,
the conda, pip and Python environment files, a download of a model URI. MLflow offers those steps only as
private helpers of ``mlflow.models``, ``mlflow.utils`` and ``mlflow.tracking``. The tracking URI a client
would use, and a block with another process-wide tracking URI, come from
``mlflow.tracking._tracking_service.utils``. Each helper is imported on call (importing MLflow is slow), and
only here.

>>> internals_known("3.17.2"), internals_known("4.0.0")
(True, False)
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import NamedTuple

from .._versions import in_range

_TRACKING_URI_VARIABLE = "MLFLOW_TRACKING_URI"

#: MLflow versions (lowest included, highest excluded) whose private helpers this module was written for.
WRITTEN_FOR = ((3, 17), (4, 0))


def internals_known(version: str | None = None) -> bool:
    """True when ``version`` (default: the installed MLflow) is inside :data:`WRITTEN_FOR`."""
    if version is None:
        import mlflow

        version = mlflow.__version__
    return in_range(version, WRITTEN_FOR)


def resolve_tracking_uri(uri=None) -> str:
    """The tracking URI a client made with ``uri`` talks to (``uri``, else the process-wide default)."""
    from mlflow.tracking._tracking_service.utils import _resolve_tracking_uri

    return _resolve_tracking_uri(uri)


@contextmanager
def use_tracking_uri(uri):
    """The process-wide tracking URI is ``uri`` inside the block (unchanged when None), and afterwards as it was.

    As it was means ``MLFLOW_TRACKING_URI`` included: ``mlflow.set_tracking_uri`` writes that variable and
    clears it when set back to None, so MLflow's own block (``_use_tracking_uri``) leaves a process whose URI
    came from the variable with none (MLflow's default store, ``./mlflow.db``). Setting back the resolved value
    instead would pin it, and a later change of the variable would be ignored.
    """
    import mlflow

    variable, before = os.environ.get(_TRACKING_URI_VARIABLE), mlflow.get_tracking_uri()
    if uri:
        mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(None)
        if variable is not None:
            os.environ[_TRACKING_URI_VARIABLE] = variable
        if mlflow.get_tracking_uri() != before:  # it had been set in code: set it again
            mlflow.set_tracking_uri(before)


def validate_env_arguments(conda_env, pip_requirements, extra_pip_requirements) -> None:
    """Refuse the combinations of environment arguments MLflow's flavors refuse."""
    from mlflow.utils.environment import _validate_env_arguments

    _validate_env_arguments(conda_env, pip_requirements, extra_pip_requirements)


def prepare_save_path(path: str) -> None:
    """Refuse a non-empty model directory and make the folder, as MLflow's flavors do."""
    from mlflow.utils.model_utils import _validate_and_prepare_target_save_path

    _validate_and_prepare_target_save_path(path)


def save_example(mlflow_model, input_example, path: str):
    """Save ``input_example`` into the model directory; the saved example, or None without one."""
    from mlflow.models.utils import _save_example

    return _save_example(mlflow_model, input_example, path)


def infer_signature_from_example(saved_example, pyfunc):
    """The signature MLflow infers from a saved example and the model's pyfunc."""
    from mlflow.models.signature import _infer_signature_from_input_example

    return _infer_signature_from_input_example(saved_example, pyfunc)


class EnvironmentFiles(NamedTuple):
    conda: str
    python: str
    requirements: str
    constraints: str


def environment_files() -> EnvironmentFiles:
    """The names of the environment files in a model directory (``conda.yaml``, ``python_env.yaml``, ...)."""
    from mlflow.utils import environment

    return EnvironmentFiles(environment._CONDA_ENV_FILE_NAME, environment._PYTHON_ENV_FILE_NAME,
                            environment._REQUIREMENTS_FILE_NAME, environment._CONSTRAINTS_FILE_NAME)


def mlflow_conda_env(additional_pip_deps):
    """A conda environment holding MLflow and ``additional_pip_deps``."""
    from mlflow.utils.environment import _mlflow_conda_env

    return _mlflow_conda_env(additional_pip_deps=additional_pip_deps)


def process_pip_requirements(defaults, pip_requirements, extra_pip_requirements):
    """``(conda_env, pip_requirements, pip_constraints)`` from pip arguments, as MLflow's flavors make them."""
    from mlflow.utils.environment import _process_pip_requirements

    return _process_pip_requirements(defaults, pip_requirements, extra_pip_requirements)


def process_conda_env(conda_env):
    """``(conda_env, pip_requirements, pip_constraints)`` from a given conda environment."""
    from mlflow.utils.environment import _process_conda_env

    return _process_conda_env(conda_env)


def write_python_env(path: str) -> None:
    """Write the running Python's environment (version, build tools) as MLflow's ``python_env.yaml``."""
    from mlflow.utils.environment import _PythonEnv

    _PythonEnv.current().to_yaml(path)


def download_artifact(model_uri: str, dst_path=None) -> str:
    """Download (or locate) an artifact URI; the local path."""
    from mlflow.tracking.artifact_utils import _download_artifact_from_uri

    return _download_artifact_from_uri(artifact_uri=model_uri, output_path=dst_path)
