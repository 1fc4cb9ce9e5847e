"""The registry lifecycle against a real `mlflow server` process: three promotions started at once (the same
challenger twice with an open gate, another version with an impossible one) leave one winner, and the
alias never points at the refused version; monitoring logs its steps through the server."""

import contextlib
import subprocess
import sys
import textwrap
import time

import pytest
from mlflow.tracking import MlflowClient

from tests.lifecycle_models import register, rows

pytestmark = pytest.mark.slow
NAME = "served"

PROMOTE = textwrap.dedent("""
    import sys
    import mlflow  # imported before the start, so the promotions race from their first store call
    from fairops.cli import main
    print("ready", flush=True)
    sys.stdin.readline()  # until the test lets every promotion go at once
    sys.exit(main(sys.argv[1:]))
""")


@pytest.fixture(scope="module")
def server(mlflow_server, tmp_path_factory):
    """The run's `mlflow server` (conftest.py) with three versions of a model no other test registers."""
    for seed, C in ((0, 1.0), (1, 0.5), (2, 0.2)):
        register(mlflow_server, NAME, C=C, seed=seed)
    return mlflow_server, tmp_path_factory.mktemp("lifecycle-server")


def test_three_promotions_at_once_leave_one_winner_and_never_the_refused_version(server):
    url, folder = server
    client = MlflowClient(url)
    path = folder / "gate.csv"
    rows(7, 3000).to_csv(path, index=False)
    common = ["promote", NAME, "--data", str(path), "--target", "y", "--sensitive", "sex", "--tracking-uri", url]
    open_gate = [*common, "--candidate", "2", "--min-fairness", "0", "--max-accuracy-drop", "1"]
    closed_gate = [*common, "--candidate", "3", "--min-fairness", "1"]
    workers = [subprocess.Popen([sys.executable, "-c", PROMOTE, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for argv in (open_gate, open_gate, closed_gate)]
    ready = [worker.stdout.readline().strip() for worker in workers]  # each has imported the CLI
    for worker in workers:
        with contextlib.suppress(BrokenPipeError):  # one that died before its ready is reported below
            worker.stdin.write("go\n")
            worker.stdin.flush()
    seen = set()
    while any(worker.poll() is None for worker in workers):
        seen.add(str(client.get_model_version_by_alias(NAME, "champion").version))
        time.sleep(0.05)
    outputs = [worker.communicate() for worker in workers]
    assert ready == ["ready"] * 3, outputs
    codes = [worker.returncode for worker in workers]
    assert codes == [0, 0, 3], outputs
    assert "3" not in seen and seen <= {"1", "2"}
    assert str(client.get_model_version_by_alias(NAME, "champion").version) == "2"
    moved = [out for out, _ in outputs[:2] if "@champion moved to version 2" in out]
    already = [out for out, _ in outputs[:2] if "already is @champion" in out]
    assert len(moved) == 1 and len(already) == 1, outputs
    assert client.get_model_version(NAME, "3").tags["fairops.gate"] == "refused"
    experiments = [e.experiment_id for e in client.search_experiments()]
    runs = client.search_runs(experiments, "tags.`fairops.role` = 'promotion'")
    assert sorted(run.data.tags["fairops.candidate_version"] for run in runs) == ["2", "3"]
    assert client.search_registered_models(f"name = '{NAME}.registry-lock'") == []


def test_monitoring_logs_one_step_per_window_through_the_server(server):
    from fairops.cli import main

    url, folder = server
    path = folder / "stream.csv"
    rows(60, 4000).to_csv(path, index=False)
    code = main(["monitor", NAME, "--data", str(path), "--target", "y", "--sensitive", "sex", "--window", "1000",
                 "--tracking-uri", url])
    client = MlflowClient(url)
    experiments = [e.experiment_id for e in client.search_experiments()]
    run = client.search_runs(experiments, "tags.`fairops.role` = 'monitoring'")[0]
    assert code == 0 and run.data.tags["fairops.alerts"] == "none"
    assert sorted(m.step for m in client.get_metric_history(run.info.run_id, "fairness")) == [1, 2, 3, 4]
