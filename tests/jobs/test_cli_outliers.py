"""``fairops outliers``: FairLOF vs LOF through the command, on real SQLite MLflow and Optuna stores."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.neighbors import LocalOutlierFactor

import fairops.mlflow.fairlof as fairlof_flavor
from fairops.cli import main
from fairops.datasets import load_credit_default, load_german
from fairops.fairlof import FairLOF, guide_lambda
from fairops.jobs._outliers import load_outlier_data, normalised_fairness
from fairops.metrics import euclidean_disparity, wasserstein_disparity
from tests.jobs.kill_mid_fit import kill_mid_fit

ROWS = 1500
CREDIT = ["outliers", "--dataset", "credit_default", "--sensitive", "SEX,EDUCATION,MARRIAGE", "--max-rows", str(ROWS)]
OUTLIER_METRICS = ("jaccard", "preservation", "outlier_fraction", "euclidean_disparity", "wasserstein_disparity")


@pytest.fixture()
def reset_tracking():
    import mlflow

    yield mlflow
    mlflow.set_tracking_uri(None)


def runs_of(uri, experiment="fairops-outliers", query=""):
    client = MlflowClient(uri)
    experiment_id = client.get_experiment_by_name(experiment).experiment_id
    return client, client.search_runs([experiment_id], query, max_results=1000)


def printed_model_uri(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("model: ")]
    return line.split()[1]


@pytest.mark.slow
def test_auto_lambda_prints_the_table_and_logs_metrics_and_a_loadable_model(tmp_path, capsys, reset_tracking):
    mlflow = reset_tracking
    project = tmp_path / "project"
    assert main([*CREDIT, "--lambda", "auto", "--project-dir", str(project)]) == 0
    out = capsys.readouterr().out
    assert (project / "mlflow.db").is_file() and f"project: {project}" in out
    header = next(line for line in out.splitlines() if line.split()[:2] == ["lambda", "Jacc"])
    assert header.split() == ["lambda", "Jacc", "Pres", "OF", "ED", "ED", "chg", "Wass", "Wass", "chg"]
    assert "variant: paper = the paper's eqs 6-14 as printed" in out and "(5 permutations)" in out

    uri = f"sqlite:///{project / 'mlflow.db'}"
    client, (run,) = runs_of(uri)
    metrics, params = run.data.metrics, run.data.params
    assert run.info.status == "FINISHED"

    # Oracle for the LOF row: scikit-learn's LOF on the same standardised rows.
    data = load_outlier_data("credit_default", max_rows=ROWS, seed=0)
    assert int(params["rows"]) == data.n_rows and params["features"] == "20"
    np.testing.assert_allclose(data.features.mean(), 0, atol=1e-9)
    lof = LocalOutlierFactor(n_neighbors=5).fit(data.features.to_numpy())
    t = int(params["top_t"])
    assert t == min(500, int(0.05 * data.n_rows))
    plain_top = np.argsort(lof.negative_outlier_factor_, kind="stable")[:t]
    assert metrics["lof_jaccard"] == 1.0 and metrics["lof_preservation"] == 1.0
    assert metrics["lof_euclidean_disparity"] == pytest.approx(euclidean_disparity(data.sensitive, plain_top))
    assert metrics["lof_wasserstein_disparity"] == pytest.approx(wasserstein_disparity(data.sensitive, plain_top))

    # FairLOF row: the guide point of the logged lambda path, and the relative changes.
    local = client.download_artifacts(run.info.run_id, "fairlof/lambda_path.json", str(tmp_path))
    with open(local) as handle:
        path = json.load(handle)
    fitted = float(params["fitted_lambda"])
    assert params["lambda"] == "auto" and fitted == guide_lambda(path["lambda"], path["jaccard"], 0.9)
    at = path["lambda"].index(fitted)
    for name in OUTLIER_METRICS:
        assert metrics[name] == pytest.approx(path[name][at])
    lof_w, fair_w = metrics["lof_wasserstein_disparity"], metrics["wasserstein_disparity"]
    assert metrics["wasserstein_disparity_change"] == pytest.approx((fair_w - lof_w) / lof_w)
    fair_line = next(line for line in out.splitlines() if line.startswith("FairLOF "))
    assert f"{metrics['jaccard']:.3f}" in fair_line
    assert f"{100 * metrics['euclidean_disparity_change']:+.1f}%" in fair_line
    # under the table: whether FairLOF is fairer, and one line per column
    changes = (metrics["euclidean_disparity_change"], metrics["wasserstein_disparity_change"])
    verdict = out.split(fair_line + "\n", 1)[1].splitlines()[0]
    expected_verdict = "FairLOF is fairer than LOF" if max(changes) < 0 else "FairLOF is"
    assert verdict.startswith(expected_verdict) and f"at Jaccard {metrics['jaccard']:.3f}" in verdict
    for term in ("Jacc:", "Pres:", "OF:", "ED, Wass:", "ED chg, Wass chg:"):
        assert f"\n  {term} " in out

    # The logged model: native and pyfunc, against a detector fitted here with the same settings.
    mlflow.set_tracking_uri(uri)
    model_uri = printed_model_uri(out)
    assert model_uri == "models:/fairops-outliers-credit_default/1"  # registered: a URI one can serve
    assert f"serve it: {Path(sys.executable).parent / 'fairops'} serve {model_uri} --tracking-uri {uri} --port " in out
    expected = FairLOF(n_neighbors=5, correction_strength=fitted, novelty=True).fit(data.features.to_numpy(),
                                                                       sensitive_features=data.sensitive)
    native = fairlof_flavor.load_model(model_uri)
    assert native.fitted_lambda_ == fitted
    np.testing.assert_allclose(native.outlier_scores_, expected.outlier_scores_)
    # The served model takes raw rows: the bundled columns as they are, sensitive labels included.
    raw = load_credit_default().X
    sample = raw.iloc[[0, 5, 77, 1234, 29999]].astype({"SEX": str, "EDUCATION": str, "MARRIAGE": str})
    answer = mlflow.pyfunc.load_model(model_uri).predict(sample)
    numeric = sample[data.features.columns].astype(float)
    by_hand = (numeric - data.raw[data.features.columns].mean()) / data.raw[data.features.columns].std(ddof=0)
    want = -expected.score_samples(by_hand.to_numpy(), sensitive_features=sample[["SEX", "EDUCATION", "MARRIAGE"]])
    np.testing.assert_allclose(answer["outlier_score"], want, rtol=1e-12)

    local = client.download_artifacts(run.info.run_id, "preprocessing/features.json", str(tmp_path))
    with open(local) as handle:
        prep = json.load(handle)
    assert prep["params"]["sensitive"] == ["SEX", "EDUCATION", "MARRIAGE"] and len(prep["features"]) == 20
    assert prep["input_columns"] == [*data.features.columns, "SEX", "EDUCATION", "MARRIAGE"]


def test_lambda_zero_on_own_csv_equals_lof(tmp_path, capsys, reset_tracking):
    german = load_german()
    frame = german.X[["duration", "credit_amount", "age", "purpose"]].copy()
    frame["sex"], frame["age_group"], frame["label"] = german.sensitive["sex"], german.sensitive["age_group"], german.y
    csv = tmp_path / "own.csv"
    frame.to_csv(csv, index=False)
    uri = f"sqlite:///{tmp_path / 'own.db'}"
    assert main(["outliers", "--data", str(csv), "--sensitive", "sex,age_group", "--target", "label",
                 "--lambda", "0", "--categorical", "onehot", "--tracking-uri", uri, "--experiment", "own",
                 "--project-dir", str(tmp_path / "project")]) == 0
    out = capsys.readouterr().out
    _, (run,) = runs_of(uri, "own")
    # the store is the user's, the artifacts go under the project folder (not ./mlruns of the working directory)
    assert not (tmp_path / "project" / "mlflow.db").exists()
    assert run.info.artifact_uri.startswith((tmp_path / "project" / "mlartifacts").as_uri())
    assert (tmp_path / "project" / "mlartifacts").is_dir()
    metrics = run.data.metrics
    assert metrics["jaccard"] == 1.0 and metrics["preservation"] == 1.0
    assert metrics["euclidean_disparity_change"] == 0.0 and metrics["wasserstein_disparity_change"] == 0.0
    # 3 numeric columns + one dummy per purpose value; the label and sensitive columns are not features
    assert int(run.data.params["features"]) == 3 + german.X["purpose"].nunique()
    fair_line = next(line for line in out.splitlines() if line.startswith("FairLOF "))
    assert fair_line.split()[1:3] == ["0.00", "1.000"] and "+0.0%" in fair_line

    # The logged model scores raw CSV rows (text column included) as scikit-learn's novelty LOF does
    # on the same rows one-hot encoded and standardised by hand.
    reset_tracking.set_tracking_uri(uri)
    model = reset_tracking.pyfunc.load_model(printed_model_uri(out))
    own = pd.read_csv(csv)
    columns = ["duration", "credit_amount", "age", *(f"purpose={v}" for v in sorted(own["purpose"].unique()))]
    lof = LocalOutlierFactor(n_neighbors=5, novelty=True).fit(_encode_like(own, own, columns))
    new_rows = own.drop(columns="label").iloc[[3, 10, 500]].copy()
    new_rows["credit_amount"] += 1000
    answer = model.predict(new_rows)
    np.testing.assert_allclose(answer["outlier_score"], -lof.score_samples(_encode_like(new_rows, own, columns)),
                               rtol=1e-12)
    unseen = new_rows.assign(purpose="A999")
    with pytest.raises(Exception, match="'purpose' holds value\\(s\\) \\['A999'\\] unseen at fit time"):
        model.predict(unseen)


def _encode_like(rows, fitted, columns):
    """Rows one-hot encoded and standardised with the fitted rows' means and scales, by hand."""
    def encode(frame):
        parts = [frame[["duration", "credit_amount", "age"]].astype(float),
                 pd.get_dummies(frame["purpose"], prefix="purpose", prefix_sep="=", dtype=float)]
        return pd.concat(parts, axis=1).reindex(columns=columns, fill_value=0.0)
    base = encode(fitted)
    return ((encode(rows) - base.mean()) / base.std(ddof=0)).to_numpy()


