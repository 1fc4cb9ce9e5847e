"""Two tunes of a 3,000-row CSV of one's own with two sensitive attributes: both hold out the same rows (chosen
by content, not by the seed), and the promote command the second prints, pasted from another folder into a
fresh shell, gates on those rows only and refuses a challenger whose held-out fairness is 0. Each tune is a
22-fit Hyperband (eta 3, s_max 2): the rows and the gate, not the search, are under test."""

import contextlib
import io
import json
import os
import re
import subprocess

import mlflow
import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from fairops.cli import main
from fairops.datasets import load_adult
from fairops.registry._row_record import ROWS_TAG

pytestmark = pytest.mark.slow
CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin"  # a fresh shell's PATH


def _own_csv(path):
    """3,000 Adult rows with sex and a 'segment' as sensitive columns, and a 'flag' feature that tells a model
    which of segment B's rows are negatives: a learner blind to fairness then has no false positive in B, so
    its FPR ratio is 0, while a fairness-constrained one can spread them."""
    data = load_adult(positive=">50K")
    rng = np.random.default_rng(0)
    rows = rng.choice(len(data.y), 3000, replace=False)
    frame = data.X.iloc[rows].reset_index(drop=True).astype(object).drop(columns=["race"])
    y = data.y[rows]
    segment = np.where(rng.random(3000) < 0.5, "A", "B")
    frame = frame.assign(segment=segment, flag=((segment == "B") & (y == 0)).astype(int), high_income=y)
    frame.to_csv(path, index=False)


def _tune(project, path, seed, families):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["tune", "--data", str(path), "--target", "high_income", "--sensitive", "sex,segment",
                     "--task", "recall@fpr=0.05,ratio=fpr", "--families", families, "--seed", str(seed),
                     "--s-max", "2", "--project-dir", str(project), "--no-progress"])
    assert code == 0, out.getvalue()
    return out.getvalue()


def test_the_printed_gate_uses_the_held_out_rows_and_refuses_a_zero_fairness_challenger(tmp_path):
    path, project, elsewhere = tmp_path / "credit.csv", tmp_path / "project", tmp_path / "elsewhere"
    elsewhere.mkdir()
    _own_csv(path)
    first = _tune(project, path, 0, "exponentiated_gradient")
    second = _tune(project, path, 1, "logistic_regression")
    (held_first,) = re.findall(r"^\(test: (\d+) rows held out, chosen by row content, the same in every tune of this "
                               r"file; .*\)$", first, re.M)
    (held_second,) = re.findall(r"^\(test: (\d+) rows held out", second, re.M)
    assert held_first == held_second and 550 <= int(held_first) <= 650  # 20% of the rows, whatever the seed
    assert "registered: models:/fairops-credit@challenger (version 2)" in second
    (gate,) = re.findall(r"^gate it .*:\n  (.+)$", second, re.M)
    assert gate.startswith("/") and f"--data {path}" in gate

    result = subprocess.run(["bash", "-c", gate], cwd=elsewhere, capture_output=True, text=True, timeout=600,
                            env={"PATH": CLEAN_PATH, "HOME": os.environ["HOME"]})
    text = result.stdout + result.stderr
    assert result.returncode == 3, text
    held = int(held_first)
    assert (f"left out {3000 - held} of 3000 rows seen in training or validation (version 2: {3000 - held}, "
            f"version 1: {3000 - held};") in text
    assert f"the gate scores the other {held}" in text
    assert f"  on {held} gate rows, each decided as the version serves it (sex: " in text
    accuracy = r"0\.\d{4} \[0\.\d{4}, [01]\.\d{4}\]"
    (candidate,) = re.findall(rf"^  candidate +{accuracy}   (\d\.\d{{4}}) \[(\d\.\d{{4}}), (\d\.\d{{4}})\]$", text,
                              re.M)
    assert float(candidate[0]) == 0.0 and float(candidate[2]) < 0.8, text  # held-out fairness 0, beyond noise
    assert "refused because fairness_upper: its fairness ratio is below 0.8000 beyond noise" in text
    assert re.search(rf"^  champion +{accuracy}   \d\.\d{{4}} \[", text, re.M), text  # a refusal shows both models

    client = MlflowClient(f"sqlite:///{project}/mlflow.db")
    assert str(client.get_model_version_by_alias("fairops-credit", "champion").version) == "1"
    records = [json.loads(client.get_model_version("fairops-credit", v).tags[ROWS_TAG]) for v in ("1", "2")]
    assert [(r["seen"], r["held_out"]) for r in records] == [(3000 - held, held)] * 2
    run_id = client.get_model_version("fairops-credit", "2").tags["fairops.gate_run_id"]
    gate_json = json.loads(open(mlflow.artifacts.download_artifacts(
        run_id=run_id, artifact_path="gate.json", tracking_uri=f"sqlite:///{project}/mlflow.db")).read())
    assert (gate_json["rows"], gate_json["rows_left_out"]) == (held, 3000 - held)
    assert sorted(p.name for p in elsewhere.iterdir()) == []
    mlflow.set_tracking_uri(None)
