"""MLflow flavor for the FairLOF detector (``fairops.fairlof.FairLOF``).

Only detectors fitted with ``novelty=True`` are saved: the pyfunc scores new rows. The answer is a
DataFrame with ``outlier_score`` (the FairLOF score, higher = more outlying) and ``outlier`` (1 where
the detector's ``predict`` says -1, i.e. the row is more outlying than every fitted inlier, else 0).

Input: raw rows. Given ``preprocessing`` (a fitted :class:`fairops.fairlof.FeatureEncoder`),
the model stores the encoding as JSON beside the detector state and applies it to every request, so
a served model takes the same raw columns the encoder was fitted on (numbers and text, sensitive
columns included). Without it, the input holds the detector's feature columns as they were fitted
(``feature_names``) plus the sensitive columns.

>>> import tempfile, numpy as np, pandas as pd
>>> from fairops.fairlof import FairLOF
>>> from fairops.fairlof._features import FeatureEncoder
>>> rng = np.random.default_rng(0)
>>> raw = pd.DataFrame({"income": rng.lognormal(10, 1, 120), "job": rng.choice(["a", "b"], 120),
...                     "sex": rng.choice(["f", "m"], 120)})
>>> encoder = FeatureEncoder(categorical="onehot", sensitive=["sex"]).fit(raw)
>>> det = FairLOF(n_neighbors=5, correction_strength=0.3, novelty=True)
>>> det = det.fit(encoder.transform(raw).to_numpy(), sensitive_features=encoder.sensitive_frame(raw))
>>> path = tempfile.mkdtemp() + "/model"
>>> _ = save_model(det, path, preprocessing=encoder, input_example=raw.head(3), pip_requirements=[])
>>> import mlflow
>>> out = mlflow.pyfunc.load_model(path).predict(raw.head(4))
>>> list(out.columns), out["outlier_score"].round(6).tolist() == (-det.score_samples(
...     encoder.transform(raw.head(4)).to_numpy(), sensitive_features=raw[["sex"]].head(4))).round(6).tolist()
(['outlier_score', 'outlier'], True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import InputError
from . import _flavor_base as _flavor, _model_files
from ._param_docs import param, with_param_docs

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd
    from mlflow.models import Model, ModelSignature
    from mlflow.models.model import ModelInfo

    from .._typing import StrPath
    from ..fairlof import FairLOF, FeatureEncoder
    from .sealing import ModelData

FLAVOR_NAME = "fairops_fairlof"
_LOADER_MODULE = "fairops.mlflow.fairlof"
_DOCS = {
    "detector": param("detector", "FairLOF", "Fitted with ``novelty=True``."),
    "feature_names": param("feature_names", "list of str or None, default=None",
                           "The feature columns of the serving input, in fit order (without ``preprocessing``); "
                           "None:\nthe detector's ``feature_names_in_`` or ``input_example``'s columns that are "
                           "not sensitive."),
    "preprocessing": param("preprocessing", "FeatureEncoder or None, default=None",
                           "The fitted encoder that made the detector's features; the model then takes raw rows."),
}


def _classes() -> dict[str, type[FairLOF]]:
    from fairops.fairlof import FairLOF

    return {"FairLOF": FairLOF}


class _FairLOFPyfunc:
    """pyfunc view of a FairLOF detector in novelty mode (with its raw-row encoding when saved with one)."""

    def __init__(self, model: FairLOF, extra: dict[str, Any]) -> None:
        from fairops.fairlof._features import FeatureEncoder

        self.model = model
        self.feature_names = extra["feature_names"]
        self.sensitive_names = extra["sensitive_names"]
        document = extra.get("preprocessing")
        self.encoder = FeatureEncoder.from_dict(document) if document is not None else None

    def get_raw_model(self) -> FairLOF:
        return self.model

    def predict(self, data: object, params: dict[str, Any] | None = None) -> pd.DataFrame:
        import pandas as pd

        frame = _flavor.as_frame(data)
        try:
            if self.encoder is not None:
                sensitive = self.encoder.sensitive_frame(frame)
                features = self.encoder.transform(frame).to_numpy(dtype=np.float64)
            else:
                sensitive = _flavor.pick_columns(frame, self.sensitive_names, "sensitive")
                features = _flavor.pick_columns(frame, self.feature_names, "feature")
                if not hasattr(self.model, "feature_names_in_"):
                    features = features.to_numpy(dtype=np.float64)
            scores = self.model.score_samples(features, sensitive_features=sensitive)
        except (TypeError, ValueError) as error:  # a served client gets the reason with HTTP 400
            raise _flavor.input_refused(error) from None
        outlier = (scores - self.model.offset_ < 0).astype(np.int64)
        return pd.DataFrame({"outlier_score": -scores, "outlier": outlier})


def _preprocessing_extra(detector: FairLOF, encoder: object) -> dict[str, Any]:
    from fairops.fairlof._features import FeatureEncoder

    if not isinstance(encoder, FeatureEncoder):
        raise TypeError(f"preprocessing must be a fitted fairops.fairlof._features.FeatureEncoder, "
                        f"got {type(encoder).__name__}")
    document = encoder.to_dict()
    if len(document["features"]) != detector.n_features_in_:
        raise InputError(f"preprocessing makes {len(document['features'])} features, the detector was fitted "
                         f"with {detector.n_features_in_}")
    if document["params"]["sensitive"] != [str(name) for name in detector.sensitive_names_]:
        raise InputError(f"preprocessing's sensitive columns {document['params']['sensitive']} differ from the "
                         f"detector's {list(detector.sensitive_names_)}")
    return {"feature_names": document["features"], "sensitive_names": document["params"]["sensitive"],
            "preprocessing": document}


def _extra(detector: FairLOF, feature_names: Sequence[str] | None, input_example: pd.DataFrame | None,
           preprocessing: FeatureEncoder | None = None) -> dict[str, Any]:
    if not getattr(detector, "novelty", False):
        raise InputError("detector must be fitted with novelty=True to be saved as a model that scores new rows")
    if preprocessing is not None:
        if feature_names is not None:
            raise InputError("give preprocessing or feature_names, not both (the encoder names the features)")
        return _preprocessing_extra(detector, preprocessing)
    sensitive_names = [str(name) for name in detector.sensitive_names_]
    if feature_names is None and hasattr(detector, "feature_names_in_"):
        feature_names = list(detector.feature_names_in_)
    if feature_names is None:
        columns = getattr(input_example, "columns", None)
        if columns is None:
            raise InputError(
                "feature_names is required (or an input_example DataFrame whose non-sensitive columns are the features)"
            )
        feature_names = [str(c) for c in columns if str(c) not in sensitive_names]
    feature_names = [str(name) for name in feature_names]
    n_features = detector.n_features_in_
    if len(feature_names) != n_features:
        raise InputError(f"feature_names has {len(feature_names)} names, the detector was fitted with {n_features}")
    clash = sorted(set(feature_names) & set(sensitive_names))
    if clash:
        raise InputError(f"feature_names and the sensitive columns overlap: {clash}")
    return {"feature_names": feature_names, "sensitive_names": sensitive_names}


@with_param_docs(**_DOCS)
def save_model(
    detector: FairLOF,
    path: StrPath,
    conda_env: dict[str, Any] | str | None = None,
    mlflow_model: Model | None = None,
    signature: ModelSignature | Literal[False] | None = None,
    input_example: pd.DataFrame | None = None,
    pip_requirements: list[str] | None = None,
    extra_pip_requirements: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
    feature_names: Sequence[str] | None = None,
    preprocessing: FeatureEncoder | None = None,
) -> Model:
    """Save a fitted ``FairLOF(novelty=True)`` as an MLflow model at ``path``.

    A detector fitted with ``algorithm="approximate"`` on faiss's HNSW graph adds ``faiss-cpu`` to the default
    requirements (with ``search_params={"graph": "nndescent"}`` new rows are searched exactly, without faiss).

    Parameters
    ----------
    {{ parameters }}

    {{ saved_returns }}
    """
    extra = _extra(detector, feature_names, input_example, preprocessing)
    if _needs_faiss(detector) and pip_requirements is None and conda_env is None:
        # scoring new rows builds faiss's graph again from the saved rows, so the served model needs faiss
        from importlib.metadata import version

        extra_pip_requirements = [*(extra_pip_requirements or []), f"faiss-cpu=={version('faiss-cpu')}"]
    if preprocessing is not None and input_example is not None:
        # the signature lists what a request must hold: the encoder's input columns, in its order
        input_example = _flavor.pick_columns(_flavor.as_frame(input_example), preprocessing.input_columns_, "input")
    return _flavor.save_flavor_model(
        detector,
        path,
        flavor_name=FLAVOR_NAME,
        loader_module=_LOADER_MODULE,
        classes=_classes(),
        extra=extra,
        make_pyfunc=_FairLOFPyfunc,
        conda_env=conda_env,
        mlflow_model=mlflow_model,
        signature=signature,
        input_example=input_example,
        pip_requirements=pip_requirements,
        extra_pip_requirements=extra_pip_requirements,
        metadata=metadata,
    )


@with_param_docs(**_DOCS)
def log_model(detector: FairLOF, name: str = "model", *, feature_names: Sequence[str] | None = None,
              preprocessing: FeatureEncoder | None = None, **kwargs: Any) -> ModelInfo:
    """Log a FairLOF detector to the active run (or ``run_id=``); returns MLflow's ``ModelInfo``.

    Parameters
    ----------
    {{ parameters }}

    {{ logged_returns }}
    """
    return FLAVOR.log_model(detector, name, feature_names=feature_names, preprocessing=preprocessing, **kwargs)


def _read_detector(data: ModelData | str) -> FairLOF:
    """The estimator from the data files (a ``ModelData``, or a data folder's path)."""
    detector: FairLOF = _model_files.read_state(data, _classes()).estimator
    return detector


# a detector answers its scores whatever is asked
def _read_pyfunc(data: ModelData, answer: str | None = None) -> _FairLOFPyfunc:
    loaded = _model_files.read_state(data, _classes())
    return _FairLOFPyfunc(loaded.estimator, loaded.extra)


FLAVOR = _flavor.Flavor(FLAVOR_NAME, _LOADER_MODULE, "detector", read_native=_read_detector,
                        read_pyfunc=_read_pyfunc)
get_default_pip_requirements = FLAVOR.get_default_pip_requirements
get_default_conda_env = FLAVOR.get_default_conda_env
load_model = FLAVOR.load_model
_load_pyfunc = FLAVOR.load_pyfunc


def _needs_faiss(detector: FairLOF) -> bool:
    """Whether scoring new rows builds faiss's graph again (``algorithm="approximate"`` on the HNSW graph)."""
    if getattr(detector, "search_algorithm_", None) != "approximate":
        return False
    graph: str = (detector.search_params or {}).get("graph", "hnsw")
    return graph == "hnsw"
