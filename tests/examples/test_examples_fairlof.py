"""The FairLOF path example runs end to end and reports what it promises."""

import importlib.util
from pathlib import Path

import numpy as np
from sklearn.neighbors import LocalOutlierFactor

from fairops.fairlof import guide_lambda
from fairops.metrics import euclidean_disparity

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fairlof_path.py"


def load_example():
    spec = importlib.util.spec_from_file_location("fairlof_path", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fairlof_path_example(capsys):
    example = load_example()
    detector, path = example.main([])
    out = capsys.readouterr().out

    assert path["lambda"].round(1).tolist() == [round(0.1 * i, 1) for i in range(11)]
    assert path["jaccard"].iloc[0] == 1.0 and path["preservation"].iloc[0] == 1.0
    assert detector.fitted_lambda_ == guide_lambda(path["lambda"], path["jaccard"], 0.9)

    X, sensitive = example.make_data()
    assert X.shape == (649, 60) and list(sensitive.columns) == ["sex", "address", "age_group"]
    assert {"sex=female", "address=rural", "age_group=18+", "school=GP"} <= set(X.columns)  # S inside the distance
    lof = LocalOutlierFactor(n_neighbors=5).fit(X.to_numpy())  # lambda = 0 row = plain LOF's outliers
    plain_top = np.argsort(lof.negative_outlier_factor_, kind="stable")[: detector.top_t_]
    assert path["euclidean_disparity"].iloc[0] == euclidean_disparity(sensitive, plain_top)

    guide = path.loc[np.isclose(path["lambda"], detector.fitted_lambda_)].iloc[0]
    assert guide["euclidean_disparity"] < path["euclidean_disparity"].iloc[0]  # fairer at the guide point
    assert f"guide point for Jaccard 0.9: lambda={detector.fitted_lambda_:.1f}" in out
    assert "address: urban" in out


def test_fairlof_path_example_other_target():
    detector, path = load_example().main(["--target-jaccard", "0.8", "--neighbors", "10"])
    assert detector.n_neighbors_ == 10
    assert detector.fitted_lambda_ == guide_lambda(path["lambda"], path["jaccard"], 0.8)
