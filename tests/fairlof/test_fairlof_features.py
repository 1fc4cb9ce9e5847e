"""The raw-row encoding a FairLOF model carries: against pandas by hand, through JSON, and its refusals."""

import json

import numpy as np
import pandas as pd
import pytest

from fairops.fairlof._features import FeatureEncoder


@pytest.fixture(scope="module")
def raw():
    rng = np.random.default_rng(2)
    n = 200
    return pd.DataFrame({
        "amount": rng.gamma(2.0, 100.0, n),
        "count": rng.integers(0, 5, n),
        "flag": rng.random(n) < 0.3,
        "kind": pd.Categorical(rng.choice(["x", "y", "z"], n)),
        "constant": np.ones(n),
        "sex": rng.choice([1, 2], n),  # a numeric code as a sensitive column
        "label": rng.integers(0, 2, n),
    })


@pytest.mark.parametrize("categorical", ["drop", "onehot"])
@pytest.mark.parametrize("inside", [False, True])
def test_encoding_equals_pandas_by_hand(raw, categorical, inside):
    encoder = FeatureEncoder(categorical=categorical, sensitive=["sex"], sensitive_in_distance=inside,
                             exclude=["label"]).fit(raw)
    parts = [raw[["amount", "count", "flag"]].astype(float)]
    if categorical == "onehot":
        parts.append(pd.get_dummies(raw["kind"], prefix="kind", prefix_sep="=", dtype=float))
    if inside:
        parts.append(pd.get_dummies(raw["sex"].astype(str), prefix="sex", prefix_sep="=", dtype=float))
    expected = pd.concat(parts, axis=1)
    expected = (expected - expected.mean()) / expected.std(ddof=0)
    got = encoder.transform(raw)
    assert list(got.columns) == list(expected.columns) == encoder.feature_names_out_
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-12, atol=1e-12)
    assert "constant" in encoder.dropped_columns_ and "label" not in encoder.input_columns_
    assert ("kind" in encoder.input_columns_) == (categorical == "onehot")
    assert encoder.sensitive_frame(raw)["sex"].tolist()[:3] == [str(v) for v in raw["sex"][:3]]
    restored = FeatureEncoder.from_dict(json.loads(json.dumps(encoder.to_dict())))
    np.testing.assert_array_equal(restored.transform(raw.iloc[::-1]).to_numpy(), got.iloc[::-1].to_numpy())
    # a served request carries the integer code as 2.0 or "2": the same category
    assert restored.sensitive_frame(raw.assign(sex=raw["sex"].astype(float)))["sex"].equals(
        encoder.sensitive_frame(raw)["sex"])


def test_refusals_name_the_argument(raw):
    with pytest.raises(ValueError, match=r"categorical must be one of \['drop', 'onehot'\], got 'ordinal'"):
        FeatureEncoder(categorical="ordinal").fit(raw)
    with pytest.raises(ValueError, match="column\\(s\\) \\['race'\\] are not in the data"):
        FeatureEncoder(sensitive=["race"]).fit(raw)
    with pytest.raises(TypeError, match="frame must be a pandas DataFrame"):
        FeatureEncoder().fit(raw.to_numpy())
    with pytest.raises(ValueError, match="no usable feature column"):
        FeatureEncoder(sensitive=["sex"]).fit(raw[["kind", "constant", "sex"]])
    with pytest.raises(ValueError, match="feature column\\(s\\) with missing values \\{'amount': 1\\}"):
        FeatureEncoder().fit(raw.assign(amount=[np.nan] + raw["amount"].tolist()[1:]))
    encoder = FeatureEncoder(categorical="onehot", sensitive=["sex"]).fit(raw)
    with pytest.raises(ValueError, match="input lacks the feature column\\(s\\) \\['count'\\]"):
        encoder.transform(raw.drop(columns="count"))
    with pytest.raises(ValueError, match="sensitive column\\(s\\) \\['sex'\\] have missing values"):
        encoder.sensitive_frame(raw.assign(sex=[None] * len(raw)))
    with pytest.raises(ValueError, match="not a saved feature encoding"):
        FeatureEncoder.from_dict({"format": "something else"})
    broken = encoder.to_dict()
    broken["scales"] = broken["scales"][:-1]
    with pytest.raises(ValueError, match="means/scales that do not match its features"):
        FeatureEncoder.from_dict(broken)
    del broken["features"]
    with pytest.raises(ValueError, match="saved feature encoding is incomplete"):
        FeatureEncoder.from_dict(broken)
