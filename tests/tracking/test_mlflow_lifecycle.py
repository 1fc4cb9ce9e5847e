"""The registry lifecycle on a real SQLite store: challenger, the promotion gate, fairness monitoring."""

import json
import os
import re
import socket

import mlflow
import pytest
from mlflow.tracking import MlflowClient

import fairops.mlflow
from fairops.cli import main
from fairops.registry._promotion import GATE_TAG
from fairops.registry._registry_lock import RegistryBusy, registry_lock
from tests.lifecycle_models import FEATURES, example, register, register_sex_and_race, rows, sex_and_race_rows
from tests.mlflow_stores import empty_store_uri

NAME = "lifecycle"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lifecycle")
    uri = empty_store_uri(folder / "mlflow.db")
    first = register(uri, NAME, C=1.0, seed=0)
    second = register(uri, NAME, C=0.5, seed=1)
    yield {"uri": uri, "folder": folder, "client": MlflowClient(uri), "first": first, "second": second}
    mlflow.set_tracking_uri(None)


def _champion(client):
    return str(client.get_model_version_by_alias(NAME, "champion").version)


def _gate_csv(folder, seed=7, n=3000):
    path = folder / f"gate-{seed}.csv"
    rows(seed, n).to_csv(path, index=False)
    return str(path)


def _promotion_runs(client):
    experiments = [e.experiment_id for e in client.search_experiments()]
    return client.search_runs(experiments, "tags.`fairops.role` = 'promotion'")


def test_second_registration_is_the_challenger(store):
    first, second = store["first"], store["second"]
    assert (first.alias, first.version, first.kept_version) == ("champion", "1", None)
    assert (second.alias, second.version, second.kept_version) == ("challenger", "2", "1")
    client = store["client"]
    assert _champion(client) == "1"
    assert str(client.get_model_version_by_alias(NAME, "challenger").version) == "2"
    tags = client.get_model_version(NAME, "2").tags
    assert tags["fairops.task"] == "precision@tpr=0.5,ratio=tpr" and float(tags["fairops.threshold"]) > 0


@pytest.mark.slow  # over 5 s in the quick tier
def test_impossible_gate_refuses_names_fairness_and_keeps_the_champion(store, capsys):
    client, path = store["client"], _gate_csv(store["folder"])
    code = main(["promote", NAME, "--data", path, "--target", "y", "--sensitive", "sex",
                 "--min-fairness", "1.0", "--tracking-uri", store["uri"]])
    err = capsys.readouterr().err
    assert code == 3
    failing = [line.strip()[len("refused because "):] for line in err.splitlines()
               if line.startswith("  refused because ")]
    assert failing and any(line.startswith("fairness_lower: the lower bound of its fairness interval")
                           for line in failing)
    assert all(line.startswith(("fairness", "accuracy")) for line in failing)
    # both models' figures with their intervals, the counts behind the ratio and the rule applied
    assert re.search(r"^  on \d+ gate rows, each decided as the version serves it \(sex: f \d+, m \d+ positives\)$",
                     err, re.M), err
    figures = r"0\.\d{4} \[0\.\d{4}, [01]\.\d{4}\]"
    assert re.search(rf"^  candidate +{figures}   {figures}$", err, re.M), err
    assert re.search(rf"^  champion +{figures}   {figures}$", err, re.M), err
    assert "  rule: fairness ratio and its interval's lower bound >= 1.0;" in err
    assert _champion(client) == "1"
    assert client.get_model_version(NAME, "2").tags[GATE_TAG] == "refused"
    run = _promotion_runs(client)[0]
    # both evaluations side by side in the one promotion run, the verdict on it
    assert run.data.tags[GATE_TAG] == "refused"
    assert {"candidate.fairops_tpr_ratio", "champion.fairops_tpr_ratio", "gate.fairness_lower"} <= set(run.data.metrics)
    gate = json.loads(open(client.download_artifacts(run.info.run_id, "gate.json")).read())
    assert gate["candidate"] == "2" and gate["champion"] == "1" and gate["reasons"]


