"""Raw table rows -> the feature matrix FairLOF measures distances on, as a fitted, saveable step.

The encoding is what a served FairLOF model must repeat on raw rows, so its fitted state is plain
JSON (:meth:`FeatureEncoder.to_dict` / :meth:`FeatureEncoder.from_dict`): the input columns in
order, the one-hot categories, the standardisation means and scales, and which columns are
sensitive.

Columns: numeric (and boolean) columns are used as they are; text / categorical columns are
dropped (``categorical="drop"``) or one-hot encoded (``"onehot"``, one 0/1 column per value seen
at fit). Sensitive columns are left out of the distance unless ``sensitive_in_distance=True``, in
which case each one is one-hot encoded. ``exclude`` names further columns to leave out (a label,
a column a sensitive attribute was derived from). Every feature is then standardised to mean 0
and sd 1 on the fitted rows; constant features are dropped.

>>> import pandas as pd
>>> raw = pd.DataFrame({"income": [10.0, 20.0, 30.0, 40.0], "job": ["a", "b", "a", "b"], "sex": ["f", "m", "m", "f"]})
>>> encoder = FeatureEncoder(categorical="onehot", sensitive=["sex"]).fit(raw)
>>> encoder.feature_names_out_
['income', 'job=a', 'job=b']
>>> encoder.transform(raw.iloc[:2]).round(3).to_numpy().tolist()
[[-1.342, 1.0, -1.0], [-0.447, -1.0, 1.0]]
>>> FeatureEncoder.from_dict(encoder.to_dict()).sensitive_frame(raw.iloc[:1]).to_dict("list")
{'sex': ['f']}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Self

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._param_checks import Options, Satisfies, checked_params
from ..errors import InputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._typing import NDArray

CATEGORICAL = ("drop", "onehot")
_COLUMN_NAMES = Satisfies(lambda value: isinstance(value, (list, tuple, np.ndarray, pd.Index)),
                          "a list of column names")
FORMAT = "fairops-feature-encoder/1"


def _is_numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)


def _as_text(column: pd.Series) -> pd.Series:
    """Values as text; integer-valued floats lose their '.0' so 1 and 1.0 are the same category."""
    if pd.api.types.is_float_dtype(column) and np.all(np.mod(column.dropna(), 1) == 0):
        column = column.astype("Int64")
    return column.astype(str)


class FeatureEncoder(TransformerMixin, BaseEstimator):
    """Fitted encoding of raw rows into standardised FairLOF features (see the module docstring).

    Parameters
    ----------
    categorical : {"drop", "onehot"}, default="drop"
        What happens to text / categorical feature columns.
    sensitive : sequence of str, default=()
        Names of the sensitive columns (passed to FairLOF as ``sensitive_features``).
    sensitive_in_distance : bool, default=False
        Also put the sensitive columns, one-hot encoded, into the features.
    exclude : sequence of str, default=()
        Further column names that are not features.

    Attributes
    ----------
    numeric_columns_ : list of str
        The numeric feature columns.
    categories_ : dict
        ``{column: values}`` of the one-hot encoded columns, in feature order.
    feature_names_out_ : list of str
        The output features.
    means_, scales_ : ndarray
        Per output feature.
    dropped_columns_ : list of str
        Unused text columns and constant features.
    input_columns_ : list of str
        What a raw row must hold.
    """

    _param_constraints = {
        "categorical": [Options(*CATEGORICAL)],
        "sensitive": [_COLUMN_NAMES],
        "sensitive_in_distance": [bool],
        "exclude": [_COLUMN_NAMES],
    }

    def __init__(self, categorical: Literal["drop", "onehot"] = "drop", sensitive: Sequence[str] = (),
                 sensitive_in_distance: bool = False, exclude: Sequence[str] = ()) -> None:
        self.categorical = categorical
        self.sensitive = sensitive
        self.sensitive_in_distance = sensitive_in_distance
        self.exclude = exclude

    def _check_params(self, frame: pd.DataFrame) -> None:
        checked_params(self)
        missing = [name for name in [*self.sensitive, *self.exclude] if name not in frame.columns]
        if missing:
            raise InputError(f"column(s) {missing} are not in the data; it has {list(frame.columns)}")

    def fit(self, frame: pd.DataFrame, y: None = None) -> Self:
        """Learn the columns, categories, means and scales from the raw rows ``frame`` (a DataFrame).

        Parameters
        ----------
        frame : DataFrame
            Raw rows.
        y : None
            Ignored.

        Returns
        -------
        self
            The fitted encoder.
        """
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame of raw rows, got {type(frame).__name__}")
        self._check_params(frame)
        sensitive, excluded = [str(c) for c in self.sensitive], {str(c) for c in self.exclude}
        numeric, categories, dropped = [], {}, []
        for name in frame.columns:
            column = frame[name]
            if name in excluded or (name in sensitive and not self.sensitive_in_distance):
                continue
            if name not in sensitive and _is_numeric(column):
                numeric.append(str(name))
            elif name in sensitive or self.categorical == "onehot":
                categories[str(name)] = sorted(_as_text(column.dropna()).unique().tolist())
            else:
                dropped.append(str(name))
        self.numeric_columns_, self.categories_ = numeric, categories
        self.sensitive_columns_ = sensitive
        used = set(numeric) | set(categories) | set(sensitive)
        self.input_columns_ = [str(c) for c in frame.columns if str(c) in used]
        encoded = self._encode(frame, standardise=False)
        scale = encoded.std(axis=0, ddof=0)
        constant = [str(c) for c in scale.index[scale <= 0]]
        encoded = encoded.loc[:, scale > 0]
        if encoded.shape[1] == 0:
            raise InputError("no usable feature column: FairLOF needs at least one numeric, non-constant feature "
                             "(try categorical='onehot')")
        self.feature_names_out_ = [str(c) for c in encoded.columns]
        self.means_ = encoded.mean(axis=0).to_numpy(dtype=np.float64)
        self.scales_ = encoded.std(axis=0, ddof=0).to_numpy(dtype=np.float64)
        self.dropped_columns_ = dropped + constant
        return self

    def _encode(self, frame: pd.DataFrame, standardise: bool) -> pd.DataFrame:
        missing = [name for name in [*self.numeric_columns_, *self.categories_] if name not in frame.columns]
        if missing:
            raise InputError(f"input lacks the feature column(s) {missing}; the encoder was fitted with "
                             f"{self.numeric_columns_ + list(self.categories_)}")
        parts = {}
        for name in self.numeric_columns_:
            try:
                parts[name] = pd.to_numeric(frame[name], errors="raise").astype(np.float64)
            except (TypeError, ValueError):
                raise InputError(f"feature column {name!r} must be numeric, got values such as "
                                 f"{frame[name].astype(str).unique()[:3].tolist()}") from None
        for name, values in self.categories_.items():
            text = _as_text(frame[name])
            unseen = sorted(set(text[frame[name].notna()]) - set(values))
            if unseen:
                raise InputError(f"feature column {name!r} holds value(s) {unseen[:5]} unseen at fit time; "
                                 f"known values: {values}")
            for value in values:
                parts[f"{name}={value}"] = (text == value).astype(np.float64).where(frame[name].notna())
        encoded = pd.DataFrame(parts, index=frame.index)
        holes = {c: int(n) for c, n in encoded.isna().sum().items() if n}
        if holes:
            raise InputError(f"feature column(s) with missing values {holes}; impute or drop them first")
        if not np.isfinite(encoded.to_numpy()).all():
            raise InputError("feature columns hold infinite values; clean them first")
        if not standardise:
            return encoded
        encoded = encoded[self.feature_names_out_]
        return (encoded - self.means_) / self.scales_

    def transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The standardised features of raw rows, columns ``feature_names_out_``, index reset.

        Parameters
        ----------
        frame : DataFrame
            Raw rows holding ``input_columns_``.

        Returns
        -------
        DataFrame
            The features.
        """
        check_is_fitted(self, "feature_names_out_")
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame of raw rows, got {type(frame).__name__}")
        return self._encode(frame, standardise=True).reset_index(drop=True)

    def get_feature_names_out(self, input_features: None = None) -> NDArray[np.object_]:
        """The output features' names.

        Parameters
        ----------
        input_features : None
            Ignored (scikit-learn's signature).

        Returns
        -------
        ndarray of object
            ``feature_names_out_``.
        """
        check_is_fitted(self, "feature_names_out_")
        return np.asarray(self.feature_names_out_, dtype=object)

    def sensitive_frame(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The sensitive columns of raw rows as text labels (what FairLOF was fitted with).

        Parameters
        ----------
        frame : DataFrame
            Raw rows holding the sensitive columns, without missing values.

        Returns
        -------
        DataFrame
            One text column per sensitive column, index reset.
        """
        check_is_fitted(self, "feature_names_out_")
        missing = [name for name in self.sensitive_columns_ if name not in frame.columns]
        if missing:
            raise InputError(f"input lacks the sensitive column(s) {missing}; the model records "
                             f"{self.sensitive_columns_}")
        sensitive = frame[self.sensitive_columns_]
        holes = [name for name in self.sensitive_columns_ if sensitive[name].isna().any()]
        if holes:
            raise InputError(f"sensitive column(s) {holes} have missing values")
        labels = {name: _as_text(sensitive[name]) for name in self.sensitive_columns_}
        return pd.DataFrame(labels).reset_index(drop=True)

    # ----------------------------------------------------------------- JSON
    def to_dict(self) -> dict:
        """The fitted encoding as JSON-able data (no code).

        Returns
        -------
        dict
            Format, parameters, columns, categories, features, means, scales and dropped columns.
        """
        check_is_fitted(self, "feature_names_out_")
        return {
            "format": FORMAT,
            "params": {"categorical": self.categorical, "sensitive": list(self.sensitive_columns_),
                       "sensitive_in_distance": self.sensitive_in_distance, "exclude": [str(c) for c in self.exclude]},
            "input_columns": list(self.input_columns_),
            "numeric_columns": list(self.numeric_columns_),
            "categories": {name: list(values) for name, values in self.categories_.items()},
            "features": list(self.feature_names_out_),
            "means": self.means_.tolist(),
            "scales": self.scales_.tolist(),
            "dropped_columns": list(self.dropped_columns_),
        }

    @classmethod
    def from_dict(cls, document: dict) -> FeatureEncoder:
        """Rebuild a fitted encoder from :meth:`to_dict`'s output; a malformed document raises ValueError.

        Parameters
        ----------
        document : dict
            What :meth:`to_dict` returned.

        Returns
        -------
        FeatureEncoder
            The fitted encoder.
        """
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise InputError(f"not a saved feature encoding (expected format {FORMAT!r})")
        try:
            encoder = cls(**document["params"])
            encoder.sensitive_columns_ = [str(c) for c in document["params"]["sensitive"]]
            encoder.input_columns_ = [str(c) for c in document["input_columns"]]
            encoder.numeric_columns_ = [str(c) for c in document["numeric_columns"]]
            encoder.categories_ = {str(k): [str(v) for v in values] for k, values in document["categories"].items()}
            encoder.feature_names_out_ = [str(c) for c in document["features"]]
            encoder.means_ = np.asarray(document["means"], dtype=np.float64)
            encoder.scales_ = np.asarray(document["scales"], dtype=np.float64)
            encoder.dropped_columns_ = [str(c) for c in document["dropped_columns"]]
        except (KeyError, TypeError) as error:
            raise InputError(f"saved feature encoding is incomplete: {error!r}") from None
        checked_params(encoder)
        n_features = len(encoder.feature_names_out_)
        if encoder.means_.shape != (n_features,) or encoder.scales_.shape != (n_features,) or not np.all(
            encoder.scales_ > 0
        ):
            raise InputError("saved feature encoding has means/scales that do not match its features")
        return encoder
