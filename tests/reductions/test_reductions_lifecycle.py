"""A reduction picked by `fairops tune` is registered, served, refused when tampered with, gated and watched like
every family: two signed German tunes (balanced random search, so they are short) whose search holds only the
reductions, then `fairops serve`, the loader on
edited copies, the promotion gate and `fairops monitor`, all on a real SQLite store and over loopback HTTP."""

import contextlib
import io
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io
from mlflow.tracking import MlflowClient

from fairops.cli import main
from fairops.datasets import load_german
from fairops.mlflow import classifier, loader, sealing
from fairops.mlflow.answer import SCORE_OUTPUTS
from fairops.mlflow.sealing import ModelFilesError
from fairops.reductions._base import ReductionBase
from tests.services import free_port, post_frame, start, stop, wait_ready

pytestmark = pytest.mark.slow
NAME, KEY = "reduced-german", "reductions-signing-key-of-32-byte"
TUNE = ["tune", "--dataset", "german", "--max-train-rows", "300", "--families", "exponentiated_gradient,grid_search",
        "--no-progress", "--model-name", NAME, "--method", "rs-bal", "--s-max", "2"]  # 9 random-search fits


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reductions-project")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(sealing.KEY_ENV, KEY)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main([*TUNE, "--project-dir", str(folder), "--seed", "0"]) == 0
            second = main([*TUNE, "--project-dir", str(folder), "--seed", "1", "--promote"])
    uri = f"sqlite:///{folder}/mlflow.db"
    return {"folder": folder, "uri": uri, "client": MlflowClient(uri), "printed": out.getvalue(), "second": second}


def _local_model(project, version: str, target: Path) -> Path:
    import mlflow

    mlflow.set_tracking_uri(project["uri"])
    try:
        return Path(mlflow.artifacts.download_artifacts(f"models:/{NAME}/{version}", dst_path=str(target)))
    finally:
        mlflow.set_tracking_uri(None)


def _saved_model(folder: Path):
    return skops.io.loads((folder / "data" / classifier.MODEL_FILE).read_bytes(),
                          trusted=list(classifier.TRUSTED_TYPES))


def _reduction_in(model) -> ReductionBase:
    """The reduction inside the saved classifier (the served wrapper holds the pipeline, whose last step it is)."""
    stack = [model]
    while stack:
        value = stack.pop()
        if isinstance(value, ReductionBase):
            return value
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif hasattr(value, "__dict__") and type(value).__module__.split(".")[0] in ("sklearn", "fairops"):
            stack.extend(vars(value).values())
    raise AssertionError(f"no reduction in {type(model).__name__}")


def test_the_registered_pick_is_a_signed_reduction_saved_as_data(project, tmp_path, monkeypatch):
    assert f"registered: models:/{NAME}@champion (version 1)" in project["printed"]
    folder = _local_model(project, "1", tmp_path / "model")
    reduction = _reduction_in(_saved_model(folder))
    assert abs(reduction.weights_.sum() - 1) < 1e-9 and reduction.n_predictors_ >= 1
    assert not list(folder.rglob("*.pkl")) and not list(folder.rglob("*.pickle"))  # data files, no pickle
    monkeypatch.setenv(sealing.KEY_ENV, KEY)
    loader.load_model(str(folder))  # the signature verifies with the key it was signed with


def test_served_by_fairops_serve_it_answers_as_loaded_in_process(project, tmp_path, monkeypatch):
    monkeypatch.setenv(sealing.KEY_ENV, KEY)
    # fairops serve serves @champion: version 1, or 2 when the second tune's gate passed
    champion = str(project["client"].get_model_version_by_alias(NAME, "champion").version)
    folder = _local_model(project, champion, tmp_path / "model")
    model = loader.load_model(str(folder))
    rows = load_german().X.head(20)
    expected = model.predict(rows)
    port, log = free_port(), tmp_path / "serve.log"
    process = start([sys.executable, "-m", "fairops.cli", "serve", NAME, "--tracking-uri", project["uri"],
                     "--port", str(port)], {**os.environ, sealing.KEY_ENV: KEY}, open(log, "w"))
    try:
        wait_ready(f"http://127.0.0.1:{port}/ping", process, log)
        text = rows.astype({c: object for c in rows.columns if str(rows[c].dtype) == "category"})
        status, answer = post_frame(f"http://127.0.0.1:{port}/invocations", text)
    finally:
        stop(process)
    assert status == 200
    served = pd.DataFrame(answer["predictions"])
    assert list(served.columns) == list(expected.columns)
    score = next(name for name in SCORE_OUTPUTS if name in expected.columns)
    np.testing.assert_allclose(served[score], expected[score].to_numpy(), rtol=0, atol=1e-12)
    assert served["decision"].tolist() == expected["decision"].tolist()


def _edit_weights(folder: Path, change) -> None:
    """Rewrite the reduction's weights inside the saved model.skops, as a holder of the files could."""
    path = folder / "data" / classifier.MODEL_FILE
    model = _saved_model(folder)
    reduction = _reduction_in(model)
    reduction.__dict__["weights_"] = change(reduction.weights_)
    path.write_bytes(skops.io.dumps(model))


def test_a_tampered_reduction_is_refused_signed_or_resealed(project, tmp_path, monkeypatch):
    folder = _local_model(project, "1", tmp_path / "model")
    _edit_weights(folder, lambda w: w * 2)
    monkeypatch.setenv(sealing.KEY_ENV, KEY)
    with pytest.raises(ModelFilesError):  # the signed seal no longer matches
        loader.load_model(str(folder))
    resealed = tmp_path / "resealed"
    shutil.copytree(folder, resealed)
    monkeypatch.delenv(sealing.KEY_ENV)
    sealing.seal(resealed)  # an unkeyed re-seal: the files agree with the seal, so the state checks decide
    with pytest.raises(Exception, match="weights_ sum to 2"):
        loader.load_model(str(resealed))


def test_the_second_tune_is_gated_and_the_verdict_and_alias_agree(project):
    from fairops.registry._promotion import GATE_TAG

    client = project["client"]
    verdict = client.get_model_version(NAME, "2").tags[GATE_TAG]
    champion = str(client.get_model_version_by_alias(NAME, "champion").version)
    assert (verdict, project["second"], champion) in {("passed", 0, "2"), ("refused", 3, "1")}, project["printed"]


def test_the_champion_is_watched_over_windows(project, capsys):
    code = main(["monitor", NAME, "--dataset", "german", "--window", "200", "--tracking-uri", project["uri"]])
    lines = capsys.readouterr().out.splitlines()
    assert code in (0, 1)  # 1: an alert, which a five-window stream of the training data may raise
    windows = [line for line in lines if line.lstrip().startswith("window")]
    assert len(windows) == 5, lines
