"""Where the bundled data files live and what their bytes must hash to."""

from __future__ import annotations

import hashlib
from importlib import resources
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

# sha256 of each bundled file, as published beside the original data (the list is data/SHA256SUMS).
SHA256 = {
    "adult.data.gz": "c7a2b4716a97f930123e0baf879188d701e798172631a654fc703d4b082907f3",
    "adult.test.gz": "8a2c1bffa6e7ce5abfa43881ae5e87c4311ebc2b3cd526c9c40a43f19f06f799",
    "adult.names.gz": "1e8ee543cb81fc9590b1a20392e41f28eab971ac9dbe519269cdf7d4658b62f2",
    "compas-scores-two-years.csv.gz": "706137877c1ffafbb8580f2523644bbe34e639dad00922abc6079f8f31d75514",
    "german.data.gz": "a4cc977b7fc38d60827f2f881d8377954ece4d7ade5d026e827307bb63395df2",
    "bank.csv.gz": "c257dbc06f583bde983efcf74f7f49a6a971bb5e0f7b6445900c79cacf9ffc17",
    "default_credit_card_clients.csv.gz": "045eb5c66f98a50f2928387cad5146fd0f0d8650d165cb46eddd922f2428d410",
    "fair_trees_bank_marketing.csv.gz": "e3e2bf3b6dacbf5d57a8b356b49e782e95918adcd4464711ea7322ddfc0f3600",
    "student_mat_new.csv.gz": "b054078ba070144b9ad3bd272328604eb044e10a481295926cde1a35b8d50015",
    "student_por_new.csv.gz": "0318a76fbb1382046ae397f4e5348a816874ca784570aa55fc4d082df14a1380",
}


def data_path(filename: str) -> Traversable:
    """A readable path to a bundled file."""
    if filename not in SHA256:
        raise InputError(f"no bundled data file {filename!r}; bundled: {sorted(SHA256)}")
    return resources.files("fairops.datasets") / "data" / filename


def file_sha256(filename: str) -> str:
    """The sha256 of a bundled file's bytes."""
    return hashlib.sha256(data_path(filename).read_bytes()).hexdigest()
