"""Loaders for the bundled benchmark data sets.

Each loader returns a :class:`Dataset`: typed features ``X`` (categoricals as
``category`` dtype), a 0/1 label ``y``, the sensitive attributes with readable
labels, and the :class:`~fairops.metrics.Task` to evaluate on. Sensitive
attributes stay among the features unless ``drop_sensitive=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..metrics import Task
from ._bundle import data_path

if TYPE_CHECKING:
    from .._typing import ArrayLike
    from ..metrics import Task


@dataclass(frozen=True)
class Dataset:
    """Features, label, sensitive attributes and the evaluation task of one data set.

    Parameters
    ----------
    name : str
        The data set's name.
    X : DataFrame
        Features; text columns have the ``category`` dtype.
    y : ndarray of int8
        The 0/1 label.
    sensitive : DataFrame
        The sensitive attributes, readable labels as ``category`` columns.
    task : Task
        The accuracy and fairness metrics to evaluate on.
    source : str, default=""
        Where the data comes from, and its licence.
    held_out : ndarray of int or None, default=None
        Row positions the file marks as held out, else None.
    unlabelled : int, default=0
        Rows of the file left out because their label was missing.
    """

    name: str
    X: pd.DataFrame
    y: np.ndarray
    sensitive: pd.DataFrame
    task: Task
    source: str = field(default="")
    #: Row positions the file marks as held out (``load_table(..., holdout=COLUMN)``), else ``None``.
    held_out: np.ndarray | None = field(default=None, repr=False, compare=False)
    unlabelled: int = field(default=0, repr=False, compare=False)

    def __repr__(self) -> str:
        return (
            f"Dataset({self.name!r}, rows={len(self.y)}, features={self.X.shape[1]}, "
            f"positive_rate={self.y.mean():.3f}, sensitive={list(self.sensitive.columns)}, task='{self.task}')"
        )


def _categorise(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns become ``category``; numbers stay numbers."""
    frame = frame.copy()
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            frame[column] = frame[column].astype("category")
    return frame


def _finish(name: str, features: pd.DataFrame, y: ArrayLike, sensitive: pd.DataFrame, task: Task, source: str,
            drop_sensitive: bool) -> Dataset:
    features = features.reset_index(drop=True)
    if drop_sensitive:
        features = features.drop(columns=[c for c in sensitive.columns if c in features.columns])
    sensitive = sensitive.reset_index(drop=True).astype("category")
    return Dataset(name, _categorise(features), np.asarray(y, dtype=np.int8), sensitive, task, source)


ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
]


ADULT_POSITIVE = {"<=50K": "income <= 50K", ">50K": "income > 50K"}


def load_adult(*, positive: str = "<=50K", drop_sensitive: bool = False, keep_missing: bool = False) -> Dataset:
    """UCI Adult (train and test files together, 45,222 rows without missing values).

    The Fairband paper's task (its Table 2) is assistive: label 1 is income **<= 50K** (people
    eligible for a social programme), accuracy = precision at 50% TPR, fairness = TPR ratio over
    sex. ``positive=">50K"`` gives the common income-prediction label with the same metrics.
    Sensitive: ``sex`` (Female/Male) and ``race``. The paper and this loader drop the 3,620 rows with a ``?`` in
    workclass, occupation or native-country; ``keep_missing=True`` keeps all 48,842, those values missing.

    Parameters
    ----------
    positive : {"<=50K", ">50K"}, default="<=50K"
        The income class that is label 1 (it also names the task's positive outcome).
    drop_sensitive : bool, default=False
        Drop the sensitive columns from the features.
    keep_missing : bool, default=False
        Keep the rows with missing values (as missing values of their category columns).

    Returns
    -------
    Dataset
        The data and its task.

    Examples
    --------
    >>> data = load_adult()
    >>> data.X.shape, round(float(data.y.mean()), 3), str(data.task)
    ((45222, 14), 0.752, 'precision@tpr=0.5,ratio=tpr')
    >>> data.task.positive, round(float(load_adult(positive=">50K").y.mean()), 3)
    ('income <= 50K', 0.248)
    """
    if positive not in ADULT_POSITIVE:
        raise InputError(f"positive must be one of {sorted(ADULT_POSITIVE)}, got {positive!r}")
    parts = []
    for filename, skip in (("adult.data.gz", 0), ("adult.test.gz", 1)):
        with data_path(filename).open("rb") as handle:
            parts.append(
                pd.read_csv(handle, compression="gzip", header=None, names=ADULT_COLUMNS, skiprows=skip,
                            skipinitialspace=True, na_values="?")
            )
    frame = pd.concat(parts, ignore_index=True)
    frame = frame if keep_missing else frame.dropna()
    y = frame.pop("income").str.rstrip(".").eq(positive).to_numpy()
    task = Task("precision", "tpr", 0.5, "tpr", ("sex",), positive=ADULT_POSITIVE[positive])
    return _finish("adult", frame, y, frame[["sex", "race"]], task, "UCI Adult, CC BY 4.0", drop_sensitive)


