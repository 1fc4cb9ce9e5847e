"""The gate's rows less those a version saw: each version's row record (:mod:`.row_record`) read and compared.

:func:`gate_fresh_rows` reads the record of every version the gate scores and masks out the rows any of them
was trained or validated on (each version's rows hashed by its own record's columns); :class:`FreshRows` says
in the verdict what was left out, or that the overlap was not checked (``--no-row-record``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ._row_record import NO_RECORD_OPTION
from ._row_record_reading import read_record


@dataclass(frozen=True)
class FreshRows:
    """The gate's rows after leaving out those a version saw: ``keep`` (a mask over the given rows), the
    rows each version saw among them, and whether the overlap was checked at all."""

    keep: np.ndarray
    seen_by: dict
    checked: bool = True

    @property
    def left_out(self) -> int:
        return int((~self.keep).sum())

    def lines(self, positions) -> list[str]:
        """What was left out and why, for the verdict.

        >>> fresh = FreshRows(np.array([True, False, False]), {"1": 2, "2": 0})
        >>> print("\\n".join(fresh.lines([10, 11, 12])))
          left out 2 of 3 rows seen in training or validation (version 1: 2, version 2: 0; rows 11, 12): the gate scores the other 1
        >>> print(FreshRows(np.array([True]), {}, checked=False).lines([0])[0])
          overlap with the rows either version was trained or validated on not checked (--no-row-record): some of these rows may be ones a model saw
        """  # noqa: E501 - a doctest's expected output is one line
        lines = []
        if not self.checked:
            lines.append(f"  overlap with the rows either version was trained or validated on not checked "
                         f"({NO_RECORD_OPTION}): some of these rows may be ones a model saw")
        if self.left_out:
            shown = ", ".join(str(p) for p in np.asarray(positions)[~self.keep][:8])
            more = ", ..." if self.left_out > 8 else ""
            per = ", ".join(f"version {v}: {n}" for v, n in self.seen_by.items())
            lines.append(f"  left out {self.left_out} of {len(self.keep)} rows seen in training or validation "
                         f"({per}; rows {shown}{more}): the gate scores the other {int(self.keep.sum())}")
        return lines


def fresh_rows(records: dict, X, y, sensitive) -> FreshRows:
    """Mask out the rows that any version of ``records`` (version -> :class:`RowRecord`) saw, each version's
    rows hashed by its own record's columns.

    Parameters
    ----------
    records : dict
        Version -> its record.
    X : DataFrame
        The gate's rows.
    y : array-like
        Their 0/1 labels.
    sensitive : DataFrame
        Their sensitive columns.

    Returns
    -------
    FreshRows
        The mask and the counts.
    """
    keep = np.ones(len(X), dtype=bool)
    seen_by = {}
    for version, record in records.items():
        try:
            hashes = record.columns.hashes(X, y, sensitive)
        except InputError as error:
            raise InputError(f"version {version}'s row record: {error}") from None
        hit = np.isin(hashes, record.seen)
        seen_by[str(version)] = int(hit.sum())
        keep &= ~hit
    return FreshRows(keep, seen_by)


def gate_fresh_rows(client, name: str, models: dict, X, y, sensitive, *, checked: bool = True,
                    tracking_uri=None) -> FreshRows:
    """The rows none of ``versions`` saw; an error when every row was seen, or a version has no sound record.

    Parameters
    ----------
    client : mlflow.tracking.MlflowClient
        The registry's client.
    name : str
        The registered model.
    models : dict
        Version -> its model as the gate loaded it (whose manifest each record must name).
    X, y, sensitive
        The gate's rows, their 0/1 labels and their sensitive columns.
    checked : bool, default=True
        False: no record is read, every row kept (``--no-row-record``).
    tracking_uri : str or None, default=None
        The tracking URI of ``client``.

    Returns
    -------
    FreshRows
        The mask and the counts.
    """
    if not checked:
        return FreshRows(np.ones(len(X), dtype=bool), {}, checked=False)
    records = {version: read_record(client, name, version, tracking_uri=tracking_uri,
                                    manifest_sha256=getattr(model, "fairops_manifest_sha256", None))
               for version, model in models.items()}
    fresh = fresh_rows(records, X, np.asarray(y), sensitive)
    if not fresh.keep.any():
        seen = ", ".join(f"version {v}: {n}" for v, n in fresh.seen_by.items())
        raise InputError(f"every one of the {len(fresh.keep)} rows was seen in training or validation ({seen}): "
                         "give labelled rows neither model saw")
    return fresh
