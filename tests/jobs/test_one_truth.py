"""One model, one set of rows, one set of figures: what ``fairops tune`` prints of its pick, the pick's selection run
in MLflow, the registered version's tags, the promotion gate and the monitor all show the same accuracy and
fairness, with the same intervals at the same level, on the validation rows and on the test rows."""

import contextlib
import io
import re

import pytest
from mlflow.tracking import MlflowClient

from fairops.cli import main
from fairops.datasets import load_german
from fairops.registry import monitor, promote
from fairops.tuning import FairnessObjective
from tests.conftest import GERMAN_TUNE, copy_project

pytestmark = pytest.mark.slow
NAME = "fairops-german"
TUNE = GERMAN_TUNE
FIGURE = re.compile(r"(\d\.\d{4}) \[(\d\.\d{4}), (\d\.\d{4})\]")


def _printed(text: str) -> dict:
    """The pick's row of tune's summary: ``{(rows, figure): (value, low, high)}`` as printed (4 decimals)."""
    line = next(line for line in text.splitlines() if line.startswith("Fairband pick"))
    cells = [tuple(float(x) for x in triple) for triple in FIGURE.findall(line)]
    assert len(cells) == 4, line
    return dict(zip([(rows, figure) for rows in ("validation", "test") for figure in ("accuracy", "fairness")], cells))


def test_tune_mlflow_the_registry_the_gate_and_the_monitor_show_one_models_figures_alike(german_fits, tmp_path):
    project = copy_project(german_fits, tmp_path / "project")  # the fits made once; this run refits and registers
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*TUNE, "--project-dir", str(project)]) == 0
    printed, uri = _printed(out.getvalue()), f"sqlite:///{project}/mlflow.db"
    assert "(both models refit on all training rows; value [95% confidence interval]" in out.getvalue()
    client = MlflowClient(uri)
    version = client.get_model_version(NAME, "1")
    tags, run = version.tags, client.get_run(version.run_id).data
    assert run.tags["figures"].startswith("the registered model (refit) on the validation and test rows")
    shown = {}
    for rows in ("validation", "test"):
        for figure in ("accuracy", "fairness"):
            shown["tags", rows, figure] = tuple(float(tags[f"fairops.{rows}_{figure}{end}"])
                                                for end in ("", "_lower", "_upper"))
            shown["run", rows, figure] = tuple(run.metrics[f"{rows}_{figure}{end}"] for end in ("", "_low", "_high"))
            assert shown["tags", rows, figure] == pytest.approx(shown["run", rows, figure], abs=1e-12)
            assert shown["run", rows, figure] == pytest.approx(printed[rows, figure], abs=5e-5)
    assert (tags["fairops.fairness_line"], tags["fairops.interval_level"]) == ("0.8", "0.95")
    assert float(tags["accuracy"]) == pytest.approx(shown["run", "validation", "accuracy"][0], rel=1e-5)

    X, y, sensitive = FairnessObjective(load_german(), families=["logistic_regression"], seed=0,
                                        max_train_rows=300).rows("test")
    client.delete_registered_model_alias(NAME, "champion")  # the gate scores a candidate with no champion beside it
    verdict = promote(NAME, X, y, sensitive, candidate="1", tracking_uri=uri)
    gate = verdict.scores["candidate"]
    assert verdict.gate and gate["fairops_precision"] == pytest.approx(shown["tags", "test", "accuracy"][0], abs=1e-12)
    assert (gate["fairops_precision_lower"], gate["fairops_precision_upper"]) == pytest.approx(
        shown["tags", "test", "accuracy"][1:], abs=1e-12)
    assert tuple(gate[f"fairops_tpr_ratio{end}"] for end in ("", "_lower", "_upper")) == pytest.approx(
        shown["tags", "test", "fairness"], abs=1e-12)
    assert f"  on {len(y)} gate rows" in verdict.text()

    (window,) = monitor(NAME, [(X, y, sensitive)], version="1", tracking_uri=uri, out=io.StringIO()).windows
    assert (window.accuracy, window.accuracy_lower, window.accuracy_upper) == pytest.approx(
        shown["tags", "test", "accuracy"], abs=1e-12)
    assert (window.fairness, window.fairness_lower, window.fairness_upper) == pytest.approx(
        shown["tags", "test", "fairness"], abs=1e-12)
