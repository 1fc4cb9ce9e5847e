"""A version's row record read back, every check of :mod:`.row_record` made before its hashes are used.

:func:`read_record` refuses, naming the version (a :class:`~.row_record.RowRecordError`, exit status 2 in the CLI),
a record that is missing, empty, of another version or model, whose files do not match it, unsigned or signed
otherwise while ``FAIROPS_MODEL_KEY`` is set, or of the older rule (with the command that records it again).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass

import numpy as np

from ..datasets._row_ids import HASH_RULE, RECORD_RULE
from ._row_record import (
    FORMAT_NAME,
    FORMAT_VERSION,
    HELD_OUT,
    NO_RECORD_OPTION,
    RECORD_FILE,
    ROWS_TAG,
    SEEN,
    RecordColumns,
    RowRecordError,
    digest,
    model_manifest_digest,
    record_folder,
)


@dataclass(frozen=True)
class RowRecord:
    """A version's checked record: its columns and the sorted hashes of the rows it saw."""

    version: str
    columns: RecordColumns
    seen: np.ndarray


def read_record(client, name: str, version, *, manifest_sha256=None, tracking_uri=None) -> RowRecord:
    """The version's record, every check passed (see the module docstring); else a :class:`RowRecordError`.

    Parameters
    ----------
    client : mlflow.tracking.MlflowClient
        The registry's client.
    name : str
        The registered model.
    version : str or int
        The version.
    manifest_sha256 : str or None, default=None
        The sha256 of the manifest of the version's model as loaded (None: the registry's copy is read).
    tracking_uri : str or None, default=None
        The tracking URI of ``client``.

    Returns
    -------
    RowRecord
        The record.
    """
    version = str(version)
    model_version = client.get_model_version(name, version)
    where = f"{name} version {version}"
    tag = model_version.tags.get(ROWS_TAG)
    older = _older_rule(tag)
    if older is not None:
        raise RowRecordError(f"{where} carries a row record of the older rule {older!r} (every column of the file "
                             f"hashed, the record unsigned and apart from the model), which the gate no longer "
                             f"reads; record its rows again: {tune_command(client, name, version, tracking_uri)} "
                             f"(or gate with {NO_RECORD_OPTION}, the overlap then unchecked)")
    with tempfile.TemporaryDirectory() as folder:
        try:
            raw = client.download_artifacts(model_version.run_id, f"{record_folder(version)}/{RECORD_FILE}", folder)
        except Exception:  # noqa: BLE001 - MLflow raises its own kinds for a missing artifact
            raise RowRecordError(
                f"{where} carries no record of the rows it was trained or validated on"
                + (" (its record was removed)" if tag is not None else "")
                + f": register it with fairops tune, or record them with fairops.registry._row_record.log_rows; or "
                f"gate with {NO_RECORD_OPTION}, the overlap with its training rows then unchecked") from None
        with open(raw, "rb") as handle:
            document = _parse(handle.read(), where)
        _check_document(document, name, version, where)
        _check_signature(document, where)
        if document["model_manifest_sha256"] != (manifest_sha256 or model_manifest_digest(name, version, tracking_uri)):
            raise RowRecordError(f"{where}: its row record describes another model (the manifest it names is not "
                                 "this version's): refused as swapped or tampered with")
        seen = _hashes(client, model_version.run_id, version, document, SEEN, folder, where)
    return RowRecord(version, RecordColumns.from_dict(document["columns"]), seen)


def _older_rule(tag) -> str | None:
    try:
        rule = json.loads(tag).get("rule") if tag is not None else None
    except (ValueError, AttributeError):
        return None
    return rule if rule == HASH_RULE else None


def _parse(data: bytes, where: str) -> dict:
    from ..mlflow._parse_budget import parse_json

    document = parse_json(data, lambda problem: RowRecordError(f"{where}: its row record {RECORD_FILE}: {problem}"))
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME \
            or document.get("format_version") != FORMAT_VERSION:
        raise RowRecordError(f"{where}: its {RECORD_FILE} is not a {FORMAT_NAME!r} record of version {FORMAT_VERSION}")
    return document


