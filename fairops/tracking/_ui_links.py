"""Links into MLflow's web UI that open on what fairops logged, as a model-training experiment.

MLflow 3's UI opens an experiment in its GenAI workspace (traces, tokens) unless the address carries
``workflowType=machine_learning`` or the browser remembers the "Model training" switch; the experiment tag
``mlflow.experimentKind`` (which fairops sets to ``custom_model_development`` on the experiments it
creates) does not change that in MLflow 3.17's open-source UI, so every link made here carries the
parameter.

- :func:`runs_url`: the experiment's runs page (optionally a saved view of it, see
  :mod:`fairops.tracking._study_views`);
- :func:`run_url`: one run's page (its metric charts, its artifacts);
- :func:`compare_runs_url`: MLflow's classic side-by-side comparison of some runs;
- :func:`ui_base_url` / :func:`ui_command`: where the UI is, and the command that serves it for a
  database tracking store;
- :func:`serve_command`: the command that serves a registered model over HTTP, pasted from any folder;
- :func:`promote_command` and :func:`tune_command`: the gate of a challenger, and the tune that registered a
  version, as command lines.

>>> runs_url("http://127.0.0.1:5000", "3")
'http://127.0.0.1:5000/#/experiments/3/runs?workflowType=machine_learning'
>>> runs_url("", "3", view="fairops-pareto", mode="CHART")
'#/experiments/3/runs?workflowType=machine_learning&viewStateShareKey=fairops-pareto&compareRunsMode=CHART'
>>> compare_runs_url("http://mlflow:5000/", "3", ["a1", "b2"])
'http://mlflow:5000/#/compare-runs?runs=%5B%22a1%22%2C%22b2%22%5D&experiments=%5B%223%22%5D'
"""

from __future__ import annotations

import json
from urllib.parse import quote, urlencode

from ..errors import InputError

#: Where ``mlflow ui`` serves by default.
DEFAULT_UI = "http://127.0.0.1:5000"
DEFAULT_UI_PORT = 5000
#: Where ``fairops serve`` listens when that port is free.
DEFAULT_SERVE_PORT = 5001
#: The experiment tag MLflow reads for the experiment's kind, and fairops' value for it.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
MODEL_TRAINING = "custom_model_development"
RUN_COMPARE_MODES = ("TABLE", "CHART", "ARTIFACT")


def is_server(tracking_uri: str) -> bool:
    """True for a tracking server (``http(s)://``), False for a store opened directly (a database, files)."""
    return str(tracking_uri).startswith(("http://", "https://"))


def ui_base_url(tracking_uri: str, port: int = DEFAULT_UI_PORT) -> str:
    """The UI of a tracking server is the server itself; a database store is shown by ``mlflow ui`` on ``port``.

    >>> ui_base_url("http://mlflow:5000/"), ui_base_url("sqlite:///p/mlflow.db"), ui_base_url("sqlite:///m.db", 8080)
    ('http://mlflow:5000', 'http://127.0.0.1:5000', 'http://127.0.0.1:8080')
    """
    return str(tracking_uri).rstrip("/") if is_server(tracking_uri) else f"http://127.0.0.1:{_port(port)}"


def program(name: str, bin_dir=None) -> str:
    """The shell-quoted full path of the command ``name`` of ``bin_dir`` (default: the folder of the running
    Python), so a printed command runs with this environment's packages when pasted into any shell.

    >>> program("mlflow", bin_dir="/v/bin")
    '/v/bin/mlflow'
    """
    import shlex
    import sys
    from pathlib import Path

    return shlex.quote(str(Path(bin_dir if bin_dir is not None else Path(sys.executable).parent) / name))


def ui_command(tracking_uri: str, port: int = DEFAULT_UI_PORT, bin_dir=None) -> str | None:
    """The command serving the UI over a database store (None for a tracking server, which is its own UI).

    >>> ui_command("sqlite:////p/mlflow.db", bin_dir="/v/bin")
    '/v/bin/mlflow ui --backend-store-uri sqlite:////p/mlflow.db'
    >>> ui_command("sqlite:////p/mlflow.db", 8080, bin_dir="/v/bin")
    '/v/bin/mlflow ui --backend-store-uri sqlite:////p/mlflow.db --port 8080'
    """
    import shlex

    if is_server(tracking_uri):
        return None
    port_part = "" if _port(port) == DEFAULT_UI_PORT else f" --port {port}"
    return f"{program('mlflow', bin_dir)} ui --backend-store-uri {shlex.quote(str(tracking_uri))}{port_part}"


