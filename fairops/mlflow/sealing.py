"""Every file of a model directory under one manifest, signed when a key is set.

fairops seals each MLflow model directory it writes: ``fairops_manifest.json`` at the root lists
every other file (``MLmodel``, the environment files, the shipped wheel, the model data) with its
size and sha256. With a key in the environment variable ``FAIROPS_MODEL_KEY`` (at least 16 bytes)
the manifest also carries an HMAC-SHA256 of itself, so only a holder of the key can write a
manifest that verifies.

:func:`verify` runs before fairops reads anything else from a model directory. A file added,
removed, truncated or changed, a symbolic link, and, with the key set, an unsigned manifest or a
wrong signature raise :class:`ModelFilesError` (a ``ValueError``) naming the problem. Without the
key the manifest proves only that the files are the ones it lists: whoever can write the files can
rewrite the manifest too. A signed model read without the key loads with a warning that its
signature went unchecked. The one file allowed beside the listed ones is ``registered_model_meta``,
which MLflow writes into a model directory when it downloads a registered version (name and
version; fairops never reads it).

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
import stat
import warnings

MANIFEST_FILE = "fairops_manifest.json"
KEY_ENV = "FAIROPS_MODEL_KEY"
MIN_KEY_BYTES = 16
FORMAT_NAME = "fairops-model-directory"
FORMAT_VERSION = 1
ADDED_BY_MLFLOW = frozenset({"registered_model_meta"})
SIGNATURE_FIELD = "hmac_sha256"
MLMODEL_FILE = "MLmodel"
DATA_FOLDER = "data"


class ModelFilesError(ValueError):
    """A saved model is missing, tampered with, truncated, unsigned where a signature is required, or unknown."""


def sha256_file(path: str) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_key() -> bytes | None:
    """The signing key from ``FAIROPS_MODEL_KEY``, or None when it is unset.

    Set but empty is an error rather than "no key": a deployment that meant to require signatures
    and lost the value on the way must not load unsigned models.
    """
    value = os.environ.get(KEY_ENV)
    if value is None:
        return None
    if not value.strip():
        raise ValueError(f"{KEY_ENV} is set but empty; unset it to load unsigned models, or give the key "
                         f"(at least {MIN_KEY_BYTES} bytes)")
    key = value.encode("utf-8")
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"{KEY_ENV} must hold at least {MIN_KEY_BYTES} bytes to sign models, got {len(key)}")
    return key


def refuse_irregular(folder: str, relative: str) -> None:
    """Refuse ``folder/relative`` unless it is a regular file or a folder (never followed, never opened).

    A named pipe would block the first read of it forever, a device could be endless, and a link
    points outside what the manifest covers.
    """
    try:
        mode = os.lstat(os.path.join(folder, relative)).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise ModelFilesError(f"model directory {folder} holds a symbolic link: {relative!r}")
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ModelFilesError(f"model directory {folder} holds {relative!r}, which is not a regular file (a pipe, "
                              "socket or device); nothing of it was read")


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


def _signature(document: dict, key: bytes) -> str:
    unsigned = {k: v for k, v in document.items() if k != SIGNATURE_FIELD}
    body = json.dumps(unsigned, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def seal(model_dir) -> dict:
    """Write ``fairops_manifest.json`` over every file of ``model_dir`` (signed when a key is set)."""
    model_dir = os.fspath(model_dir)
    files = {}
    for name in _listing(model_dir):
        path = os.path.join(model_dir, name)
        files[name] = {"sha256": sha256_file(path), "bytes": os.path.getsize(path)}
    document = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "files": files}
    key = model_key()
    if key is not None:
        document[SIGNATURE_FIELD] = _signature(document, key)
    with open(os.path.join(model_dir, MANIFEST_FILE), "w", encoding="utf-8") as handle:
        json.dump(document, handle, sort_keys=True, indent=1)
    return document


def _read_manifest(model_dir: str) -> dict:
    path = os.path.join(model_dir, MANIFEST_FILE)
    refuse_irregular(model_dir, MANIFEST_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except FileNotFoundError:
        raise ModelFilesError(f"model directory {model_dir} has no {MANIFEST_FILE}: it was not written by "
                              "fairops, or its manifest was removed") from None
    except (ValueError, RecursionError) as error:  # ValueError: also an integer of over 4,300 digits
        raise ModelFilesError(f"{MANIFEST_FILE} in {model_dir} is not valid JSON: {str(error)[:200]}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME \
            or document.get("format_version") != FORMAT_VERSION or not isinstance(document.get("files"), dict):
        raise ModelFilesError(f"{MANIFEST_FILE} in {model_dir} is not a {FORMAT_NAME!r} manifest of version "
                              f"{FORMAT_VERSION}")
    return document


def _check_signature(model_dir: str, document: dict) -> None:
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
    if not isinstance(stored, str) or not hmac.compare_digest(stored, _signature(document, key)):
        raise ModelFilesError(f"the signature of {MANIFEST_FILE} in {model_dir} does not verify with "
                              f"{KEY_ENV}: the model was changed after it was signed, or signed with another key")


def verify(model_dir) -> dict:
    """Check the seal of ``model_dir`` (see the module docstring); return the manifest."""
    model_dir = os.fspath(model_dir)
    if not os.path.isdir(model_dir):
        raise ModelFilesError(f"model directory {model_dir!r} does not exist")
    document = _read_manifest(model_dir)
    _check_signature(model_dir, document)
    listed = {name: entry for name, entry in document["files"].items() if name not in ADDED_BY_MLFLOW}
    present = set(_listing(model_dir)) - ADDED_BY_MLFLOW
    added, lost = sorted(present - set(listed)), sorted(set(listed) - present)
    if added:
        raise ModelFilesError(f"model directory {model_dir} holds file(s) its manifest does not list "
                              f"(added after sealing): {added}")
    if lost:
        raise ModelFilesError(f"model file(s) {lost} listed in the manifest are missing from {model_dir}")
    for name, expected in listed.items():
        check_file(model_dir, name, expected)
    return document


def check_file(folder: str, name: str, expected) -> None:
    """Refuse ``folder/name`` unless it is a regular file of the size and sha256 a manifest entry gives."""
    if not isinstance(expected, dict) or not isinstance(expected.get("sha256"), str) \
            or type(expected.get("bytes")) is not int:
        raise ModelFilesError(f"the manifest entry of {name!r} in {folder} is not {{'bytes': int, 'sha256': str}}: "
                              f"{str(expected)[:100]}")
    refuse_irregular(folder, name)
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        raise ModelFilesError(f"model file {name!r} is missing from {folder}")
    if os.path.getsize(path) != expected["bytes"]:
        raise ModelFilesError(f"model file {name!r} in {folder} has {os.path.getsize(path)} bytes, the "
                              f"manifest says {expected['bytes']} (truncated or modified)")
    if sha256_file(path) != expected["sha256"]:
        raise ModelFilesError(f"model file {name!r} in {folder} does not match its sha256 in the manifest "
                              "(modified)")


def _model_root(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` that holds an ``MLmodel`` file, or None."""
    while True:
        if os.path.isfile(os.path.join(folder, MLMODEL_FILE)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _check_layout(root: str) -> None:
    """Refuse an ``MLmodel`` whose sections point ``data:`` anywhere but the model's own ``data`` folder."""
    import yaml

    try:
        with open(os.path.join(root, MLMODEL_FILE), encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as error:
        raise ModelFilesError(f"{MLMODEL_FILE} in {root} is not readable YAML: {str(error)[:200]}") from None
    flavors = document.get("flavors") if isinstance(document, dict) else None
    if not isinstance(flavors, dict):
        raise ModelFilesError(f"{MLMODEL_FILE} in {root} has no 'flavors' section")
    for name, section in flavors.items():
        if isinstance(section, dict) and "data" in section and section["data"] != DATA_FOLDER:
            raise ModelFilesError(f"{MLMODEL_FILE} in {root} points flavor {name!r} at data {section['data']!r}; "
                                  f"fairops models keep their data in the folder {DATA_FOLDER!r} beside it")


def verify_enclosing(data_path) -> None:
    """Verify the model directory around a flavor's data folder, and that the folder is its ``data``.

    MLflow hands a pyfunc loader ``<model>/<data: of MLmodel>``. The nearest folder at or above it
    that holds ``MLmodel`` is verified whole (:func:`verify`), its ``MLmodel`` must name
    ``data`` as every flavor's data, and the folder handed over must be exactly ``<model>/data``, so
    an edited ``data:`` cannot send the loader to files the seal does not cover. A bare data folder
    (no ``MLmodel`` at or above it) is left to the data folder's own checks, but only without a key:
    with ``FAIROPS_MODEL_KEY`` set, only a signed model directory loads.
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
        return
    verify(root)
    _check_layout(root)
    if folder != os.path.join(root, DATA_FOLDER):
        raise ModelFilesError(f"model data folder {folder} is not the data folder of the model directory {root} "
                              f"(its {DATA_FOLDER!r} folder beside MLmodel)")