def test_open_gate_moves_the_champion_and_a_rerun_changes_nothing(store):
    client = store["client"]
    rows_ = rows(8, 3000)
    verdict = fairops.registry.promote(NAME, rows_[FEATURES], rows_["y"], rows_[["sex"]], min_fairness=0.0,
                                     max_accuracy_drop=1.0, tracking_uri=store["uri"])
    assert (verdict.passed, verdict.moved, verdict.exit_code) == (True, True, 0), verdict.text()
    assert _champion(client) == "2" and client.get_model_version(NAME, "2").tags[GATE_TAG] == "passed"
    shown = verdict.text().splitlines()  # a pass shows both models' figures too, and the rule it passed
    assert shown[0] == f"passed: {NAME}@champion moved to version 2 (was version 1)"
    assert [line.split()[0] for line in shown[3:5]] == ["candidate", "champion"] and shown[5].startswith("  rule: ")
    # the candidate's fairness equals the champion's evaluator metric recomputed on the same rows
    assert verdict.scores["candidate"]["fairops_tpr_ratio_lower"] <= verdict.scores["candidate"]["fairops_tpr_ratio"]
    runs_before = len(_promotion_runs(client))
    again = fairops.registry.promote(NAME, rows_[FEATURES], rows_["y"], rows_[["sex"]], tracking_uri=store["uri"])
    assert (again.passed, again.moved, again.run_id) == (True, False, None)
    assert len(_promotion_runs(client)) == runs_before and _champion(client) == "2"
    assert client.search_registered_models(f"name = '{NAME}.registry-lock'") == []


def test_the_registry_lock_is_a_registered_model_named_for_what_it_guards(store):
    client = store["client"]
    with registry_lock(client, NAME):
        held = client.get_registered_model(f"{NAME}.registry-lock")
        assert held.description == f"registry change in progress: {socket.gethostname()} pid {os.getpid()}"
        with pytest.raises(RegistryBusy, match=f"another promotion or registration of '{NAME}'"):
            with registry_lock(client, NAME, wait=0):
                pass
    assert client.search_registered_models(f"name = '{NAME}.registry-lock'") == []


def test_bad_input_is_exit_2_in_one_line(store, capsys):
    code = main(["promote", NAME, "--candidate", "@nobody", "--data", _gate_csv(store["folder"]), "--target", "y",
                 "--sensitive", "sex", "--tracking-uri", store["uri"]])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "'@nobody'" in err


WATCHED, WINDOW = "watched", 1000


@pytest.fixture(scope="module")
def watched(store):
    register(store["uri"], WATCHED, seed=3)
    return store


def _stream(folder, name, collapse_from=None, windows=10):
    import pandas as pd

    parts = [rows(50 + k, WINDOW, collapse=collapse_from is not None and k + 1 >= collapse_from)
             for k in range(windows)]
    path = folder / f"{name}.csv"
    pd.concat(parts, ignore_index=True).to_csv(path, index=False)
    return str(path)


def _monitor(store, path, capsys):
    code = main(["monitor", WATCHED, "--data", path, "--target", "y", "--sensitive", "sex", "--window", str(WINDOW),
                 "--tracking-uri", store["uri"]])
    return code, capsys.readouterr().out.splitlines()


def _last_monitoring_run(client):
    return client.search_runs([e.experiment_id for e in client.search_experiments()],
                              "tags.`fairops.role` = 'monitoring'", order_by=["attributes.start_time DESC"])[0]


