"""The serve command ``fairops tune`` prints, and the README's serve and curl lines, run as written.

One small tune on a CSV of one's own (Adult rows, registered under the README's name) in a folder laid out
like the checkout after ``./dev demo`` (``.venv``, ``fairops-project``); then each command is pasted into
bash from elsewhere, with a PATH that does not hold the virtual environment, and answered over HTTP.
"""

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from fairops.cli import main
from fairops.datasets import load_adult
from tests.services import free_port, post_frame, stop, wait_ready

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[2] / "README.md"
CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin"  # a fresh shell's PATH: no virtual environment on it


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    folder = tmp_path_factory.mktemp("checkout")
    (folder / ".venv").symlink_to(Path(sys.prefix))
    data = load_adult()
    rows = np.random.default_rng(0).choice(len(data.y), 3000, replace=False)
    table = data.X.iloc[rows].assign(income=np.where(data.y[rows] == 1, "<=50K", ">50K"))
    table.to_csv(folder / "people.csv", index=False)
    ui_port = free_port() - 1
    out = io.StringIO()
    with contextlib.chdir(folder), contextlib.redirect_stdout(out):
        assert main(["tune", "--data", "people.csv", "--target", "income", "--sensitive", "sex", "--method",
                     "rs-bal", "--families", "logistic_regression", "--max-train-rows", "300", "--no-progress",
                     "--s-max", "2",
                     "--model-name", "fairops-adult", "--ui-port", str(ui_port)]) == 0
    printed = out.getvalue()
    (serve,) = re.findall(r"^serve it: (.+)$", printed, re.M)
    port = int(serve.split("--port ")[1].split()[0])  # a port free when it was printed, not the UI's
    assert port != ui_port
    return {"folder": folder, "printed": printed, "X": data.X.iloc[rows], "port": port}


def _paste(command: str, cwd: Path, log: Path):
    """``command`` run by bash in ``cwd`` as a user pastes it into a fresh shell."""
    return subprocess.Popen(["bash", "-c", command], cwd=cwd, env={"PATH": CLEAN_PATH, "HOME": os.environ["HOME"]},
                            stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)


def _free(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _readme_lines(port: int):
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    (serve,) = [b.strip() for b in blocks if b.startswith(".venv/bin/fairops serve ")]
    (curl,) = [b.strip() for b in blocks if b.startswith("curl -s http://127.0.0.1:5001/invocations")]
    # as written; only when the README's port is taken on a shared machine, the same lines with another
    return serve.replace("--port 5001", f"--port {port}"), curl.replace("127.0.0.1:5001", f"127.0.0.1:{port}")


@pytest.fixture(scope="module")
def served(checkout, tmp_path_factory):
    """The printed command pasted in another folder and the README's line in the checkout, started together."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (printed,) = re.findall(r"^serve it: (.+)$", checkout["printed"], re.M)
    started = [(_paste(printed, elsewhere, elsewhere / "printed.log"), checkout["port"], elsewhere / "printed.log")]
    try:
        wait_ready(f"http://127.0.0.1:{checkout['port']}/ping", started[0][0], started[0][2])
        readme_port = 5001 if _free(5001) else free_port()  # chosen once the printed one listens
        serve, curl = _readme_lines(readme_port)
        started.append((_paste(serve, checkout["folder"], elsewhere / "readme.log"), readme_port,
                        elsewhere / "readme.log"))
        wait_ready(f"http://127.0.0.1:{readme_port}/ping", started[1][0], started[1][2])
        yield {"printed": printed, "elsewhere": elsewhere, "url": f"http://127.0.0.1:{checkout['port']}/invocations",
               "curl": curl, "X": checkout["X"]}
    finally:
        for process, _, _ in started:
            stop(process)


def _as_text(frame):
    return frame.astype({c: object for c in frame.columns if str(frame[c].dtype) == "category"})


def test_the_printed_serve_command_works_from_any_folder(checkout, served):
    assert "--tracking-uri sqlite:////" in served["printed"] and \
        " serve models:/fairops-adult@champion " in served["printed"]
    rows = _as_text(checkout["X"].head(3))
    status, answer = post_frame(served["url"], rows)
    assert status == 200 and len(answer["predictions"]) == 3
    assert all(0 <= p["probability"] <= 1 for p in answer["predictions"])
    status, answer = post_frame(served["url"], rows.head(1).drop(columns="hours-per-week"))
    assert status == 400
    assert answer["message"] == "input lacks the required column(s) ['hours-per-week']"
    stray = [p.name for p in served["elsewhere"].iterdir() if not p.name.endswith(".log")]
    assert stray == []  # no store or mlruns/ left where the command was pasted


def test_json_nested_too_deep_answers_400_in_one_line_before_mlflow_parses_it(served):
    """MLflow's parser recurses per level: 1,000 levels would end in its RecursionError and a 500."""
    for depth in (33, 1_000, 100_000):
        body = '{"dataframe_records": ' + "[" * depth + "]" * depth + "}"
        request = urllib.request.Request(served["url"], data=body.encode(),
                                         headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 400
        answer = refused.value.read().decode()
        assert "\n" not in answer.strip()
        assert json.loads(answer)["message"] == f"JSON nested {depth + 1} levels deep; the limit is 32"
    status, answer = post_frame(served["url"], _as_text(served["X"].head(2)))  # the server is still well
    assert status == 200 and len(answer["predictions"]) == 2


def test_the_readme_serve_and_curl_lines_work_as_written(served):
    answer = subprocess.run(["bash", "-c", served["curl"]], capture_output=True, text=True, check=True,
                            env={"PATH": CLEAN_PATH})
    (prediction,) = json.loads(answer.stdout)["predictions"]
    assert 0 <= prediction["probability"] <= 1