def test_flex_exponent_and_the_variant_are_chosen_by_name(tmp_path, capsys):
    for old in ("--alpha", "--beta"):  # the pre-release spellings of the Flex exponents are gone
        with pytest.raises(SystemExit) as refused:
            main(["outliers", "--dataset", "german", old, "2", "--project-dir", str(tmp_path / "p")])
        assert refused.value.code == 2 and f"unrecognized arguments: {old} 2" in capsys.readouterr().err
    uri = f"sqlite:///{tmp_path / 'old.db'}"
    assert main(["outliers", "--dataset", "german", "--weight-exponent", "2", "--lambda", "0.2", "--correction",
                 "per_value", "--tracking-uri", uri]) == 0
    captured = capsys.readouterr()
    assert "weight_exponent=2.0" in captured.out and "(per_value correction)" in captured.out
    _, (run,) = runs_of(uri)
    assert run.data.params["weight_exponent"] == "2.0" and run.data.params["share_exponent"] == "1.0"
    assert run.data.params["correction"] == "per_value"
    data = load_outlier_data("german")
    expected = FairLOF(correction_strength=0.2, correction="per_value", weight_exponent=2.0).fit(
        data.features.to_numpy(), sensitive_features=data.sensitive)
    assert run.data.metrics["euclidean_disparity"] == pytest.approx(euclidean_disparity(data.sensitive,
                                                                                         expected.outliers_))


