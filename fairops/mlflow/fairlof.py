"""MLflow flavor for the FairLOF detector (``fairops.fairlof.FairLOF``).

Only detectors fitted with ``novelty=True`` are saved: the pyfunc scores new rows. Its input holds
the feature columns and the sensitive columns, whose names the model records; the answer is a
DataFrame with ``outlier_score`` (the FairLOF score, higher = more outlying) and ``outlier``
(1 where the row is at least as outlying as the t-th fitted outlier, else 0).

>>> import tempfile, numpy as np, pandas as pd
>>> from fairops.fairlof import FairLOF
>>> rng = np.random.default_rng(0)
>>> X = pd.DataFrame(rng.normal(size=(120, 2)), columns=["x1", "x2"])
>>> S = pd.DataFrame({"sex": rng.choice(["f", "m"], 120)})
>>> det = FairLOF(n_neighbors=5, correction_strength=0.3, novelty=True).fit(X, sensitive_features=S)
>>> path = tempfile.mkdtemp() + "/model"
>>> _ = save_model(det, path, input_example=pd.concat([X, S], axis=1).head(3), pip_requirements=[])
>>> import mlflow
>>> out = mlflow.pyfunc.load_model(path).predict(pd.concat([X, S], axis=1).head(4))
>>> list(out.columns)
['outlier_score', 'outlier']
"""

from __future__ import annotations

import numpy as np

from . import _flavor, _model_files

FLAVOR_NAME = "fairops_fairlof"
_LOADER_MODULE = "fairops.mlflow.fairlof"


def _classes() -> dict:
    from fairops.fairlof import FairLOF

    return {"FairLOF": FairLOF}


def get_default_pip_requirements() -> list[str]:
    """Requirements a served FairLOF model installs: fairops pinned to this version."""
    return _flavor.default_pip_requirements()


def get_default_conda_env():
    """Conda environment holding :func:`get_default_pip_requirements`."""
    from mlflow.utils.environment import _mlflow_conda_env

    return _mlflow_conda_env(additional_pip_deps=get_default_pip_requirements())


class _FairLOFPyfunc:
    """pyfunc view of a FairLOF detector in novelty mode."""

    def __init__(self, model, extra: dict):
        self.model = model
        self.feature_names = extra["feature_names"]
        self.sensitive_names = extra["sensitive_names"]

    def get_raw_model(self):
        return self.model

    def predict(self, data, params=None):
        import pandas as pd

        frame = _flavor.as_frame(data)
        sensitive = _flavor.pick_columns(frame, self.sensitive_names, "sensitive")
        features = _flavor.pick_columns(frame, self.feature_names, "feature").to_numpy(dtype=np.float64)
        scores = self.model.score_samples(features, sensitive_features=sensitive)
        outlier = (scores - self.model.offset_ <= 0).astype(np.int64)
        return pd.DataFrame({"outlier_score": -scores, "outlier": outlier})


def _extra(detector, feature_names, input_example) -> dict:
    if not getattr(detector, "novelty", False):
        raise ValueError("detector must be fitted with novelty=True to be saved as a model that scores new rows")
    sensitive_names = [str(name) for name in detector.sensitive_names_]
    if feature_names is None:
        columns = getattr(input_example, "columns", None)
        if columns is None:
            raise ValueError(
                "feature_names is required (or an input_example DataFrame whose non-sensitive columns are the features)"
            )
        feature_names = [str(c) for c in columns if str(c) not in sensitive_names]
    feature_names = [str(name) for name in feature_names]
    n_features = detector._get_state()[1]["fit_X"].shape[1]
    if len(feature_names) != n_features:
        raise ValueError(f"feature_names has {len(feature_names)} names, the detector was fitted with {n_features}")
    clash = sorted(set(feature_names) & set(sensitive_names))
    if clash:
        raise ValueError(f"feature_names and the sensitive columns overlap: {clash}")
    return {"feature_names": feature_names, "sensitive_names": sensitive_names}


def save_model(
    detector,
    path,
    conda_env=None,
    mlflow_model=None,
    signature=None,
    input_example=None,
    pip_requirements=None,
    extra_pip_requirements=None,
    metadata=None,
    feature_names=None,
):
    """Save a fitted ``FairLOF(novelty=True)`` as an MLflow model at ``path``.

    ``feature_names``: names of the feature columns in the serving input, in fit order; by default
    the columns of ``input_example`` that are not sensitive columns.
    """
    return _flavor.save_flavor_model(
        detector,
        path,
        flavor_name=FLAVOR_NAME,
        loader_module=_LOADER_MODULE,
        classes=_classes(),
        extra=_extra(detector, feature_names, input_example),
        make_pyfunc=_FairLOFPyfunc,
        conda_env=conda_env,
        mlflow_model=mlflow_model,
        signature=signature,
        input_example=input_example,
        pip_requirements=pip_requirements,
        extra_pip_requirements=extra_pip_requirements,
        metadata=metadata,
    )


def log_model(
    detector,
    name="model",
    *,
    registered_model_name=None,
    signature=None,
    input_example=None,
    pip_requirements=None,
    extra_pip_requirements=None,
    conda_env=None,
    metadata=None,
    feature_names=None,
    run_id=None,
    **kwargs,
):
    """Log a FairLOF detector to the active (or given) run; returns MLflow's ``ModelInfo``."""
    import sys

    from mlflow.models import Model

    return Model.log(
        artifact_path=None,
        name=name,
        flavor=sys.modules[__name__],
        registered_model_name=registered_model_name,
        detector=detector,
        signature=signature,
        input_example=input_example,
        pip_requirements=pip_requirements,
        extra_pip_requirements=extra_pip_requirements,
        conda_env=conda_env,
        metadata=metadata,
        feature_names=feature_names,
        run_id=run_id,
        **kwargs,
    )


def load_model(model_uri, dst_path=None):
    """The native fitted detector from a model URI."""
    local = _flavor.local_model_dir(model_uri, dst_path)
    return _model_files.read_state(_flavor.data_dir(local, FLAVOR_NAME), _classes()).estimator


def _load_pyfunc(path, model_config=None):
    """pyfunc loader: ``path`` is the model's data folder."""
    loaded = _model_files.read_state(path, _classes())
    return _FairLOFPyfunc(loaded.estimator, loaded.extra)
