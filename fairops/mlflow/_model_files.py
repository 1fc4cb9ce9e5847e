"""Fitted fairops estimators on disk as data: a JSON document, an ``.npz`` of arrays, a sha256 manifest.

Nothing here unpickles: arrays are read with ``np.load(allow_pickle=False)`` and the estimator class
is looked up in a fixed table the caller passes, so loading a model directory runs no code from it.

The state protocol an estimator offers (both shapes in use are accepted):

- ``est._get_state()`` returns ``(meta, arrays)``, rebuilt by ``cls._from_state(meta, arrays)``, or
- ``est._get_state()`` returns ``{..., "arrays": arrays}``, rebuilt by ``cls._from_state(state)``,

where ``meta`` is JSON-able (dicts, lists, str, numbers, bool, None) and ``arrays`` maps names to
NumPy arrays of a non-object dtype.

>>> import tempfile
>>> import numpy as np
>>> class Box:
...     def __init__(self, w=None): self.w = w
...     def _get_state(self): return {"kind": "box"}, {"w": self.w}
...     @classmethod
...     def _from_state(cls, meta, arrays): return cls(arrays["w"])
>>> folder = tempfile.mkdtemp()
>>> write_state(Box(np.arange(3.0)), folder, {"Box": Box})
>>> read_state(folder, {"Box": Box}).estimator.w.tolist()
[0.0, 1.0, 2.0]
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

from .sealing import ModelFilesError, sha256_file, verify_enclosing

FORMAT_NAME = "fairops-model"
FORMAT_VERSION = 1
STATE_FILE = "state.json"
ARRAYS_FILE = "arrays.npz"
MANIFEST_FILE = "manifest.json"


@dataclass
class LoadedState:
    """What :func:`read_state` returns: the rebuilt estimator and the extra JSON saved next to it."""

    estimator: object
    extra: dict = field(default_factory=dict)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"model state holds a {type(value).__name__}, which cannot be saved as JSON: {value!r}")


def split_state(estimator) -> tuple[str, dict, dict]:
    """``(layout, meta, arrays)`` of an estimator following the state protocol."""
    if not hasattr(estimator, "_get_state"):
        raise TypeError(
            f"{type(estimator).__name__} does not offer _get_state(); fairops flavors save estimators "
            "that expose their fitted state as (JSON-able dict, dict of NumPy arrays)"
        )
    state = estimator._get_state()
    if isinstance(state, tuple) and len(state) == 2:
        layout, (meta, arrays) = "pair", state
    elif isinstance(state, dict) and isinstance(state.get("arrays"), dict):
        layout = "mapping"
        meta = {key: value for key, value in state.items() if key != "arrays"}
        arrays = state["arrays"]
    else:
        raise TypeError("_get_state() must return (meta, arrays) or a dict with an 'arrays' dict")
    arrays = {str(name): np.asarray(value) for name, value in arrays.items()}
    for name, value in arrays.items():
        if value.dtype == object:
            raise TypeError(f"state array {name!r} has dtype object; only plain numeric/string arrays are saved")
    return layout, meta, arrays


def write_state(estimator, path, classes: dict, extra: dict | None = None) -> None:
    """Write ``estimator`` (whose class must be a value of ``classes``) into the folder ``path``.

    ``extra`` is flavor data stored beside the state (e.g. a decision threshold, column names).
    """
    class_name = next((name for name, cls in classes.items() if type(estimator) is cls), None)
    if class_name is None:
        raise TypeError(f"cannot save a {type(estimator).__name__}; expected one of {sorted(classes)}")
    layout, meta, arrays = split_state(estimator)
    os.makedirs(path, exist_ok=True)
    document = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "estimator": class_name,
        "state_layout": layout,
        "meta": meta,
        "extra": extra or {},
    }
    with open(os.path.join(path, STATE_FILE), "w", encoding="utf-8") as handle:
        json.dump(document, handle, default=_json_default, sort_keys=True)
    np.savez(os.path.join(path, ARRAYS_FILE), **arrays)
    files = {
        name: {"sha256": sha256_file(os.path.join(path, name)), "bytes": os.path.getsize(os.path.join(path, name))}
        for name in (STATE_FILE, ARRAYS_FILE)
    }
    manifest = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "files": files}
    with open(os.path.join(path, MANIFEST_FILE), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, sort_keys=True, indent=1)


def _read_json(path: str, name: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise ModelFilesError(f"model file {name!r} is missing from {os.path.dirname(path)}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ModelFilesError(f"model file {name!r} in {os.path.dirname(path)} is not valid JSON: {error}") from None


def verify(path) -> dict:
    """Check the manifest's sizes and sha256 sums; return the manifest or raise :class:`ModelFilesError`."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise ModelFilesError(f"model directory {path!r} does not exist")
    manifest = _read_json(os.path.join(path, MANIFEST_FILE), MANIFEST_FILE)
    if manifest.get("format") != FORMAT_NAME or manifest.get("format_version") != FORMAT_VERSION:
        raise ModelFilesError(
            f"model file {MANIFEST_FILE!r} in {path} has format {manifest.get('format')!r} version "
            f"{manifest.get('format_version')!r}; this fairops reads {FORMAT_NAME!r} version {FORMAT_VERSION}"
        )
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != {STATE_FILE, ARRAYS_FILE}:
        raise ModelFilesError(f"model file {MANIFEST_FILE!r} in {path} must list {STATE_FILE!r} and {ARRAYS_FILE!r}")
    for name, expected in files.items():
        file_path = os.path.join(path, name)
        if not os.path.isfile(file_path):
            raise ModelFilesError(f"model file {name!r} is missing from {path}")
        size = os.path.getsize(file_path)
        if size != expected.get("bytes"):
            raise ModelFilesError(
                f"model file {name!r} in {path} has {size} bytes, the manifest says {expected.get('bytes')} "
                "(truncated or modified)"
            )
        if sha256_file(file_path) != expected.get("sha256"):
            raise ModelFilesError(f"model file {name!r} in {path} does not match its sha256 in the manifest (modified)")
    return manifest


def read_state(path, classes: dict) -> LoadedState:
    """Verify the folder ``path`` and rebuild the estimator; its class must be a key of ``classes``.

    When ``path`` is the data folder of an MLflow model directory (its parent holds ``MLmodel``),
    the seal of that whole directory is verified first (:func:`fairops.mlflow.sealing.verify`).
    """
    path = os.fspath(path)
    verify_enclosing(path)
    verify(path)
    document = _read_json(os.path.join(path, STATE_FILE), STATE_FILE)
    class_name = document.get("estimator")
    if class_name not in classes:
        raise ModelFilesError(
            f"model file {STATE_FILE!r} in {path} holds a {class_name!r}; this flavor loads {sorted(classes)}"
        )
    try:
        with np.load(os.path.join(path, ARRAYS_FILE), allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except ValueError as error:
        raise ModelFilesError(f"model file {ARRAYS_FILE!r} in {path} cannot be read without pickle: {error}") from None
    except Exception as error:  # zipfile.BadZipFile, OSError, EOFError ...
        raise ModelFilesError(f"model file {ARRAYS_FILE!r} in {path} is not a readable .npz: {error}") from None
    cls, meta = classes[class_name], document["meta"]
    if document.get("state_layout") == "pair":
        estimator = cls._from_state(meta, arrays)
    elif document.get("state_layout") == "mapping":
        estimator = cls._from_state({**meta, "arrays": arrays})
    else:
        raise ModelFilesError(f"model file {STATE_FILE!r} in {path} has an unknown state_layout")
    return LoadedState(estimator, document.get("extra", {}))
