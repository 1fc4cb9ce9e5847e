"""Registration by ``fairops tune`` under concurrency and kills, with real processes on one SQLite project.

The fits are made once (``--no-finalize``, 9 random-search fits of one family: the budget of a 22-fit
Hyperband, ``--s-max 2``); each test then runs only the pick and the registration, in processes started
together or killed while registering.
"""

import contextlib
import io
import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient

from fairops.cli import main
from fairops.registry._registry_lock import lock_name
from tests.jobs.kill_mid_fit import held_command, kill_when_held

FAST = ["--dataset", "german", "--method", "rs", "--families", "logistic_regression", "--max-train-rows", "300",
        "--selection", "paper", "--no-progress", "--s-max", "2"]
STUDY = "german-rs-eta3-smax2-fast-seed0"


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A project whose study holds every fit and nothing registered yet."""
    project = tmp_path_factory.mktemp("fitted")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["tune", *FAST, "--project-dir", str(project), "--no-finalize"]) == 0
    return project


def _tune(project, model, **popen):
    command = [sys.executable, "-m", "fairops.cli", "tune", *FAST, "--project-dir", str(project),
               "--model-name", model]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **popen)


def _client(project):
    return MlflowClient(f"sqlite:///{project / 'mlflow.db'}")


def _selection_runs(client, model):
    experiment_id = client.get_experiment_by_name(STUDY).experiment_id
    return client.search_runs([experiment_id], f"tags.`fairops.role` = 'selection' and "
                                               f"tags.`fairops.registered_model` = '{model}'")


@pytest.mark.slow
def test_two_identical_tunes_finishing_together_register_one_version(fitted):
    twins = [_tune(fitted, "twins") for _ in range(2)]
    outputs = [twin.communicate(timeout=240) for twin in twins]
    assert [twin.returncode for twin in twins] == [0, 0], [err[-2000:] for _, err in outputs]
    client = _client(fitted)
    versions = client.search_model_versions("name = 'twins'")
    assert [str(v.version) for v in versions] == ["1"]
    assert str(client.get_model_version_by_alias("twins", "champion").version) == "1"
    assert [str(a) for a in client.get_registered_model("twins").aliases] == ["champion"]  # no challenger
    said = [out for out, _ in outputs]
    assert sum("registered: models:/twins@champion (version 1)" in out for out in said) == 1
    assert sum("already registered by an earlier run of this study: twins version 1" in out for out in said) == 1
    assert [r.info.status for r in _selection_runs(client, "twins")] == ["FINISHED"]
    assert not client.search_registered_models(f"name = '{lock_name('twins')}'")  # the lock is released


@pytest.mark.slow
def test_a_rerun_after_a_kill_while_registering_closes_its_run_and_registers_once(fitted):
    client = _client(fitted)
    # held where the new version exists but has no alias yet: the half-made registration the rerun must undo
    argv = ["tune", *FAST, "--project-dir", str(fitted), "--model-name", "killed"]
    hold_file = fitted / "held-registration"
    kill_when_held(held_command(argv, hold_file, 0, target="fairops.registry._registration:_place_alias"), hold_file)
    (caught,) = [r for r in _selection_runs(client, "killed") if r.info.status == "RUNNING"]
    (half_made,) = client.search_model_versions("name = 'killed'")
    assert not half_made.aliases
    assert client.get_run(caught.info.run_id).info.status == "RUNNING"  # left so by the killed process

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["tune", *FAST, "--project-dir", str(fitted), "--model-name", "killed"]) == 0
    assert client.get_run(caught.info.run_id).info.status == "KILLED"
    runs = {r.info.run_id: r.info.status for r in _selection_runs(client, "killed")}
    assert sorted(runs.values()) == ["FINISHED", "KILLED"]
    versions = client.search_model_versions("name = 'killed'")
    assert len(versions) == 1 and runs[versions[0].run_id] == "FINISHED"  # a half-made version is gone
    assert client.get_model_version_by_alias("killed", "champion").version == versions[0].version
    assert f"registered: models:/killed@champion (version {versions[0].version})" in out.getvalue()
