"""Starting and stopping real servers (MLflow tracking server, model server) on loopback for tests."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(command, env, log):
    """Start a server in its own process group (so the whole group can be stopped by its id)."""
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def post_frame(url, frame, params=None):
    """POST ``frame`` to a model server as ``dataframe_split`` (with ``params`` when given); ``(status, decoded JSON
    answer)``."""
    # json.dumps writes floats in round-trip form (pandas' to_json keeps only 10 digits by default).
    request_body = {"dataframe_split": frame.to_dict(orient="split", index=False)}
    if params is not None:
        request_body["params"] = params
    body = json.dumps(request_body).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def wait_ready(url, process, log_path, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{Path(log_path).read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    raise RuntimeError(f"server at {url} not ready after {timeout}s:\n{Path(log_path).read_text()[-3000:]}")



@contextlib.contextmanager
def mlflow_tracking_server(folder, backend_store_uri=None):
    """A real `mlflow server` on loopback with a SQLite backend in ``folder`` (or the given backend store,
    e.g. a finished project's ``mlflow.db``); yields its URL, which also serves the UI."""
    port = free_port()
    log_path = Path(folder) / "server.log"
    backend = backend_store_uri or f"sqlite:///{folder}/mlflow.db"
    command = [str(BIN / "mlflow"), "server", "--backend-store-uri", backend,
               "--artifacts-destination", str(Path(folder) / "artifacts"), "--host", "127.0.0.1",
               "--port", str(port), "--workers", "1"]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    with open(log_path, "w") as log:
        process = start(command, env, log)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_ready(f"{url}/health", process, log_path, timeout=300)
            yield url
        finally:
            stop(process)


@contextlib.contextmanager
def grpc_storage_proxy(storage_url, folder, timeout=120):
    """`fairops grpc-proxy` (Optuna's gRPC storage proxy) on loopback in front of ``storage_url``; yields
    the ``grpc://`` URL workers use."""
    import warnings

    import optuna
    from optuna.storages import GrpcStorageProxy

    port = free_port()
    log_path = Path(folder) / "grpc-proxy.log"
    command = [sys.executable, "-m", "fairops.cli", "grpc-proxy", "--storage", storage_url, "--host", "127.0.0.1",
               "--port", str(port)]
    with open(log_path, "w") as log:
        process = start(command, dict(os.environ), log)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                client = GrpcStorageProxy(host="127.0.0.1", port=port)
            deadline = time.monotonic() + timeout
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"proxy exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
                try:
                    client.wait_server_ready(timeout=1)
                    break
                except ConnectionError as error:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"proxy not ready after {timeout}s:\n{log_path.read_text()[-3000:]}") \
                            from error
            client.close()
            yield f"grpc://127.0.0.1:{port}"
        finally:
            stop(process)


@contextlib.contextmanager
def serving_thread(model_path, timeout=60):
    """``fairops serve``'s app (MLflow's scoring server behind the request guard) for the model folder at
    ``model_path``, run by uvicorn in a thread of this process on a free loopback port; yields its URL."""
    import threading

    import uvicorn

    from fairops.jobs._serve import guarded_app

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(guarded_app(str(model_path)), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the model server for {model_path} did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
