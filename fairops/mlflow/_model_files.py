"""Fitted fairops estimators on disk as data: a JSON document, an ``.npz`` of arrays, a sha256 manifest.

Nothing here unpickles: arrays are read as plain ``.npy`` data (no object dtype) and the estimator
class is looked up in a fixed table the caller passes, so loading a model directory runs no code from
it. Each array's size is read from the zip entry and the ``.npy`` header before its data: the arrays
of one model may take at most :func:`max_array_bytes` bytes together (``FAIROPS_MAX_ARRAY_BYTES``,
default 2 GiB), so a small file that would inflate to a huge array is refused, not inflated. The
estimator's ``_from_state`` then checks what the arrays hold before compiled code reads them.

The state protocol every fairops estimator offers: ``est._get_state()`` returns ``(meta, arrays)``,
rebuilt by ``cls._from_state(meta, arrays)``, where ``meta`` is JSON-able (dicts, lists, str, numbers, bool, None)
and ``arrays`` maps names to NumPy arrays of a non-object dtype.

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

import io
import json
import math
import os
import zipfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ._parse_budget import parse_json
from .sealing import ModelData, ModelFilesError, check_bytes, read_file, sha256_file, verify_enclosing

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

FORMAT_NAME = "fairops-model"
FORMAT_VERSION = 1
STATE_FILE = "state.json"
ARRAYS_FILE = "arrays.npz"
MANIFEST_FILE = "manifest.json"
MAX_ARRAY_BYTES_ENV = "FAIROPS_MAX_ARRAY_BYTES"
DEFAULT_MAX_ARRAY_BYTES = 2 << 30
# Plain data only: booleans, integers, floats, complex numbers, byte and unicode strings.
_ARRAY_KINDS = "biufcSU"


@dataclass
class LoadedState:
    """What :func:`read_state` returns: the rebuilt estimator and the extra JSON saved next to it."""

    estimator: BaseEstimator
    extra: dict = field(default_factory=dict)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"model state holds a {type(value).__name__}, which cannot be saved as JSON: {value!r}")


def split_state(estimator) -> tuple[dict, dict]:
    """``(meta, arrays)`` of an estimator following the state protocol."""
    if not hasattr(estimator, "_get_state"):
        raise TypeError(
            f"{type(estimator).__name__} does not offer _get_state(); fairops flavors save estimators "
            "that expose their fitted state as (JSON-able dict, dict of NumPy arrays)"
        )
    state = estimator._get_state()
    if not (isinstance(state, tuple) and len(state) == 2 and isinstance(state[0], dict)
            and isinstance(state[1], dict)):
        raise TypeError("_get_state() must return (meta, arrays): a JSON-able dict and a dict of NumPy arrays")
    meta, arrays = state
    arrays = {str(name): np.asarray(value) for name, value in arrays.items()}
    for name, value in arrays.items():
        if value.dtype == object:
            raise TypeError(f"state array {name!r} has dtype object; only plain numeric/string arrays are saved")
    return meta, arrays


def write_state(estimator, path, classes: dict, extra: dict | None = None) -> None:
    """Write ``estimator`` (whose class must be a value of ``classes``) into the folder ``path``.

    ``extra`` is flavor data stored beside the state (e.g. a decision threshold, column names).
    """
    class_name = next((name for name, cls in classes.items() if type(estimator) is cls), None)
    if class_name is None:
        raise TypeError(f"cannot save a {type(estimator).__name__}; expected one of {sorted(classes)}")
    meta, arrays = split_state(estimator)
    os.makedirs(path, exist_ok=True)
    document = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "estimator": class_name,
        "meta": meta,
        "extra": extra or {},
    }
    with open(os.path.join(path, STATE_FILE), "w", encoding="utf-8") as handle:
        json.dump(document, handle, default=_json_default, sort_keys=True)
    np.savez(os.path.join(path, ARRAYS_FILE), **arrays)
    write_manifest(path)


def write_manifest(path) -> None:
    """Write the folder's ``manifest.json``: size and sha256 of its state and arrays files."""
    path = os.fspath(path)
    files = {
        name: {"sha256": sha256_file(os.path.join(path, name)), "bytes": os.path.getsize(os.path.join(path, name))}
        for name in (STATE_FILE, ARRAYS_FILE)
    }
    manifest = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "files": files}
    with open(os.path.join(path, MANIFEST_FILE), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, sort_keys=True, indent=1)