COMPAS_FEATURES = [
    "sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count",
    "priors_count", "c_charge_degree",
]


def load_compas(*, fpr: float = 0.1, drop_sensitive: bool = False) -> Dataset:
    """ProPublica COMPAS two-year recidivism, with ProPublica's filter (6,172 rows).

    The Fairband paper's task (its Table 2) is punitive: label 1 = re-offends within two years,
    accuracy = precision at a fixed FPR, fairness = FPR ratio over race, with race split into
    Caucasian vs everyone else. The paper's text gives 2% FPR; its published logs used 10%, the
    default here (``fpr=0.02`` for the text's). The logs' FPR ratios take exactly the values two
    groups with this data's Caucasian / non-Caucasian shares of negatives produce (see
    ``docs/fairband/paper_tasks.md``).

    Features: demographics (``race`` with all six recorded values), juvenile and prior counts,
    charge degree; COMPAS's own scores are left out. Sensitive: ``race`` (Caucasian /
    non-Caucasian) and ``sex``.

    Parameters
    ----------
    fpr : float, default=0.1
        The false positive rate in (0, 1) at which precision is read.
    drop_sensitive : bool, default=False
        Drop the sensitive columns from the features.

    Returns
    -------
    Dataset
        The data and its task.

    Examples
    --------
    >>> data = load_compas()
    >>> len(data.y), sorted(data.sensitive["race"].cat.categories), str(data.task)
    (6172, ['Caucasian', 'non-Caucasian'], 'precision@fpr=0.1,ratio=fpr')
    >>> str(load_compas(fpr=0.02).task)
    'precision@fpr=0.02,ratio=fpr'
    """
    if isinstance(fpr, bool) or not isinstance(fpr, (int, float)) or not 0 < fpr < 1:
        raise InputError(f"fpr must be a share in (0, 1), got {fpr!r}")
    with data_path("compas-scores-two-years.csv.gz").open("rb") as handle:
        frame = pd.read_csv(handle, compression="gzip")
    keep = (frame["days_b_screening_arrest"].between(-30, 30) & (frame["is_recid"] != -1)
            & (frame["c_charge_degree"] != "O") & (frame["score_text"] != "N/A"))
    frame = frame.loc[keep]
    features = frame[COMPAS_FEATURES].copy()
    sensitive = pd.DataFrame({
        "race": np.where(features["race"] == "Caucasian", "Caucasian", "non-Caucasian"),
        "sex": features["sex"].to_numpy(),
    })
    task = Task("precision", "fpr", float(fpr), "fpr", ("race",), positive="re-offends within two years")
    return _finish("compas", features, frame["two_year_recid"], sensitive, task,
                   "ProPublica compas-analysis (Angwin et al. 2016)", drop_sensitive)


GERMAN_COLUMNS = [
    "checking_status", "duration", "credit_history", "purpose", "credit_amount", "savings",
    "employment", "installment_rate", "personal_status", "other_debtors", "residence_since",
    "property", "age", "other_installment_plans", "housing", "existing_credits", "job",
    "people_liable", "telephone", "foreign_worker", "credit",
]
GERMAN_SEX = {"A91": "male", "A92": "female", "A93": "male", "A94": "male", "A95": "female"}


