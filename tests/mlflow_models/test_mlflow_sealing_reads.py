"""What is verified is what is used: every load path opens each model file once and parses the bytes it checked.

A signed classifier (with a served decision) is saved into a real folder. One test counts the opens of
each of its files on every load path by wrapping ``builtins.open``, ``io.open`` and ``os.open`` around
the load (the files, the file system and the loaders are real). Another lets a second process swap
``data/model.json`` and ``data/model.skops`` by atomic renames between the signed files, an unsigned pair
(another positive label, a threshold of -1e300, a model fitted on the flipped labels) and a named pipe,
while the loads run: a load may be refused, but never serve the unsigned model and never hang.
``FAIROPS_SWAP_LOADS`` sets the number of loads (200 by default; docs/mlflow/loading.md gives a run of 1,000).
"""

import asyncio
import builtins
import collections
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairops.jobs import _serve as serve
from fairops.metrics._thresholds import OperatingPoint
from fairops.mlflow import classifier, loader, scaff as scaff_flavor, sealing
from fairops.mlflow.sealing import KEY_ENV, ModelFilesError
from fairops.models import ServedDecision
from fairops.scaff import SCAFFTreeClassifier
from tests.mlflow_stores import empty_store_uri

KEY = "swap-attack-key-of-32-bytes-long"
HONEST, PLANTED = "approved", "planted"
SWAPPED = ("model.json", "model.skops")


def _rows(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n)})
    return X, (X["x"] + rng.normal(scale=0.3, size=n) > 0).astype(int)


@pytest.fixture()
def signed(tmp_path, monkeypatch):
    """A signed classifier folder and, beside it, the unsigned files an attacker would swap in."""
    monkeypatch.setenv(KEY_ENV, KEY)
    X, y = _rows()
    honest = LogisticRegression().fit(X, y)
    path = tmp_path / "model"
    classifier.save_model(honest, path, input_example=X.head(2), pip_requirements=[],
                          decision=ServedDecision(HONEST, OperatingPoint(0.5, 0.0)))
    planted_dir = tmp_path / "planted"
    monkeypatch.delenv(KEY_ENV)
    classifier.save_model(LogisticRegression().fit(X, 1 - y), planted_dir, input_example=X.head(2),
                          pip_requirements=[], decision=ServedDecision(PLANTED, OperatingPoint(-1e300, 0.0)))
    monkeypatch.setenv(KEY_ENV, KEY)
    document = json.loads((planted_dir / "data" / "model.json").read_text())
    assert document["decision"]["rule"]["threshold"] == -1e300
    return {"path": path, "planted": planted_dir / "data", "X": X, "honest": honest}


@contextlib.contextmanager
def counting_opens(root: Path):
    """Count, per file under ``root`` and per calling module, the opens by path (``open``, ``io.open``, ``os.open``)."""
    counts = collections.Counter()
    real = builtins.open, io.open, os.open
    root = str(root)

    def note(target):
        if isinstance(target, (str, bytes, os.PathLike)):
            full = os.path.abspath(os.fsdecode(target))
            if full.startswith(root + os.sep):
                caller = sys._getframe(2).f_globals.get("__name__", "?")
                counts[os.path.relpath(full, root), caller.split(".")[0]] += 1

    def counted_open(file, *args, **kwargs):
        note(file)
        return real[0](file, *args, **kwargs)

    def counted_os_open(path, *args, **kwargs):
        note(path)
        return real[2](path, *args, **kwargs)

    builtins.open = io.open = counted_open
    os.open = counted_os_open
    try:
        yield counts
    finally:
        builtins.open, io.open, os.open = real


def _listed(path: Path) -> set:
    return set(json.loads((path / sealing.MANIFEST_FILE).read_text())["files"]) | {sealing.MANIFEST_FILE}


def _serve_once(path: Path, X):
    """`fairops serve`'s load: the private verified copy, the guarded app, one request in process."""
    with tempfile.TemporaryDirectory() as folder:
        app = serve.guarded_app(serve.local_model(str(path), None, folder))
        body = json.dumps({"dataframe_split": X.head(3).to_dict(orient="split", index=False)}).encode()
        return _asgi_post(app, body)