def _parse_json(data: bytes, folder: str, name: str) -> dict:
    """The JSON object in the bytes of ``folder/name``; anything else (not JSON, too deep, not an object) is refused."""
    document = parse_json(data, lambda problem: ModelFilesError(f"model file {name!r} in {folder}: {problem}"))
    if not isinstance(document, dict):
        raise ModelFilesError(f"model file {name!r} in {folder} holds a {type(document).__name__}, not a JSON object")
    return document


def check_data(data: ModelData) -> dict:
    """Check the data folder's own manifest against the bytes of its files; return it or raise."""
    if not data.sealed and not os.path.isdir(data.folder):
        raise ModelFilesError(f"model directory {data.folder!r} does not exist")
    manifest = _parse_json(data.read(MANIFEST_FILE), data.folder, MANIFEST_FILE)
    if manifest.get("format") != FORMAT_NAME or manifest.get("format_version") != FORMAT_VERSION:
        raise ModelFilesError(
            f"model file {MANIFEST_FILE!r} in {data.folder} has format {manifest.get('format')!r} version "
            f"{manifest.get('format_version')!r}; this fairops reads {FORMAT_NAME!r} version {FORMAT_VERSION}"
        )
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != {STATE_FILE, ARRAYS_FILE}:
        raise ModelFilesError(f"model file {MANIFEST_FILE!r} in {data.folder} must list {STATE_FILE!r} and "
                              f"{ARRAYS_FILE!r}")
    for name, expected in files.items():
        check_bytes(data.folder, name, data.read(name), expected)
    return manifest


def verify(path) -> dict:
    """Check the manifest's sizes and sha256 sums; return the manifest or raise :class:`ModelFilesError`."""
    return check_data(ModelData(os.fspath(path)))