def test_a_collapse_from_window_6_alerts_first_at_window_6(watched, capsys):
    code, lines = _monitor(watched, _stream(watched["folder"], "collapse", collapse_from=6), capsys)
    alerts = [line for line in lines if line.startswith("ALERT")]
    assert code == 3 and alerts and alerts[0].startswith("ALERT window 6:")
    assert lines[0].startswith("rule: fairness line 0.8, 95% intervals")
    assert lines[1].startswith(f"baseline: model '{WATCHED}' version 1 ") and lines[2].startswith("alert rule: ")
    assert [line.split(":")[0] for line in lines[3:8]] == [f"window {k}" for k in range(1, 6)]
    client = watched["client"]
    run = _last_monitoring_run(client)
    history = client.get_metric_history(run.info.run_id, "fairness")
    assert sorted(m.step for m in history) == list(range(1, 11))  # one step per window
    alerts_logged = {m.step: m.value for m in client.get_metric_history(run.info.run_id, "alert")}
    assert [step for step, value in sorted(alerts_logged.items()) if value] == [
        int(line.split()[2].rstrip(":")) for line in alerts]
    assert run.data.tags["fairops.alerts"].split(",")[0] == "6"


def test_a_stream_without_drift_exits_0(watched, capsys):
    code, lines = _monitor(watched, _stream(watched["folder"], "steady"), capsys)
    assert code == 0 and not any(line.startswith("ALERT") for line in lines)
    assert sum(line.startswith("window ") for line in lines) == 10
    # windows of 1000 rows could alert: none is marked, and no closing line counts any
    assert not any("too few rows" in line or "could not alert" in line for line in lines)
    client = watched["client"]
    run = _last_monitoring_run(client)
    assert [m.value for m in client.get_metric_history(run.info.run_id, "alert_possible")] == [1.0] * 10
    assert run.data.tags["fairops.unable_to_alert"] == "none" and "fairops.rows_for_an_alert" not in run.data.tags


def test_the_header_names_the_rule_the_baseline_and_what_a_window_is_held_to(watched, capsys):
    tags = watched["client"].get_model_version(WATCHED, "1").tags
    value, lower = (float(tags[f"fairops.validation_fairness{end}"]) for end in ("", "_lower"))
    assert (tags["fairops.fairness_line"], tags["fairops.interval_level"]) == ("0.8", "0.95")
    _, lines = _monitor(watched, _stream(watched["folder"], "header", windows=1), capsys)
    assert lines[0] == f"rule: fairness line 0.8, 95% intervals (model '{WATCHED}' version 1's)"
    assert lines[1] == (f"baseline: model '{WATCHED}' version 1 on its validation rows: "
                        f"TPR ratio over sex {value:.3f}, lower bound {lower:.3f}")
    assert lines[2].startswith("alert rule: a window alerts when the 95% interval of its TPR ratio lies below the "
                               "fairness line 0.8 (the gate refuses such a model); windows show value [95% interval]")
    code = main(["monitor", WATCHED, "--data", _stream(watched["folder"], "header", windows=1), "--target", "y",
                 "--sensitive", "sex", "--window", str(WINDOW), "--against-baseline", "--level", "0.9",
                 "--tracking-uri", watched["uri"]])
    against = capsys.readouterr().out.splitlines()
    assert code == 0 and against[0].startswith("rule: fairness line 0.8, 90% intervals")
    assert against[2].startswith("alert rule: a window alerts when the 90% interval of its TPR ratio lies below the "
                                 "fairness line 0.8 (the gate refuses such a model) or the lower bound of its own "
                                 "baseline")
    code = main(["monitor", WATCHED, "--data", _stream(watched["folder"], "header", windows=1), "--target", "y",
                 "--sensitive", "sex", "--window", str(WINDOW), "--baseline", "0.85", "--fairness-line", "0",
                 "--tracking-uri", watched["uri"]])
    given = capsys.readouterr().out.splitlines()
    assert code == 0 and given[1].startswith("baseline: 0.850 as given, for the TPR ratio over sex of model ")
    assert given[2].startswith("alert rule: a window alerts when the 95% interval of its TPR ratio lies below the "
                               "baseline 0.850;")


