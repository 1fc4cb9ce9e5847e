"""examples/own_pipeline.py, as an engineer runs it: two tunes of their own Pipeline and objective (seeds 0 and
1), then the printed serve command answered over HTTP and the printed promote command gating the challenger on
the held-out rows the example wrote; no warning printed that the user did not cause."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest

from tests.services import free_port, post_frame, start, stop, wait_ready

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "own_pipeline.py"
MODEL = "own-compas"


def _run_example(workdir: Path, seed: int) -> subprocess.CompletedProcess:
    # OMP_NUM_THREADS: the boosting's OpenMP threads would fight over a busy two-core machine
    return subprocess.run([sys.executable, str(EXAMPLE), "--workdir", str(workdir), "--seed", str(seed),
                           "--s-max", "2"], capture_output=True, text=True, timeout=900, cwd=workdir.parent,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("own") / "own-project"
    first, second = _run_example(workdir, 0), _run_example(workdir, 1)
    for run in (first, second):
        assert run.returncode == 0, run.stderr[-3000:]
    return {"workdir": workdir, "first": first, "second": second, "uri": f"sqlite:///{workdir / 'mlflow.db'}"}


def _printed_command(stdout: str, label: str) -> list[str]:
    (line,) = [line for line in stdout.splitlines() if line.startswith(f"{label}: ")]
    return shlex.split(line[len(label) + 2:])


def test_both_tunes_register_and_print_no_warning_the_user_did_not_cause(runs):
    assert f"registered: models:/{MODEL}@champion (version 1)" in runs["first"].stdout
    assert f"registered: models:/{MODEL}@challenger (version 2)" in runs["second"].stdout
    for run in (runs["first"], runs["second"]):
        assert re.search(r"^22 fits: 22 finished", run.stdout, re.M), run.stdout
        assert not re.search(r"Warning|warn\(", run.stderr), run.stderr[-3000:]
    client = mlflow.MlflowClient(runs["uri"])
    parents = [run for experiment in client.search_experiments() for run in client.search_runs(
        [experiment.experiment_id], "tags.`fairops.role` = 'study'")]
    assert len(parents) == 2 and {run.info.status for run in parents} == {"FINISHED"}  # tracker.finish


def test_the_registered_pick_is_the_robust_rule_over_record_outcome(runs):
    client = mlflow.MlflowClient(runs["uri"])
    version = client.get_model_version(MODEL, "1")
    assert version.tags["selection_rule"].startswith("robust")
    printed = re.search(r"robust pick: trial (\d+)", runs["first"].stdout)
    assert printed and client.get_run(version.run_id).data.tags["fairops.trial_number"] == printed.group(1)


def test_the_printed_serve_command_serves_the_champion(runs, tmp_path):
    command = _printed_command(runs["first"].stdout, "serve it")
    assert "--port" not in command  # fairops serve chooses a free port itself
    port = free_port()
    command += ["--port", str(port)]  # one the test knows, to call
    rows = pd.read_csv(runs["workdir"] / "fresh_rows.csv").head(25)
    features = rows.drop(columns=["reoffended", "group_race", "group_sex"])
    mlflow.set_tracking_uri(runs["uri"])
    try:
        expected = mlflow.pyfunc.load_model(f"models:/{MODEL}@champion").predict(features, params={"answer": "scores"})
    finally:
        mlflow.set_tracking_uri(None)
    log = tmp_path / "serve.log"
    process = start(command, dict(os.environ), open(log, "w"))
    try:
        wait_ready(f"http://127.0.0.1:{port}/ping", process, log)
        status, answer = post_frame(f"http://127.0.0.1:{port}/invocations", features)
    finally:
        stop(process)
    assert status == 200, answer
    served = [row["probability"] for row in answer["predictions"]]
    np.testing.assert_allclose(served, expected["probability"].to_numpy(), rtol=0, atol=1e-12)


def test_the_printed_promote_command_gates_the_challenger_on_held_out_rows(runs):
    command = _printed_command(runs["second"].stdout, "gate a challenger")
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd="/")
    assert result.returncode in (0, 3), result.stderr[-3000:]  # 0: passed, 3: refused by the gate
    verdict = "passed" if result.returncode == 0 else "refused"
    assert (result.stdout + result.stderr).startswith(f"{verdict}: {MODEL} version 2"), result.stdout + result.stderr
    champion = str(mlflow.MlflowClient(runs["uri"]).get_model_version_by_alias(MODEL, "champion").version)
    assert champion == ("2" if verdict == "passed" else "1")
