"""The decision a served classifier makes: the positive class, and the rule that turns its probability into 0/1.

:class:`ServedDecision` holds the rule set on the validation rows when the model was chosen: one
:class:`~fairops.metrics.OperatingPoint` for everyone (``decision="single"``, the paper's protocol) or
a :class:`~fairops.metrics.GroupThresholds` (``"per-group"``), whose columns the served model then
requires as inputs (:meth:`ServedDecision.extend_schema`). A row is decided alone: above its threshold
positive, below negative, exactly at it by the share of tied validation rows that were positive
(:func:`~fairops.metrics._decisions.served_decision`). A row of a group that had no validation rows is
refused with a one-line error naming the group.

``model_inputs`` lists the columns the model itself reads when the input holds more (a group-blind
model deciding per group: the sensitive columns are inputs of the decision only).

>>> import numpy as np
>>> from fairops.metrics import OperatingPoint
>>> decision = ServedDecision("income <= 50K", OperatingPoint(0.5, 0.0))
>>> decision.decide(np.array([0.7, 0.5, 0.2]), None).tolist()
[1, 0, 0]
>>> ServedDecision.from_dict(decision.to_dict()) == decision
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import InputError
from ..metrics import GroupThresholds, OperatingPoint
from ..metrics._decisions import served_decision
from ._schema import Column, InputSchema

if TYPE_CHECKING:

    import pandas as pd

    from .._typing import FloatArray, NDArray


@dataclass(frozen=True)
class ServedDecision:
    """Positive-class label, the decision rule, and (optionally) the columns the model reads.

    Parameters
    ----------
    positive_label : str
        What the positive class means.
    rule : OperatingPoint or GroupThresholds
        The rule set on the validation rows.
    model_inputs : tuple of str or None, default=None
        The columns the model itself reads, when the input holds more.
    """

    positive_label: str
    rule: Any
    model_inputs: tuple | None = None

    def __post_init__(self):
        if not isinstance(self.positive_label, str) or not self.positive_label:
            raise InputError(f"positive_label must be a non-empty text, got {self.positive_label!r}")
        if not isinstance(self.rule, (OperatingPoint, GroupThresholds)):
            raise TypeError(f"rule must be an OperatingPoint or GroupThresholds, got {type(self.rule).__name__}")
        if self.model_inputs is not None:
            object.__setattr__(self, "model_inputs", tuple(str(c) for c in self.model_inputs))

    @property
    def mode(self) -> str:
        """``"single"`` or ``"per-group"``."""
        return "per-group" if isinstance(self.rule, GroupThresholds) else "single"

    @property
    def columns(self) -> tuple:
        """The input columns the decision needs besides the model's (the groups' columns)."""
        return self.rule.columns if isinstance(self.rule, GroupThresholds) else ()

    def check_groups(self, frame: pd.DataFrame) -> None:
        """Refuse, in one line, a request row whose group had no threshold.

        It runs before the schema turns an unknown value of a category column into a missing one; columns
        the request lacks are the schema's to name.

        Parameters
        ----------
        frame : DataFrame
            The request's rows.
        """
        if self.columns and all(c in frame.columns for c in self.columns):
            self.rule.group_index({c: frame[c].astype(object).to_numpy() for c in self.columns}, len(frame))

    def decide(self, probability: np.ndarray, rows: pd.DataFrame | None) -> NDArray[np.int8]:
        """0/1 per row at its (group's) threshold; ``rows`` (the checked input) holds the groups' columns.

        Parameters
        ----------
        probability : ndarray of shape (n_samples,)
            The model's probability of the positive class.
        rows : DataFrame or None
            The checked input (None will do for a single rule).

        Returns
        -------
        ndarray of int8
            One 0/1 decision per row.
        """
        if isinstance(self.rule, OperatingPoint):
            return served_decision(self.rule, probability)
        groups = cast("pd.DataFrame", rows)  # a per-group rule is always served with its rows
        index = self.rule.group_index({c: groups[c].astype(object).to_numpy() for c in self.columns}, len(groups))
        decided = np.zeros(len(probability), dtype=np.int8)
        for i in np.unique(index):
            chosen = index == i
            decided[chosen] = served_decision(self.rule.points[i], probability[chosen])
        return decided

    def row_thresholds(self, rows: pd.DataFrame | None, n_rows: int) -> FloatArray:
        """The threshold each row is decided at (its group's, with per-group thresholds).

        Parameters
        ----------
        rows : DataFrame or None
            The checked input (None will do for a single rule).
        n_rows : int
            How many rows.

        Returns
        -------
        ndarray of float64
            One threshold per row.
        """
        if isinstance(self.rule, OperatingPoint):
            return np.full(n_rows, float(self.rule.threshold))
        groups = cast("pd.DataFrame", rows)  # a per-group rule is always served with its rows
        index = self.rule.group_index({c: groups[c].astype(object).to_numpy() for c in self.columns}, len(groups))
        return np.array([point.threshold for point in self.rule.points], dtype=np.float64)[index]

    def extend_schema(self, schema: InputSchema) -> InputSchema:
        """``schema`` with the groups' columns appended as required category inputs (values: the groups').

        Parameters
        ----------
        schema : InputSchema
            The model's schema.

        Returns
        -------
        InputSchema
            The schema the served model checks.
        """
        names = {c.name for c in schema.columns}
        added = []
        for j, column in enumerate(self.columns):
            if column not in names:
                values = tuple(sorted({group[j] for group in self.rule.groups}))
                added.append(Column(column, "category", values))
        return InputSchema((*schema.columns, *added), schema.unseen_categories)

    def to_dict(self) -> dict:
        """Plain JSON-able form (stored in the model's ``model.json``).

        Returns
        -------
        dict
            ``mode``, ``positive_label``, ``rule`` and ``model_inputs``.
        """
        rule = (self.rule.to_dict() if isinstance(self.rule, GroupThresholds)
                else {"threshold": self.rule.threshold, "tie_share": self.rule.tie_share})
        return {"mode": self.mode, "positive_label": self.positive_label, "rule": rule,
                "model_inputs": None if self.model_inputs is None else list(self.model_inputs)}

    @classmethod
    def from_dict(cls, document: object) -> ServedDecision:
        """The inverse of :meth:`to_dict`; a ValueError names what is malformed.

        Parameters
        ----------
        document : dict
            What :meth:`to_dict` returned.

        Returns
        -------
        ServedDecision
            The decision.
        """
        if not isinstance(document, dict) or document.get("mode") not in ("single", "per-group"):
            raise InputError(f"a decision document needs mode 'single' or 'per-group', got {document!r:.200}")
        rule: Any = document.get("rule")  # as stored: each kind of rule refuses what it cannot read
        if document["mode"] == "per-group":
            rule = GroupThresholds.from_dict(rule)
        else:
            try:
                rule = OperatingPoint(float(rule["threshold"]), float(rule["tie_share"]))
            except (KeyError, TypeError, ValueError) as error:
                raise InputError(f"a single decision rule needs threshold and tie_share: {error!r}") from None
        return cls(document.get("positive_label"), rule,  # type: ignore[arg-type]  # __post_init__ checks it
                   document.get("model_inputs"))
