"""Track a small Fairband search of SCAFF trees in MLflow, register the pick, load it by alias.

Every fit becomes a child run (accuracy, fairness, AUC_S, budget, bracket, rung); the pick (best
accuracy with fairness >= 0.8, else the Fairband pick) is refitted on all training rows, registered
as ``fair-scaff`` with alias ``champion`` (the version tagged with the rule that picked it, the model
carrying its own fairops wheel and a manifest over its files), and served with:

    python examples/registry_serving.py [--tracking-uri sqlite:///mlflow.db] [--serve [--env-manager local]]
    MLFLOW_TRACKING_URI=sqlite:///mlflow.db mlflow models serve -m models:/fair-scaff@champion -p 5001 -h 127.0.0.1

``--serve`` starts that server itself, posts five rows to /invocations and stops it. MLflow's default
environment manager (virtualenv, which needs ``pyenv``) builds an environment from the model alone, the
first time in about two minutes; ``--env-manager local`` serves in the current environment instead.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np
import optuna
import pandas as pd

from fairops.fairband import FairbandSampler, budget
from fairops.metrics import binarize, fairness_ratio, precision
from fairops.registry import Refit, describe, register_best
from fairops.scaff import SCAFFTreeClassifier
from fairops.tracking import FairnessTrackingCallback


def make_data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["female", "male"], n)
    X = pd.DataFrame({"income": rng.normal(size=n) + 0.6 * (sex == "male"), "tenure": rng.normal(size=n),
                      "debt": rng.normal(size=n)})
    y = ((X["income"] - 0.4 * X["debt"] + rng.normal(scale=0.7, size=n)) > 0.5).astype(int)
    return X, y.to_numpy(), sex


def serve_and_ask(uri, rows, env_manager=None):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri,
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    manager = [] if env_manager is None else ["--env-manager", env_manager]
    server = subprocess.Popen(["mlflow", "models", "serve", "-m", "models:/fair-scaff@champion", *manager,
                               "-p", str(port), "-h", "127.0.0.1"], env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(3000):  # the first start of an environment manager installs the model's requirements
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/ping", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        # a fairops classifier answers class labels unless the request asks for its scores
        body = json.dumps({"dataframe_split": rows.to_dict(orient="split", index=False),
                           "params": {"answer": "scores"}}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/invocations", body,
                                         {"Content-Type": "application/json"})
        return json.loads(urllib.request.urlopen(request, timeout=30).read())["predictions"]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracking-uri", default=None, help="default: a new SQLite store in a temporary folder")
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--env-manager", default=None, help="for --serve: local, virtualenv (MLflow's default) or uv")
    args = parser.parse_args(argv)
    folder = tempfile.mkdtemp()
    uri = args.tracking_uri or f"sqlite:///{folder}/mlflow.db"
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    X, y, sex = make_data()
    train, valid = np.arange(800), np.arange(800, 1200)

    def objective(trial):
        model = SCAFFTreeClassifier(theta=trial.suggest_float("theta", 0.0, 1.0),
                                    max_depth=trial.suggest_int("max_depth", 2, 5))
        rows = train[: int(len(train) * budget(trial))]
        model.fit(X.iloc[rows], y[rows], sensitive_features=sex[rows])
        score = model.predict_proba(X.iloc[valid])[:, 1]
        decided = binarize(score, y[valid], tpr=0.5)
        return precision(y[valid], decided), fairness_ratio(y[valid], decided, sex[valid])

    tracker = FairnessTrackingCallback(uri, "fair-scaff", artifact_location=os.path.join(folder, "artifacts"))
    study = optuna.create_study(directions=["maximize", "maximize"], study_name="fair-scaff",
                                sampler=FairbandSampler(eta=3, s_max=1, alpha=0.5, seed=0))
    study.optimize(objective, n_trials=6, callbacks=[tracker])
    tracker.finish(study)

    feasible = any(t.values[1] >= 0.8 for t in study.trials if t.values)
    refit = lambda params, trial: SCAFFTreeClassifier(**params).fit(  # noqa: E731
        X.iloc[train], y[train], sensitive_features=sex[train])
    best = register_best(study, "fair-scaff", rule="fairness>=0.8" if feasible else "fairband",
                         refit=Refit(refit, input_example=X.head(3)), session=tracker)
    print(f"registered {best.name} version {best.version} as @{best.alias}: {describe(best.pick, study)}, "
          f"trial {best.pick.trial.number}, params {best.pick.trial.params}")

    import mlflow

    mlflow.set_tracking_uri(uri)
    champion = mlflow.pyfunc.load_model(best.alias_uri)
    in_process = champion.predict(X.iloc[valid[:5]], params={"answer": "scores"})
    print("P(y=1) in process:", np.round(in_process, 4).tolist())
    if args.serve:
        served = serve_and_ask(uri, X.iloc[valid[:5]], args.env_manager)
        print("P(y=1) served:    ", np.round(served, 4).tolist())
    return best, in_process


if __name__ == "__main__":
    main()