def test_windows_too_small_for_any_alert_are_marked_and_a_size_that_could_alert_is_named(watched, tmp_path, capsys):
    path = tmp_path / "small.csv"
    rows(9, 200).to_csv(path, index=False)
    code = main(["monitor", WATCHED, "--data", str(path), "--target", "y", "--sensitive", "sex", "--window", "20",
                 "--tracking-uri", watched["uri"]])
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    windows = [line for line in lines if line.startswith("window ")]
    assert code == 0 and len(windows) == 10
    assert all(line.endswith(")") and "(too few rows for an alert: no decisions bring the upper bound below " in line
               for line in windows)
    assert lines[-2].startswith("10 of 10 windows could not alert whatever the decisions")
    needed = int(lines[-2].split("windows of about ")[1].split()[0])
    assert 20 < needed < 1000 and "an estimate from the group shares of their 200 rows" in lines[-2]
    assert "warning: none of the 10 windows could alert" in captured.err and "exit status 0 does not mean fair" in \
        captured.err and f"windows of about {needed} rows" in captured.err
    client = watched["client"]
    run = _last_monitoring_run(client)
    assert [m.value for m in client.get_metric_history(run.info.run_id, "alert_possible")] == [0.0] * 10
    assert run.data.tags["fairops.unable_to_alert"] == ",".join(map(str, range(1, 11)))
    assert run.data.tags["fairops.rows_for_an_alert"] == str(needed)


@pytest.fixture(scope="module")
def two_attributes(store):
    """A version whose task is the TPR ratio over sex and race (the lowest), one registered before the versions
    recorded each attribute's baseline, and the issue's stream: from window 6 the positives of sex F take the
    features of negatives."""
    import pandas as pd

    register_sex_and_race(store["uri"], "sex-and-race")
    register_sex_and_race(store["uri"], "sex-and-race-old", attribute_baselines=False)
    paths = {name: store["folder"] / f"sex-{name}.csv" for name in ("drift", "steady")}
    for name, path in paths.items():
        pd.concat([sex_and_race_rows(50 + k, WINDOW, drift=name == "drift" and k + 1 >= 6) for k in range(10)],
                  ignore_index=True).to_csv(path, index=False)
    return {**store, **{name: str(path) for name, path in paths.items()}}


def _watch(store, model, sensitive, capsys, stream="drift"):
    code = main(["monitor", model, "--data", store[stream], "--target", "y", "--sensitive", sensitive,
                 "--window", str(WINDOW), "--tracking-uri", store["uri"]])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


@pytest.mark.parametrize("model", ["sex-and-race", "sex-and-race-old"])
def test_a_drift_in_one_attribute_alerts_at_its_window_naming_it(two_attributes, model, capsys):
    code, lines, _ = _watch(two_attributes, model, "sex,race", capsys)
    alerts = [line for line in lines if line.startswith("ALERT")]
    assert code == 3 and alerts and alerts[0].startswith("ALERT window 6: TPR ratio over sex ")
    assert all(line.startswith("window ") and "(sex " in line and ", race " in line for line in lines[3:8])
    assert "race" not in " ".join(alerts)  # race's ratio did not move
    assert lines[-1].startswith("10 windows, ") and "(first: window 6, sex)" in lines[-1]
    assert lines[1].startswith(f"baseline: model '{model}' version 1 on its validation rows: "
                               "TPR ratio over sex, race (the lowest of their ratios) ")
    assert ("; TPR ratio over sex " in lines[1]) == (model == "sex-and-race")  # its own baseline, where recorded
    client = two_attributes["client"]
    run = _last_monitoring_run(client)
    by_step = {m.step: m.value for m in client.get_metric_history(run.info.run_id, "alert.sex")}
    assert min(step for step, value in by_step.items() if value) == 6
    assert not any(m.value for m in client.get_metric_history(run.info.run_id, "alert.race"))
    assert len(client.get_metric_history(run.info.run_id, "fairness_upper.race")) == 10


def test_a_steady_stream_over_two_attributes_exits_0(two_attributes, capsys):
    code, lines, _ = _watch(two_attributes, "sex-and-race", "sex,race", capsys, stream="steady")
    assert code == 0 and not any(line.startswith("ALERT") for line in lines)


