"""The champion of a real `fairops tune` on Adult, signed: what it records, what it imports, what it refuses,
how it serves with MLflow's default environment manager, and that planted code in it runs nothing."""

import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import mlflow
import numpy as np
import optuna
import pandas as pd
import pytest
import skops.io
import yaml
from mlflow.tracking import MlflowClient

from fairops.datasets import load_adult
from fairops.fairband import iteration_size
from fairops.fairlof import FairLOF
from fairops.mlflow import fairlof as fairlof_flavor, loader, scaff as scaff_flavor, sealing
from fairops.mlflow.sealing import KEY_ENV, ModelFilesError
from fairops.scaff import SCAFFClassifier
from tests.conftest import MODEL_KEY, copy_project
from tests.services import BIN, free_port, start, stop, wait_ready

pytestmark = pytest.mark.slow
KEY = MODEL_KEY
NAME = "fairops-adult"


@pytest.fixture(scope="module")
def champion(adult_tune, tmp_path_factory):
    """`fairops tune` on Adult with FAIROPS_MODEL_KEY set (conftest.adult_tune): the registered champion is
    signed. A copy of its project: the tests here register more models."""
    project = copy_project(adult_tune, tmp_path_factory.mktemp("champion") / "project")
    uri = f"sqlite:///{project / 'mlflow.db'}"
    return {"project": project, "uri": uri, "client": MlflowClient(uri)}


@pytest.fixture()
def keyed(monkeypatch, champion):
    monkeypatch.setenv(KEY_ENV, KEY)
    mlflow.set_tracking_uri(champion["uri"])
    yield
    mlflow.set_tracking_uri(None)


def _adult_rows(count=3, start_at=40000):
    """Real Adult rows as a client sends them: text for categories, whole numbers as numbers."""
    X = load_adult().X.iloc[start_at:start_at + count]
    return X.astype({c: object for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)})


def _store_dir(champion, name=NAME, alias="champion"):
    client = champion["client"]
    version = client.get_model_version_by_alias(name, alias).version
    return Path(client.get_model_version_download_uri(name, version).removeprefix("file://"))