def _asgi_post(app, body: bytes):
    sent = []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/invocations", "query_string": b"", "http_version": "1.1",
             "headers": [(b"content-type", b"application/json")], "scheme": "http", "root_path": "",
             "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1)}
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, json.loads(b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"))


LOADS = {
    "fairops loader": lambda path, X: loader.load_model(str(path)).predict(X.head(3)),
    "fairops loader, native": lambda path, X: loader.load_native(str(path)).predict_proba(X.head(3)),
    "flavor load_model": lambda path, X: classifier.load_model(str(path)).predict_proba(X.head(3)),
    "mlflow pyfunc": lambda path, X: mlflow.pyfunc.load_model(str(path)).predict(X.head(3),
                                                                                  params={"answer": "scores"}),
    "fairops serve": _serve_once,
}


@pytest.mark.parametrize("path_name", sorted(LOADS))
def test_every_load_path_opens_each_model_file_once(signed, path_name):
    path, X = signed["path"], signed["X"]
    with counting_opens(path) as counts:
        LOADS[path_name](path, X)
    by_fairops = collections.Counter({name: n for (name, who), n in counts.items() if who == "fairops"})
    assert set(by_fairops) == _listed(path)  # every file of the seal read (and hashed) ...
    assert max(by_fairops.values()) == 1, by_fairops  # ... through one open, whose bytes were parsed
    others = {key: n for key, n in counts.items() if key[1] != "fairops"}
    if path_name == "mlflow pyfunc":
        # MLflow reads MLmodel to pick the loader module and requirements.txt to compare versions before it
        # hands the data folder to fairops, and the input example after; nothing MLflow reads reaches the model
        assert {name for name, _ in others} <= {"MLmodel", "requirements.txt", "input_example.json"}
        assert set(who for _, who in others) == {"mlflow"} and max(others.values()) == 1
    else:
        assert others == {}, others


def test_a_scaff_model_and_its_inner_manifest_are_read_once_too(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    X, y = _rows()
    s = np.random.default_rng(1).integers(0, 2, len(y))
    path = tmp_path / "scaff"
    scaff_flavor.save_model(SCAFFTreeClassifier(max_depth=3).fit(X, y, sensitive_features=s), path,
                            input_example=X.head(2), pip_requirements=[])
    for load in (loader.load_model, loader.load_native, scaff_flavor.load_model):
        with counting_opens(path) as counts:
            load(str(path))
        assert {name for name, _ in counts} == _listed(path)
        assert set(counts.values()) == {1} and {who for _, who in counts} == {"fairops"}, counts


def test_what_is_served_is_a_copy_of_the_bytes_verified(signed, tmp_path):
    """The served folder is private: rewriting the source after the check changes nothing served."""
    path, X = signed["path"], signed["X"]
    copy = serve.local_model(str(path), None, str(tmp_path / "private"))
    assert Path(copy).parent == tmp_path / "private"
    for name in _listed(path):
        assert (Path(copy) / name).read_bytes() == (path / name).read_bytes()
    (path / "data" / "model.json").write_bytes((signed["planted"] / "model.json").read_bytes())
    with pytest.raises(ModelFilesError, match="model.json"):
        serve.local_model(str(path), None, str(tmp_path / "again"))
    status, answer = _asgi_post(serve.guarded_app(copy), json.dumps(
        {"dataframe_split": X.head(2).to_dict(orient="split", index=False)}).encode())
    assert status == 200 and {row["positive_class"] for row in answer["predictions"]} == {HONEST}


SWAPPER = r"""
import os, shutil, sys, time
data, honest, planted, staging, seconds = sys.argv[1:6]
names = ("model.json", "model.skops")
deadline = time.monotonic() + float(seconds)
rounds = 0
while time.monotonic() < deadline:
    for source in (planted, honest, "fifo", honest):
        for name in names:
            staged = os.path.join(staging, name)
            if source == "fifo":
                os.mkfifo(staged)
            else:
                shutil.copyfile(os.path.join(source, name), staged)
            os.replace(staged, os.path.join(data, name))
    rounds += 1
for name in names:  # leave the signed files in place
    shutil.copyfile(os.path.join(honest, name), os.path.join(staging, name))
    os.replace(os.path.join(staging, name), os.path.join(data, name))
print(rounds)
"""


def _outcome(result, honest_probability):
    """``"signed"`` or ``"unsigned"``: which model answered (the decision's label or the probabilities)."""
    if isinstance(result, tuple):  # fairops serve: (status, answer)
        status, answer = result
        assert status == 200, answer
        labels = {row["positive_class"] for row in answer["predictions"]}
        probability = [row["probability"] for row in answer["predictions"]]
    elif isinstance(result, pd.DataFrame):
        labels, probability = set(result["positive_class"]), result["probability"].to_numpy()
    else:
        labels, probability = {HONEST}, np.asarray(result)[:, 1]
    if labels == {HONEST} and np.allclose(probability, honest_probability, rtol=1e-9):
        return "signed"
    return "unsigned"


def _run_loads(signed, loads, seconds):
    path, X = signed["path"], signed["X"]
    honest_probability = signed["honest"].predict_proba(X.head(3))[:, 1]
    counts = collections.Counter()
    names, deadline = sorted(LOADS), time.monotonic() + seconds
    for i in range(loads):
        if time.monotonic() > deadline:
            break
        try:
            counts[_outcome(LOADS[names[i % len(names)]](path, X), honest_probability)] += 1
        except ModelFilesError:
            counts["refused"] += 1
    return counts


@pytest.mark.slow
def test_swapping_files_during_loads_never_loads_the_unsigned_model(signed, tmp_path):
    loads = int(os.environ.get("FAIROPS_SWAP_LOADS", "200"))
    seconds = max(300, loads * 1.5)  # the bound on the whole run; the loads, not the clock, end it on an idle machine
    honest_copy = tmp_path / "honest"
    honest_copy.mkdir()
    for name in SWAPPED:
        (honest_copy / name).write_bytes((signed["path"] / "data" / name).read_bytes())
    staging = tmp_path / "staging"
    staging.mkdir()
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(signed["path"] / "data"), str(honest_copy),
                                str(signed["planted"]), str(staging), str(seconds)], stdout=subprocess.PIPE, text=True)
    result = {}
    worker = threading.Thread(target=lambda: result.update(_run_loads(signed, loads, seconds)), daemon=True)
    try:
        worker.start()
        worker.join(seconds + 60)
        assert not worker.is_alive(), "a load hung (a named pipe opened for reading?)"
    finally:
        swapper.terminate()
        swapper.wait(timeout=30)
    print(f"\n{sum(result.values())} loads during the swaps: {dict(result)}")
    assert result.get("unsigned", 0) == 0, result
    assert result.get("refused", 0) > 0 and result.get("signed", 0) > 0, result  # the swaps raced the loads


