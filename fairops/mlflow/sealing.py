"""Every file of a model directory under one manifest, signed when a key is set.

fairops seals each MLflow model directory it writes: ``fairops_manifest.json`` at the root lists
every other file (``MLmodel``, the environment files, the shipped wheel, the model data) with its
size and sha256. With a key in the environment variable ``FAIROPS_MODEL_KEY`` (at least 16 bytes)
the manifest also carries an HMAC-SHA256 of itself, so only a holder of the key can write a
manifest that verifies.

:func:`verify` runs before fairops reads anything else from a model directory. A file added,
removed, truncated or changed, a symbolic link, and, with the key set, an unsigned manifest or a
wrong signature raise :class:`ModelFilesError` (a ``ValueError``) naming the problem. Each file is
opened once: its bytes are hashed and checked, and those same bytes are what the loaders parse
(:func:`read_model` hands them on as :class:`ModelData`), so a file swapped after it was checked
is never read. Without the
key the manifest proves only that the files are the ones it lists: whoever can write the files can
rewrite the manifest too. A signed model read without the key loads with a warning that its
signature went unchecked. The one file allowed beside the listed ones is ``registered_model_meta``,
which MLflow writes into a model directory when it downloads a registered version (name and
version; fairops never reads it). How one file is opened and read is :mod:`fairops.mlflow._file_reads`.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "MLmodel"), "w") as handle:
...     _ = handle.write("flavors: {}\\n")
>>> sorted(seal(folder)["files"])
['MLmodel']
>>> _ = verify(folder)
>>> with open(os.path.join(folder, "MLmodel"), "a") as handle:
...     _ = handle.write("loader_module: planted\\n")
>>> try:
...     verify(folder)
... except ModelFilesError as error:
...     print(str(error).split(" in ")[0], "...", str(error).split(", ")[-1])
model file 'MLmodel' ... the manifest says 12 (truncated or modified)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ..errors import InputError
from ._file_reads import (  # "x as x": re-exported, part of this module's API
    ModelFilesError as ModelFilesError,
    check_bytes as check_bytes,
    read_file as read_file,
    read_listed,
    refuse_irregular,
    sha256_file as sha256_file,
)
from ._parse_budget import parse_json, parse_yaml

if TYPE_CHECKING:
    from .._typing import StrPath

MANIFEST_FILE = "fairops_manifest.json"
KEY_ENV = "FAIROPS_MODEL_KEY"
MIN_KEY_BYTES = 16
FORMAT_NAME = "fairops-model-directory"
FORMAT_VERSION = 1
ADDED_BY_MLFLOW = frozenset({"registered_model_meta"})
SIGNATURE_FIELD = "hmac_sha256"
MLMODEL_FILE = "MLmodel"
DATA_FOLDER = "data"


def model_key() -> bytes | None:
    """The signing key from ``FAIROPS_MODEL_KEY``, or None when it is unset.

    Set but empty is an error rather than "no key": a deployment that meant to require signatures
    and lost the value on the way must not load unsigned models.

    Returns
    -------
    bytes or None
        The key, at least ``MIN_KEY_BYTES`` long.
    """
    value = os.environ.get(KEY_ENV)
    if value is None:
        return None
    if not value.strip():
        raise InputError(f"{KEY_ENV} is set but empty; unset it to load unsigned models, or give the key "
                         f"(at least {MIN_KEY_BYTES} bytes)")
    key = value.encode("utf-8")
    if len(key) < MIN_KEY_BYTES:
        raise InputError(f"{KEY_ENV} must hold at least {MIN_KEY_BYTES} bytes to sign models, got {len(key)}")
    return key


def _listing(model_dir: str) -> list[str]:
    """Relative paths (with '/') of every file under ``model_dir`` but the manifest."""
    found = []
    for root, folders, files in os.walk(model_dir):
        for name in folders + files:
            refuse_irregular(model_dir, os.path.relpath(os.path.join(root, name), model_dir))
        for name in files:
            relative = os.path.relpath(os.path.join(root, name), model_dir).replace(os.sep, "/")
            if relative != MANIFEST_FILE:
                found.append(relative)
    return sorted(found)


def document_signature(document: dict[str, Any], key: bytes) -> str:
    """HMAC-SHA256 (hex) of a JSON document without its ``hmac_sha256`` field, keys sorted, no spaces.

    The manifest is signed so, and so is a version's row record (:mod:`fairops.registry._row_record`).

    Parameters
    ----------
    document : dict
        A JSON-able document.
    key : bytes
        The key (:func:`model_key`).

    Returns
    -------
    str
        The signature.
    """
    unsigned = {k: v for k, v in document.items() if k != SIGNATURE_FIELD}
    body = json.dumps(unsigned, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def seal(model_dir: StrPath) -> dict[str, Any]:
    """Write ``fairops_manifest.json`` over every file of ``model_dir`` (signed when a key is set).

    Parameters
    ----------
    model_dir : str or os.PathLike
        The model directory.

    Returns
    -------
    dict
        The manifest written.
    """
    model_dir = os.fspath(model_dir)
    files = {}
    for name in _listing(model_dir):
        path = os.path.join(model_dir, name)
        files[name] = {"sha256": sha256_file(path), "bytes": os.path.getsize(path)}
    document = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "files": files}
    key = model_key()
    if key is not None:
        document[SIGNATURE_FIELD] = document_signature(document, key)
    with open(os.path.join(model_dir, MANIFEST_FILE), "w", encoding="utf-8") as handle:
        json.dump(document, handle, sort_keys=True, indent=1)
    return document



def _read_manifest(model_dir: str) -> tuple[dict[str, Any], bytes]:
    """The manifest of ``model_dir`` and its bytes as read."""
    raw = read_file(model_dir, MANIFEST_FILE, missing=f"model directory {model_dir} has no {MANIFEST_FILE}: it was "
                                                      "not written by fairops, or its manifest was removed")
    document = parse_json(raw, lambda problem: ModelFilesError(f"{MANIFEST_FILE} in {model_dir}: {problem}"))
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME \
            or document.get("format_version") != FORMAT_VERSION or not isinstance(document.get("files"), dict):
        raise ModelFilesError(f"{MANIFEST_FILE} in {model_dir} is not a {FORMAT_NAME!r} manifest of version "
                              f"{FORMAT_VERSION}")
    return document, raw


def _check_signature(model_dir: str, document: dict[str, Any]) -> None:
    key = model_key()
    stored = document.get(SIGNATURE_FIELD)
    if key is None:
        if stored is not None:
            warnings.warn(f"model directory {model_dir} is signed but {KEY_ENV} is not set: its signature "
                          "was not checked", UserWarning, stacklevel=3)
        return
    if stored is None:
        raise ModelFilesError(f"model directory {model_dir} is not signed, and {KEY_ENV} is set: fairops "
                              "loads only models signed with that key")
    if not isinstance(stored, str) or not hmac.compare_digest(stored, document_signature(document, key)):
        raise ModelFilesError(f"the signature of {MANIFEST_FILE} in {model_dir} does not verify with "
                              f"{KEY_ENV}: the model was changed after it was signed, or signed with another key")



class _Verified(NamedTuple):
    manifest: dict[str, Any]
    manifest_bytes: bytes
    files: dict[str, bytes]  # name -> the bytes read and checked, for the names kept


def _verified(model_dir: str, keep: Callable[[str], bool]) -> _Verified:
    """Check the seal of ``model_dir``, reading each file once; keep the bytes of the names ``keep`` accepts."""
    if not os.path.isdir(model_dir):
        raise ModelFilesError(f"model directory {model_dir!r} does not exist")
    document, raw = _read_manifest(model_dir)
    _check_signature(model_dir, document)
    listed = {name: entry for name, entry in document["files"].items() if name not in ADDED_BY_MLFLOW}
    present = set(_listing(model_dir)) - ADDED_BY_MLFLOW
    added, lost = sorted(present - set(listed)), sorted(set(listed) - present)
    if added:
        raise ModelFilesError(f"model directory {model_dir} holds file(s) its manifest does not list "
                              f"(added after sealing): {added}")
    if lost:
        raise ModelFilesError(f"model file(s) {lost} listed in the manifest are missing from {model_dir}")
    files = {}
    for name, expected in listed.items():
        data = read_listed(model_dir, name, expected, keep(name))
        if data is not None:
            files[name] = data
    return _Verified(document, raw, files)


def verify(model_dir: StrPath) -> dict[str, Any]:
    """Check the seal of ``model_dir`` (see the module docstring), each file read once; return the manifest.

    Parameters
    ----------
    model_dir : str or os.PathLike
        The model directory.

    Returns
    -------
    dict
        Its manifest.
    """
    return _verified(os.fspath(model_dir), lambda name: False).manifest


def _used_by_loaders(name: str) -> bool:
    return name == MLMODEL_FILE or name.startswith(f"{DATA_FOLDER}/")


class ModelData:
    """The files of a model's data folder as the flavors parse them: each read once.

    From :func:`read_model` (a model directory), ``files`` holds every data file's bytes exactly as
    they were checked against the seal, and ``mlmodel`` the ``MLmodel`` parsed from the bytes checked;
    nothing is read again. A bare data folder (``files`` None: no ``MLmodel`` above it, no key set)
    reads each file on first use, once.

    Parameters
    ----------
    folder : str
        The data folder.
    files : dict or None, default=None
        File name -> the checked bytes; None for a bare data folder.
    mlmodel : dict or None, default=None
        The parsed ``MLmodel``.
    manifest_sha256 : str or None, default=None
        The sha256 of the manifest the files were checked against (what a row record names).

    Examples
    --------
    >>> data = ModelData("/models/m/data", {"state.json": b"{}"}, {"flavors": {}})
    >>> data.read("state.json")
    b'{}'
    >>> try:
    ...     data.read("arrays.npz")
    ... except ModelFilesError as error:
    ...     print(error)
    model file 'arrays.npz' is missing from /models/m/data
    """

    def __init__(self, folder: str, files: dict[str, bytes] | None = None, mlmodel: dict[str, Any] | None = None,
                 manifest_sha256: str | None = None) -> None:
        self.folder, self.mlmodel, self.sealed = folder, mlmodel, files is not None
        self.manifest_sha256 = manifest_sha256
        self._files = dict(files or {})

    def read(self, name: str) -> bytes:
        """The bytes of the data file ``name``.

        Parameters
        ----------
        name : str
            The file's name in the data folder.

        Returns
        -------
        bytes
            Its content.
        """
        if name not in self._files:
            if self.sealed:
                raise ModelFilesError(f"model file {name!r} is missing from {self.folder}")
            self._files[name] = read_file(self.folder, name)
        return self._files[name]


def _model_root(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` that holds an ``MLmodel`` file, or None."""
    while True:
        if os.path.isfile(os.path.join(folder, MLMODEL_FILE)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _layout(root: str, mlmodel: bytes | None) -> dict[str, Any]:
    """``MLmodel`` parsed, refused when a section points ``data:`` anywhere but the model's own ``data`` folder."""
    if mlmodel is None:
        raise ModelFilesError(f"model directory {root} has no {MLMODEL_FILE} file")
    document = parse_yaml(mlmodel, lambda problem: ModelFilesError(f"{MLMODEL_FILE} in {root}: {problem}"))
    flavors = document.get("flavors") if isinstance(document, dict) else None
    if not isinstance(flavors, dict):
        raise ModelFilesError(f"{MLMODEL_FILE} in {root} has no 'flavors' section")
    for name, section in flavors.items():
        if isinstance(section, dict) and "data" in section and section["data"] != DATA_FOLDER:
            raise ModelFilesError(f"{MLMODEL_FILE} in {root} points flavor {name!r} at data {section['data']!r}; "
                                  f"fairops models keep their data in the folder {DATA_FOLDER!r} beside it")
    return cast("dict[str, Any]", document)  # a dict: its flavors were read above


def read_model(model_dir: StrPath) -> ModelData:
    """Verify ``model_dir`` whole (:func:`verify`) and hand on its data files and ``MLmodel`` as read.

    Every file is opened once; the bytes returned are the bytes whose sha256 was checked, so what is
    verified is what the flavor parses, whatever happens to the folder meanwhile.

    Parameters
    ----------
    model_dir : str or os.PathLike
        The model directory.

    Returns
    -------
    ModelData
        Its data files and ``MLmodel``.
    """
    root = os.path.abspath(os.fspath(model_dir))
    verified = _verified(root, _used_by_loaders)
    mlmodel = _layout(root, verified.files.get(MLMODEL_FILE))
    prefix = f"{DATA_FOLDER}/"
    data = {name[len(prefix):]: blob for name, blob in verified.files.items() if name.startswith(prefix)}
    return ModelData(os.path.join(root, DATA_FOLDER), data, mlmodel,
                     hashlib.sha256(verified.manifest_bytes).hexdigest())


def verify_enclosing(data_path: StrPath) -> ModelData:
    """Verify the model directory around a flavor's data folder, and that the folder is its ``data``.

    MLflow hands a pyfunc loader ``<model>/<data: of MLmodel>``. The nearest folder at or above it
    that holds ``MLmodel`` is verified whole (:func:`read_model`), its ``MLmodel`` must name
    ``data`` as every flavor's data, and the folder handed over must be exactly ``<model>/data``, so
    an edited ``data:`` cannot send the loader to files the seal does not cover. A bare data folder
    (no ``MLmodel`` at or above it) is left to the data folder's own checks, but only without a key:
    with ``FAIROPS_MODEL_KEY`` set, only a signed model directory loads.

    Parameters
    ----------
    data_path : str or os.PathLike
        The data folder MLflow hands over.

    Returns
    -------
    ModelData
        The data files to parse.
    """
    raw = os.fspath(data_path)
    if ".." in raw.replace(os.sep, "/").split("/"):
        raise ModelFilesError(f"model data folder {raw!r} climbs out with '..'; fairops models keep their data "
                              f"in the folder {DATA_FOLDER!r} beside MLmodel")
    folder = os.path.abspath(raw)
    root = _model_root(folder)
    if root is None:
        if model_key() is not None:
            raise ModelFilesError(f"model data folder {folder} lies outside a model directory (no MLmodel at or "
                                  f"above it), and {KEY_ENV} is set: only signed model directories load")
        return ModelData(folder)
    data = read_model(root)
    if folder != data.folder:
        raise ModelFilesError(f"model data folder {folder} is not the data folder of the model directory {root} "
                              f"(its {DATA_FOLDER!r} folder beside MLmodel)")
    return data


def copy_verified(model_dir: StrPath, target: StrPath) -> str:
    """Write the model directory ``model_dir`` into the new folder ``target`` from the bytes its seal was checked on.

    ``fairops serve`` serves such a copy in a folder of its own: the folder it was given may change
    while the worker processes start, the copy does not, so every worker loads the model the server
    checked (and checks it again).

    Parameters
    ----------
    model_dir : str or os.PathLike
        The model directory.
    target : str or os.PathLike
        A folder that does not exist yet.

    Returns
    -------
    str
        ``target``.
    """
    verified = _verified(os.fspath(model_dir), lambda name: True)
    target = os.fspath(target)
    os.makedirs(target)
    for name, data in {**verified.files, MANIFEST_FILE: verified.manifest_bytes}.items():
        path = os.path.join(target, *name.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
    return target