def test_the_version_says_which_rule_made_it_and_what_it_beat(champion):
    client = champion["client"]
    version = client.get_model_version_by_alias(NAME, "champion")
    tags = version.tags
    assert tags["selection_kind"] == "fairband" and tags["alpha_rule"] == "auto"
    study = optuna.load_study(study_name="adult-fb-auto-eta3-smax2-fast-seed0",
                              storage=f"sqlite:///{champion['project'] / 'optuna.db'}")
    fitted = sum(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    # the fits with constant scores failed and are not ranked
    assert 0 < fitted < len(study.trials) == iteration_size(3, 2)
    assert tags["selection_rule"].startswith(f"robust: argmax alpha*accuracy_low + (1-alpha)*fairness_low over "
                                             f"{fitted} fits (95% lower bounds, alpha rule auto = ")
    description = version.description
    assert re.search(r"Validation fairness of this model: [0-9.]+ \[[0-9.]+, [0-9.]+\] \(95% confidence", description)
    for part in ("Task `precision@tpr=0.5,ratio=tpr`", "TPR ratio over sex", tags["selection_rule"],
                 "| this model (trial", "| most accurate fit (trial", "test accuracy"):
        assert part in description, part
    run = client.get_run(version.run_id)
    card = json.loads(Path(mlflow.artifacts.download_artifacts(run_id=run.info.run_id, artifact_path="selection/"
                                                               "model_card.json", tracking_uri=champion["uri"]))
                      .read_text())
    assert card["selection"]["kind"] == "fairband" and card["selection"]["alpha_rule"] == "auto"
    alpha = card["selection"]["alpha"]
    assert 0 <= alpha <= 1 and f"alpha rule auto = {alpha:.4g})" in tags["selection_rule"]
    assert float(tags["selection_alpha"]) == pytest.approx(alpha, rel=1e-5)
    assert card["notes"]["most_accurate_fit_refit"]["trial"] == card["most_accurate_fit"]["trial"]
    assert run.data.tags["selection_rule"] == tags["selection_rule"]


def test_the_champion_is_signed_and_ships_its_wheel(champion):
    folder = _store_dir(champion)
    manifest = json.loads((folder / sealing.MANIFEST_FILE).read_text())
    assert sealing.SIGNATURE_FIELD in manifest and "MLmodel" in manifest["files"]
    wheel = [line for line in (folder / "requirements.txt").read_text().splitlines() if line.startswith("wheels/")]
    assert len(wheel) == 1 and (folder / wheel[0]).is_file() and wheel[0] in manifest["files"]


def test_served_in_a_fresh_process_it_imports_nothing_from_the_jobs(champion):
    script = textwrap.dedent("""
        import json, sys
        import mlflow
        import pandas as pd
        rows = pd.DataFrame(**json.loads(sys.argv[1]))
        answer = mlflow.pyfunc.load_model("models:/fairops-adult@champion").predict(rows, params={"answer": "scores"})
        print(json.dumps({"probability": answer["probability"].tolist(),
                          "modules": sorted(m for m in sys.modules if m.startswith(("fairops", "optuna")))}))
    """)
    rows = _adult_rows()
    env = {**os.environ, "MLFLOW_TRACKING_URI": champion["uri"], KEY_ENV: KEY}
    done = subprocess.run([sys.executable, "-c", script, json.dumps(rows.to_dict(orient="split"))], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "fairops.models" in result["modules"] and "fairops.mlflow.classifier" in result["modules"]
    assert not [m for m in result["modules"] if m.startswith(("fairops.jobs", "fairops.cli", "fairops.fairband",
                                                              "optuna"))]
    assert len(result["probability"]) == 3 and all(0 <= p <= 1 for p in result["probability"])


def _plant(skops_bytes: bytes, command: str) -> bytes:
    """A reduce node that calls posix.system(command), in place of the pipeline's `verbose` value."""
    source = zipfile.ZipFile(io.BytesIO(skops_bytes))
    schema = json.loads(source.read("schema.json"))
    schema["content"]["content"]["verbose"] = {
        "__class__": "system", "__module__": "posix", "__loader__": "ConstructorFromReduceNode",
        "content": {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode", "__id__": 7,
                    "content": [{"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
                                 "content": json.dumps(command), "is_json": True, "__id__": 8}]},
        "__id__": 9}
    planted = io.BytesIO()
    with zipfile.ZipFile(planted, "w") as target:
        for name in source.namelist():
            target.writestr(name, json.dumps(schema) if name == "schema.json" else source.read(name))
    return planted.getvalue()


def _rehash_unsigned(folder: Path):
    """An attacker's manifest: every file re-hashed, no signature (the key is not theirs)."""
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()
                       and p.name not in {sealing.MANIFEST_FILE, *sealing.ADDED_BY_MLFLOW}):
        files[path.relative_to(folder).as_posix()] = {"sha256": sealing.sha256_file(str(path)),
                                                       "bytes": path.stat().st_size}
    (folder / sealing.MANIFEST_FILE).write_text(json.dumps(
        {"format": sealing.FORMAT_NAME, "format_version": sealing.FORMAT_VERSION, "files": files}))


@pytest.fixture()
def attacked(champion, tmp_path):
    """The champion's artifacts with planted code, registered as a version of its own (the store edited)."""
    folder = tmp_path / "attacked"
    shutil.copytree(_store_dir(champion), folder)
    marker = tmp_path / "planted-code-ran"
    skops_file = folder / "data" / "model.skops"
    skops_file.write_bytes(_plant(skops_file.read_bytes(), f"touch {marker}"))
    # the trust list an attacker writes into MLmodel: every type the file names, posix.system among them
    trusted = skops.io.get_untrusted_types(file=str(skops_file))
    assert "posix.system" in trusted
    mlmodel = yaml.safe_load((folder / "MLmodel").read_text())
    for flavor in ("fairops_classifier", "python_function"):
        mlmodel["flavors"][flavor]["skops_trusted_types"] = trusted
    (folder / "MLmodel").write_text(yaml.safe_dump(mlmodel))
    _rehash_unsigned(folder)
    client, name = champion["client"], f"attacked-{tmp_path.name}"
    client.create_registered_model(name)
    version = client.create_model_version(name, str(folder)).version
    client.set_registered_model_alias(name, "champion", version)
    return {"folder": folder, "marker": marker, "uri": f"models:/{name}@champion"}


def test_the_planted_file_is_live_when_trust_is_read_from_mlmodel(attacked):
    # what loading with the trust list from MLmodel (as mlflow.sklearn does) would do: run the command
    trusted = yaml.safe_load((attacked["folder"] / "MLmodel").read_text())["flavors"]["fairops_classifier"][
        "skops_trusted_types"]
    script = "import skops.io, sys; skops.io.load(sys.argv[1], trusted=sys.argv[2:])"
    done = subprocess.run([sys.executable, "-c", script, str(attacked["folder"] / "data" / "model.skops"), *trusted],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert attacked["marker"].exists()


def test_planted_code_runs_nothing_through_fairops_or_mlflow_loaders(champion, attacked, keyed, monkeypatch):
    uri = attacked["uri"]
    with pytest.raises(ModelFilesError, match="is not signed, and FAIROPS_MODEL_KEY is set"):
        loader.load_model(uri)
    with pytest.raises(ModelFilesError, match="is not signed"):
        mlflow.pyfunc.load_model(uri)
    monkeypatch.delenv(KEY_ENV)  # without the key the re-hashed manifest passes; the fixed trust list stops it
    for load in (loader.load_model, loader.load_native, mlflow.pyfunc.load_model):
        with pytest.raises(ModelFilesError, match=r"names type\(s\) fairops does not trust: \['posix.system'\]"):
            load(uri)
    assert not attacked["marker"].exists()
    # the genuine champion still loads, with the key
    monkeypatch.setenv(KEY_ENV, KEY)
    assert loader.load_model(f"models:/{NAME}@champion").predict(_adult_rows()).shape == (3, 3)


def test_a_loader_redirected_in_mlmodel_is_refused_by_fairops_and_by_mlflow_without_pickle(
        champion, attacked, keyed, monkeypatch):
    folder = attacked["folder"]
    mlmodel = yaml.safe_load((folder / "MLmodel").read_text())
    mlmodel["flavors"]["python_function"]["loader_module"] = "mlflow.sklearn"
    mlmodel["flavors"]["python_function"]["model_path"] = "data/model.skops"
    del mlmodel["flavors"]["python_function"]["data"]
    mlmodel["flavors"]["python_function"].pop("config", None)  # fairops' answer key, which mlflow.sklearn lacks
    mlmodel["flavors"]["sklearn"] = {"serialization_format": "skops", "skops_trusted_types": ["posix.system"],
                                     "pickled_model": "data/model.skops", "sklearn_version": "1.9.1"}
    (folder / "MLmodel").write_text(yaml.safe_dump(mlmodel))
    _rehash_unsigned(folder)
    with pytest.raises(ModelFilesError, match="is not signed"):
        loader.load_model(attacked["uri"])
    # MLflow's own loader follows MLmodel; with pickle-style loading switched off it refuses too
    monkeypatch.setenv("MLFLOW_ALLOW_PICKLE_DESERIALIZATION", "false")
    with pytest.raises(mlflow.exceptions.MlflowException, match="MLFLOW_ALLOW_PICKLE_DESERIALIZATION"):
        mlflow.pyfunc.load_model(attacked["uri"])
    assert not attacked["marker"].exists()
    # and fairops' loaders need no pickle: the genuine champion loads with the switch off
    assert mlflow.pyfunc.load_model(f"models:/{NAME}@champion").predict(_adult_rows()).shape == (3,)


def _pyenv_path() -> str:
    found = shutil.which("pyenv")
    home = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "bin"
    if found is None and not (home / "pyenv").exists():
        if os.environ.get("FAIROPS_REQUIRE_SERVICES"):
            pytest.fail("pyenv (MLflow's virtualenv environment manager needs it) is not installed")
        pytest.skip("pyenv is not installed: MLflow's default environment manager (virtualenv) needs it")
    return str(Path(found).parent) if found else str(home)


def post(url, body):
    request = urllib.request.Request(f"{url}/invocations", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _split(frame, scores=False):
    """A ``dataframe_split`` body; ``scores``: asking a fairops classifier for its scores (it answers labels)."""
    body = {"dataframe_split": json.loads(frame.to_json(orient="split", index=False, double_precision=15))}
    return {**body, "params": {"answer": "scores"}} if scores else body


@pytest.fixture(scope="module")
def deployed(champion, tmp_path_factory):
    """The champion, a SCAFF and a FairLOF model logged by fairops, each served by `mlflow models serve`
    with MLflow's default environment manager: every environment is made from the model alone."""
    folder = tmp_path_factory.mktemp("deployed")
    uri, client = champion["uri"], champion["client"]
    data = load_adult()
    numbers = data.X.select_dtypes("number").iloc[:3000].astype(float)
    sex = data.sensitive["sex"].iloc[:3000].astype(str).to_numpy()
    forest = SCAFFClassifier(n_estimators=10, theta=0.5, random_state=0).fit(numbers, data.y[:3000],
                                                                             sensitive_features=sex)
    detector = FairLOF(n_neighbors=10, correction_strength=0.3, novelty=True)
    detector.fit(numbers.iloc[:800].to_numpy(), sensitive_features={"sex": sex[:800]})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, KEY)
        mlflow.set_tracking_uri(uri)
        experiment = client.create_experiment("deployed", str(folder / "artifacts"))
        with mlflow.start_run(experiment_id=experiment):
            scaff_flavor.log_model(forest, name="scaff", input_example=numbers.head(3),
                                   registered_model_name="adult-scaff")
            fairlof_flavor.log_model(detector, name="lof", input_example=numbers.head(3).assign(sex=sex[:3]),
                                     registered_model_name="adult-lof")
        mlflow.set_tracking_uri(None)
    for name in ("adult-scaff", "adult-lof"):
        client.set_registered_model_alias(name, "champion", "1")
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri, KEY_ENV: KEY, "MLFLOW_ENV_ROOT": str(folder / "envs"),
           "PATH": os.pathsep.join([str(BIN), _pyenv_path(), os.environ.get("PATH", "")])}
    servers, urls = [], {}
    try:
        # one at a time: the three share one environment (the same requirements), made by the first
        for name in (NAME, "adult-scaff", "adult-lof"):
            port, log_path = free_port(), folder / f"{name}.log"
            process = start([str(BIN / "mlflow"), "models", "serve", "-m", f"models:/{name}@champion", "-p",
                             str(port), "-h", "127.0.0.1"], env, open(log_path, "w"))
            servers.append(process)
            urls[name] = f"http://127.0.0.1:{port}"
            wait_ready(f"{urls[name]}/ping", process, log_path, timeout=1200)
        yield {"urls": urls, "numbers": numbers, "sex": sex, "forest": forest, "detector": detector,
               "logs": folder}
    finally:
        for process in servers:
            stop(process)
        shutil.rmtree(folder / "envs", ignore_errors=True)


def test_default_environment_manager_built_the_environment_from_the_model(deployed):
    log = (deployed["logs"] / f"{NAME}.log").read_text()
    assert "Creating a new environment" in log  # MLflow's virtualenv manager, not the current environment
    installed = [line for line in log.splitlines() if "wheels/" in line and "fairops-" in line]
    assert installed, "the environment did not install the wheel shipped in the model"
    # the SCAFF and FairLOF models have the same requirements: their servers reuse that environment
    for name in ("adult-scaff", "adult-lof"):
        assert "already exists" in (deployed["logs"] / f"{name}.log").read_text()


def test_the_served_champion_answers_a_real_adult_row_with_its_declared_output(deployed, champion, keyed):
    rows = _adult_rows(1)
    status, answer = post(deployed["urls"][NAME], _split(rows))
    assert status == 200 and answer["predictions"] in ([0], [1]), answer  # the decision's label, by default
    status, answer = post(deployed["urls"][NAME], _split(rows, scores=True))
    assert status == 200, answer
    # as MLmodel's metadata.fairops_scores_output declares: the probability, what it is of, the decision
    assert list(answer["predictions"][0]) == ["probability", "positive_class", "decision"]
    in_process = loader.load_model(f"models:/{NAME}@champion").predict(rows).iloc[0]
    assert answer["predictions"][0]["probability"] == pytest.approx(in_process["probability"], rel=1e-12)
    assert answer["predictions"][0]["positive_class"] == in_process["positive_class"] == "income <= 50K"
    assert answer["predictions"][0]["decision"] == in_process["decision"]


@pytest.mark.parametrize("change, reason", [
    ({"age": 40.5}, "column 'age' must hold whole numbers; row 0 has 40.5"),
    ({"sex": "Alien"}, "column 'sex' has the category 'Alien' in row 0, unseen in training"),
    ({"rows": 0}, "input has no rows; send at least one row"),
])
def test_the_served_champion_refuses_a_malformed_row_with_400_and_one_line(deployed, champion, change, reason):
    rows = _adult_rows(1)
    if "rows" in change:
        rows = rows.iloc[:0]
    else:
        for column, value in change.items():
            rows[column] = pd.Series([value], index=rows.index, dtype=object)
    status, answer = post(deployed["urls"][NAME], _split(rows, scores=True))
    document = json.loads(next(_store_dir(champion).rglob("model.json")).read_text())
    if "sex" in change and document["input_schema"]["unseen_categories"]:
        # the champion one-hot encodes ignoring unknown categories (which family wins depends on the search),
        # and its schema says so: the row is answered, as by a model that never saw the value
        assert status == 200 and 0 < answer["predictions"][0]["probability"] < 1, answer
        return
    assert status == 400, answer
    assert answer["message"].startswith(reason) and "\n" not in answer["message"]
    assert "stack_trace" not in answer


def test_scaff_and_fairlof_models_serve_from_their_own_wheel_too(deployed):
    rows = deployed["numbers"].iloc[2000:2010]
    status, answer = post(deployed["urls"]["adult-scaff"], _split(rows, scores=True))
    assert status == 200, answer
    np.testing.assert_allclose(answer["predictions"], deployed["forest"].predict_proba(rows)[:, 1], rtol=1e-12)
    with_sex = rows.assign(sex=deployed["sex"][2000:2010])
    status, answer = post(deployed["urls"]["adult-lof"], _split(with_sex))
    assert status == 200, answer
    expected = -deployed["detector"].score_samples(rows.to_numpy(), sensitive_features={"sex": with_sex["sex"]})
    np.testing.assert_allclose(pd.DataFrame(answer["predictions"])["outlier_score"], expected, rtol=1e-12)