@pytest.mark.slow
def test_promote_and_monitor_open_each_file_of_the_versions_they_load_once(tmp_path, monkeypatch):
    from fairops.cli import main
    from tests.lifecycle_models import register, rows

    monkeypatch.setenv(KEY_ENV, KEY)
    uri = empty_store_uri(tmp_path / "mlflow.db")
    versions = [register(uri, "read-once", C=1.0, seed=0), register(uri, "read-once", C=0.5, seed=1)]
    assert [v.version for v in versions] == ["1", "2"]
    rows(7, 2000).to_csv(tmp_path / "rows.csv", index=False)
    common = ["--data", str(tmp_path / "rows.csv"), "--target", "y", "--sensitive", "sex", "--tracking-uri", uri]
    commands = {"promote": ["promote", "read-once", *common, "--min-fairness", "0", "--max-accuracy-drop", "1"],
                "monitor": ["monitor", "read-once", *common, "--window", "1000"]}
    for command, argv in commands.items():
        with counting_opens(tmp_path) as counts:
            assert main(argv) == 0
        opened = collections.Counter()
        for (name, who), n in counts.items():
            if Path(name).name in sealing.ADDED_BY_MLFLOW:  # MLflow writes it on registering; fairops never reads it
                continue
            if sealing.MANIFEST_FILE in os.listdir(tmp_path / Path(name).parent) or "/data/" in f"/{name}":
                assert who == "fairops", (command, name, who)
                opened[name] += n
        folders = {Path(name).parent for name in opened if Path(name).name == sealing.MANIFEST_FILE}
        assert len(folders) == (2 if command == "promote" else 1)  # promote: candidate and champion
        for folder in folders:
            listed = {str(folder / name) for name in _listed(tmp_path / folder)}
            assert listed == {name for name in opened if name.startswith(f"{folder}/")}, command
        assert set(opened.values()) == {1}, (command, opened)