def max_array_bytes() -> int:
    """Bytes the arrays of one model may take in memory: ``FAIROPS_MAX_ARRAY_BYTES``, default 2 GiB.

    >>> max_array_bytes() == DEFAULT_MAX_ARRAY_BYTES or MAX_ARRAY_BYTES_ENV in os.environ
    True
    """
    value = os.environ.get(MAX_ARRAY_BYTES_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_ARRAY_BYTES
    try:
        limit = int(value)
    except ValueError:
        raise InputError(f"{MAX_ARRAY_BYTES_ENV} must be a whole number of bytes, got {value!r}") from None
    if limit < 1:
        raise InputError(f"{MAX_ARRAY_BYTES_ENV} must be positive, got {limit}")
    return limit


def _npy_header(member, where: str, records: bool = False) -> tuple[tuple, bool, np.dtype]:
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(member)
    elif version == (2, 0):
        shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(member)
    else:
        raise InputError(f"{where} has .npy format version {version}; fairops reads 1.0 and 2.0")
    # numpy's stubs: a dtype with names has fields
    parts = ([dtype.fields[name][0] for name in dtype.names]  # type: ignore[index]
             if records and dtype.names else [dtype])
    plain = all(part.kind in _ARRAY_KINDS and part.fields is None and part.subdtype is None and part.itemsize
                for part in parts)
    if not plain or (dtype.fields is not None and not records) or dtype.subdtype is not None:
        raise InputError(f"{where} has dtype {dtype}; model arrays hold plain numbers or text, read without pickle")
    return shape, fortran_order, dtype


def entry_size(archive: zipfile.ZipFile, info: zipfile.ZipInfo, left: int, refuse, records: bool = False):
    """``(shape, fortran_order, dtype, data bytes)`` of a ``.npy`` entry, checked before its data is read.

    The entry's declared size (the zip directory) and its header's shape must both fit in ``left``
    bytes and agree with each other; ``refuse(problem)`` makes the exception raised otherwise.
    ``records``: structured dtypes of plain fields are allowed (scikit-learn's tree nodes in skops).
    """
    name = info.filename[:-4]
    over = f"above the {left} bytes left of the model's limit ({MAX_ARRAY_BYTES_ENV})"
    if info.file_size > left:
        raise refuse(f"entry {info.filename!r} declares {info.file_size} bytes, {over}")
    member = archive.open(info)
    try:
        shape, fortran_order, dtype = _npy_header(member, f"array {name!r}", records)
    except ValueError as error:
        member.close()
        raise refuse(str(error)) from None
    n_bytes = math.prod(shape) * dtype.itemsize
    if n_bytes > left:
        member.close()
        raise refuse(f"array {name!r} is {n_bytes} bytes, {over}")
    header_bytes = member.tell()
    if header_bytes + n_bytes != info.file_size:
        member.close()
        raise refuse(f"array {name!r} has {info.file_size - header_bytes} data bytes, its header "
                     f"(shape {shape}, dtype {dtype}) says {n_bytes}")
    return member, shape, fortran_order, dtype, n_bytes


def read_arrays(source, where: str | None = None) -> dict:
    """The arrays of an ``.npz`` file (a path, or its bytes as read), each size checked against
    :func:`max_array_bytes` before it is read. ``where`` names the file in errors.

    >>> import tempfile
    >>> file_path = os.path.join(tempfile.mkdtemp(), "a.npz")
    >>> np.savez(file_path, w=np.zeros(1000))
    >>> read_arrays(file_path)["w"].shape
    (1000,)
    >>> os.environ[MAX_ARRAY_BYTES_ENV] = "4096"
    >>> try:
    ...     read_arrays(file_path)
    ... except ModelFilesError as error:
    ...     print(str(error).split(": ")[-1])
    ... finally:
    ...     del os.environ[MAX_ARRAY_BYTES_ENV]
    entry 'w.npy' declares 8128 bytes, above the 4096 bytes left of the model's limit (FAIROPS_MAX_ARRAY_BYTES)
    """
    if not isinstance(source, (bytes, bytearray)):
        folder, name = os.path.split(os.fspath(source))
        source, where = read_file(folder, name), f"model file {name!r} in {folder}"
    arrays, left = {}, max_array_bytes()

    def refuse(problem: str):
        return ModelFilesError(f"{where or 'model arrays'}: {problem}")

    with zipfile.ZipFile(io.BytesIO(source)) as archive:
        for info in archive.infolist():
            name = info.filename[:-4]
            if not info.filename.endswith(".npy") or name in arrays:
                raise refuse(f"entry {info.filename!r} is not a single .npy array")
            member, shape, fortran_order, dtype, n_bytes = entry_size(archive, info, left, refuse)
            with member:
                data = bytearray(n_bytes)
                if member.readinto(data) != n_bytes:
                    raise refuse(f"array {name!r} ends before its {n_bytes} data bytes")
            flat = np.frombuffer(data, dtype=dtype)
            arrays[name] = flat.reshape(shape[::-1]).T if fortran_order else flat.reshape(shape)
            left -= n_bytes
    return arrays


def read_state(path, classes: dict) -> LoadedState:
    """Verify the data folder ``path`` (or the :class:`~fairops.mlflow.sealing.ModelData` read from it) and
    rebuild the estimator; its class must be a key of ``classes``.

    When ``path`` is the data folder of an MLflow model directory (its parent holds ``MLmodel``), the
    seal of that whole directory is verified first (:func:`fairops.mlflow.sealing.verify_enclosing`).
    Each file is read once: the bytes checked against the manifests are the bytes parsed.
    """
    data = path if isinstance(path, ModelData) else verify_enclosing(os.fspath(path))
    check_data(data)
    document = _parse_json(data.read(STATE_FILE), data.folder, STATE_FILE)
    class_name = document.get("estimator")
    if class_name not in classes:
        raise ModelFilesError(
            f"model file {STATE_FILE!r} in {data.folder} holds a {class_name!r}; this flavor loads {sorted(classes)}"
        )
    where = f"model file {ARRAYS_FILE!r} in {data.folder}"
    try:
        arrays = read_arrays(data.read(ARRAYS_FILE), where)
    except ModelFilesError:
        raise
    except Exception as error:  # zipfile.BadZipFile, OSError, EOFError ...
        raise ModelFilesError(f"{where} is not a readable .npz: {error}") from None
    cls, meta, extra = classes[class_name], document.get("meta"), document.get("extra", {})
    if not isinstance(meta, dict) or not isinstance(extra, dict):
        raise ModelFilesError(f"model file {STATE_FILE!r} in {data.folder} must hold 'meta' and 'extra' as JSON "
                              "objects")
    estimator = cls._from_state(meta, arrays)
    return LoadedState(estimator, extra)