@pytest.mark.slow
def test_tune_logs_child_runs_with_the_outlier_metrics_and_resumes(tmp_path, capsys, reset_tracking):
    project = tmp_path / "project"
    command = [*CREDIT, "--tune", "--trials", "8", "--project-dir", str(project), "--seed", "3"]
    assert main(command) == 0
    out = capsys.readouterr().out
    assert "fits: 8 to run, 0 done" in out and "Fairband pick: trial" in out

    uri = f"sqlite:///{project / 'mlflow.db'}"
    client, children = runs_of(uri, query="tags.`fairops.role` = 'trial'")
    assert len(children) == 8
    study = optuna.load_study(study_name="outliers-credit_default-fb-auto-seed3",
                              storage=f"sqlite:///{project / 'optuna.db'}")
    trials = {t.number: t for t in study.trials}
    for child in children:
        metrics = child.data.metrics
        assert set(OUTLIER_METRICS) | {"accuracy", "fairness", "budget"} <= set(metrics)
        assert set(child.data.params) == {"n_neighbors", "lambda", "weight_exponent", "share_exponent"}
        trial = trials[int(child.data.tags["trial_number"])]
        assert metrics["accuracy"] == metrics["jaccard"] == trial.values[0]
        assert metrics["fairness"] == pytest.approx(normalised_fairness(
            trial.user_attrs["wasserstein_disparity"], trial.user_attrs["lof_wasserstein_disparity"]))
        assert 3 <= int(child.data.params["n_neighbors"]) <= 30
        assert 0.5 <= float(child.data.params["weight_exponent"]) <= 2.0

    (pick,) = runs_of(uri, query="tags.`fairops.role` = 'selection'")[1]
    assert pick.data.tags["mlflow.parentRunId"] == children[0].data.tags["mlflow.parentRunId"]
    assert int(pick.data.params["rows"]) == load_outlier_data("credit_default", max_rows=ROWS).n_rows
    assert set(OUTLIER_METRICS) <= set(pick.data.metrics)
    reset_tracking.set_tracking_uri(uri)
    native = fairlof_flavor.load_model(printed_model_uri(out))
    assert native.fitted_lambda_ == pytest.approx(float(pick.data.params["lambda"]))

    parent = client.get_run(pick.data.tags["mlflow.parentRunId"])
    assert parent.info.status == "FINISHED" and parent.data.params["fits"] == "8"
    assert all(re.fullmatch(r"t\d+ fairlof \d[\d.]*%( \(pick\))?", child.info.run_name) for child in children)
    marked = [c.data.tags["trial_number"] for c in children if c.info.run_name.endswith(" (pick)")]
    assert marked == [pick.data.params["pick_trial"]]

    assert main(command) == 0  # same command again: the study is resumed, no fit repeated, no pick logged again
    out = capsys.readouterr().out
    assert "fits: 0 to run, 8 done" in out and "nothing new logged" in out
    assert len(study.trials) == 8
    assert len(runs_of(uri, query="tags.`fairops.role` = 'selection'")[1]) == 1
    assert main([*command, "--max-rows", "1000"]) == 2  # other rows in the same study are refused
    assert "was started with another configuration (rows: " in capsys.readouterr().err


