"""Which rows a registered version saw: row hashes kept with the version, read back by the gate.

``fairops tune`` records, for the version it registers, the hashes (:func:`fairops.datasets.row_ids.row_hashes`)
of the rows the model was trained or validated on and of the test rows it held out, as two ``.npy``
artifacts of the version's run and a ``fairops.rows`` version tag pointing at them.
:func:`fairops.tracking.promote` reads them to leave out of a gate the rows either model has seen: a gate
on training rows measures how well a model remembers, not how it will do.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass

import numpy as np

from ..datasets.row_ids import HASH_RULE
from ..errors import InputError

ROWS_TAG = "fairops.rows"
FOLDER = "fairops_rows"
SEEN, HELD_OUT = "seen.npy", "held_out.npy"


def log_rows(client, name: str, version: str, run_id: str, *, seen, held_out) -> None:
    """Record the hashes of the rows ``version`` was trained or validated on (``seen``) and held out."""
    with tempfile.TemporaryDirectory() as folder:
        for file, hashes in ((SEEN, seen), (HELD_OUT, held_out)):
            np.save(os.path.join(folder, file), np.unique(np.asarray(hashes, dtype=np.uint64)), allow_pickle=False)
        client.log_artifacts(run_id, folder, artifact_path=FOLDER)
    tag = {"rule": HASH_RULE, "run_id": run_id, "path": FOLDER, "seen": len(np.unique(seen)),
           "held_out": len(np.unique(held_out))}
    client.set_model_version_tag(name, str(version), ROWS_TAG, json.dumps(tag))


def seen_rows(client, name: str, version: str) -> np.ndarray | None:
    """The sorted hashes of the rows ``version`` saw, or None when the version carries no record."""
    text = client.get_model_version(name, str(version)).tags.get(ROWS_TAG)
    if text is None:
        return None
    try:
        tag = json.loads(text)
        run_id, path, rule = tag["run_id"], tag["path"], tag["rule"]
    except (ValueError, KeyError, TypeError) as error:
        raise InputError(f"{name} version {version}: its {ROWS_TAG} tag is not a row record ({error})") from None
    if rule != HASH_RULE:
        raise InputError(f"{name} version {version}: rows hashed by {rule!r}, this fairops knows {HASH_RULE!r}")
    with tempfile.TemporaryDirectory() as folder:
        local = client.download_artifacts(run_id, f"{path}/{SEEN}", folder)
        try:
            hashes = np.load(local, allow_pickle=False)
        except (ValueError, OSError) as error:
            raise InputError(f"{name} version {version}: its record of seen rows is unreadable ({error})") from None
    if hashes.dtype != np.uint64 or hashes.ndim != 1:
        raise InputError(f"{name} version {version}: its record of seen rows holds {hashes.dtype} of shape "
                         f"{hashes.shape}, not row hashes")
    return hashes


@dataclass(frozen=True)
class FreshRows:
    """The gate's rows after leaving out those a version saw: ``keep`` (a mask over the given rows), the
    rows each version saw among them, and the versions without a record."""

    keep: np.ndarray
    seen_by: dict
    unrecorded: list

    @property
    def left_out(self) -> int:
        return int((~self.keep).sum())

    def lines(self, positions) -> list[str]:
        """What was left out and why, for the verdict (empty when nothing was and every version has a record).

        >>> fresh = FreshRows(np.array([True, False, False]), {"1": 2, "2": 0}, [])
        >>> print("\\n".join(fresh.lines([10, 11, 12])))
          left out 2 of 3 rows seen in training or validation (version 1: 2, version 2: 0; rows 11, 12): the gate scores the other 1
        """  # noqa: E501 - a doctest's expected output is one line
        lines = []
        if self.left_out:
            shown = ", ".join(str(p) for p in np.asarray(positions)[~self.keep][:8])
            more = ", ..." if self.left_out > 8 else ""
            per = ", ".join(f"version {v}: {n}" for v, n in self.seen_by.items())
            lines.append(f"  left out {self.left_out} of {len(self.keep)} rows seen in training or validation "
                         f"({per}; rows {shown}{more}): the gate scores the other {int(self.keep.sum())}")
        lines += [f"  version {v} carries no record of the rows it was trained on (not registered by fairops "
                  "tune): overlap with its training rows is not checked" for v in self.unrecorded]
        return lines


def fresh_rows(client, name: str, versions, hashes: np.ndarray) -> FreshRows:
    """Mask out the rows (by hash) that any of ``versions`` was trained or validated on."""
    keep = np.ones(len(hashes), dtype=bool)
    seen_by, unrecorded = {}, []
    for version in versions:
        seen = seen_rows(client, name, version)
        if seen is None:
            unrecorded.append(str(version))
            continue
        hit = np.isin(hashes, seen)
        seen_by[str(version)] = int(hit.sum())
        keep &= ~hit
    return FreshRows(keep, seen_by, unrecorded)