def serve_command(tracking_uri: str, model_uri: str, port: int = DEFAULT_SERVE_PORT, bin_dir=None) -> str:
    """``fairops serve`` of ``model_uri`` that works pasted into a shell in any folder.

    It names the ``fairops`` of ``bin_dir`` (default: the folder of the running Python) by its full path,
    so the model is served with the packages of that environment, and the tracking store whose registry a
    ``models:/`` URI is looked up in.

    >>> serve_command("sqlite:////p/mlflow.db", "models:/m@champion", bin_dir="/v/bin")
    '/v/bin/fairops serve models:/m@champion --tracking-uri sqlite:////p/mlflow.db --port 5001'
    """
    import shlex

    return (f"{program('fairops', bin_dir)} serve {shlex.quote(model_uri)} "
            f"--tracking-uri {shlex.quote(str(tracking_uri))} --port {_port(port)}")


def free_port(preferred: int, avoid=(), host: str = "127.0.0.1") -> int:
    """``preferred`` when nothing listens there (and it is not in ``avoid``), else a port the system has free now.

    What a printed command or a server started without ``--port`` takes, so a second project, or anything else
    on the usual port, does not collide with it. Another program can still take the port before it is used.

    >>> import socket
    >>> with socket.socket() as taken:
    ...     taken.bind(("127.0.0.1", 0)); taken.listen()
    ...     busy = taken.getsockname()[1]
    ...     free_port(busy) != busy
    True
    """
    import socket

    avoid = set(avoid)
    if preferred not in avoid and _bindable(host, preferred):
        return preferred
    while True:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
        if port not in avoid:
            return port


def _bindable(host: str, port: int) -> bool:
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _port(port) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise InputError(f"port must be an integer in [1, 65535], got {port!r}")
    return port


def _base(base_url: str) -> str:
    return base_url.rstrip("/") + "/" if base_url else ""


def runs_url(base_url: str, experiment_id: str, *, view: str | None = None, mode: str | None = None,
             **search) -> str:
    """The experiment's runs page opened as a model-training experiment.

    ``view``: a saved view key; ``mode``: ``"TABLE"``, ``"CHART"`` or ``"ARTIFACT"``; other keyword
    arguments are the page's own search parameters (``orderByKey``, ``orderByAsc``, ``searchFilter``).
    An empty ``base_url`` makes a link relative to the UI (for notes shown inside it).
    """
    if mode is not None and mode not in RUN_COMPARE_MODES:
        raise InputError(f"mode must be one of {RUN_COMPARE_MODES}, got {mode!r}")
    query = {"workflowType": "machine_learning"}
    if view is not None:
        query["viewStateShareKey"] = view
    if mode is not None:
        query["compareRunsMode"] = mode
    query.update({key: str(value).lower() if isinstance(value, bool) else value for key, value in search.items()})
    return f"{_base(base_url)}#/experiments/{experiment_id}/runs?{urlencode(query, quote_via=quote)}"


def run_url(base_url: str, experiment_id: str, run_id: str, *, tab: str | None = None) -> str:
    """One run's page (``tab``: ``"model-metrics"``, ``"artifacts"``, ...), as a model-training experiment.

    >>> run_url("http://127.0.0.1:5000", "3", "abc", tab="model-metrics")
    'http://127.0.0.1:5000/#/experiments/3/runs/abc/model-metrics?workflowType=machine_learning'
    """
    page = f"{_base(base_url)}#/experiments/{experiment_id}/runs/{run_id}"
    return f"{page}/{tab}?workflowType=machine_learning" if tab else f"{page}?workflowType=machine_learning"


