"""`mlflow models serve` of an edited, re-sealed SCAFF model: refused cleanly at load, never a crash.

The edit (a root split on feature 10^8) crashed the compiled predict code before models were checked
on load. Now the server holding it stops at start-up with the ValueError naming the array (exit code
1, no signal), so no request can reach the kernels; a second server holding the good model answers a
good request, and answers a bad request with a 400 while staying up.
"""

import os
import shutil
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

from fairops.mlflow import _model_files, scaff as scaff_flavor, sealing
from fairops.scaff import SCAFFClassifier
from tests.fair_data import biased_rows
from tests.services import BIN, free_port, post_frame, start, stop, wait_ready

pytestmark = pytest.mark.slow


def _wait_exit_or_ready(process, url, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/ping", timeout=2):
                return "ready"
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    return "exited" if process.poll() is not None else "neither"


def test_an_edited_model_never_takes_a_server_down(tmp_path):
    os.environ.pop(sealing.KEY_ENV, None)
    X, y, s = biased_rows(5)
    model = SCAFFClassifier(n_estimators=5, theta=0.3, random_state=0).fit(X, y, sensitive_features=s)
    good = tmp_path / "good"
    scaff_flavor.save_model(model, good, input_example=X.head(3), pip_requirements=[])
    edited = tmp_path / "edited"
    shutil.copytree(good, edited)
    with np.load(edited / "data" / _model_files.ARRAYS_FILE) as archive:
        arrays = {name: archive[name] for name in archive.files}
    arrays["node_feature_"] = arrays["node_feature_"].astype(np.int64)
    arrays["node_feature_"][0] = 10**8
    np.savez(edited / "data" / _model_files.ARRAYS_FILE, **arrays)
    _model_files.write_manifest(edited / "data")
    sealing.seal(edited)

    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    servers = {}
    try:
        for name, path in (("edited", edited), ("good", good)):
            port = free_port()
            log_path = tmp_path / f"{name}.log"
            command = [str(BIN / "mlflow"), "models", "serve", "-m", str(path), "--env-manager", "local",
                       "-p", str(port), "-h", "127.0.0.1"]
            servers[name] = (start(command, env, open(log_path, "w")), f"http://127.0.0.1:{port}", log_path)

        process, url, log_path = servers["edited"]
        assert _wait_exit_or_ready(process, url) == "exited"
        log = log_path.read_text()
        assert process.returncode == 1, f"exit code {process.returncode} (negative: killed by a signal):\n{log[-3000:]}"
        assert "fairops.errors.InputError: node_feature_[0] = 100000000 is outside [-1, 4)" in log
        with pytest.raises(urllib.error.URLError):
            post_frame(f"{url}/invocations", X.head(3))

        process, url, log_path = servers["good"]
        wait_ready(f"{url}/ping", process, log_path)
        status, answer = post_frame(f"{url}/invocations", X.head(20), {"answer": "scores"})
        assert status == 200
        np.testing.assert_allclose(answer["predictions"], model.predict_proba(X.head(20))[:, 1], rtol=1e-12)
        status, answer = post_frame(f"{url}/invocations", X.head(20))  # by default, one label per row
        assert status == 200 and answer["predictions"] == model.predict(X.head(20)).tolist()
        status, answer = post_frame(f"{url}/invocations", X.head(2).drop(columns="a"))
        assert status == 400 and "a" in answer["message"]
        with urllib.request.urlopen(f"{url}/ping", timeout=10) as answer:
            assert answer.status == 200
        assert process.poll() is None
    finally:
        for process, _, _ in servers.values():
            stop(process)
