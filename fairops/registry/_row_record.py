"""Which rows a registered version saw: a record bound to its version and its model, signed with the model's key.

``fairops tune`` records, for the version it registers (:func:`log_rows` does it for any version), the hashes
of the rows the model was trained or validated on (``seen``) and of the test rows it held out, by the rule
:data:`~fairops.datasets._row_ids.RECORD_RULE`: a row by the columns the model reads, its sensitive columns and
its label, each column by name (:class:`RecordColumns`), so a file's other columns change nothing. The record
is three files of the version's run under ``fairops_rows/version-<N>/``: the two hash arrays and
``record.json``, which names the registered model, the version, the hash rule, the columns hashed, each array's
row count and sha256, and the sha256 of the version's model manifest (``fairops_manifest.json``, which lists
every file of the model). With ``FAIROPS_MODEL_KEY`` set it is signed with that key as the manifest is
(HMAC-SHA256), so the record travels with the model it describes and no other.

:func:`~.row_record_reading.read_record` refuses, naming the version (an :class:`~fairops.errors.InputError`:
exit status 2 in the CLI), a record that is missing, empty (no seen rows), of another version or model
(swapped), whose files or model manifest do not match it, unsigned or signed otherwise while the key is set;
and the record of a version registered before this rule (every column of the file hashed, the files unsigned
and outside the model), with the ``fairops tune`` command that records its rows again. The gate leaves out of
its rows those any of its versions saw (:mod:`.fresh_rows`).

Without the key the record proves what the manifest does without it: that its files agree with one another and
with the model. Whoever can write the store can write a consistent record too, as they can a consistent model.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..datasets._row_ids import RECORD_RULE, record_hashes
from ..errors import InputError

if TYPE_CHECKING:

    import pandas as pd
    from mlflow.tracking import MlflowClient

    from .._typing import ArrayLike, NDArray

ROWS_TAG = "fairops.rows"
FOLDER = "fairops_rows"
RECORD_FILE, SEEN, HELD_OUT = "record.json", "seen.npy", "held_out.npy"
FORMAT_NAME, FORMAT_VERSION = "fairops-row-record", 2
MANIFEST_FILE = "fairops_manifest.json"  # the sealed model directory's manifest (fairops.mlflow.sealing)
NO_RECORD_OPTION = "--no-row-record"


class RowRecordError(InputError):
    """A version's row record is missing, empty, swapped, tampered with or of an older rule."""


@dataclass(frozen=True)
class RecordColumns:
    """The columns a row record knows a row by: the model's inputs, the sensitive columns and the target.

    Parameters
    ----------
    inputs : tuple of str
        The model's input columns.
    sensitive : tuple of str
        The task's sensitive columns.
    target : str
        The label column's name (its 0/1 value is hashed whatever the column is called).
    """

    inputs: tuple
    sensitive: tuple
    target: str

    @property
    def named(self) -> list[str]:
        """Every column hashed by name, each once."""
        return list(dict.fromkeys([*self.inputs, *self.sensitive]))

    def hashes(self, X: pd.DataFrame, y: ArrayLike, sensitive: pd.DataFrame) -> NDArray[np.uint64]:
        """The rows' hashes by :data:`~fairops.datasets._row_ids.RECORD_RULE` over these columns.

        Parameters
        ----------
        X : DataFrame
            The rows; columns it holds beside these are ignored.
        y : array-like of shape (n_samples,)
            Their 0/1 labels.
        sensitive : DataFrame
            Their sensitive columns (read where ``X`` lacks one).

        Returns
        -------
        ndarray of uint64
            One hash per row.
        """
        return record_hashes(X, y, sensitive, self.named)

    def to_dict(self) -> dict:
        """The JSON form a record holds.

        Returns
        -------
        dict
            ``{"inputs": [...], "sensitive": [...], "target": name}``.
        """
        return {"inputs": list(self.inputs), "sensitive": list(self.sensitive), "target": self.target}

    @classmethod
    def from_dict(cls, document: object) -> RecordColumns:
        """Rebuild from :meth:`to_dict`'s form; anything else is a ``ValueError``.

        Parameters
        ----------
        document : dict
            What :meth:`to_dict` returned.

        Returns
        -------
        RecordColumns
            The columns.
        """
        if not isinstance(document, dict) or not isinstance(document.get("target"), str) \
                or not all(isinstance(document.get(key), list) and all(isinstance(n, str) for n in document[key])
                           for key in ("inputs", "sensitive")):
            raise ValueError("'columns' must hold 'inputs' and 'sensitive' (lists of names) and 'target' (a name)")
        return cls(tuple(document["inputs"]), tuple(document["sensitive"]), document["target"])


def record_folder(version) -> str:
    """Where in the version's run its record lies."""
    return f"{FOLDER}/version-{version}"


def digest(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def _npy_bytes(hashes) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.unique(np.asarray(hashes, dtype=np.uint64)), allow_pickle=False)
    return buffer.getvalue()