def compare_runs_url(base_url: str, experiment_id: str, run_ids) -> str:
    """MLflow's compare page for ``run_ids`` (params and metrics side by side, parallel coordinates)."""
    run_ids = [str(run_id) for run_id in run_ids]
    if not run_ids:
        raise InputError("run_ids must name at least one run")
    query = urlencode({"runs": json.dumps(run_ids, separators=(",", ":")),
                       "experiments": json.dumps([str(experiment_id)])}, quote_via=quote)
    return f"{_base(base_url)}#/compare-runs?{query}"


def promote_command(name: str, *, dataset=None, data=None, target=None, sensitive=None, holdout=None, seed=0,
                    project_dir=None, tracking_uri=None, bin_dir=None) -> str:
    """The ``fairops promote`` command line that gates a challenger on the same data (its registered task),
    pasted as it is from any folder: this environment's ``fairops`` and absolute paths.

    >>> promote_command("fairops-german", dataset="german", project_dir="/tmp/p", bin_dir="/v/bin")
    '/v/bin/fairops promote fairops-german --dataset german --project-dir /tmp/p'
    """
    import shlex
    from pathlib import Path

    parts = [name]
    parts += ["--dataset", dataset] if data is None else \
        ["--data", str(Path(data).resolve()), "--target", target, "--sensitive", sensitive,
         *(["--holdout", holdout] if holdout else [])]
    if seed and data is None:
        parts += ["--seed", str(seed)]
    parts += ["--tracking-uri", tracking_uri] if tracking_uri else ["--project-dir", str(Path(project_dir).resolve())]
    return " ".join([program("fairops", bin_dir), "promote", *map(shlex.quote, parts)])


def tune_command(params: dict, name: str, *, study=None, tracking_uri=None) -> str:
    """The ``fairops tune`` command a study's parent-run ``params`` record, for ``name`` (the study's
    ``--study-name`` when given; ``--project-dir`` for a project's SQLite store, else ``--tracking-uri``).

    Parameters
    ----------
    params : dict
        The study's parent-run params (:func:`fairops.jobs._tune.study.study_params`).
    name : str
        The registered model.
    study : str or None, default=None
        The study's name.
    tracking_uri : str or None, default=None
        The tracking URI.

    Returns
    -------
    str
        The command line, or words saying which command when ``params`` record too little.

    Examples
    --------
    >>> tune_command({"dataset": "german", "data_source": "german", "method": "FB-auto", "selection": "robust",
    ...               "profile": "fast", "seed": "1", "iterations": "1", "families": "lightgbm"}, "fairops-german",
    ...              study="german-s1", tracking_uri="sqlite:////p/mlflow.db")  # doctest: +NORMALIZE_WHITESPACE
    'fairops tune --dataset german --method fb-auto --selection robust --profile fast --seed 1 --iterations 1
     --families lightgbm --decision single --study-name german-s1 --model-name fairops-german --project-dir /p'
    """
    import os
    import shlex

    if "method" not in params:
        return "run again the fairops tune command that registered it"
    source = params.get("data_source", "")
    if source.lower().endswith((".csv", ".parquet")):
        parts = ["--data", source, "--target", params.get("task.positive_class", "").split(" = ")[0],
                 "--sensitive", params.get("task.sensitive", ""), "--task", params.get("task", "")]
    else:
        parts = ["--dataset", params.get("dataset", source)]
    parts += ["--method", params["method"].lower(), "--selection", params.get("selection", ""),
              "--profile", params.get("profile", ""), "--seed", params.get("seed", "0"),
              "--iterations", params.get("iterations", "1"), "--families", params.get("families", ""),
              "--decision", params.get("decision", "single")]
    parts += ["--blind"] if params.get("blind") == "True" else []
    parts += [] if params.get("min_fairness", "none") == "none" else ["--min-fairness", params["min_fairness"]]
    parts += [] if params.get("max_train_rows", "all") == "all" else ["--max-train-rows", params["max_train_rows"]]
    parts += (["--study-name", study] if study else []) + ["--model-name", name]
    uri = str(tracking_uri or "")
    if uri.startswith("sqlite:///") and uri.endswith("/mlflow.db"):
        parts += ["--project-dir", os.path.dirname(uri[len("sqlite:///"):])]
    elif uri:
        parts += ["--tracking-uri", uri]
    return "fairops tune " + " ".join(shlex.quote(part) for part in parts)
