"""``fairops serve MODEL``: a logged or registered model over HTTP, with limits on every request.

The server is MLflow's own scoring server (the routes, request formats and answers of ``mlflow models
serve``: ``POST /invocations``, ``GET /ping``, ``/health``, ``/version``) run in this environment, with
:class:`~fairops.jobs._request_guard.RequestGuard` in front: a body over ``--max-request-mb`` answers 413
and JSON nested deeper than ``--max-json-depth`` answers 400, before MLflow parses it (its parser
recurses per level, so deep nesting would otherwise end in a 500). Signed models are verified on load
as everywhere else (``FAIROPS_MODEL_KEY``). The server serves a copy of the model in a folder of its
own, written from the bytes it verified (a model folder is read once, a registered model downloaded
once), so every worker loads the model the server checked, whatever happens to the source meanwhile.

``MODEL`` is a registered name (served at ``@champion``), ``NAME@ALIAS``, ``NAME/VERSION``, an MLflow
model URI (``models:/...``, ``runs:/...``) or a local model folder.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
from pathlib import Path

from ..errors import InputError
from ..tracking._ui_links import DEFAULT_SERVE_PORT, free_port
from ._promote import model_parser, tracking_uri_of
from ._request_guard import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, RequestGuard

_NAME = re.compile(r"^(?P<name>[^@/:]+)(?:@(?P<alias>[A-Za-z0-9_-]+)|/(?P<version>[0-9]+))?$")
# What workers started by uvicorn read: they import this module afresh and build the app from these.
_WORKER_ENV = ("FAIROPS_SERVE_MODEL_PATH", "FAIROPS_SERVE_MAX_DEPTH", "FAIROPS_SERVE_MAX_BYTES")


def model_uri_of(model: str) -> str:
    """The MLflow model URI ``MODEL`` names.

    >>> model_uri_of("fairops-adult"), model_uri_of("fairops-adult@challenger"), model_uri_of("fairops-adult/3")
    ('models:/fairops-adult@champion', 'models:/fairops-adult@challenger', 'models:/fairops-adult/3')
    >>> model_uri_of("runs:/0a1b/model")
    'runs:/0a1b/model'
    """
    if ":/" in model:
        return model
    if (Path(model) / "MLmodel").is_file():
        return str(Path(model).resolve())
    match = _NAME.match(model)
    if match is None:
        raise InputError(f"MODEL {model!r} is neither a registered model name (NAME, NAME@ALIAS, NAME/VERSION), "
                         "a model URI, nor a folder holding an MLmodel file")
    if match["version"]:
        return f"models:/{match['name']}/{match['version']}"
    return f"models:/{match['name']}@{match['alias'] or 'champion'}"


def local_model(model_uri: str, tracking_uri: str | None, folder: str) -> str:
    """The model in the private ``folder``: a model folder copied from the bytes its seal was checked on,
    anything else downloaded."""
    import mlflow
    from mlflow.exceptions import MlflowException

    from ..mlflow._mlflow_internals import use_tracking_uri
    from ..mlflow.sealing import copy_verified

    if Path(model_uri).is_dir():
        return copy_verified(model_uri, os.path.join(folder, "model"))
    # a models:/ URI is looked up in the registry of this store (MLflow's annotation omits the None it takes)
    try:
        with use_tracking_uri(tracking_uri):
            return mlflow.artifacts.download_artifacts(artifact_uri=model_uri, dst_path=folder)
    except MlflowException as error:
        raise InputError(f"cannot fetch {model_uri}: {error.message.splitlines()[0]}") from None


def guarded_app(model_path: str, max_depth: int = DEFAULT_MAX_DEPTH, max_bytes: int = DEFAULT_MAX_BYTES):
    """MLflow's scoring app for the model at ``model_path``, behind the request limits.

    The model is loaded by fairops' loader, not ``mlflow.pyfunc.load_model``: MLflow would import
    whatever ``MLmodel``'s ``loader_module`` names before any signature is checked.
    """
    from mlflow.exceptions import MlflowException

    from ..mlflow import loader
    from ..mlflow._scoring_app import scoring_app

    try:
        model = loader.load_model(model_path)
    except MlflowException as error:
        raise InputError(f"cannot load the model at {model_path}: {error.message.splitlines()[0]}") from None
    return RequestGuard(scoring_app(model), max_depth=max_depth, max_bytes=max_bytes)


def worker_app():
    """The app of one worker process (``--workers`` above 1): the settings come through the environment."""
    path, depth, size = (os.environ[name] for name in _WORKER_ENV)
    return guarded_app(path, int(depth), int(size))


def check_port(host: str, port: int) -> None:
    if not 1 <= port <= 65535:
        raise InputError(f"--port must be in [1, 65535], got {port}")
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.bind((host, port))
        except OSError as error:
            raise InputError(f"cannot listen on {host}:{port}: {error.strerror}") from None


def _limits(args) -> tuple[int, int]:
    if args.max_json_depth < 1:
        raise InputError(f"--max-json-depth must be at least 1, got {args.max_json_depth}")
    if not args.max_request_mb > 0:
        raise InputError(f"--max-request-mb must be positive, got {args.max_request_mb}")
    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    return args.max_json_depth, int(args.max_request_mb * 2**20)


def _run(args) -> int:
    import uvicorn

    from ._running import quiet_libraries

    max_depth, max_bytes = _limits(args)
    model_uri = model_uri_of(args.model)
    if args.port is None:
        args.port = free_port(DEFAULT_SERVE_PORT, host=args.host)
    check_port(args.host, args.port)
    quiet_libraries()
    tracking_uri = None if Path(model_uri).is_dir() else tracking_uri_of(args.project_dir, args.tracking_uri)
    with tempfile.TemporaryDirectory(prefix="fairops-serve-") as folder:
        path = local_model(model_uri, tracking_uri, folder)
        app = guarded_app(path, max_depth, max_bytes)  # loaded here first, so a bad model is refused at once
        print(f"fairops serve: {model_uri} on http://{args.host}:{args.port}\n"
              f"  POST /invocations: JSON nested at most {max_depth} deep, bodies of at most "
              f"{max_bytes / 2**20:g} MiB; GET /ping, /health, /version. Stop with Ctrl-C.", flush=True)
        if args.workers == 1:
            uvicorn.run(app, host=args.host, port=args.port, log_level="info")
        else:
            os.environ.update(zip(_WORKER_ENV, (path, str(max_depth), str(max_bytes))))
            uvicorn.run(f"{__name__}:worker_app", factory=True, workers=args.workers, host=args.host,
                        port=args.port, log_level="info")
    return 0


def add_parser(subcommands) -> None:
    parser = model_parser(subcommands, "serve", "serve a model over HTTP (MLflow's scoring server, with "
                          "limits on request size and JSON depth)", __doc__,
                          model_help="NAME (served at @champion), NAME@ALIAS, NAME/VERSION, a model URI or folder")
    parser.set_defaults(run=_run)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    parser.add_argument("--port", type=int, help=f"port to listen on (default: {DEFAULT_SERVE_PORT} when free, else "
                        "a free one; the line the server prints names it)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes, each with its own copy")
    limits = parser.add_argument_group("request limits")
    limits.add_argument("--max-json-depth", type=int, default=DEFAULT_MAX_DEPTH,
                        help="deepest JSON nesting accepted; deeper answers 400")
    limits.add_argument("--max-request-mb", type=float, default=DEFAULT_MAX_BYTES / 2**20,
                        help="largest request body in MiB; larger answers 413")