def test_one_attribute_of_the_task_is_watched_against_its_own_baseline(two_attributes, capsys):
    code, lines, _ = _watch(two_attributes, "sex-and-race", "sex", capsys)
    assert lines[1].startswith("baseline: model 'sex-and-race' version 1 on its validation rows: "
                               "TPR ratio over sex ") and "over race" not in lines[1]
    assert lines[3].startswith("watching sex only, each against its own bound")
    alerts = [line for line in lines if line.startswith("ALERT")]
    assert code == 3 and alerts[0].startswith("ALERT window 6: TPR ratio over sex ")
    assert lines[4].startswith("window 1: ") and ", TPR ratio over sex " in lines[4]


def test_a_sensitive_column_outside_the_task_is_refused_by_name(two_attributes, capsys):
    code, _, err = _watch(two_attributes, "sex-and-race", "sex,age", capsys)
    assert code == 2 and "sensitive column(s) ['age'] are not attributes of the task" in err
    assert "(sex, race): it records no baseline for them" in err


def test_monitor_refuses_labels_that_are_not_0_1_without_positive(watched, tmp_path, capsys):
    path = tmp_path / "text.csv"
    rows(9, 50).assign(y=lambda f: f["y"].map({0: "no", 1: "yes"})).to_csv(path, index=False)
    code = main(["monitor", WATCHED, "--data", str(path), "--target", "y", "--sensitive", "sex", "--window", "25",
                 "--tracking-uri", watched["uri"]])
    assert code == 2 and "--positive" in capsys.readouterr().err


@pytest.mark.slow  # over 5 s in the quick tier
def test_the_example_gates_and_watches(store, capsys):
    refused, passed, watched = example.main(["--tracking-uri", store["uri"]])  # its own model name, "credit"
    assert (refused.exit_code, passed.exit_code, passed.moved) == (3, 0, True)
    assert watched.alerts and watched.alerts[0] == 6 and watched.exit_code == 3
    out = capsys.readouterr().out
    assert "registered credit version 2 as @challenger" in out and "credit@champion moved to version 2" in out


@pytest.mark.slow
def test_the_gate_never_runs_the_loader_module_a_rewritten_mlmodel_names(store, tmp_path):
    """mlflow.models.evaluate given the URI imports MLmodel's loader_module first; the gate loads with fairops'."""
    from urllib.parse import urlparse

    from fairops.mlflow import sealing

    name, marker = "planted", tmp_path / "planted-code-ran"
    register(store["uri"], name, C=1.0, seed=0)
    register(store["uri"], name, C=0.5, seed=1)
    client = store["client"]
    model_id = client.get_model_version(name, "2").source.removeprefix("models:/")
    folder = urlparse(client.get_logged_model(model_id).artifact_location).path  # the store's own copy
    os.makedirs(os.path.join(folder, "code"))
    with open(os.path.join(folder, "code", "planted_gate_loader.py"), "w") as handle:
        handle.write(f"open({str(marker)!r}, 'w').close()\nfrom fairops.mlflow.classifier import _load_pyfunc\n")
    mlmodel = os.path.join(folder, "MLmodel")
    with open(mlmodel) as handle:
        text = handle.read()
    assert "loader_module: fairops.mlflow.classifier\n" in text
    with open(mlmodel, "w") as handle:
        handle.write(text.replace("loader_module: fairops.mlflow.classifier\n",
                                  "loader_module: planted_gate_loader\n    code: code\n"))
    sealing.seal(folder)  # as whoever can write the store re-hashes it
    code = main(["promote", name, "--data", _gate_csv(store["folder"]), "--target", "y", "--sensitive", "sex",
                 "--tracking-uri", store["uri"]])
    # the gate loaded it with fairops' loader (never the planted module), then refused it: the re-hashed model is
    # not the one its row record names
    assert code == 2 and not marker.exists()