def load_german(*, drop_sensitive: bool = False) -> Dataset:
    """UCI Statlog German credit (1,000 rows, UCI's coded values kept as categories).

    Label: good credit (1) vs bad (0). Sensitive: ``sex`` (from personal status A91-A95)
    and ``age_group`` (<=25 / >25). Task: precision at 50% TPR, TPR ratio over sex: of
    the applicants who would repay, each sex should be approved at the same rate.

    Parameters
    ----------
    drop_sensitive : bool, default=False
        Drop the sensitive columns from the features.

    Returns
    -------
    Dataset
        The data and its task.

    Examples
    --------
    >>> data = load_german()
    >>> len(data.y), int(data.y.sum())
    (1000, 700)
    """
    with data_path("german.data.gz").open("rb") as handle:
        frame = pd.read_csv(handle, compression="gzip", sep=" ", header=None, names=GERMAN_COLUMNS)
    y = (frame.pop("credit") == 1).to_numpy()
    sensitive = pd.DataFrame({
        "sex": frame["personal_status"].map(GERMAN_SEX),
        "age_group": np.where(frame["age"] > 25, ">25", "<=25"),
    })
    task = Task("precision", "tpr", 0.5, "tpr", ("sex",), positive="good credit")
    features = frame.assign(sex=sensitive["sex"])
    return _finish("german", features, y, sensitive, task, "UCI Statlog German credit, CC BY 4.0", drop_sensitive)


def load_bank(*, drop_sensitive: bool = False) -> Dataset:
    """UCI Bank Marketing, UCI's 10% sample (4,521 rows).

    Label: the client subscribed a term deposit. Sensitive: ``age_group`` (<65 / >=65)
    and ``marital``. Task: precision at 50% TPR, TPR ratio over age group: clients who
    would subscribe should be reached at the same rate whatever their age.

    Parameters
    ----------
    drop_sensitive : bool, default=False
        Drop the sensitive columns from the features.

    Returns
    -------
    Dataset
        The data and its task.

    Examples
    --------
    >>> data = load_bank()
    >>> len(data.y), int((data.sensitive["age_group"] == ">=65").sum())
    (4521, 89)
    """
    with data_path("bank.csv.gz").open("rb") as handle:
        frame = pd.read_csv(handle, compression="gzip", sep=";")
    y = frame.pop("y").eq("yes").to_numpy()
    sensitive = pd.DataFrame({
        "age_group": np.where(frame["age"] >= 65, ">=65", "<65"),
        "marital": frame["marital"],
    })
    features = frame.assign(age_group=sensitive["age_group"])
    task = Task("precision", "tpr", 0.5, "tpr", ("age_group",), positive="subscribes a term deposit")
    return _finish("bank", features, y, sensitive, task, "UCI Bank Marketing (bank.csv), CC BY 4.0", drop_sensitive)


CREDIT_SEX = {1: "male", 2: "female"}
CREDIT_EDUCATION = {1: "graduate school", 2: "university", 3: "high school"}
CREDIT_MARRIAGE = {1: "married", 2: "single"}