@pytest.mark.slow
def test_tune_logs_a_fit_failed_by_a_dead_workers_heartbeat_as_a_failed_run(tmp_path, capsys):
    project = tmp_path / "project"
    argv = ["outliers", "--dataset", "german", "--max-rows", "300", "--tune", "--trials", "12", "--heartbeat", "1",
            "--no-progress", "--project-dir", str(project)]
    storage, name = f"sqlite:///{project / 'optuna.db'}", "outliers-german-fb-auto-seed0"
    killed = kill_mid_fit(argv, storage, name, after=3, hold_file=tmp_path / "held").number

    assert main(argv) == 0  # the same command again: the dead worker's fit is failed by heartbeat and redone
    trials = optuna.load_study(study_name=name, storage=storage).get_trials(deepcopy=False)
    assert trials[killed].state == optuna.trial.TrialState.FAIL
    _, runs = runs_of(f"sqlite:///{project / 'mlflow.db'}", query="tags.`fairops.role` = 'trial'")
    dead = [r for r in runs if int(r.data.tags["fairops.trial_number"]) == killed]
    assert [r.info.status for r in dead] == ["FAILED"]  # the heartbeat failure reached the tracking
    assert "fits: " in capsys.readouterr().out


def test_bad_input_is_one_line_with_exit_status_2():
    result = subprocess.run([sys.executable, "-m", "fairops.cli", "outliers", "--dataset", "nope"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    from fairops.datasets import LOADERS

    assert line == (f"fairops outliers: error: unknown dataset 'nope'; choose one of {sorted(LOADERS)} "
                    "or pass --data FILE")
    assert "'student_mat'" in line


@pytest.mark.parametrize("extra, message", [
    (["--sensitive", "sex,NOPE"], "unknown sensitive column 'NOPE'"),
    (["--lambda", "1.5"], "--lambda must be a number in [0, 1] or 'auto', got '1.5'"),
    (["--lambda", "half"], "--lambda must be a number in [0, 1] or 'auto', got 'half'"),
    (["--neighbors", "0"], "--neighbors must be a positive integer"),
    (["--categorical", "ordinal"], "--categorical must be 'drop' or 'onehot'"),
    (["--data", "missing.csv", "--sensitive", "g"], "give either --dataset or --data"),
])
def test_bad_options_on_bundled_data(tmp_path, capsys, extra, message):
    args = ["outliers", "--dataset", "german", "--project-dir", str(tmp_path / "p"), *extra]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "p").exists()  # nothing is created for a refused command


def test_bad_own_data(tmp_path, capsys):
    csv = tmp_path / "own.csv"
    pd.DataFrame({"x": np.arange(20.0), "g": ["a"] * 20, "h": ["u", "v"] * 10}).to_csv(csv, index=False)
    cases = [
        (["--data", str(csv), "--sensitive", "g"], "sensitive column 'g' has a single value"),
        (["--data", str(csv), "--sensitive", "z"], "column(s) ['z'] not in own.csv"),
        (["--data", str(csv)], "--sensitive is required with --data"),
        (["--data", str(tmp_path / "none.csv"), "--sensitive", "h"], "does not exist"),
        (["--data", str(tmp_path / "own.txt"), "--sensitive", "h"], "must end in one of ['.csv', '.parquet']"),
    ]
    for extra, message in cases:
        assert main(["outliers", *extra, "--project-dir", str(tmp_path / "p")]) == 2, extra
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("argv, message", [
    (["--tune", "--neighbors", "7"], "--neighbors does not apply with --tune"),
    (["--tune", "--lambda", "0.3", "--share-exponent", "2"], "--lambda, --share-exponent do not apply with --tune"),
    (["--method", "hb"], "--method does not apply without --tune"),
    (["--iterations", "2", "--storage", "sqlite:///x.db"], "--iterations, --storage do not apply without --tune"),
    (["--lambda", "0.5", "--target-jaccard", "0.8"], "--target-jaccard does not apply with a fixed --lambda"),
    (["--data", "x.csv", "--dataset", "german"], "give either --dataset or --data, not both"),
])
def test_options_that_do_not_apply_are_refused_by_name(argv, message, tmp_path, capsys):
    assert main(["outliers", *argv, "--project-dir", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "mlflow.db").exists()  # refused before anything ran