def _check_document(document: dict, name: str, version: str, where: str) -> None:
    if document.get("model") != name or document.get("version") != version:
        raise RowRecordError(f"{where}: its row record names {document.get('model')!r} version "
                             f"{document.get('version')!r}: refused as swapped")
    if document.get("rule") != RECORD_RULE:
        raise RowRecordError(f"{where}: its row record hashes rows by {document.get('rule')!r}; this fairops "
                             f"compares {RECORD_RULE!r} only")
    try:
        RecordColumns.from_dict(document.get("columns"))
    except ValueError as error:
        raise RowRecordError(f"{where}: its row record: {error}") from None
    for part in (SEEN, HELD_OUT):
        entry = document.get(part[:-4])
        if not isinstance(entry, dict) or entry.get("file") != part or type(entry.get("rows")) is not int \
                or not isinstance(entry.get("sha256"), str):
            raise RowRecordError(f"{where}: its row record does not describe {part}")
    if document[SEEN[:-4]]["rows"] < 1:
        raise RowRecordError(f"{where}: its row record is empty (no rows seen in training or validation): refused, "
                             "as every training row would score as fresh")
    if not isinstance(document.get("model_manifest_sha256"), str):
        raise RowRecordError(f"{where}: its row record names no model manifest")


def _check_signature(document: dict, where: str) -> None:
    import hmac
    import warnings

    from ..mlflow.sealing import KEY_ENV, SIGNATURE_FIELD, document_signature, model_key

    key, stored = model_key(), document.get(SIGNATURE_FIELD)
    if key is None:
        if stored is not None:
            warnings.warn(f"{where}: its row record is signed but {KEY_ENV} is not set: its signature was not "
                          "checked", UserWarning, stacklevel=3)
        return
    if not isinstance(stored, str) or not hmac.compare_digest(stored, document_signature(document, key)):
        raise RowRecordError(f"{where}: its row record is {'not signed' if stored is None else 'signed otherwise'} "
                             f"and {KEY_ENV} is set: refused (only records signed with that key are read)")


def _hashes(client, run_id: str, version: str, document: dict, part: str, folder: str, where: str) -> np.ndarray:
    import io

    entry = document[part[:-4]]
    try:
        path = client.download_artifacts(run_id, f"{record_folder(version)}/{part}", folder)
    except Exception:  # noqa: BLE001 - MLflow raises its own kinds for a missing artifact
        raise RowRecordError(f"{where}: its row record's {part} is missing") from None
    with open(path, "rb") as handle:
        data = handle.read()
    if digest(data) != entry["sha256"]:
        raise RowRecordError(f"{where}: its row record's {part} does not match the sha256 the record gives "
                             "(replaced or tampered with)")
    try:
        hashes = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError) as error:
        raise RowRecordError(f"{where}: its row record's {part} is unreadable ({error})") from None
    if hashes.dtype != np.uint64 or hashes.ndim != 1 or len(hashes) != entry["rows"] \
            or len(np.unique(hashes)) != len(hashes):
        raise RowRecordError(f"{where}: its row record's {part} holds {hashes.dtype} of shape {hashes.shape}, not "
                             f"the {entry['rows']} distinct row hashes the record gives")
    return np.sort(hashes)


def tune_command(client, name: str, version, tracking_uri=None) -> str:
    """The ``fairops tune`` command that registered ``version``, read off its study's run
    (:func:`fairops.tracking._ui_links.tune_command`): run again on the study it finished, it finds the version
    and records its rows by the current rule.

    Parameters
    ----------
    client : mlflow.tracking.MlflowClient
        The registry's client.
    name : str
        The registered model.
    version : str or int
        The version.
    tracking_uri : str or None, default=None
        The tracking URI the command names.

    Returns
    -------
    str
        The command line, or words saying which command when the run records too little.
    """
    from ..tracking._ui_links import tune_command as command_of

    try:
        selection = client.get_run(client.get_model_version(name, str(version)).run_id).data.tags
        parent = selection.get("mlflow.parentRunId")
        params = client.get_run(parent).data.params if parent else {}
    except Exception:  # noqa: BLE001 - a run that cannot be read leaves the words
        params, selection = {}, {}
    return command_of(params, name, study=selection.get("fairops.study"), tracking_uri=tracking_uri)