def load_credit_default(*, drop_sensitive: bool = False) -> Dataset:
    """UCI default of credit card clients, Taiwan (30,000 rows).

    Label: default next month. Sensitive, as readable labels: ``SEX``, ``EDUCATION``
    (undocumented codes 0, 4, 5, 6 become "other") and ``MARRIAGE`` (0 and 3 become
    "other"). Task: recall at 10% FPR, FPR ratio over SEX: a false alarm denies credit,
    so it should fall on each sex at the same rate.

    Parameters
    ----------
    drop_sensitive : bool, default=False
        Drop the sensitive columns from the features.

    Returns
    -------
    Dataset
        The data and its task.

    Examples
    --------
    >>> data = load_credit_default()
    >>> len(data.y), sorted(data.sensitive["EDUCATION"].cat.categories)
    (30000, ['graduate school', 'high school', 'other', 'university'])
    """
    with data_path("default_credit_card_clients.csv.gz").open("rb") as handle:
        frame = pd.read_csv(handle, compression="gzip").drop(columns="ID")
    y = frame.pop("default.payment.next.month").to_numpy()
    frame["SEX"] = frame["SEX"].map(CREDIT_SEX)
    frame["EDUCATION"] = frame["EDUCATION"].map(CREDIT_EDUCATION).fillna("other")
    frame["MARRIAGE"] = frame["MARRIAGE"].map(CREDIT_MARRIAGE).fillna("other")
    task = Task("recall", "fpr", 0.1, "fpr", ("SEX",), positive="defaults next month")
    return _finish(
        "credit_default", frame, y, frame[["SEX", "EDUCATION", "MARRIAGE"]], task,
        "UCI default of credit card clients, CC BY 4.0", drop_sensitive,
    )


STUDENT_FILES = {"mat": "student_mat_new.csv.gz", "por": "student_por_new.csv.gz"}


def load_student(subject: str = "mat", *, drop_sensitive: bool = False) -> Dataset:
    """UCI Student Performance: mathematics (``subject="mat"``, 395 rows) or Portuguese (``"por"``, 649).

    Label: ``class`` is "High" (the bundled copy's binarised final grade). Sensitive, as
    readable labels: ``sex`` (female/male), ``address`` (urban/rural) and ``age_group``
    (under 18 / 18+; raw ages 20-22 have 1-6 rows each, too few for a group). ``age`` stays
    among the features. Task: precision at 50% TPR, TPR ratio over sex.

    Parameters
    ----------
    subject : {"mat", "por"}, default="mat"
        Mathematics or Portuguese.
    drop_sensitive : bool, default=False
        Drop the sensitive columns from the features.

    Returns
    -------
    Dataset
        The data and its task.

    Examples
    --------
    >>> data = load_student("mat")
    >>> len(data.y), int(data.y.sum()), sorted(data.sensitive["age_group"].cat.categories)
    (395, 265, ['18+', 'under 18'])
    """
    if subject not in STUDENT_FILES:
        raise InputError(f"subject must be one of {sorted(STUDENT_FILES)}, got {subject!r}")
    with data_path(STUDENT_FILES[subject]).open("rb") as handle:
        frame = pd.read_csv(handle, compression="gzip")
    y = frame.pop("class").eq("High").to_numpy()
    sensitive = pd.DataFrame({
        "sex": frame["sex"].map({"F": "female", "M": "male"}),
        "address": frame["address"].map({"U": "urban", "R": "rural"}),
        "age_group": np.where(frame["age"] >= 18, "18+", "under 18"),
    })
    features = frame.assign(sex=sensitive["sex"], address=sensitive["address"], age_group=sensitive["age_group"])
    task = Task("precision", "tpr", 0.5, "tpr", ("sex",), positive="final grade high")
    return _finish(f"student_{subject}", features, y, sensitive, task,
                   "UCI Student Performance (Cortez 2008), CC BY 4.0", drop_sensitive)


LOADERS: dict[str, Callable[..., Dataset]] = {
    "adult": load_adult,
    "compas": load_compas,
    "german": load_german,
    "bank": load_bank,
    "credit_default": load_credit_default,
    "student_mat": partial(load_student, "mat"),
    "student_por": partial(load_student, "por"),
}


def load_dataset(name: str, **options: Any) -> Dataset:
    """Load a bundled data set by name (one of ``LOADERS``).

    Parameters
    ----------
    name : str
        A key of ``LOADERS``.
    **options
        Keyword arguments of that loader (e.g. ``drop_sensitive``).

    Returns
    -------
    Dataset
        The data and its task.

    Raises
    ------
    InputError
        If ``name`` is not a bundled data set.

    Examples
    --------
    >>> load_dataset("german").name
    'german'
    """
    if name not in LOADERS:
        raise InputError(f"unknown dataset {name!r}; choose one of {sorted(LOADERS)}")
    return LOADERS[name](**options)
