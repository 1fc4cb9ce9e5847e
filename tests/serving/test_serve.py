"""`fairops serve`: MLflow's scoring app behind request limits, checked in process over ASGI (no sockets).

The HTTP path (the command `fairops tune` prints, pasted into a shell) is in tests/serving/test_serve_command.py.
"""

import asyncio
import json
import random
import socket

import mlflow
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairops.cli import main
from fairops.jobs import _serve as serve
from fairops.jobs._request_guard import RequestGuard, json_depth
from fairops.mlflow import classifier
from fairops.mlflow._mlflow_internals import WRITTEN_FOR
from fairops.mlflow._scoring_app import scoring_app, scoring_app_supported


def _depth(value) -> int:
    """The oracle: nesting depth of a parsed JSON value."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _random_json(rng: random.Random, budget: int):
    """Nested lists and objects whose strings are full of brackets, quotes and escapes."""
    kind = rng.random()
    if budget <= 0 or kind < 0.3:
        return rng.choice([1, -2.5e300, None, True, "", '"[{', "\\]}\\", "a\\\"[[b", "]]]]", "{\"x\": [1]}"])
    if kind < 0.65:
        return [_random_json(rng, budget - 1) for _ in range(rng.randint(0, 3))]
    return {f'k[{i}"': _random_json(rng, budget - 1) for i in range(rng.randint(0, 3))}


def test_json_depth_equals_the_parsed_depth():
    rng = random.Random(0)
    for _ in range(500):
        value = _random_json(rng, rng.randint(0, 12))
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
        assert json_depth(text.encode()) == _depth(value), text


def test_json_depth_needs_no_recursion_and_spans_chunks():
    deep = 3_000_000  # longer than one scanning chunk, deeper than any recursion limit
    assert json_depth(b"[" * deep + b"]" * deep) == deep
    assert json_depth(b"[1, 2]" * 400_000) == 1
    assert json_depth(b"") == 0 and json_depth(b'"[[["') == 0


def _asgi(app, method="POST", path="/invocations", body=b"", content_type=b"application/json", chunk=None,
          declared=None):
    """Send one request to an ASGI app in process; answer (status, body bytes, how many body parts were read)."""
    parts = [body[i:i + chunk] for i in range(0, len(body), chunk)] if chunk else [body]
    messages = [{"type": "http.request", "body": part, "more_body": i < len(parts) - 1} for i, part in enumerate(parts)]
    read, sent = [], []

    async def receive():
        if messages:
            read.append(1)
            return messages.pop(0)
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    headers = [(b"content-type", content_type)]
    if declared is not None:
        headers.append((b"content-length", str(declared).encode()))
    scope = {"type": "http", "method": method, "path": path, "headers": headers, "query_string": b"",
             "http_version": "1.1", "scheme": "http", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
             "root_path": ""}
    try:
        asyncio.run(app(scope, receive, send))
    except RecursionError:  # an app's own error handler answers 500, then re-raises for the server to log
        pass
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"), len(read)


async def _echo(scope, receive, send):
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def test_the_guard_hands_the_whole_body_on_and_refuses_with_one_line():
    guard = RequestGuard(_echo, max_depth=4, max_bytes=1000)
    body = json.dumps({"dataframe_split": {"columns": ["a"], "data": [[1], [2]]}}).encode()
    assert _asgi(guard, body=body, chunk=7)[:2] == (200, body)  # read in parts, replayed whole
    status, answer, _ = _asgi(guard, body=b'{"inputs": [[[[1]]]]}')
    assert status == 400 and json.loads(answer) == {"error_code": "BAD_REQUEST",
                                                    "message": "JSON nested 5 levels deep; the limit is 4"}
    status, answer, read = _asgi(guard, body=b"[" * 600 + b"]" * 600, chunk=100)
    assert status == 413 and read == 11 and b"\n" not in answer  # stops reading once over the limit
    status, answer, read = _asgi(guard, body=b"{}", declared=10**9)
    assert status == 413 and read == 0 and b"1000000000 bytes" in answer  # refused on the declared length
    # what is not a JSON body for /invocations passes untouched
    assert _asgi(guard, body=b"[[[[[1]]]]]", content_type=b"text/csv")[0] == 200
    assert _asgi(guard, method="GET", path="/ping")[0] == 200


@pytest.mark.parametrize("limits", [{"max_depth": 0}, {"max_bytes": -1}, {"max_depth": 2.5}, {"max_depth": True}])
def test_the_guard_refuses_limits_that_are_not_positive_integers(limits):
    with pytest.raises(ValueError, match=next(iter(limits))):
        RequestGuard(_echo, **limits)


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=200), "z": rng.normal(size=200)})
    y = (X["x"] + rng.normal(scale=0.5, size=200) > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    path = tmp_path_factory.mktemp("served") / "model"
    classifier.save_model(model, path, input_example=X.head(2), pip_requirements=[])
    return path, model, X


def test_the_guarded_app_is_mlflows_answer_for_everything_it_lets_through(saved_model):
    path, model, X = saved_model
    assert scoring_app_supported(mlflow.__version__), f"MLflow {mlflow.__version__} is outside {WRITTEN_FOR}"
    guarded = serve.guarded_app(str(path))
    body = json.dumps({"dataframe_split": json.loads(X.head(5).to_json(orient="split", index=False))}).encode()
    status, answer, _ = _asgi(guarded, body=body)
    probabilities = [row["probability"] for row in json.loads(answer)["predictions"]]
    assert status == 200
    np.testing.assert_allclose(probabilities, model.predict_proba(X.head(5))[:, 1], rtol=1e-6)
    # nested 1,000 deep: MLflow's own app fails inside its parser (a 500); behind the guard, a 400
    deep = b'{"dataframe_records": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    assert _asgi(scoring_app(mlflow.pyfunc.load_model(str(path))), body=deep)[0] == 500
    status, answer, _ = _asgi(guarded, body=deep)
    assert status == 400 and json.loads(answer)["message"] == "JSON nested 1001 levels deep; the limit is 32"
    assert _asgi(guarded, method="GET", path="/ping")[0] == 200


def _plant_loader(path, marker) -> None:
    """Rewrite ``MLmodel`` as an attacker without the key would: its loader module is planted code."""
    (path / "code").mkdir()
    (path / "code" / "planted_serve_loader.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nfrom fairops.mlflow.classifier import _load_pyfunc\n")
    text = (path / "MLmodel").read_text()
    assert "loader_module: fairops.mlflow.classifier\n" in text
    (path / "MLmodel").write_text(text.replace("loader_module: fairops.mlflow.classifier\n",
                                               "loader_module: planted_serve_loader\n    code: code\n"))


def test_served_models_are_loaded_by_fairops_loader_never_by_the_module_mlmodel_names(saved_model, tmp_path,
                                                                                      monkeypatch):
    """mlflow.pyfunc.load_model imports MLmodel's loader_module before any fairops check, even with the key."""
    import shutil

    from fairops.mlflow.sealing import KEY_ENV, ModelFilesError, seal

    source, model, X = saved_model
    marker = tmp_path / "planted-code-ran"
    resealed = tmp_path / "resealed"
    shutil.copytree(source, resealed)
    _plant_loader(resealed, marker)
    seal(resealed)  # no key: the manifest proves nothing, the fixed flavor table still decides what runs
    body = json.dumps({"dataframe_split": json.loads(X.head(3).to_json(orient="split", index=False))}).encode()
    status, answer, _ = _asgi(serve.guarded_app(str(resealed)), body=body)
    assert status == 200 and not marker.exists()
    np.testing.assert_allclose([row["probability"] for row in json.loads(answer)["predictions"]],
                               model.predict_proba(X.head(3))[:, 1], rtol=1e-6)
    monkeypatch.setenv(KEY_ENV, "k" * 32)
    signed = tmp_path / "signed"
    classifier.save_model(model, signed, input_example=X.head(2), pip_requirements=[])
    _plant_loader(signed, marker)
    with pytest.raises(ModelFilesError, match="MLmodel|code/planted_serve_loader.py"):
        serve.guarded_app(str(signed))
    assert not marker.exists()


