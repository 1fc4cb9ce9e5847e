"""docs/own_objective.md runs as written: its Python snippets, taken from the page in order, run as one script
from an empty folder, register the pick, leave no MLflow run RUNNING and print no warning."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow import MlflowClient

pytestmark = pytest.mark.slow
DOC = Path(__file__).resolve().parents[2] / "docs" / "own_objective.md"


def snippets() -> list[str]:
    """The page's ```python blocks, in order."""
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_page_has_the_walkthrough_in_order():
    blocks = snippets()
    assert len(blocks) == 5
    assert "def make_pipeline" in blocks[0] and "def objective" in blocks[1] and "study.optimize" in blocks[2]
    assert "tracker.finish(study)" in blocks[3] and "fresh_rows.csv" in blocks[4]


def test_the_snippets_run_as_written(tmp_path):
    script = tmp_path / "walkthrough.py"
    script.write_text("\n\n".join(snippets()))
    # OMP_NUM_THREADS: the boosting's OpenMP threads would fight over a busy two-core machine
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                            timeout=1200, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "registered: models:/own-compas@champion (version 1)" in result.stdout
    assert re.search(r"^22 fits: 22 finished", result.stdout, re.M), result.stdout
    assert not re.search(r"Warning|warn\(", result.stderr), result.stderr[-3000:]
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = [run for experiment in client.search_experiments() for run in
            client.search_runs([experiment.experiment_id], max_results=1000)]
    assert len(runs) > 22 and "RUNNING" not in {run.info.status for run in runs}
    (parent,) = [run for run in runs if run.data.tags.get("fairops.role") == "study"]
    assert parent.info.status == "FINISHED"  # tracker.finish(study)
    assert (tmp_path / "fresh_rows.csv").stat().st_size > 0
