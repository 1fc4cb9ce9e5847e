"""What a fairops classifier answers: one class label per row by default, or its scores frame on request.

MLflow's classifier evaluator, like MLflow's own classifier flavors, reads a pyfunc's answer as one label per
row, so a fairops classifier answers labels unless a call asks ``params={"answer": "scores"}`` (fairops' loader,
``fairops serve``, ``promote`` and ``monitor`` ask). The scores frame holds ``probability`` (the positive class's)
or, for a reduction scoring its predictors' decisions, ``chance_positive``: the fair mixture's chance of deciding
positive, which is not a calibrated probability. With a decision it also holds ``positive_class`` and ``decision``,
and a reduction's ``threshold`` (in chance units), ``lot`` and ``decided_by_lot``: a reduction's chances tie, and a
tie at the threshold is decided by lot, as the randomized classifier decides it, by a number hashed from the row
(:mod:`fairops.reductions._row_hash`). :func:`describe_answer` gives the lot cut for the model card.

>>> from fairops.metrics import OperatingPoint
>>> from fairops.models import ServedDecision
>>> from sklearn.linear_model import LogisticRegression
>>> list(answer_columns(LogisticRegression(), ServedDecision("y = 1", OperatingPoint(0.5, 1.0))))
['probability', 'positive_class', 'decision']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from ._param_docs import param, with_param_docs

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from sklearn.base import BaseEstimator

    from .._typing import ArrayLike
    from ..metrics import OperatingPoint
    from ..models import ServedDecision
    from ..reductions._base import ReductionBase

    #: What :func:`reduction_in` finds: the steps before the reduction (as one function of the rows), and it.
    FoundReduction: TypeAlias = tuple[Callable[[Any], Any], ReductionBase]

OUTPUT = "probability"
POSITIVE_OUTPUT = "positive_class"
DECISION_OUTPUT = "decision"
#: A reduction's score, the fair mixture's chance of deciding positive (not a calibrated probability).
CHANCE_OUTPUT = "chance_positive"
THRESHOLD_OUTPUT = "threshold"
LOT_OUTPUT = "lot"
BY_LOT_OUTPUT = "decided_by_lot"
#: The columns a scores answer may hold its score in, one per model: what a reader of the answer takes as the score.
SCORE_OUTPUTS = (OUTPUT, CHANCE_OUTPUT)
#: How finely a reduction's threshold is shown in chance units (its tie-break moves a score by at most 1e-10).
_CHANCE_DIGITS = 9
_DOCS = {
    "model": param("model", "classifier", "The fitted model."),
    "decision": param("decision", "ServedDecision or None, default=None", "Its decision."),
}


def reduction_in(model: BaseEstimator) -> FoundReduction | None:
    """The reduction deciding for ``model`` (itself or its pipelines' last step), with what feeds it.

    Only a reduction scoring its predictors' decisions (``mix="decisions"``) counts: its score has a lot.

    Parameters
    ----------
    model : classifier
        A fitted classifier or pipeline.

    Returns
    -------
    tuple or None
        ``(prefix, reduction)``: ``prefix(X)`` gives the rows the reduction reads; None for any other model.
    """
    from sklearn.pipeline import Pipeline

    from ..reductions._base import ReductionBase

    prefixes = []
    while isinstance(model, Pipeline):
        if len(model) > 1:  # a one-step pipeline has nothing before its estimator (an empty one transforms nothing)
            prefixes.append(model[:-1])
        model = model.steps[-1][1]
    if not isinstance(model, ReductionBase) or model.mix != "decisions":
        return None

    def prefix(X: Any) -> Any:
        for step in prefixes:
            X = step.transform(X)
        return X

    return prefix, model


def _columns(model: BaseEstimator, decision: ServedDecision | None) -> list[tuple[str, str, str]]:
    """``(name, MLflow type, meaning)`` of each column of the scores answer, in its order: the one place that says
    what the answer holds (the document, the card and ``metadata.fairops_scores_output`` read it)."""
    reduction = reduction_in(model) is not None
    if reduction:
        columns = [(CHANCE_OUTPUT, "double", "the fair mixture's chance of deciding positive: the share (by weight) "
                                             "of its predictors that decide the row positive; not a calibrated "
                                             "probability")]
    else:
        columns = [(OUTPUT, "double", "the model's probability of the positive class")]
    if decision is None:
        return columns
    columns += [(POSITIVE_OUTPUT, "string", "what a decision of 1 means"),
                (DECISION_OUTPUT, "integer", "1 when the score is above the row's threshold (its group's, with "
                                             "per-group thresholds) and 0 below it")]
    if reduction:
        columns += [
            (THRESHOLD_OUTPUT, "double", f"the row's threshold in chance units, to {_CHANCE_DIGITS} decimals: rows "
                                         "of a higher chance decide 1, of a lower one 0"),
            (LOT_OUTPUT, "double", "the row's lot: a number in [0, 1) hashed from its own values, so the same row "
                                   "always draws the same lot"),
            (BY_LOT_OUTPUT, "integer", "1 when the row's chance equals the threshold: the mixture decides such rows "
                                       "at random (a share of them positive), and fairops draws that at random by "
                                       "the row's lot, positive when the lot is above the cut the model card gives")]
    return columns


@with_param_docs(**_DOCS)
def answer_columns(model: BaseEstimator, decision: ServedDecision | None = None) -> dict[str, str]:
    """What each column of the scores answer (``params={"answer": "scores"}``) holds, in words.

    Parameters
    ----------
    {{ parameters }}

    Returns
    -------
    dict
        Column name -> meaning, in the answer's order.
    """
    return {name: meaning for name, _, meaning in _columns(model, decision)}


@with_param_docs(model=_DOCS["model"], decision=param("decision", "ServedDecision", "Its decision."))
def describe_answer(model: BaseEstimator, decision: ServedDecision) -> dict[str, Any]:
    """The served answer for a model card: its columns in words, and the decision threshold.

    A reduction's threshold is in chance units, with the lot cut of the rows at it.

    Parameters
    ----------
    {{ parameters }}

    Returns
    -------
    dict
        ``columns``, and the threshold(s): ``threshold`` (single) or ``thresholds`` (one per group), each a
        number or, for a reduction, ``{"chance": c, "lot_cut": u, "share_of_tied_rows_positive": 1 - u}``.
    """
    from ..metrics import OperatingPoint
    from ..reductions._base import TIE_BREAK_SCALE

    def readable(point: OperatingPoint) -> dict[str, float]:
        if reduction_in(model) is None:
            return {"probability": point.threshold, "tie_share": point.tie_share}
        chance = round(point.threshold / (1.0 - TIE_BREAK_SCALE), _CHANCE_DIGITS)
        cut = float(min(max((point.threshold - (1.0 - TIE_BREAK_SCALE) * chance) / TIE_BREAK_SCALE, 0.0), 1.0))
        return {"chance": chance, "lot_cut": round(cut, 6), "share_of_tied_rows_positive": round(1.0 - cut, 6)}

    answer = {"default": "one class label per row (the decision's); params {'answer': 'scores'} gives the columns",
              "columns": answer_columns(model, decision)}
    if isinstance(decision.rule, OperatingPoint):
        answer["threshold"] = readable(decision.rule)
    else:
        answer["thresholds"] = {" x ".join(group): readable(point)
                                for group, point in zip(decision.rule.groups, decision.rule.points)}
    return answer


def score_of(answer: pd.DataFrame | ArrayLike) -> pd.Series | ArrayLike:
    """The score column of a scores answer (``probability`` or ``chance_positive``).

    An answer that is one column of scores is its own score.

    Parameters
    ----------
    answer : DataFrame or array-like
        What the pyfunc answered with ``params={"answer": "scores"}``.

    Returns
    -------
    array-like
        The scores.
    """
    if hasattr(answer, "columns"):
        frame = cast("pd.DataFrame", answer)
        return frame[next(c for c in SCORE_OUTPUTS if c in frame.columns)]
    return answer


@with_param_docs(**_DOCS)
def columns_and_types(model: BaseEstimator, decision: ServedDecision | None = None) -> list[list[str]]:
    """The scores answer's columns and their MLflow types, in the answer's order.

    ``MLmodel`` keeps them as ``metadata.fairops_scores_output``: the signature describes the default answer (a
    label), and a Spark UDF asking for the scores needs their types.

    Parameters
    ----------
    {{ parameters }}

    Returns
    -------
    list of [str, str]
        ``[name, type]`` per column.
    """
    return [[name, kind] for name, kind, _ in _columns(model, decision)]


def scores_frame(reduction: FoundReduction | None, inputs: pd.DataFrame, probability: np.ndarray) -> pd.DataFrame:
    """The score column of the scores answer: ``probability``, or a reduction's ``chance_positive``.

    A reduction's chance is its score without the tie-break, which :func:`explain_lot` shows as the lot.

    Parameters
    ----------
    reduction : tuple or None
        What :func:`reduction_in` found in the model.
    inputs : DataFrame
        The rows the model reads.
    probability : ndarray
        The model's score of the positive class.

    Returns
    -------
    DataFrame
        One column; a reduction's lots ride along in ``attrs["lot"]`` for :func:`explain_lot`.
    """
    import pandas as pd

    if reduction is None:
        return pd.DataFrame({OUTPUT: probability})
    prefix, model = reduction
    chance, lot = model.chance_and_lot(prefix(inputs))
    answered = pd.DataFrame({CHANCE_OUTPUT: chance})
    answered.attrs["lot"] = lot
    return answered


def explain_lot(answered: pd.DataFrame, decision: ServedDecision, rows: pd.DataFrame) -> None:
    """Add a reduction's threshold in chance units, its lot and which rows the lot decided.

    A row is decided by lot when its chance sits at the threshold, where the score's tie-break
    (``TIE_BREAK_SCALE * lot``) alone puts it above or below.

    Parameters
    ----------
    answered : DataFrame
        The scores answer so far (from :func:`scores_frame`), changed in place.
    decision : ServedDecision
        The model's decision.
    rows : DataFrame
        The checked input (its group columns, with per-group thresholds).
    """
    import numpy as np

    from ..reductions._base import TIE_BREAK_SCALE

    keep = 1.0 - TIE_BREAK_SCALE
    chance, lot = answered[CHANCE_OUTPUT].to_numpy(), answered.attrs.pop("lot")
    threshold = decision.row_thresholds(rows, len(answered))
    answered[THRESHOLD_OUTPUT] = np.round(threshold / keep, _CHANCE_DIGITS)
    answered[LOT_OUTPUT] = lot
    answered[BY_LOT_OUTPUT] = ((keep * chance <= threshold) & (threshold < keep * chance + TIE_BREAK_SCALE)) \
        .astype("int32")