def test_each_worker_builds_the_same_guarded_app_from_its_environment(saved_model, monkeypatch):
    path, _, _ = saved_model
    monkeypatch.setenv("FAIROPS_SERVE_MODEL_PATH", str(path))
    monkeypatch.setenv("FAIROPS_SERVE_MAX_DEPTH", "5")
    monkeypatch.setenv("FAIROPS_SERVE_MAX_BYTES", "4096")
    app = serve.worker_app()
    assert (app.max_depth, app.max_bytes) == (5, 4096)
    assert _asgi(app, body=b'{"inputs": [[[[[[1]]]]]]}')[0] == 400


def test_model_names_become_model_uris(saved_model):
    assert serve.model_uri_of(str(saved_model[0])) == str(saved_model[0].resolve())
    for bad in ("a@b@c", "name/v2", "x@"):
        with pytest.raises(ValueError, match="neither a registered model name"):
            serve.model_uri_of(bad)


def _refused(capsys, *argv):
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fairops serve: error: ") and err.count("\n") == 1, err
    return err


def test_bad_serve_options_are_refused_in_one_line(capsys, saved_model, tmp_path):
    folder = str(saved_model[0])
    assert "--max-json-depth must be at least 1" in _refused(capsys, folder, "--max-json-depth", "0")
    assert "--max-request-mb must be positive" in _refused(capsys, folder, "--max-request-mb", "0")
    assert "--workers must be at least 1" in _refused(capsys, folder, "--workers", "0")
    assert "--port must be in [1, 65535]" in _refused(capsys, folder, "--port", "70000")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert f"cannot listen on 127.0.0.1:{port}" in _refused(capsys, folder, "--port", str(port))
    assert "no MLflow store at" in _refused(capsys, "fairops-adult", "--project-dir", str(tmp_path))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "MLmodel").write_text("flavors: {}\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    assert "has no fairops_manifest.json" in _refused(capsys, str(tmp_path / "broken"), "--port", str(free))