def _download_path(uri: str, tracking_uri, folder: str) -> str:
    """A ``models:/`` file downloaded; the registry is found by the default tracking URI, set for the call."""
    import mlflow

    from ._tracking_uri import tracking_uri as default_tracking_uri

    with default_tracking_uri(tracking_uri):
        return mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=folder)


def _download(uri: str, tracking_uri, folder: str) -> bytes:
    with open(_download_path(uri, tracking_uri, folder), "rb") as handle:
        return handle.read()


def model_manifest_digest(name: str, version, tracking_uri=None) -> str:
    """sha256 of the manifest of the version's model directory as the registry serves it.

    Parameters
    ----------
    name : str
        The registered model.
    version : str or int
        The version.
    tracking_uri : str or None, default=None
        MLflow tracking URI (None: MLflow's).

    Returns
    -------
    str
        The hex digest.
    """
    with tempfile.TemporaryDirectory() as folder:
        try:
            return digest(_download(f"models:/{name}/{version}/{MANIFEST_FILE}", tracking_uri, folder))
        except Exception as error:  # noqa: BLE001 - MLflow raises its own kinds for a missing file
            raise RowRecordError(f"{name} version {version}: its model has no {MANIFEST_FILE} (not a model fairops "
                                 f"sealed): {str(error)[:200]}") from None


def served_input_columns(name: str, version, tracking_uri=None) -> tuple:
    """The input columns of the version's served model (its fairops input schema in ``MLmodel``'s metadata).

    Parameters
    ----------
    name : str
        The registered model.
    version : str or int
        The version.
    tracking_uri : str or None, default=None
        MLflow tracking URI.

    Returns
    -------
    tuple of str
        The columns, in the model's order.
    """
    from mlflow.models import Model

    with tempfile.TemporaryDirectory() as folder:
        document = Model.load(os.path.dirname(_download_path(f"models:/{name}/{version}/MLmodel", tracking_uri,
                                                             folder))).metadata or {}
    schema = document.get("fairops_input_schema")
    if not isinstance(schema, dict) or not isinstance(schema.get("columns"), list):
        raise InputError(f"{name} version {version}: its model records no fairops input schema, so no input columns "
                         "to know a row by")
    return tuple(str(column["name"]) for column in schema["columns"])


def log_rows(client: MlflowClient, name: str, version: str | int, *, columns: RecordColumns, seen: ArrayLike,
             held_out: ArrayLike, tracking_uri: str | None = None) -> None:
    """Record the hashes of the rows ``version`` was trained or validated on (``seen``) and held out.

    Parameters
    ----------
    client : mlflow.tracking.MlflowClient
        The registry's client.
    name : str
        The registered model.
    version : str or int
        The version.
    columns : RecordColumns
        The columns the hashes were made over (:meth:`RecordColumns.hashes`).
    seen, held_out : array-like of uint64
        The hashes (``seen`` at least one).
    tracking_uri : str or None, default=None
        The tracking URI of ``client`` (to read the version's model manifest).
    """
    from ..mlflow.sealing import SIGNATURE_FIELD, document_signature, model_key

    version = str(version)
    files = {SEEN: _npy_bytes(seen), HELD_OUT: _npy_bytes(held_out)}
    counts = {SEEN: len(np.unique(seen)), HELD_OUT: len(np.unique(held_out))}
    if counts[SEEN] == 0:
        raise InputError(f"{name} version {version}: a row record needs the rows the model saw; none were given")
    document = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "model": name, "version": version,
                "model_manifest_sha256": model_manifest_digest(name, version, tracking_uri), "rule": RECORD_RULE,
                "columns": columns.to_dict(),
                **{file[:-4]: {"file": file, "rows": counts[file], "sha256": digest(data)}
                   for file, data in files.items()}}
    key = model_key()
    if key is not None:
        document[SIGNATURE_FIELD] = document_signature(document, key)
    with tempfile.TemporaryDirectory() as folder:
        for file, data in {**files, RECORD_FILE: json.dumps(document, indent=1).encode()}.items():
            with open(os.path.join(folder, file), "wb") as handle:
                handle.write(data)
        client.log_artifacts(client.get_model_version(name, version).run_id,  # type: ignore[arg-type]  # from a run
                             folder, artifact_path=record_folder(version))
    summary = {"rule": RECORD_RULE, "path": record_folder(version), "seen": counts[SEEN], "held_out": counts[HELD_OUT],
               "signed": key is not None}
    client.set_model_version_tag(name, version, ROWS_TAG, json.dumps(summary))


def has_current_record(client, name: str, version) -> bool:
    """Whether the version's tag says it carries a record of the current rule (a quick look, nothing checked)."""
    text = client.get_model_version(name, str(version)).tags.get(ROWS_TAG)
    try:
        return json.loads(text).get("rule") == RECORD_RULE
    except (TypeError, ValueError, AttributeError):
        return False
